//! The `domain:` specifier of a rule (`WebFetch(domain:example.com)`,
//! docs/reference/safety.md#rule-syntax): the host a rule names and the host of a URL, both in
//! one canonical form, so a rule cannot be dodged by spelling the same host another way.
//!
//! The canonical form is what the `url` crate makes of a host under the WHATWG URL rules (the
//! ones every browser and HTTP client here applies): lower case, IDNs as punycode, IPv4
//! addresses in any notation (`2130706433`, `0177.0.0.1`) as dotted decimal, IPv6 addresses
//! compressed without brackets; one trailing dot dropped (`example.com.` is `example.com`).
//! A URL's user information and port are not part of its host: `http://allowed.com@evil.com/`
//! is `evil.com`, and a rule covers every port of its host.

use std::net::Ipv6Addr;

use url::{Host, Url};

/// The hosts a `domain:` rule covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainPattern {
    /// `domain:example.com`: that host only (not its subdomains).
    Exact(String),
    /// `domain:*.example.com`: every subdomain of `example.com`, at any depth, but not
    /// `example.com` itself.
    Subdomains(String),
}

impl DomainPattern {
    /// Parses the part after `domain:`; the error says what is wrong.
    pub fn parse(text: &str) -> Result<DomainPattern, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("'domain:' needs a host name or an IP address, as in domain:example.com".to_owned());
        }
        if let Some(parent) = text.strip_prefix("*.") {
            if parent.contains('*') {
                return Err("'*' is allowed only as the first label, as in domain:*.example.com".to_owned());
            }
            return match canonical_rule_host(parent)? {
                Canonical::Name(name) => Ok(DomainPattern::Subdomains(name)),
                Canonical::Address(_) => Err("'*.' goes before a host name, not an IP address".to_owned()),
            };
        }
        if text.contains('*') {
            return Err("'*' is allowed only as the first label, as in domain:*.example.com".to_owned());
        }
        let (Canonical::Name(host) | Canonical::Address(host)) = canonical_rule_host(text)?;
        Ok(DomainPattern::Exact(host))
    }

    /// Whether the pattern covers `host` (canonical, from [`url_host`]).
    pub fn matches(&self, host: &str) -> bool {
        match self {
            DomainPattern::Exact(exact) => host == exact,
            DomainPattern::Subdomains(parent) => {
                host.strip_suffix(parent.as_str()).is_some_and(|label| label.len() > 1 && label.ends_with('.'))
            }
        }
    }
}

enum Canonical {
    Name(String),
    Address(String),
}

/// The canonical form of the host a rule names: refused when it holds anything but a host.
fn canonical_rule_host(text: &str) -> Result<Canonical, String> {
    let bare = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')).unwrap_or(text);
    if let Ok(v6) = bare.parse::<Ipv6Addr>() {
        return Ok(Canonical::Address(v6.to_string()));
    }
    if text.contains(['/', '@', '?', '#', '\\', ':']) || text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "'{text}' is not a host: write a host name or an IP address alone (no scheme, port, path or user)"
        ));
    }
    let url = Url::parse(&format!("http://{text}/")).map_err(|err| format!("'{text}' is not a valid host: {err}"))?;
    match url.host() {
        Some(Host::Domain(name)) => {
            let name = name.strip_suffix('.').unwrap_or(name);
            if name.is_empty() || name.ends_with('.') {
                return Err(format!("'{text}' is not a valid host"));
            }
            Ok(Canonical::Name(name.to_owned()))
        }
        Some(Host::Ipv4(v4)) => Ok(Canonical::Address(v4.to_string())),
        Some(Host::Ipv6(v6)) => Ok(Canonical::Address(v6.to_string())),
        None => Err(format!("'{text}' is not a valid host")),
    }
}

/// The canonical host of `url` (see the module's header), or `None` when `url` is no URL
/// with a host.
pub fn url_host(url: &str) -> Option<String> {
    host_of(&Url::parse(url).ok()?)
}

/// The canonical host of a parsed URL.
pub fn host_of(url: &Url) -> Option<String> {
    match url.host()? {
        Host::Domain(name) => {
            let name = name.strip_suffix('.').unwrap_or(name);
            (!name.is_empty()).then(|| name.to_ascii_lowercase())
        }
        Host::Ipv4(v4) => Some(v4.to_string()),
        Host::Ipv6(v6) => Some(v6.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(text: &str) -> DomainPattern {
        DomainPattern::parse(text).unwrap()
    }

    fn covers(rule: &str, url: &str) -> bool {
        url_host(url).is_some_and(|host| pattern(rule).matches(&host))
    }

    #[test]
    fn a_rule_and_a_url_meet_in_one_canonical_form() {
        assert!(covers("example.com", "https://example.com/a?b"));
        assert!(covers("EXAMPLE.com", "https://Example.COM/"));
        assert!(covers("example.com.", "https://example.com/"));
        assert!(covers("example.com", "https://example.com./"));
        assert!(covers("example.com", "http://example.com:8080/"));
        assert!(covers("bücher.example", "https://xn--bcher-kva.example/"));
        assert!(covers("xn--bcher-kva.example", "https://BÜCHER.example/"));
        assert!(covers("127.0.0.1", "http://2130706433/"));
        assert!(covers("127.0.0.1", "http://0177.0.0.1/"));
        assert!(covers("127.0.0.1", "http://0x7f.1/"));
        assert!(covers("::1", "http://[::1]:80/"));
        assert!(covers("[::1]", "http://[0:0:0:0:0:0:0:1]/"));
        assert!(covers("::ffff:127.0.0.1", "http://[::ffff:7f00:1]/"));
    }

    #[test]
    fn hostile_urls_are_judged_by_the_host_they_reach() {
        assert!(!covers("allowed.com", "http://allowed.com@evil.com/"));
        assert!(!covers("allowed.com", "http://allowed.com:pw@evil.com/"));
        assert!(!covers("allowed.com", "http://allowed.com.evil.com/"));
        assert!(!covers("allowed.com", "http://evil.com/allowed.com"));
        assert!(!covers("allowed.com", "http://evil.com/?u=http://allowed.com"));
        assert!(!covers("allowed.com", "http://evilallowed.com/"));
        assert!(!covers("allowed.com", "http://sub.allowed.com/"));
        assert!(!covers("127.0.0.1", "http://127.0.0.2/"));
        assert!(!covers("127.0.0.1", "http://[::ffff:127.0.0.1]/"));
        assert!(!covers("localhost", "http://127.0.0.1/"));
        assert_eq!(url_host("http://a@evil.com\\@allowed.com/").as_deref(), Some("evil.com"));
        // No host at all: nothing to match.
        assert_eq!(url_host("file:///etc/passwd"), None);
        assert_eq!(url_host("not a url"), None);
        assert_eq!(url_host("http://[fe80::1%25eth0]/"), None);
    }

    #[test]
    fn a_wildcard_covers_the_subdomains_only() {
        assert!(covers("*.example.com", "https://a.example.com/"));
        assert!(covers("*.example.com", "https://a.b.EXAMPLE.com./"));
        assert!(!covers("*.example.com", "https://example.com/"));
        assert!(!covers("*.example.com", "https://badexample.com/"));
        assert!(!covers("*.example.com", "https://example.com.evil.net/"));
    }

    #[test]
    fn malformed_domain_rules_say_what_is_wrong() {
        for (text, why) in [
            ("", "needs a host"),
            ("example.com:8080", "not a host"),
            ("http://example.com", "not a host"),
            ("example.com/path", "not a host"),
            ("user@example.com", "not a host"),
            ("exa mple.com", "not a host"),
            ("*", "first label"),
            ("a.*.example.com", "first label"),
            ("*.*.example.com", "first label"),
            ("*.127.0.0.1", "not an IP address"),
            ("exa%mple.com", "not a valid host"),
        ] {
            let err = DomainPattern::parse(text).unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
        }
    }
}
