//! When and how long to wait before another attempt (docs/reference/providers.md#errors-retries-and-timeouts): exponential backoff
//! with jitter, the server's own `retry-after-ms` / `Retry-After` when it gives one, and
//! `x-should-retry`.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

/// The retry settings of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Extra attempts after the first (`max_retries`, default 4).
    pub max_retries: u32,
    /// Extra attempts for a stream that fails after its first event (default 2).
    pub stream_retries: u32,
    /// The first backoff delay (1 s).
    pub base: Duration,
    /// The longest backoff delay (30 s).
    pub cap: Duration,
    /// A server-requested delay longer than this is not waited for (120 s).
    pub max_server_delay: Duration,
}

/// Extra attempts when nothing answers at the address (connection refused): a server that is
/// not running rarely starts within seconds, and the person waits for every retry.
pub const MAX_CONNECT_RETRIES: u32 = 2;

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            stream_retries: 2,
            base: Duration::from_secs(1),
            cap: Duration::from_secs(30),
            max_server_delay: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The backoff before attempt `attempt + 1` (`attempt` counts from 1):
    /// `base × 2^(attempt-1)` with jitter ×[0.8, 1.2], capped.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let exponent = attempt.saturating_sub(1).min(20);
        let raw = self.base.saturating_mul(1u32 << exponent);
        let jitter: f64 = 0.8 + rand::random::<f64>() * 0.4;
        raw.mul_f64(jitter).min(self.cap)
    }

    /// The delay before the next attempt: the server's when it gave one, else the backoff.
    /// `None` means the server asked for more than `max_server_delay`: give up.
    pub fn delay(&self, attempt: u32, server: Option<Duration>) -> Option<Duration> {
        match server {
            Some(delay) if delay > self.max_server_delay => None,
            Some(delay) => Some(delay),
            None => Some(self.backoff(attempt)),
        }
    }
}

/// The delay a response asks for: `retry-after-ms`, else `Retry-After` in seconds or as an
/// HTTP date.
pub fn server_delay(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = text("retry-after")?;
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO))
}

/// `x-should-retry: true|false`, when present.
pub fn should_retry(headers: &HeaderMap) -> Option<bool> {
    match headers.get("x-should-retry").and_then(|v| v.to_str().ok()).map(str::trim) {
        Some("true") => Some(true),
        Some("false") => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn backoff_doubles_with_jitter_and_a_cap() {
        let policy = RetryPolicy::default();
        for attempt in 1..=8 {
            let nominal = Duration::from_secs(1u64 << (attempt - 1));
            let delay = policy.backoff(attempt);
            assert!(delay >= nominal.mul_f64(0.8).min(policy.cap), "{attempt}: {delay:?}");
            assert!(delay <= nominal.mul_f64(1.2).min(policy.cap), "{attempt}: {delay:?}");
        }
    }

    #[test]
    fn server_delays_are_read_in_every_form() {
        assert_eq!(server_delay(&headers(&[("retry-after", "3")])), Some(Duration::from_secs(3)));
        assert_eq!(
            server_delay(&headers(&[("retry-after-ms", "250"), ("retry-after", "9")])),
            Some(Duration::from_millis(250))
        );
        let date = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(60));
        let delay = server_delay(&headers(&[("retry-after", &date)])).unwrap();
        assert!(delay > Duration::from_secs(55) && delay <= Duration::from_secs(60), "{delay:?}");
        assert_eq!(server_delay(&headers(&[("retry-after", "soon")])), None);
        assert_eq!(server_delay(&HeaderMap::new()), None);
    }

    #[test]
    fn long_server_delays_give_up_and_should_retry_is_read() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay(1, Some(Duration::from_secs(121))), None);
        assert_eq!(policy.delay(1, Some(Duration::from_secs(5))), Some(Duration::from_secs(5)));
        assert_eq!(should_retry(&headers(&[("x-should-retry", "false")])), Some(false));
        assert_eq!(should_retry(&HeaderMap::new()), None);
    }
}
