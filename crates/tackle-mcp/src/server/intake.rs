//! What every message of one MCP session passes on its way to and from rmcp, on both
//! transports: the requests in flight under their ids, the place in line of each `tools/call`
//! ([`super::scheduler`]), and when the session last did anything (idle expiry and eviction,
//! [`super::sessions`]).
//!
//! **Ids.** A request whose id is still in flight in the same session is refused with
//! `-32600` and never reaches rmcp: rmcp keeps one cancellation token per id, so a second
//! request under the same id took the first one's slot, and the first answer then cancelled
//! the second call, which ran on unanswered. Every request that passes gets an id of
//! Tackle's own, unique within the session, and its answer goes back under the client's id.
//! So a request cancelled with `notifications/cancelled` frees its id at once (rmcp drops
//! whatever the cancelled call still answers), and an id reused after that can never be
//! confused with the old call.
//!
//! **Turns.** A `tools/call`'s [`Ticket`] is held by its handler while the call runs and by
//! the session's [`InFlight`] until its answer has been written, so a call that must run
//! alone starts only once every earlier call has been answered: answers of such calls leave in
//! arrival order too (rmcp writes each answer from a task of its own, which on a loaded
//! machine may be scheduled after a later call has already run).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use rmcp::RoleServer;
use rmcp::model::{
    ClientNotification, ClientRequest, ErrorCode, ErrorData, GetExtensions as _, JsonRpcMessage, NumberOrString,
    RequestId,
};
use rmcp::service::{OriginatingRequestId, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use super::scheduler::{Scheduler, Ticket};

/// The requests of one MCP session that have not been answered yet, and when it last did
/// anything.
#[derive(Debug)]
pub struct InFlight {
    state: Mutex<State>,
    scheduler: Arc<Scheduler>,
}

#[derive(Debug)]
struct State {
    /// The client's id of each request in flight → Tackle's id (`None`: admitted by the HTTP
    /// layer and not read yet).
    by_client: HashMap<RequestId, Option<i64>>,
    /// Tackle's id → the client's.
    by_own: HashMap<i64, RequestId>,
    /// Tackle's id → the place in line of a `tools/call` not answered yet.
    tickets: HashMap<i64, Arc<Ticket>>,
    next: i64,
    last_active: Instant,
}

/// What to do with a message read from the client.
enum Incoming {
    Pass(RxJsonRpcMessage<RoleServer>),
    Refuse(TxJsonRpcMessage<RoleServer>),
    Drop,
}

impl InFlight {
    /// Nothing in flight yet.
    pub fn new() -> Arc<Self> {
        Arc::new(InFlight {
            state: Mutex::new(State {
                by_client: HashMap::new(),
                by_own: HashMap::new(),
                tickets: HashMap::new(),
                next: 1,
                last_active: Instant::now(),
            }),
            scheduler: Scheduler::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Reserves `id` for a request about to be handed on (the HTTP layer does this before
    /// the request reaches rmcp's session worker, which routes answers by id). `false` when a
    /// request with that id is in flight.
    pub fn admit(&self, id: &RequestId) -> bool {
        let mut state = self.lock();
        state.last_active = Instant::now();
        if state.by_client.contains_key(id) {
            return false;
        }
        state.by_client.insert(id.clone(), None);
        true
    }

    /// Gives back an id [`admit`](Self::admit)ted for a request that was not handed on.
    pub fn release(&self, id: &RequestId) {
        let mut state = self.lock();
        if let Some(None) = state.by_client.get(id) {
            state.by_client.remove(id);
        }
    }

    /// Since when the session has had nothing in flight; `None` while a request is.
    pub fn idle_since(&self) -> Option<Instant> {
        let state = self.lock();
        state.by_client.is_empty().then_some(state.last_active)
    }

    /// The error for a request whose id is in flight.
    pub fn duplicate(id: &RequestId) -> TxJsonRpcMessage<RoleServer> {
        let message = format!(
            "Invalid Request: the id {id} belongs to a request of this session that has not been answered yet; \
             send each request with a new id"
        );
        JsonRpcMessage::error(ErrorData::new(ErrorCode::INVALID_REQUEST, message, None), Some(id.clone()))
    }

    fn incoming(&self, message: RxJsonRpcMessage<RoleServer>) -> Incoming {
        let mut state = self.lock();
        state.last_active = Instant::now();
        match message {
            JsonRpcMessage::Request(mut request) => {
                let own = match state.by_client.get(&request.id) {
                    Some(Some(_)) => return Incoming::Refuse(Self::duplicate(&request.id)),
                    Some(None) | None => state.next,
                };
                state.next += 1;
                state.by_client.insert(request.id.clone(), Some(own));
                state.by_own.insert(own, request.id.clone());
                request.id = NumberOrString::Number(own);
                if matches!(request.request, ClientRequest::CallToolRequest(_)) {
                    let ticket = Arc::new(self.scheduler.arrive());
                    state.tickets.insert(own, Arc::clone(&ticket));
                    request.request.extensions_mut().insert(ticket);
                }
                Incoming::Pass(JsonRpcMessage::Request(request))
            }
            JsonRpcMessage::Notification(mut notification) => {
                if let ClientNotification::CancelledNotification(cancelled) = &mut notification.notification
                    && let Some(id) = cancelled.params.request_id.take()
                {
                    // rmcp drops the cancelled call's answer, so its id is free again. An
                    // unknown or answered id is ignored (it might name one of Tackle's ids).
                    let Some(Some(own)) = state.by_client.remove(&id) else { return Incoming::Drop };
                    state.by_own.remove(&own);
                    state.tickets.remove(&own);
                    cancelled.params.request_id = Some(NumberOrString::Number(own));
                }
                Incoming::Pass(JsonRpcMessage::Notification(notification))
            }
            // Answers to Tackle's own requests (elicitation) use Tackle's ids already.
            other => Incoming::Pass(other),
        }
    }

    /// The message to send under the client's id, and the answered call's ticket, to be
    /// dropped once the answer is written.
    fn outgoing(&self, mut message: TxJsonRpcMessage<RoleServer>) -> Option<Outgoing> {
        let mut state = self.lock();
        state.last_active = Instant::now();
        let answered = match &mut message {
            JsonRpcMessage::Response(response) => Some(&mut response.id),
            JsonRpcMessage::Error(error) => error.id.as_mut(),
            JsonRpcMessage::Request(request) => {
                // A request made while serving a call (elicitation) rides that call's stream.
                let extensions = request.request.extensions_mut();
                if let Some(OriginatingRequestId(NumberOrString::Number(own))) = extensions.get()
                    && let Some(client) = state.by_own.get(own)
                {
                    extensions.insert(OriginatingRequestId(client.clone()));
                }
                None
            }
            JsonRpcMessage::Notification(_) => None,
        };
        let mut ticket = None;
        if let Some(id) = answered {
            let NumberOrString::Number(own) = id else {
                tracing::debug!(%id, "dropped an answer to a request that was never handed on");
                return None;
            };
            let Some(client) = state.by_own.remove(own) else {
                tracing::debug!(%id, "dropped an answer to a request no longer in flight");
                return None;
            };
            ticket = state.tickets.remove(own);
            state.by_client.remove(&client);
            *id = client;
        }
        Some(Outgoing { message, _ticket: ticket })
    }
}

/// A message on its way out, and the place in line its sending ends.
struct Outgoing {
    message: TxJsonRpcMessage<RoleServer>,
    _ticket: Option<Arc<Ticket>>,
}

/// A transport whose messages pass an [`InFlight`].
pub struct Intake<T> {
    inner: T,
    in_flight: Arc<InFlight>,
}

impl<T> Intake<T> {
    /// `inner`, its messages tracked by `in_flight`.
    pub fn new(inner: T, in_flight: Arc<InFlight>) -> Self {
        Intake { inner, in_flight }
    }
}

impl<T> Transport<RoleServer> for Intake<T>
where
    T: Transport<RoleServer> + Send,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = self
            .in_flight
            .outgoing(item)
            .map(|Outgoing { message, _ticket: ticket }| (self.inner.send(message), ticket));
        async move {
            match sent {
                Some((sent, _ticket)) => sent.await,
                None => Ok(()),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let message = self.inner.receive().await?;
            match self.in_flight.incoming(message) {
                Incoming::Pass(message) => return Some(message),
                Incoming::Refuse(reply) => {
                    // Sent on its own, so that this read stays cancel-safe.
                    let send = self.inner.send(reply);
                    tokio::spawn(async move {
                        if send.await.is_err() {
                            tracing::debug!("cannot send the refusal of a reused id");
                        }
                    });
                }
                Incoming::Drop => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

/// The ticket [`Intake`] gave a `tools/call` request.
pub fn ticket(extensions: &mut rmcp::model::Extensions) -> Option<Arc<Ticket>> {
    extensions.remove::<Arc<Ticket>>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(in_flight: &InFlight, message: serde_json::Value) -> Option<serde_json::Value> {
        match in_flight.incoming(serde_json::from_value(message).unwrap()) {
            Incoming::Pass(message) => Some(serde_json::to_value(message).unwrap()),
            Incoming::Refuse(reply) => Some(json!({"refused": serde_json::to_value(reply).unwrap()})),
            Incoming::Drop => None,
        }
    }

    fn answer(in_flight: &InFlight, id: i64) -> Option<serde_json::Value> {
        let message: TxJsonRpcMessage<RoleServer> =
            serde_json::from_value(json!({"jsonrpc": "2.0", "id": id, "result": {}})).unwrap();
        in_flight.outgoing(message).map(|m| serde_json::to_value(m.message).unwrap())
    }

    fn call(id: serde_json::Value) -> serde_json::Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "x"}})
    }

    #[test]
    fn ids_in_flight_are_refused_and_answers_go_back_under_the_clients_id() {
        let in_flight = InFlight::new();
        assert_eq!(read(&in_flight, call(json!("a"))).unwrap()["id"], 1);
        assert!(in_flight.idle_since().is_none());
        let refused = read(&in_flight, call(json!("a"))).unwrap();
        assert_eq!(refused["refused"]["id"], "a");
        assert_eq!(refused["refused"]["error"]["code"], -32600);
        assert_eq!(read(&in_flight, call(json!(7))).unwrap()["id"], 2);
        assert_eq!(answer(&in_flight, 1).unwrap()["id"], "a");
        assert_eq!(answer(&in_flight, 1), None, "answered once");
        assert_eq!(read(&in_flight, call(json!("a"))).unwrap()["id"], 3, "free again after the answer");
        assert_eq!(answer(&in_flight, 2).unwrap()["id"], 7);
        assert_eq!(answer(&in_flight, 3).unwrap()["id"], "a");
        assert!(in_flight.idle_since().is_some());
    }

    #[test]
    fn a_cancelled_id_is_free_at_once_and_unknown_cancellations_are_dropped() {
        let in_flight = InFlight::new();
        read(&in_flight, call(json!(5)));
        let cancel =
            |id: i64| json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}});
        assert_eq!(read(&in_flight, cancel(5)).unwrap()["params"]["requestId"], 1);
        assert_eq!(read(&in_flight, cancel(5)), None);
        assert_eq!(read(&in_flight, cancel(1)), None, "Tackle's own ids mean nothing to the client");
        assert_eq!(read(&in_flight, call(json!(5))).unwrap()["id"], 2);
        assert_eq!(answer(&in_flight, 1), None, "the cancelled call's late answer is not sent");
        assert_eq!(answer(&in_flight, 2).unwrap()["id"], 5);
    }

    #[test]
    fn the_http_layer_reserves_ids_before_they_are_read() {
        let in_flight = InFlight::new();
        let id = NumberOrString::Number(3);
        assert!(in_flight.admit(&id));
        assert!(!in_flight.admit(&id));
        assert!(in_flight.idle_since().is_none());
        assert_eq!(read(&in_flight, call(json!(3))).unwrap()["id"], 1);
        assert_eq!(answer(&in_flight, 1).unwrap()["id"], 3);
        assert!(in_flight.admit(&id));
        in_flight.release(&id);
        assert!(in_flight.idle_since().is_some());
    }

    /// The ticket of a `tools/call` read by `in_flight`, as its handler gets it.
    fn handler_ticket(in_flight: &InFlight, id: i64) -> Arc<Ticket> {
        let Incoming::Pass(JsonRpcMessage::Request(mut request)) =
            in_flight.incoming(serde_json::from_value(call(json!(id))).unwrap())
        else {
            panic!("not passed")
        };
        ticket(request.request.extensions_mut()).unwrap()
    }

    fn ready(future: impl Future<Output = ()>) -> bool {
        let mut future = std::pin::pin!(future);
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        future.as_mut().poll(&mut context).is_ready()
    }

    #[test]
    fn a_call_that_runs_alone_waits_until_the_earlier_answers_are_written() {
        let in_flight = InFlight::new();
        let (first, second, third) =
            (handler_ticket(&in_flight, 10), handler_ticket(&in_flight, 11), handler_ticket(&in_flight, 12));
        assert!(ready(first.turn(false)));
        drop(first);
        assert!(!ready(second.turn(false)), "the first call returned, but its answer is not written yet");
        let Some(Outgoing { message, _ticket }) =
            in_flight.outgoing(serde_json::from_value(json!({"jsonrpc": "2.0", "id": 1, "result": {}})).unwrap())
        else {
            panic!("the answer was dropped")
        };
        assert_eq!(serde_json::to_value(message).unwrap()["id"], 10);
        assert!(!ready(second.turn(false)), "being written");
        drop(_ticket);
        assert!(ready(second.turn(false)));
        // A cancelled call gives up its place at once (rmcp never answers it).
        drop(second);
        read(&in_flight, json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 11}}));
        assert!(ready(third.turn(false)));
    }
}
