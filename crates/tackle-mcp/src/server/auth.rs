//! The optional bearer token of `tackle mcp serve --http` (`--auth-token`,
//! `TACKLE_MCP_TOKEN`; docs/mcp.md, "Bounds"): every HTTP request must carry
//! `Authorization: Bearer TOKEN`, else `401` with `WWW-Authenticate: Bearer`.
//!
//! Loopback alone lets every local user and process in; the token keeps out those that were
//! not given it. The comparison takes the same time wherever the first difference is (both
//! sides are hashed to a fixed length first, so neither the length nor a prefix leaks), and
//! the token is never logged or printed (`Debug` shows `AuthToken(..)`).

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use subtle::ConstantTimeEq as _;

/// A bearer token; compared in constant time, never shown.
#[derive(Clone)]
pub struct AuthToken {
    digest: [u8; 20],
}

impl std::fmt::Debug for AuthToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuthToken(..)")
    }
}

/// Why a token was not accepted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenError {
    #[error("the MCP auth token is empty; give a non-empty token or none")]
    Empty,
    #[error("the MCP auth token must be visible ASCII (no spaces or control characters)")]
    NotVisibleAscii,
}

impl AuthToken {
    /// A token; it must be non-empty visible ASCII, as a header value can carry it.
    pub fn new(token: &str) -> Result<Self, TokenError> {
        if token.is_empty() {
            return Err(TokenError::Empty);
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(TokenError::NotVisibleAscii);
        }
        Ok(AuthToken { digest: digest(token.as_bytes()) })
    }

    /// Whether `presented` is this token.
    fn matches(&self, presented: &[u8]) -> bool {
        bool::from(self.digest.ct_eq(&digest(presented)))
    }

    /// `401` unless `headers` carry `Authorization: Bearer` and this token.
    pub fn refusal(&self, headers: &HeaderMap) -> Option<Response> {
        let presented = headers.get(header::AUTHORIZATION).map(http::HeaderValue::as_bytes).and_then(|value| {
            let (scheme, rest) = value.split_at_checked(7)?;
            scheme.eq_ignore_ascii_case(b"bearer ").then(|| rest.trim_ascii())
        });
        if presented.is_some_and(|token| self.matches(token)) {
            return None;
        }
        let reason = if presented.is_some() { "the bearer token is wrong" } else { "a bearer token is required" };
        tracing::warn!("refused an HTTP request: {reason}");
        let body = format!(
            "Unauthorized: {reason}. Send the header `Authorization: Bearer TOKEN` with the token given to \
             `tackle mcp serve` (--auth-token or TACKLE_MCP_TOKEN)."
        );
        let mut response = (StatusCode::UNAUTHORIZED, body).into_response();
        response.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
        Some(response)
    }
}

fn digest(bytes: &[u8]) -> [u8; 20] {
    sha1_smol::Sha1::from(bytes).digest().bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(authorization: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(value) = authorization {
            headers.insert(header::AUTHORIZATION, value.parse().unwrap());
        }
        headers
    }

    #[test]
    fn only_the_right_bearer_token_passes() {
        let token = AuthToken::new("s3cret-token").unwrap();
        for good in ["Bearer s3cret-token", "bearer s3cret-token", "BEARER  s3cret-token "] {
            assert!(token.refusal(&headers(Some(good))).is_none(), "{good}");
        }
        for bad in [
            None,
            Some("Bearer s3cret-toke"),
            Some("Bearer s3cret-token2"),
            Some("Bearer "),
            Some("Basic s3cret-token"),
            Some("s3cret-token"),
            Some("Bearers3cret-token"),
        ] {
            let refusal = token.refusal(&headers(bad)).unwrap_or_else(|| panic!("{bad:?} passed"));
            assert_eq!(refusal.status(), StatusCode::UNAUTHORIZED);
            assert_eq!(refusal.headers()[header::WWW_AUTHENTICATE], "Bearer");
        }
    }

    #[test]
    fn the_token_is_never_shown_and_must_fit_a_header() {
        let token = AuthToken::new("s3cret-token").unwrap();
        assert_eq!(format!("{token:?}"), "AuthToken(..)");
        assert_eq!(AuthToken::new("").unwrap_err(), TokenError::Empty);
        assert_eq!(AuthToken::new("two words").unwrap_err(), TokenError::NotVisibleAscii);
        assert_eq!(AuthToken::new("tab\there").unwrap_err(), TokenError::NotVisibleAscii);
    }
}
