//! `web_fetch`'s cache (docs/reference/tools.md#web_fetch): a page fetched in the last 15
//! minutes is not fetched again in the same session, by the URL asked for or the URL the
//! redirects ended at. In memory only, a bounded number of pages.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a page is kept.
pub const TTL: Duration = Duration::from_secs(15 * 60);
/// The most pages kept; the oldest goes first.
const MAX_PAGES: usize = 64;

/// A fetched page as the tool shows it (before the `prompt` heading).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedPage {
    /// The URL the redirects ended at.
    pub final_url: String,
    /// The text shown for the page.
    pub text: String,
}

/// The pages of one session, by URL (kept in the session state).
#[derive(Debug, Default)]
pub struct PageCache {
    pages: Mutex<HashMap<String, (Instant, Arc<CachedPage>)>>,
}

impl PageCache {
    /// The page fetched from `url` less than [`TTL`] ago, if any.
    pub fn get(&self, url: &str) -> Option<Arc<CachedPage>> {
        let pages = self.pages.lock().ok()?;
        let (at, page) = pages.get(url)?;
        (at.elapsed() < TTL).then(|| Arc::clone(page))
    }

    /// Keeps `page` under the URL asked for and its final URL.
    pub fn put(&self, asked: &str, page: CachedPage) {
        let Ok(mut pages) = self.pages.lock() else { return };
        pages.retain(|_, (at, _)| at.elapsed() < TTL);
        while pages.len() + 2 > MAX_PAGES {
            let Some(oldest) = pages.iter().min_by_key(|(_, (at, _))| *at).map(|(url, _)| url.clone()) else { break };
            pages.remove(&oldest);
        }
        let now = Instant::now();
        let page = Arc::new(page);
        pages.insert(page.final_url.clone(), (now, Arc::clone(&page)));
        pages.insert(asked.to_owned(), (now, page));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(url: &str) -> CachedPage {
        CachedPage { final_url: url.to_owned(), text: format!("text of {url}") }
    }

    #[test]
    fn a_page_is_found_by_either_url_and_the_oldest_goes_first() {
        let cache = PageCache::default();
        cache.put("http://a/", page("http://a/final"));
        assert_eq!(cache.get("http://a/").unwrap().text, "text of http://a/final");
        assert_eq!(cache.get("http://a/final").unwrap().final_url, "http://a/final");
        assert!(cache.get("http://b/").is_none());
        for i in 0..100 {
            cache.put(&format!("http://p{i}/"), page(&format!("http://p{i}/")));
        }
        assert!(cache.get("http://a/").is_none());
        assert!(cache.get("http://p99/").is_some());
        assert!(cache.pages.lock().unwrap().len() <= MAX_PAGES);
    }
}
