//! Signing in to remote MCP servers: `tackle mcp login NAME` and `tackle mcp logout NAME`
//! (docs/mcp.md#remote-servers-and-sign-in). A server is found as a session would find it,
//! consent included: a workspace's `.mcp.json` or `tackle.toml` server needs the person's
//! consent before any sign-in runs for it.

use std::path::Path;

use tackle_mcp::client::config::{Candidate, Endpoint, ServerConfig};
use tackle_mcp::client::consent::ConsentPolicy;
use tackle_mcp::client::oauth::browser::Opener;
use tackle_mcp::client::oauth::store::{StoreError, TokenStore};
use tackle_mcp::client::oauth::{self, OAuthError, SignIn};
use tackle_policy::config::Config;

/// Why `tackle mcp login` / `logout` did nothing.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// No server of that name was found; `notice` says why one was left out, when it was.
    #[error("{}", notice.clone().unwrap_or_else(|| format!("no MCP server named '{name}' is configured")))]
    NotFound {
        /// The name asked for.
        name: String,
        /// The notice that left a server of that name out.
        notice: Option<String>,
    },
    /// The server (named) is a stdio server.
    #[error("MCP server '{0}' is not an HTTP server; only those sign in")]
    NotHttp(String),
    /// The server (named) sends a configured `Authorization` header instead.
    #[error("MCP server '{0}' has an Authorization header in its definition; it does not sign in")]
    StaticAuthorization(String),
    /// The token file could not be found, written or removed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The sign-in itself failed.
    #[error(transparent)]
    OAuth(#[from] OAuthError),
}

/// Where a sign-in command finds its server.
pub struct McpSignIn<'a> {
    /// The session's configuration.
    pub config: &'a Config,
    /// The workspace root.
    pub workspace: &'a Path,
    /// `--allow-project-mcp`.
    pub allow_project_mcp: bool,
    /// Asks the person about a workspace server (none: no one to ask).
    pub prompt: Option<&'a (dyn Fn(&Candidate) -> bool + Send + Sync)>,
}

impl std::fmt::Debug for McpSignIn<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSignIn").field("workspace", &self.workspace).finish_non_exhaustive()
    }
}

impl McpSignIn<'_> {
    /// The HTTP server `name` with its URL, after consent.
    fn server(&self, name: &str) -> Result<(ServerConfig, String), SignInError> {
        let (consent, notices) =
            ConsentPolicy::for_workspace(self.config, self.workspace, self.allow_project_mcp, self.prompt);
        let wanted = |names: &[String]| names.iter().filter(|n| *n == name).cloned().collect();
        let (servers, more) = tackle_mcp::client::servers(self.config, self.workspace, &consent, true, &wanted);
        let Some(server) = servers.into_iter().next() else {
            let why = notices.iter().chain(&more).find(|line| line.contains(&format!("'{name}'"))).cloned();
            return Err(SignInError::NotFound { name: name.to_owned(), notice: why });
        };
        let url = match &server.endpoint {
            Endpoint::Http { url, .. } => url.clone(),
            _ => return Err(SignInError::NotHttp(name.to_owned())),
        };
        Ok((server, url))
    }

    /// Runs the sign-in of `name` (the URL goes to `$BROWSER`, the desktop, or stderr) and
    /// stores its tokens; the line to show.
    pub async fn login(&self, name: &str) -> Result<String, SignInError> {
        let (server, url) = self.server(name)?;
        let Endpoint::Http { headers, oauth: settings, .. } = &server.endpoint else {
            return Err(SignInError::NotHttp(name.to_owned()));
        };
        if oauth::has_static_authorization(headers) {
            return Err(SignInError::StaticAuthorization(name.to_owned()));
        }
        let store = TokenStore::for_user(&url, self.workspace)?;
        let path = store.path().to_path_buf();
        let sign_in = SignIn::new(name, &url, settings.clone(), store, Opener::from_env(), true);
        oauth::login(&sign_in).await?;
        Ok(format!("Signed in to MCP server {name}; the tokens are in {}.", path.display()))
    }

    /// Forgets the tokens of `name`; the line to show.
    pub fn logout(&self, name: &str) -> Result<String, SignInError> {
        let (_, url) = self.server(name)?;
        let store = TokenStore::for_user(&url, self.workspace)?;
        Ok(if oauth::logout(&store)? {
            format!("Signed out of MCP server {name}.")
        } else {
            format!("MCP server {name} had no stored sign-in.")
        })
    }
}
