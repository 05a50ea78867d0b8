//! The web tools (docs/reference/tools.md#web_fetch, #web_search): [`fetch`] (`web_fetch`)
//! behind the address guard [`guard`], with the body rules of [`body`], the HTML conversion
//! of [`markdown`] and the cache of [`cache`]; and [`search`] (`web_search`), present when the
//! user config names a search backend.

pub mod body;
pub mod cache;
pub mod fetch;
pub mod guard;
pub mod markdown;
pub mod search;

pub use fetch::{WebFetch, WebSettings};
pub use search::{SearchBackend, WebSearch};

/// Installs the process's TLS provider (ring) if none is yet: reqwest is built without one.
fn ensure_tls_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
