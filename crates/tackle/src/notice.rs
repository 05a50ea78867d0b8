//! Notices for the person (an ignored workspace setting, an MCP server left out, commands
//! running without a sandbox). A library never prints: notices go to the callback the embedder
//! gave ([`crate::SessionBuilder::on_notice`]); the command line prints them on stderr.

use std::sync::Arc;

/// Where notices go.
#[derive(Clone)]
pub(crate) struct Notice(Arc<dyn Fn(&str) + Send + Sync>);

impl Notice {
    pub(crate) fn new(callback: impl Fn(&str) + Send + Sync + 'static) -> Notice {
        Notice(Arc::new(callback))
    }

    /// Tells the person one line.
    pub(crate) fn say(&self, line: &str) {
        (self.0)(line);
    }
}

impl Default for Notice {
    /// Without a callback, notices are logged (`tracing`, level info).
    fn default() -> Self {
        Notice::new(|line| tracing::info!("{line}"))
    }
}
