//! The HTTP sessions of `tackle mcp serve --http` and their bounds (docs/mcp.md, "Bounds"):
//! rmcp's in-memory session manager, with
//! - Tackle's session ids: 128 random bits as 32 hex digits (rmcp's own are UUIDs);
//! - a cap on the sessions alive at once: when it is reached, the session idle the longest
//!   ends to make room, and without an idle one `initialize` is refused;
//! - idle expiry: a session with no request in flight for the idle timeout ends (rmcp's own
//!   keep-alive is off: it also ended sessions busy with one long call);
//! - the id check of [`InFlight`] before a request reaches rmcp's session worker, which
//!   routes answers by request id and so must never see two requests under one id.
//!
//! A session "is idle" when none of its requests is in flight; background jobs do not count.
//! Ending a session closes its tools (shells and jobs killed) through the tool session's
//! own close ([`super::live`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt as _};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker, SessionConfig, create_local_session,
};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::intake::{InFlight, Intake};

/// The live HTTP sessions of one server.
pub struct Sessions {
    inner: LocalSessionManager,
    table: Mutex<HashMap<SessionId, Entry>>,
    /// One permit per session alive or being opened; taken and given back under `table`'s lock.
    slots: Arc<Semaphore>,
    max: usize,
}

struct Entry {
    in_flight: Arc<InFlight>,
    _slot: Slot,
}

/// Every session slot is taken and no session is idle; the text answers `initialize`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Server busy: all {max} sessions are in use and none is idle. End a session (HTTP DELETE) or try again later; \
     `tackle mcp serve --max-sessions N` allows more."
)]
pub struct Busy {
    /// The most sessions alive at once.
    pub max: usize,
}

/// Room for one more session, reserved by [`Sessions::admit`] for an `initialize`.
pub struct Slot(#[allow(dead_code)] OwnedSemaphorePermit);

tokio::task_local! {
    /// The slot of the `initialize` being served on this task, for `create_session` to take.
    static ADMITTED: RefCell<Option<Slot>>;
}

/// Why a session could not be opened or used.
#[derive(Debug, thiserror::Error)]
pub enum SessionsError {
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    #[error(transparent)]
    Full(#[from] Busy),
    #[error("Session not found: {0}")]
    NotFound(SessionId),
}

impl Sessions {
    /// At most `max` sessions (at least 1).
    pub fn new(max: usize) -> Self {
        let max = max.max(1);
        let mut inner = LocalSessionManager::default();
        inner.session_config = SessionConfig::default();
        inner.session_config.keep_alive = None;
        Sessions { inner, table: Mutex::new(HashMap::new()), slots: Arc::new(Semaphore::new(max)), max }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<SessionId, Entry>> {
        self.table.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The number of sessions alive.
    pub fn live(&self) -> usize {
        self.lock().len()
    }

    /// Room for one more session: a free slot, or the slot of the session idle the longest,
    /// which ends. Without either, the message to answer `initialize` with.
    pub async fn admit(&self) -> Result<Slot, Busy> {
        let (slot, evicted) = {
            let mut table = self.lock();
            match Arc::clone(&self.slots).try_acquire_owned() {
                Ok(permit) => (permit, None),
                Err(_) => {
                    let oldest = table
                        .iter()
                        .filter_map(|(id, entry)| entry.in_flight.idle_since().map(|since| (since, id.clone())))
                        .min();
                    let Some((_, victim)) = oldest else { return Err(self.full()) };
                    table.remove(&victim);
                    let permit = Arc::clone(&self.slots).try_acquire_owned().map_err(|_| self.full())?;
                    (permit, Some(victim))
                }
            }
        };
        if let Some(victim) = evicted {
            tracing::info!("ended the session idle the longest to make room for a new one ({} at most)", self.max);
            self.end(&victim).await;
        }
        Ok(Slot(slot))
    }

    fn full(&self) -> Busy {
        Busy { max: self.max }
    }

    /// Serves `serve` (the request that opens a session) with `slot` for its session.
    pub async fn admitted<T>(slot: Slot, serve: impl Future<Output = T>) -> T {
        ADMITTED.scope(RefCell::new(Some(slot)), serve).await
    }

    /// Ends every session with nothing in flight for `idle_timeout` or longer.
    pub async fn expire(&self, idle_timeout: Duration) {
        let expired: Vec<SessionId> = {
            let mut table = self.lock();
            let now = Instant::now();
            let expired: Vec<SessionId> = table
                .iter()
                .filter(|(_, entry)| {
                    entry.in_flight.idle_since().is_some_and(|since| now.duration_since(since) >= idle_timeout)
                })
                .map(|(id, _)| id.clone())
                .collect();
            for id in &expired {
                table.remove(id);
            }
            expired
        };
        for id in expired {
            tracing::debug!("ended an idle session");
            self.end(&id).await;
        }
    }

    /// Ends rmcp's side of a session already out of the table.
    async fn end(&self, id: &SessionId) {
        if let Err(err) = self.inner.close_session(id).await {
            tracing::debug!("closing a session: {err}");
        }
    }

    fn in_flight(&self, id: &SessionId) -> Result<Arc<InFlight>, SessionsError> {
        self.lock().get(id).map(|entry| Arc::clone(&entry.in_flight)).ok_or_else(|| SessionsError::NotFound(id.clone()))
    }
}

fn hex_session_id() -> SessionId {
    let bits: u128 = rand::random();
    format!("{bits:032x}").into()
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = Intake<WorkerTransport<LocalSessionWorker>>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let handed = ADMITTED.try_with(|slot| slot.borrow_mut().take()).ok().flatten();
        let slot = match handed {
            Some(slot) => slot,
            None => self.admit().await?,
        };
        let id = hex_session_id();
        let (handle, worker) = create_local_session(id.clone(), self.inner.session_config.clone());
        self.inner.sessions.write().await.insert(id.clone(), handle);
        let in_flight = InFlight::new();
        self.lock().insert(id.clone(), Entry { in_flight: Arc::clone(&in_flight), _slot: slot });
        Ok((id, Intake::new(WorkerTransport::spawn(worker), in_flight)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.lock().contains_key(id))
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.lock().remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let in_flight = self.in_flight(id)?;
        let request_id = match &message {
            JsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        if let Some(request_id) = &request_id
            && !in_flight.admit(request_id)
        {
            let refusal = ServerSseMessage::from_message(InFlight::duplicate(request_id));
            return Ok(futures::stream::iter([refusal]).left_stream());
        }
        match self.inner.create_stream(id, message).await {
            Ok(stream) => Ok(stream.right_stream()),
            Err(err) => {
                if let Some(request_id) = &request_id {
                    in_flight.release(request_id);
                }
                Err(err.into())
            }
        }
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    async fn restore_session(&self, _id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(RestoreOutcome::NotSupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    #[test]
    fn session_ids_are_128_bit_hex() {
        let a = hex_session_id().to_string();
        let b = hex_session_id().to_string();
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
    }

    #[tokio::test]
    async fn the_cap_ends_the_session_idle_the_longest_and_refuses_when_none_is_idle() {
        let sessions = Sessions::new(2);
        let (first, _) = sessions.create_session().await.unwrap();
        let (second, _) = sessions.create_session().await.unwrap();
        let busy = |id: &SessionId, n: i64| assert!(sessions.in_flight(id).unwrap().admit(&NumberOrString::Number(n)));
        busy(&second, 1);
        // The first is idle, so it makes room.
        let (third, _) = sessions.create_session().await.unwrap();
        assert!(!sessions.has_session(&first).await.unwrap());
        assert_eq!(sessions.live(), 2);
        busy(&third, 1);
        let refused = sessions.create_session().await.map(|_| ()).unwrap_err();
        assert!(refused.to_string().contains("all 2 sessions are in use"), "{refused}");
        // An answered request makes its session idle again, and expiry ends it.
        sessions.in_flight(&second).unwrap().release(&NumberOrString::Number(1));
        sessions.expire(Duration::ZERO).await;
        assert!(!sessions.has_session(&second).await.unwrap());
        assert!(sessions.has_session(&third).await.unwrap(), "a busy session does not expire");
        assert!(sessions.admit().await.is_ok());
    }
}
