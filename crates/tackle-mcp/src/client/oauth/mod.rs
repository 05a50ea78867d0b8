//! OAuth 2.1 sign-in to remote MCP servers (docs/mcp.md#remote-servers-and-sign-in), on
//! rmcp's `auth` module: it discovers the protected-resource metadata (RFC 9728: the
//! `WWW-Authenticate` challenge's `resource_metadata`, then the path-based and root
//! well-known URLs), the authorization server's metadata (RFC 8414 and OpenID discovery, with
//! the 2025-03-26 fallbacks), registers the client (a configured client ID, a client ID
//! metadata document, or dynamic registration), runs the PKCE S256 code flow with the RFC 8707
//! `resource` parameter, picks the token endpoint's authentication method, and refreshes.
//!
//! Tackle adds what a command-line agent needs around it: the loopback redirect
//! ([`callback`]), opening the URL ([`browser`]), a token file per server URL in the user's
//! config directory ([`store`]), `tackle mcp login` / `logout` ([`login`], [`logout`]), and a
//! transport ([`SignedInClient`]) that sends the stored token only to the server it was issued
//! for and, when the server answers 401 or 403 `insufficient_scope` during a session, runs the
//! flow by itself (at most [`MAX_FLOWS`] times per connection) when the person can be reached,
//! or fails with a message that says `tackle mcp login NAME`.

pub mod browser;
pub mod callback;
mod error;
pub mod store;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use http::{HeaderName, HeaderValue};
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest, AuthorizationSession,
    OAuthClientConfig, WWWAuthenticateParams,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};

use self::browser::Opener;
use self::callback::{Callback, SIGN_IN_WINDOW};
use self::store::TokenStore;
use super::config::OAuthSettings;
pub use error::{LegacyRefusal, OAuthError};

/// Authorization flows one connection runs at most (the first sign-in and step-ups): a server
/// that keeps answering `insufficient_scope` does not send the person round in circles.
pub const MAX_FLOWS: u32 = 3;

/// The client name Tackle registers under.
const CLIENT_NAME: &str = "Tackle";

/// One HTTP server's sign-in: where its tokens are, how Tackle identifies itself, how the
/// person is reached.
#[derive(Debug)]
pub struct SignIn {
    /// The server's name (for messages).
    pub server: String,
    pub url: String,
    pub settings: OAuthSettings,
    pub store: TokenStore,
    pub opener: Opener,
    /// Whether flows may run by themselves during a session (a terminal or `$BROWSER`).
    pub interactive: bool,
    /// Flows started (at most [`MAX_FLOWS`]).
    flows: AtomicU32,
    /// Flows completed: a request refused before the latest one is sent again without another.
    completed: AtomicU32,
    /// One flow at a time.
    running: tokio::sync::Mutex<()>,
}

impl SignIn {
    /// The sign-in of server `server` at `url`.
    pub fn new(
        server: &str,
        url: &str,
        settings: OAuthSettings,
        store: TokenStore,
        opener: Opener,
        interactive: bool,
    ) -> Self {
        SignIn {
            server: server.to_owned(),
            url: url.to_owned(),
            settings,
            store,
            opener,
            interactive,
            flows: AtomicU32::new(0),
            completed: AtomicU32::new(0),
            running: tokio::sync::Mutex::new(()),
        }
    }

    /// Whether a flow is running now (the startup timeout waits for it).
    pub fn signing_in(&self) -> bool {
        self.running.try_lock().is_err()
    }

    /// A manager for this server whose tokens are in the token file.
    async fn manager(&self) -> Result<AuthorizationManager, OAuthError> {
        let mut manager = AuthorizationManager::new(self.url.as_str()).await.map_err(OAuthError::Manager)?;
        manager.set_credential_store(self.store.clone());
        Ok(manager)
    }

    /// The manager of a session: loaded from the token file (with the configured client's
    /// secret, for refreshes), or empty when there are no tokens.
    pub async fn session_manager(&self) -> Result<AuthorizationManager, OAuthError> {
        let mut manager = self.manager().await?;
        if self.store.read().ok().flatten().is_some_and(|c| c.token_response.is_some()) {
            let metadata = self.discover(&manager, None).await?;
            manager.set_metadata(metadata);
        }
        let stored = manager.initialize_from_store().await.map_err(OAuthError::Stored)?;
        if stored
            && let (Some(id), Some(secret)) = (&self.settings.client_id, &self.settings.client_secret)
            && let Ok(Some(credentials)) = self.store.read()
            && &credentials.client_id == id
        {
            let mut config = OAuthClientConfig::new(id.clone(), self.url.clone());
            config = config.with_client_secret(secret.clone());
            if let Err(err) = manager.configure_client(config) {
                tracing::warn!(server = %self.server, "the configured client secret cannot be used for refreshes: {err}");
            }
        }
        Ok(manager)
    }

    /// Runs the whole flow; `challenge` is the `WWW-Authenticate` of the answer that asked for
    /// it (none: the server is probed for one). Returns the signed-in manager.
    pub async fn authorize(
        &self,
        challenge: Option<String>,
        step_up: bool,
    ) -> Result<AuthorizationManager, OAuthError> {
        let challenge = match challenge {
            Some(challenge) => Some(challenge),
            None => probe(&self.url).await?,
        };
        let mut manager = self.manager().await?;
        let metadata = self.discover(&manager, challenge.as_deref()).await?;
        manager.set_metadata(metadata);
        let callback = Callback::bind(self.settings.callback_port.unwrap_or(0)).await?;
        let mut request = AuthorizationRequest::new(callback.redirect_uri()).with_client_name(CLIENT_NAME);
        if let Some(id) = &self.settings.client_id {
            request = request.with_preregistered_client(id.clone());
            if let Some(secret) = &self.settings.client_secret {
                request = request.with_client_secret(secret.clone());
            }
        }
        if let Some(url) = &self.settings.client_metadata_url {
            request = request.with_client_metadata_url(url.clone());
        }
        let scopes = self.scopes(challenge.as_deref(), step_up);
        request = if scopes.is_empty() { request.with_initial_scope_selection() } else { request.with_scopes(scopes) };
        let session = AuthorizationSession::new(manager, request).await.map_err(|(_, err)| OAuthError::Start(err))?;
        let auth_url = session.get_authorization_url().to_owned();
        let state = reqwest::Url::parse(&auth_url)
            .ok()
            .and_then(|url| url.query_pairs().find(|(k, _)| k == "state").map(|(_, v)| v.into_owned()))
            .ok_or(OAuthError::NoState)?;
        self.opener.open(&auth_url, &self.server)?;
        let redirect = callback.wait(&state, SIGN_IN_WINDOW).await?;
        session.handle_callback_url(&redirect.url).await.map_err(OAuthError::Failed)?;
        Ok(session.auth_manager)
    }

    /// The authorization server's metadata, by rmcp's discovery; see [`legacy_metadata`] for
    /// the one case where Tackle accepts what rmcp refuses.
    async fn discover(
        &self,
        manager: &AuthorizationManager,
        challenge: Option<&str>,
    ) -> Result<AuthorizationMetadata, OAuthError> {
        match manager.resolve_metadata_from_challenge(challenge).await {
            Ok(resolution) => Ok(resolution.metadata),
            Err(AuthError::AuthorizationServerMismatch { expected_issuer, received_issuer }) => {
                legacy_metadata(&self.url, &expected_issuer, &received_issuer).await.map_err(|why| {
                    OAuthError::IssuerMismatch { expected: expected_issuer, received: received_issuer, why }
                })
            }
            Err(err) => Err(OAuthError::Discovery(err)),
        }
    }

    /// The scopes to ask for: the configured ones; at a step-up, what was granted plus what
    /// the challenge names; otherwise none here (rmcp then takes the challenge's, else the
    /// resource metadata's `scopes_supported`, else sends no scope).
    fn scopes(&self, challenge: Option<&str>, step_up: bool) -> Vec<String> {
        let mut scopes = self.settings.scopes.clone();
        if step_up {
            if let Ok(Some(credentials)) = self.store.read() {
                scopes.extend(credentials.granted_scopes);
            }
            let base = reqwest::Url::parse(&self.url).ok();
            if let (Some(challenge), Some(base)) = (challenge, base) {
                let params = WWWAuthenticateParams::parse(challenge, &base);
                scopes.extend(params.scope.unwrap_or_default().split_whitespace().map(str::to_owned));
            }
        }
        let mut seen = std::collections::HashSet::new();
        scopes.retain(|scope| seen.insert(scope.clone()));
        scopes
    }

    /// A flow during a session, if the person can be reached and the limit allows.
    async fn reauthorize(&self, challenge: String, step_up: bool) -> Result<AuthorizationManager, OAuthError> {
        if !self.interactive {
            let why = if step_up { "it needs more permissions" } else { "it answered 401" };
            return Err(OAuthError::NeedsLogin { server: self.server.clone(), why });
        }
        if self.flows.fetch_add(1, Ordering::SeqCst) >= MAX_FLOWS {
            return Err(OAuthError::StillRefused { server: self.server.clone() });
        }
        self.authorize(Some(challenge), step_up).await
    }
}

/// The 2025-03-26 back-compatibility path where the conformance suite and a strict RFC 8414
/// issuer check disagree: a server without protected-resource metadata whose own origin
/// serves `/.well-known/oauth-authorization-server` with an `issuer` of that origin plus a
/// path (`https://mcp.example/oauth`). RFC 8414 would ask for the metadata at
/// `/.well-known/oauth-authorization-server/oauth`; the 2025-03-26 spec looked only at the
/// root. Tackle accepts the root document, on that path only: the expected issuer is the
/// server's own origin (no protected-resource metadata named another), and the issuer and
/// every endpoint of the document are on that same origin, so nothing leaves the origin the
/// person configured.
async fn legacy_metadata(url: &str, expected: &str, received: &str) -> Result<AuthorizationMetadata, LegacyRefusal> {
    let server = reqwest::Url::parse(url)?;
    let same_origin = |other: &str| reqwest::Url::parse(other).is_ok_and(|other| other.origin() == server.origin());
    let root = server.join("/")?;
    if expected.trim_end_matches('/') != root.as_str().trim_end_matches('/') || !same_origin(received) {
        return Err(LegacyRefusal::NotTheOrigin);
    }
    crate::ensure_tls_provider();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(LegacyRefusal::Client)?;
    let address = root.join(".well-known/oauth-authorization-server")?;
    let response =
        client.get(address).send().await.map_err(|err| LegacyRefusal::Unreachable(super::transport::in_words(&err)))?;
    if !response.status().is_success() {
        return Err(LegacyRefusal::Status(response.status()));
    }
    let metadata: AuthorizationMetadata = response.json().await.map_err(LegacyRefusal::Unusable)?;
    let endpoints = [
        Some(&metadata.authorization_endpoint),
        Some(&metadata.token_endpoint),
        metadata.registration_endpoint.as_ref(),
    ];
    let issuer_ok = metadata.issuer.as_deref() == Some(received);
    if !issuer_ok || !endpoints.into_iter().flatten().all(|endpoint| same_origin(endpoint)) {
        return Err(LegacyRefusal::NamesAnotherOrigin);
    }
    Ok(metadata)
}

/// The sign-in of a session's connection to `config`'s server: for an HTTP server without a
/// static `Authorization` header. Flows run by themselves when `$BROWSER` or a desktop can
/// open the URL, or a terminal can show it.
pub fn session_sign_in(config: &super::config::ServerConfig, workspace: &std::path::Path) -> Option<Arc<SignIn>> {
    let super::config::Endpoint::Http { url, headers, oauth } = &config.endpoint else { return None };
    if has_static_authorization(headers) {
        return None;
    }
    match TokenStore::for_user(url, workspace) {
        Ok(store) => {
            let opener = Opener::from_env();
            let interactive = opener.can_open() || std::io::IsTerminal::is_terminal(&std::io::stderr());
            Some(Arc::new(SignIn::new(&config.name, url, oauth.clone(), store, opener, interactive)))
        }
        Err(why) => {
            tracing::warn!(server = %config.name, "OAuth sign-in is off: {why}");
            None
        }
    }
}

/// Asks the server, without credentials, for the challenge of its 401 (`None`: it did not
/// answer 401, or named no challenge).
async fn probe(url: &str) -> Result<Option<String>, OAuthError> {
    crate::ensure_tls_provider();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(OAuthError::HttpClient)?;
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "tackle", "version": env!("CARGO_PKG_VERSION")}}});
    let response = client
        .post(url)
        .header(http::header::ACCEPT, "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .map_err(|err| OAuthError::Unreachable { url: url.to_owned(), detail: super::transport::in_words(&err) })?;
    if response.status() != http::StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    Ok(response.headers().get(http::header::WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).map(str::to_owned))
}

/// `tackle mcp login`: runs the flow for `sign_in`'s server and stores the tokens.
pub async fn login(sign_in: &SignIn) -> Result<(), OAuthError> {
    sign_in.authorize(None, false).await.map(drop)
}

/// `tackle mcp logout`: forgets the server's tokens; whether there were any.
pub fn logout(store: &TokenStore) -> Result<bool, OAuthError> {
    Ok(store.remove()?)
}

/// Whether a configured header already authorizes the requests (then OAuth stays out).
pub fn has_static_authorization(headers: &BTreeMap<String, String>) -> bool {
    headers.keys().any(|name| name.eq_ignore_ascii_case("authorization"))
}

type Headers = HashMap<HeaderName, HeaderValue>;

/// The HTTP client of a server connection: plain, or signed in.
#[derive(Clone)]
pub enum SignedInClient {
    Plain(reqwest::Client),
    OAuth { client: AuthClient<reqwest::Client>, sign_in: Arc<SignIn> },
}

impl SignedInClient {
    /// A signed-in client: the token of `sign_in`'s file goes only to the server's URL, and
    /// redirects are not followed (a redirect must not carry it elsewhere).
    pub async fn signed_in(sign_in: Arc<SignIn>) -> Result<SignedInClient, OAuthError> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(OAuthError::HttpClient)?;
        let manager = match sign_in.session_manager().await {
            Ok(manager) => manager,
            // Without stored tokens nothing is lost: the server is reached as it was before
            // OAuth existed, and a 401 says what happened.
            Err(err) if sign_in.store.read().ok().flatten().is_none() => {
                tracing::debug!(server = %sign_in.server, "no OAuth for this connection: {err}");
                let plain = reqwest::Client::builder().build().map_err(OAuthError::HttpClient)?;
                return Ok(SignedInClient::Plain(plain));
            }
            Err(err) => return Err(err),
        };
        Ok(SignedInClient::OAuth { client: AuthClient::new(http, manager), sign_in })
    }

    /// After a 401 or 403 challenge: runs the flow (when allowed) and installs the new
    /// manager, or the error for the caller.
    /// `seen` is the count of completed flows when the refused request was sent: if another
    /// request's flow completed since, the request is only sent again.
    async fn recover(
        &self,
        err: StreamableHttpError<reqwest::Error>,
        seen: u32,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        let SignedInClient::OAuth { client, sign_in } = self else { return Err(err) };
        let (challenge, step_up) = match &err {
            StreamableHttpError::AuthRequired(e) => (e.www_authenticate_header.clone(), false),
            StreamableHttpError::InsufficientScope(e) => (e.www_authenticate_header.clone(), true),
            _ => return Err(err),
        };
        let _one_at_a_time = sign_in.running.lock().await;
        if sign_in.completed.load(Ordering::SeqCst) != seen {
            return Ok(());
        }
        match sign_in.reauthorize(challenge, step_up).await {
            Ok(manager) => {
                *client.auth_manager.lock().await = manager;
                sign_in.completed.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
            Err(err) => Err(StreamableHttpError::Auth(AuthError::AuthorizationFailed(err.to_string()))),
        }
    }
}

/// A `401` without `WWW-Authenticate` (which 2025-03-26 servers may send) asks for a sign-in
/// all the same; rmcp reports it as an unexpected answer. Discovery then starts from the
/// well-known URLs.
fn bare_401_as_challenge(err: StreamableHttpError<reqwest::Error>) -> StreamableHttpError<reqwest::Error> {
    match err {
        StreamableHttpError::UnexpectedServerResponse(message) if message.starts_with("HTTP 401") => {
            StreamableHttpError::AuthRequired(AuthRequiredError::new(String::new()))
        }
        other => other,
    }
}

impl StreamableHttpClient for SignedInClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        loop {
            let seen = match self {
                SignedInClient::OAuth { sign_in, .. } => sign_in.completed.load(Ordering::SeqCst),
                SignedInClient::Plain(_) => 0,
            };
            let result = match self {
                SignedInClient::Plain(http) => {
                    return http.post_message(uri, message, session_id, auth_header, custom_headers).await;
                }
                SignedInClient::OAuth { client, .. } => {
                    client
                        .post_message(uri.clone(), message.clone(), session_id.clone(), None, custom_headers.clone())
                        .await
                }
            };
            match result.map_err(bare_401_as_challenge) {
                Err(err @ (StreamableHttpError::AuthRequired(_) | StreamableHttpError::InsufficientScope(_))) => {
                    self.recover(err, seen).await?;
                }
                other => return other,
            }
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        match self {
            SignedInClient::Plain(http) => http.delete_session(uri, session_id, auth_header, custom_headers).await,
            SignedInClient::OAuth { client, .. } => client.delete_session(uri, session_id, None, custom_headers).await,
        }
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<futures::stream::BoxStream<'static, Result<sse_stream::Sse, SseError>>, StreamableHttpError<Self::Error>>
    {
        match self {
            SignedInClient::Plain(http) => {
                http.get_stream(uri, session_id, last_event_id, auth_header, custom_headers).await
            }
            SignedInClient::OAuth { client, .. } => {
                client.get_stream(uri, session_id, last_event_id, None, custom_headers).await
            }
        }
    }
}
