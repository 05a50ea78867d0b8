//! The address guard of `web_fetch` (docs/reference/safety.md#web-fetch): a URL the model
//! chooses may reach only the public internet. Its scheme must be `http` or `https`, it may
//! carry no user information, and every address its host resolves to must be public: not
//! loopback, private, link-local, shared (CGNAT), unspecified, multicast, broadcast,
//! reserved, a cloud metadata address, nor an IPv6 form embedding one of those (IPv4-mapped,
//! -compatible, NAT64, 6to4, Teredo). A host an allow rule names (`WebFetch(domain:HOST)`) is
//! exempt. The guard resolves the name itself and the caller connects to exactly the
//! addresses it checked ([`Checked::addresses`]), so a second DNS answer cannot swap them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use url::{Host, Url};

/// Host names refused whatever they resolve to: the cloud metadata services.
const METADATA_NAMES: &[&str] = &["metadata.google.internal", "metadata", "metadata.goog"];

/// Why a URL is not fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Not an absolute URL.
    #[error("'{0}' is not a valid URL: {1}")]
    Invalid(String, String),
    /// A scheme other than http and https.
    #[error("only http and https URLs can be fetched, not {0}: URLs")]
    Scheme(String),
    /// `user:password@` in the URL.
    #[error("a URL with a user name or password ({0}) is not fetched")]
    Credentials(String),
    /// The host is a name or an address of the local machine or network.
    #[error("{host} is {what}, which web_fetch does not reach (allow it with the rule WebFetch(domain:{host}))")]
    Address {
        /// The host as the URL names it.
        host: String,
        /// What the address is (`a loopback address (127.0.0.1)`).
        what: String,
    },
    /// The name does not resolve.
    #[error("{host} cannot be resolved: {why}")]
    Resolve {
        /// The host.
        host: String,
        /// The resolver's message.
        why: String,
    },
}

/// A URL that passed the guard.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The URL.
    pub url: Url,
    /// The canonical host (tackle_policy::permission::domain::host_of).
    pub host: String,
    /// The addresses to connect to, when the host is a name (empty for an address literal).
    pub addresses: Vec<SocketAddr>,
}

/// Parses `raw` and checks its scheme and user information (no DNS yet).
pub fn parse(raw: &str) -> Result<Url, Refusal> {
    let url = Url::parse(raw.trim()).map_err(|err| Refusal::Invalid(raw.to_owned(), err.to_string()))?;
    check_form(&url)?;
    Ok(url)
}

fn check_form(url: &Url) -> Result<(), Refusal> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Refusal::Scheme(url.scheme().to_owned()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        let host = url.host_str().unwrap_or_default();
        return Err(Refusal::Credentials(format!("…@{host}")));
    }
    if url.host().is_none() {
        return Err(Refusal::Invalid(url.to_string(), "no host".to_owned()));
    }
    Ok(())
}

/// Checks `url` (scheme, user information, every address of its host) unless `exempt` says an
/// allow rule names the host, and resolves it. `exempt` is given the canonical host.
pub async fn check(url: Url, exempt: impl Fn(&str) -> bool) -> Result<Checked, Refusal> {
    check_form(&url)?;
    let host = tackle_policy::permission::domain::host_of(&url)
        .ok_or_else(|| Refusal::Invalid(url.to_string(), "no host".to_owned()))?;
    let allowed = exempt(&host);
    let port = url.port_or_known_default().unwrap_or(80);
    let addresses = match url.host() {
        Some(Host::Ipv4(v4)) => {
            refuse_address(&host, IpAddr::V4(v4), allowed)?;
            Vec::new()
        }
        Some(Host::Ipv6(v6)) => {
            refuse_address(&host, IpAddr::V6(v6), allowed)?;
            Vec::new()
        }
        _ => {
            if !allowed && METADATA_NAMES.contains(&host.as_str()) {
                return Err(Refusal::Address { host, what: "a cloud metadata service".to_owned() });
            }
            let resolved: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
                .await
                .map_err(|err| Refusal::Resolve { host: host.clone(), why: err.to_string() })?
                .collect();
            if resolved.is_empty() {
                return Err(Refusal::Resolve { host, why: "no address".to_owned() });
            }
            // Every address: a name with one public and one private address is refused, not
            // left to whichever the connection tries first.
            for address in &resolved {
                refuse_address(&host, address.ip(), allowed)?;
            }
            resolved
        }
    };
    Ok(Checked { url, host, addresses })
}

fn refuse_address(host: &str, ip: IpAddr, allowed: bool) -> Result<(), Refusal> {
    match classify(ip) {
        Some(what) if !allowed => {
            let shown = if host == ip.to_string() { what.to_owned() } else { format!("{what} ({ip})") };
            Err(Refusal::Address { host: host.to_owned(), what: shown })
        }
        _ => Ok(()),
    }
}

/// What `ip` is when it is not a public address (`None` for a public one).
pub fn classify(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        _ if ip == Ipv4Addr::new(169, 254, 169, 254) => "a cloud metadata address",
        _ if ip == Ipv4Addr::new(100, 100, 100, 200) => "a cloud metadata address",
        (0, _, _) => "an unspecified address",
        (127, _, _) => "a loopback address",
        (10, _, _) | (192, 168, _) => "a private address",
        (172, 16..=31, _) => "a private address",
        (169, 254, _) => "a link-local address",
        (100, 64..=127, _) => "a shared (CGNAT) address",
        (192, 0, 0) => "an IETF protocol address",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address",
        (198, 18..=19, _) => "a benchmarking address",
        (224..=239, _, _) => "a multicast address",
        _ if ip.is_broadcast() => "the broadcast address",
        (240..=255, _, _) => "a reserved address",
        _ => return None,
    })
}

fn classify_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let segments = ip.segments();
    // IPv6 forms that carry an IPv4 address: judged by that address.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4).or(Some("an IPv4-mapped address"));
    }
    let embedded = |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    Some(match segments {
        _ if ip.is_unspecified() => "an unspecified address",
        _ if ip.is_loopback() => "a loopback address",
        [0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254] => "a cloud metadata address",
        // IPv4-compatible (deprecated): ::a.b.c.d.
        [0, 0, 0, 0, 0, 0, hi, lo] => return classify_v4(embedded(hi, lo)).or(Some("an IPv4-compatible address")),
        // NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48).
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => return classify_v4(embedded(hi, lo)),
        [0x64, 0xff9b, 1, ..] => "a local NAT64 address",
        // 6to4: 2002:a.b.c.d::/48.
        [0x2002, hi, lo, ..] => return classify_v4(embedded(hi, lo)),
        // Teredo embeds an obfuscated client address: refused whole.
        [0x2001, 0, ..] => "a Teredo address",
        [0x2001, 0x0db8, ..] => "a documentation address",
        [first, ..] if first & 0xfe00 == 0xfc00 => "a unique local (private) address",
        [first, ..] if first & 0xffc0 == 0xfe80 => "a link-local address",
        [first, ..] if first & 0xffc0 == 0xfec0 => "a site-local address",
        [first, ..] if first & 0xff00 == 0xff00 => "a multicast address",
        [0x100, 0, 0, 0, ..] => "a discard address",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn what(text: &str) -> Option<&'static str> {
        classify(text.parse().unwrap())
    }

    #[test]
    fn local_and_special_addresses_are_classified() {
        for (address, expected) in [
            ("127.0.0.1", "a loopback address"),
            ("127.255.1.2", "a loopback address"),
            ("10.1.2.3", "a private address"),
            ("172.16.0.1", "a private address"),
            ("172.31.255.255", "a private address"),
            ("192.168.1.1", "a private address"),
            ("169.254.169.254", "a cloud metadata address"),
            ("169.254.1.1", "a link-local address"),
            ("100.64.0.1", "a shared (CGNAT) address"),
            ("100.127.255.255", "a shared (CGNAT) address"),
            ("0.0.0.0", "an unspecified address"),
            ("0.1.2.3", "an unspecified address"),
            ("224.0.0.1", "a multicast address"),
            ("255.255.255.255", "the broadcast address"),
            ("240.0.0.1", "a reserved address"),
            ("::1", "a loopback address"),
            ("::", "an unspecified address"),
            ("fc00::1", "a unique local (private) address"),
            ("fd12:3456::1", "a unique local (private) address"),
            ("fd00:ec2::254", "a cloud metadata address"),
            ("fe80::1", "a link-local address"),
            ("febf::1", "a link-local address"),
            ("ff02::1", "a multicast address"),
            ("::ffff:127.0.0.1", "a loopback address"),
            ("::ffff:169.254.169.254", "a cloud metadata address"),
            ("::ffff:10.0.0.1", "a private address"),
            ("::ffff:8.8.8.8", "an IPv4-mapped address"),
            ("::127.0.0.1", "a loopback address"),
            ("::10.0.0.1", "a private address"),
            ("64:ff9b::127.0.0.1", "a loopback address"),
            ("64:ff9b::a9fe:a9fe", "a cloud metadata address"),
            ("2002:7f00:1::", "a loopback address"),
            ("2002:c0a8:101::1", "a private address"),
            ("2001::1", "a Teredo address"),
        ] {
            assert_eq!(what(address), Some(expected), "{address}");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for address in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.216.34",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "64:ff9b::808:808",
            "2002:808:808::",
        ] {
            assert_eq!(what(address), None, "{address}");
        }
    }

    #[test]
    fn only_http_urls_without_credentials_are_taken() {
        for (url, refused) in [
            ("file:///etc/passwd", "not file:"),
            ("gopher://example.com/", "not gopher:"),
            ("data:text/plain,hi", "not data:"),
            ("ftp://example.com/", "not ftp:"),
            ("javascript:alert(1)", "not javascript:"),
            ("http://user:pw@example.com/", "user name or password"),
            ("http://allowed.com@evil.com/", "user name or password"),
            ("example.com", "not a valid URL"),
            ("http://[fe80::1%25eth0]/", "not a valid URL"),
        ] {
            let err = parse(url).unwrap_err().to_string();
            assert!(err.contains(refused), "{url}: {err}");
        }
        assert!(parse("HTTPS://Example.com/a").is_ok());
    }

    #[tokio::test]
    async fn every_spelling_of_a_local_address_is_refused_unless_a_rule_names_it() {
        for url in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://0x7f.0.0.1/",
            "http://127.1/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[0:0:0:0:0:ffff:7f00:1]/",
            "http://0/",
            "http://localhost/",
            "http://LOCALHOST./",
            "http://localhost./",
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00:ec2::254]/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://metadata.google.internal./",
        ] {
            let refused = check(parse(url).unwrap(), |_| false).await.unwrap_err();
            assert!(matches!(refused, Refusal::Address { .. }), "{url}: {refused}");
        }
        let checked = check(parse("http://2130706433:9/x").unwrap(), |host| host == "127.0.0.1").await.unwrap();
        assert_eq!(checked.host, "127.0.0.1");
        let checked = check(parse("http://localhost:9/").unwrap(), |host| host == "localhost").await.unwrap();
        assert!(checked.addresses.iter().all(|a| a.ip().is_loopback() && a.port() == 9), "{:?}", checked.addresses);
        // An exemption for one host is not one for another at the same address.
        assert!(check(parse("http://127.0.0.1/").unwrap(), |host| host == "localhost").await.is_err());
    }
}
