//! The loopback end of the authorization redirect: `http://127.0.0.1:PORT/callback`, bound to
//! 127.0.0.1 only. It answers every request; only a `GET /callback` whose `state` is the one
//! this flow sent ends the wait (anything else on the machine can connect, and a guessed or
//! replayed redirect must not complete the sign-in). An `error` from the authorization server
//! with the right state ends it too, as a failure.

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// How long the person has to sign in.
pub const SIGN_IN_WINDOW: Duration = Duration::from_secs(300);

/// The largest request head read.
const MAX_HEAD: usize = 16 * 1024;

/// A bound callback listener.
#[derive(Debug)]
pub struct Callback {
    listener: TcpListener,
    port: u16,
}

/// What the redirect carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The whole callback URL (code, state, and `iss` when the server sends it).
    pub url: String,
    pub code: String,
    pub state: String,
}

/// Why the redirect did not bring a code.
#[derive(Debug, thiserror::Error)]
pub enum CallbackError {
    #[error("cannot listen on 127.0.0.1:{port} for the sign-in redirect: {source}")]
    Listen { port: u16, source: std::io::Error },
    #[error("no sign-in completed within {} s", .0.as_secs())]
    Timeout(Duration),
    /// The authorization server redirected with `error` (and its description).
    #[error("the authorization server refused the sign-in ({error}{})", description.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    Refused { error: String, description: Option<String> },
    #[error("the sign-in redirect carried no code")]
    NoCode,
}

impl Callback {
    /// Binds 127.0.0.1:`port` (0: any free port).
    pub async fn bind(port: u16) -> Result<Callback, CallbackError> {
        let listen = |source| CallbackError::Listen { port, source };
        let listener = TcpListener::bind(("127.0.0.1", port)).await.map_err(listen)?;
        let port = listener.local_addr().map_err(listen)?.port();
        Ok(Callback { listener, port })
    }

    /// The redirect URI to register and send.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    /// Waits for the redirect with `state`, at most `window`.
    pub async fn wait(&self, state: &str, window: Duration) -> Result<Redirect, CallbackError> {
        tokio::time::timeout(window, async {
            loop {
                let Ok((stream, _)) = self.listener.accept().await else { continue };
                if let Some(outcome) = self.serve(stream, state).await {
                    return outcome;
                }
            }
        })
        .await
        .map_err(|_| CallbackError::Timeout(window))?
    }

    /// Answers one connection; `Some` when it ended the flow.
    async fn serve(&self, mut stream: TcpStream, state: &str) -> Option<Result<Redirect, CallbackError>> {
        let head = tokio::time::timeout(Duration::from_secs(10), read_head(&mut stream)).await.ok()??;
        let target = head.lines().next()?.strip_prefix("GET ")?.split(' ').next()?.to_owned();
        let url = reqwest::Url::parse(&format!("http://127.0.0.1:{}{target}", self.port)).ok()?;
        let param = |name: &str| url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
        let outcome = if url.path() != "/callback" {
            None
        } else if param("state").as_deref() != Some(state) {
            respond(&mut stream, "400 Bad Request", "This sign-in link is not the one Tackle is waiting for.").await;
            return None;
        } else if let Some(error) = param("error") {
            Some(Err(CallbackError::Refused { error, description: param("error_description") }))
        } else if let Some(code) = param("code") {
            Some(Ok(Redirect { url: url.to_string(), code, state: state.to_owned() }))
        } else {
            Some(Err(CallbackError::NoCode))
        };
        match &outcome {
            None => respond(&mut stream, "404 Not Found", "Not found.").await,
            Some(Ok(_)) => respond(&mut stream, "200 OK", "Signed in. You can close this window.").await,
            Some(Err(why)) => respond(&mut stream, "400 Bad Request", &why.to_string()).await,
        }
        outcome
    }
}

async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 || head.len() + n > MAX_HEAD {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(head).ok()
}

async fn respond(stream: &mut TcpStream, status: &str, text: &str) {
    let body = format!("<!doctype html><title>Tackle</title><p>{}</p>\n", html_escape(text));
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port: u16, target: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream.write_all(format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes()).await.unwrap();
        let mut out = String::new();
        stream.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn only_the_right_state_ends_the_wait() {
        let callback = Callback::bind(0).await.unwrap();
        let port = callback.port;
        assert!(callback.redirect_uri().starts_with("http://127.0.0.1:"));
        let waiter = tokio::spawn(async move { callback.wait("s3cret", Duration::from_secs(10)).await });
        assert!(get(port, "/favicon.ico").await.starts_with("HTTP/1.1 404"));
        assert!(get(port, "/callback?code=evil&state=guess").await.starts_with("HTTP/1.1 400"));
        assert!(get(port, "/callback?code=evil").await.starts_with("HTTP/1.1 400"));
        let ok = get(port, "/callback?code=the-code&state=s3cret&iss=https%3A%2F%2Fas").await;
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        let redirect = waiter.await.unwrap().unwrap();
        assert_eq!(redirect.code, "the-code");
        assert!(redirect.url.contains("iss="), "{}", redirect.url);
    }

    #[tokio::test]
    async fn an_error_redirect_fails_the_flow_and_silence_times_out() {
        let callback = Callback::bind(0).await.unwrap();
        let port = callback.port;
        let waiter = tokio::spawn(async move { callback.wait("st", Duration::from_secs(10)).await });
        get(port, "/callback?error=access_denied&error_description=%3Cb%3Eno%3C%2Fb%3E&state=st").await;
        let err = waiter.await.unwrap().unwrap_err();
        assert!(err.to_string().contains("access_denied: <b>no</b>"), "{err}");
        let quiet = Callback::bind(0).await.unwrap();
        assert!(quiet.wait("st", Duration::from_millis(50)).await.unwrap_err().to_string().contains("no sign-in"));
    }
}
