//! Approvals for `tackle mcp serve --permission-mode MODE` when the mode asks (docs/mcp.md#sessions-and-permissions):
//! the client's user is asked through `elicitation/create` (a message describing the call and
//! a boolean `approve` field); a client without that capability gets a denial that says how
//! to allow the call.

use std::sync::Arc;

use rmcp::Peer;
use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::service::{ElicitationMode, RoleServer};
use serde_json::{Value, json};
use tackle_core::BoxFuture;
use tackle_core::permission::{Approval, Approver, PermissionRequest};

/// The approver for calls from `peer`.
pub fn for_peer(peer: &Peer<RoleServer>) -> Arc<dyn Approver> {
    if peer.supported_elicitation_modes().contains(&ElicitationMode::Form) {
        Arc::new(ElicitApprover { peer: peer.clone() })
    } else {
        Arc::new(NoElicitation)
    }
}

/// Asks the client's user.
struct ElicitApprover {
    peer: Peer<RoleServer>,
}

/// The longest argument summary put in a prompt.
const MAX_ARGS_CHARS: usize = 500;

fn describe(request: &PermissionRequest<'_>, reason: &str) -> String {
    let mut args = request.args.to_string();
    if args.chars().count() > MAX_ARGS_CHARS {
        args = args.chars().take(MAX_ARGS_CHARS).chain("…".chars()).collect();
    }
    let mut message = format!("Allow the tool call {} {args}? ({reason})", request.spec.name);
    if let Some(preview) = request.preview {
        message.push_str("\n\n");
        message.push_str(preview);
    }
    message
}

impl Approver for ElicitApprover {
    fn asks_a_person(&self) -> bool {
        true
    }

    fn approve<'a>(&'a self, request: &'a PermissionRequest<'a>, reason: &'a str, _: bool) -> BoxFuture<'a, Approval> {
        let tool = request.spec.name.clone();
        let params = json!({
            "mode": "form",
            "message": describe(request, reason),
            "requestedSchema": {
                "type": "object",
                "properties": {"approve": {"type": "boolean", "title": "Approve", "description": "Run this tool call"}},
                "required": ["approve"]
            }
        });
        Box::pin(async move {
            let params: ElicitRequestParams = match serde_json::from_value(params) {
                Ok(params) => params,
                Err(err) => {
                    return Approval::Deny {
                        message: format!("{tool} needs approval, but it could not be asked: {err}"),
                    };
                }
            };
            match self.peer.create_elicitation(params).await {
                Ok(result)
                    if result.action == ElicitationAction::Accept
                        && result.content.as_ref().and_then(|c| c.get("approve")).and_then(Value::as_bool)
                            == Some(true) =>
                {
                    Approval::Allow
                }
                Ok(_) => Approval::Deny { message: format!("The user declined the {tool} call.") },
                Err(err) => Approval::Deny {
                    message: format!("{tool} needs approval, but the client could not be asked: {err}"),
                },
            }
        })
    }
}

/// Denies, naming the ways to allow the call.
struct NoElicitation;

impl Approver for NoElicitation {
    fn approve<'a>(&'a self, request: &'a PermissionRequest<'a>, _: &'a str, _: bool) -> BoxFuture<'a, Approval> {
        let message = format!(
            "{} needs approval, and this MCP client cannot be asked (it does not support elicitation). Restart \
             `tackle mcp serve` with {} (bypass is the default).",
            request.spec.name,
            tackle_policy::permission::ways_to_allow(request, false)
        );
        Box::pin(async move { Approval::Deny { message } })
    }
}
