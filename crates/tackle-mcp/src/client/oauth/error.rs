//! What can go wrong signing in to a remote MCP server: each failure of the flow, of rmcp's
//! discovery and token exchange (kept as the source), of the token file, the loopback
//! redirect and the opener. The texts are what `tackle mcp login` and a failed connection say.

use rmcp::transport::auth::AuthError;

use super::MAX_FLOWS;
use super::browser::NotOpened;
use super::callback::CallbackError;
use super::store::StoreError;

/// Why a sign-in did not happen.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// The server asked for a sign-in and nobody can be reached to do it.
    #[error("MCP server {server} needs sign-in ({why}): run `tackle mcp login {server}`")]
    NeedsLogin { server: String, why: &'static str },
    /// The server kept refusing after [`MAX_FLOWS`] flows.
    #[error(
        "MCP server {server} still refuses after {MAX_FLOWS} sign-ins; run `tackle mcp login {server}` or check its permissions"
    )]
    StillRefused { server: String },
    /// rmcp could not set up the sign-in for the server's URL.
    #[error("{0}")]
    Manager(#[source] AuthError),
    #[error("cannot use the stored sign-in: {0}")]
    Stored(#[source] AuthError),
    #[error("cannot start the sign-in: {0}")]
    Start(#[source] AuthError),
    #[error("the sign-in failed: {0}")]
    Failed(#[source] AuthError),
    #[error("cannot discover how to sign in: {0}")]
    Discovery(#[source] AuthError),
    /// rmcp's strict issuer check refused the metadata and the 2025-03-26 path did not apply.
    #[error("cannot discover how to sign in: the authorization server says it is {received}, not {expected} ({why})")]
    IssuerMismatch {
        expected: String,
        received: String,
        #[source]
        why: LegacyRefusal,
    },
    #[error("the authorization URL carries no state")]
    NoState,
    #[error("cannot build an HTTP client: {0}")]
    HttpClient(#[source] reqwest::Error),
    /// The server could not be asked for its challenge (`detail`: the error chain in words).
    #[error("cannot reach {url}: {detail}")]
    Unreachable { url: String, detail: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Callback(#[from] CallbackError),
    #[error(transparent)]
    NotOpened(#[from] NotOpened),
}

/// Why the 2025-03-26 root metadata was not taken (`legacy_metadata` in `oauth/mod.rs`).
#[derive(Debug, thiserror::Error)]
pub enum LegacyRefusal {
    #[error("{0}")]
    BadUrl(#[from] url::ParseError),
    #[error("only a server's own origin may differ in path")]
    NotTheOrigin,
    #[error("{0}")]
    Client(#[source] reqwest::Error),
    /// The metadata could not be fetched (the error chain in words).
    #[error("{0}")]
    Unreachable(String),
    #[error("its metadata answered {0}")]
    Status(http::StatusCode),
    #[error("its metadata is unusable: {0}")]
    Unusable(#[source] reqwest::Error),
    #[error("its metadata names another origin")]
    NamesAnotherOrigin,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_messages_name_the_server_and_the_way_out() {
        let needs = OAuthError::NeedsLogin { server: "linear".into(), why: "it answered 401" };
        assert_eq!(
            needs.to_string(),
            "MCP server linear needs sign-in (it answered 401): run `tackle mcp login linear`"
        );
        let refused = OAuthError::StillRefused { server: "gh".into() };
        assert!(
            refused.to_string().starts_with("MCP server gh still refuses after 3 sign-ins; run `tackle mcp login gh`")
        );
        let mismatch = OAuthError::IssuerMismatch {
            expected: "https://a.example/".into(),
            received: "https://b.example/oauth".into(),
            why: LegacyRefusal::NotTheOrigin,
        };
        assert_eq!(
            mismatch.to_string(),
            "cannot discover how to sign in: the authorization server says it is https://b.example/oauth, not https://a.example/ (only a server's own origin may differ in path)"
        );
        assert!(std::error::Error::source(&mismatch).is_some());
    }
}
