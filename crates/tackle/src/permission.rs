//! Permissions beyond the mode: the approvers that answer without a person, the rule book a
//! session decides by, and the rules of the user's configuration (docs/reference/safety.md).

pub use tackle_core::permission::{AutoApprover, Decision, PermissionRequest};
pub use tackle_policy::permission::NonInteractiveApprover;
pub use tackle_policy::permission::rules::RuleBook;
pub use tackle_policy::permission::sources::ProjectRules;
