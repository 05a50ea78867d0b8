//! Showing the person an authorization URL (docs/mcp.md#remote-servers-and-sign-in): only an
//! `https:` URL, or `http:` to a loopback address, is ever opened, since the URL comes from
//! metadata the remote server chose. `$BROWSER` is a command split as a shell would split it
//! (never run through a shell), with the URL as its last argument; without it the desktop's
//! opener (`xdg-open`, when a display is there); the URL is printed either way.

use std::net::IpAddr;
use std::process::Stdio;

/// Why an authorization URL was not opened.
#[derive(Debug, thiserror::Error)]
pub enum NotOpened {
    #[error("the authorization URL is not a URL ({0})")]
    NotAUrl(#[source] url::ParseError),
    #[error("the authorization URL {0} is neither https: nor http: to a loopback address; it was not opened")]
    Refused(String),
}

/// Why a URL may not be opened, or `Ok` when it may.
pub fn check_openable(url: &str) -> Result<reqwest::Url, NotOpened> {
    let parsed = reqwest::Url::parse(url).map_err(NotOpened::NotAUrl)?;
    match parsed.scheme() {
        "https" if parsed.host_str().is_some() => Ok(parsed),
        "http" if is_loopback(&parsed) => Ok(parsed),
        _ => Err(NotOpened::Refused(url.to_owned())),
    }
}

fn is_loopback(url: &reqwest::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// How the URL reaches the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opener {
    /// `$BROWSER`, split into words.
    Browser(Vec<String>),
    /// The desktop's opener.
    Desktop,
    /// Neither: the URL is only printed.
    PrintOnly,
}

impl Opener {
    /// From the environment: `$BROWSER`, else `xdg-open` under a display, else nothing.
    pub fn from_env() -> Opener {
        if let Some(browser) = std::env::var("BROWSER").ok().filter(|b| !b.trim().is_empty()) {
            return match shlex::split(&browser) {
                Some(words) if !words.is_empty() => Opener::Browser(words),
                _ => {
                    tracing::warn!("$BROWSER cannot be split into words; the URL is only printed");
                    Opener::PrintOnly
                }
            };
        }
        let display =
            ["DISPLAY", "WAYLAND_DISPLAY"].iter().any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()));
        if display { Opener::Desktop } else { Opener::PrintOnly }
    }

    /// Whether a flow can reach the person without a terminal.
    pub fn can_open(&self) -> bool {
        !matches!(self, Opener::PrintOnly)
    }

    /// Prints the URL on stderr and opens it. Fails only for a URL that may not be opened.
    pub fn open(&self, url: &str, server: &str) -> Result<(), NotOpened> {
        check_openable(url)?;
        eprintln!("tackle: to sign in to MCP server {server}, open {url}");
        let words: Vec<String> = match self {
            Opener::Browser(words) => words.iter().cloned().chain([url.to_owned()]).collect(),
            Opener::Desktop => vec!["xdg-open".to_owned(), url.to_owned()],
            Opener::PrintOnly => return Ok(()),
        };
        let Some((program, args)) = words.split_first() else { return Ok(()) };
        let spawned = std::process::Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        match spawned {
            // Reaped in the background: a browser may keep running.
            Ok(mut child) => {
                std::thread::spawn(move || child.wait());
            }
            Err(err) => eprintln!("tackle: could not start {program}: {err}; open the URL yourself"),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http_is_opened() {
        assert!(check_openable("https://auth.example.com/authorize?x=1").is_ok());
        assert!(check_openable("http://127.0.0.1:8080/authorize").is_ok());
        assert!(check_openable("http://[::1]:8080/authorize").is_ok());
        assert!(check_openable("http://localhost:1/a").is_ok());
        for bad in [
            "http://auth.example.com/authorize",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "data:text/html,x",
            "ftp://x/y",
            "http://127.0.0.1.evil.example/a",
            "-flag",
            "https://",
        ] {
            assert!(check_openable(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_browser_command_gets_the_url_as_its_last_word_without_a_shell() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("args");
        let script = dir.path().join("browser.sh");
        std::fs::write(&script, format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\n", out.display())).unwrap();
        std::os::unix::fs::PermissionsExt::set_mode(&mut std::fs::metadata(&script).unwrap().permissions(), 0o755);
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let words = shlex::split(&format!("'{}' --new-window 'a b'", script.display())).unwrap();
        let url = "https://auth.example.com/a?x=1&y=$(touch pwned);z";
        Opener::Browser(words).open(url, "s").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !out.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), format!("--new-window\na b\n{url}\n"));
        assert!(!std::path::Path::new("pwned").exists());
        assert!(Opener::Browser(vec!["true".into()]).open("http://evil.example/", "s").is_err());
    }
}
