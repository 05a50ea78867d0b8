//! `tackle mcp serve`, the real binary, for the cli's MCP tests: the HTTP server as a child
//! process, one raw HTTP/1.1 exchange over loopback, and the server's resident memory.

#![allow(dead_code)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

pub const TACKLE: &str = env!("CARGO_BIN_EXE_tackle");

/// `tackle mcp serve --http 127.0.0.1:0 ...`, killed on drop.
pub struct HttpServe {
    pub child: Child,
    pub url: String,
    /// What the server wrote on stderr before `listening on` (notices, logs).
    pub preamble: String,
}

impl HttpServe {
    pub fn start(workspace: &std::path::Path, extra: &[&str]) -> HttpServe {
        HttpServe::start_with(workspace, extra, &[])
    }

    /// With more environment variables (`TACKLE_MCP_TOKEN`, `TACKLE_LOG`, a
    /// `TACKLE_CONFIG_DIR` of the test's own); its stderr after `listening on` is left to
    /// [`HttpServe::stop`].
    pub fn start_with(workspace: &std::path::Path, extra: &[&str], envs: &[(&str, &str)]) -> HttpServe {
        let mut command = Command::new(TACKLE);
        command.args(["mcp", "serve", "--http", "127.0.0.1:0", "--workspace"]).arg(workspace).args(extra);
        command.env("TACKLE_CONFIG_DIR", workspace.join(".no-user-config"));
        for (key, value) in envs {
            command.env(key, value);
        }
        let mut child = command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let (mut line, mut preamble) = (String::new(), String::new());
        // Notices come first, and logs with TACKLE_LOG set.
        while !line.starts_with("listening on ") {
            preamble.push_str(&line);
            line.clear();
            assert!(stderr.read_line(&mut line).unwrap() > 0, "the server ended before listening: {preamble}");
        }
        let url = line.trim().strip_prefix("listening on ").unwrap().to_owned();
        assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{url}");
        child.stderr = Some(stderr.into_inner());
        HttpServe { child, url, preamble }
    }

    /// Stops the server and returns the rest of its stderr.
    pub fn stop(mut self) -> String {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let _ = self.child.wait();
        let mut rest = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            let _ = stderr.read_to_string(&mut rest);
        }
        rest
    }

    /// `host:port` of the server.
    fn authority(&self) -> &str {
        self.url.trim_start_matches("http://").trim_end_matches("/mcp")
    }

    /// One POST to `/mcp` on a fresh connection: status, headers (lower-case names) and body.
    pub fn post(&self, headers: &[(&str, &str)], body: &str) -> (u16, Vec<(String, String)>, String) {
        let mut stream = TcpStream::connect(self.authority()).unwrap();
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, \
             text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.authority(),
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        let mut lines = head.lines();
        let status = lines.next().and_then(|line| line.split(' ').nth(1)).and_then(|code| code.parse().ok()).unwrap();
        let headers = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
            .collect();
        (status, headers, body.to_owned())
    }

    /// The JSON-RPC messages of an answer's body: one JSON document, or the `data:` lines of
    /// an event stream.
    pub fn messages(body: &str) -> Vec<serde_json::Value> {
        match serde_json::from_str(body) {
            Ok(value) => vec![value],
            Err(_) => body
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str(data.trim()).ok())
                .collect(),
        }
    }

    /// Opens a session with `headers` on every request; returns its id.
    pub fn open_session(&self, headers: &[(&str, &str)]) -> String {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let (status, answer_headers, body) = self.post(headers, init);
        assert_eq!(status, 200, "{body}");
        let session = answer_headers.iter().find(|(name, _)| name == "mcp-session-id").unwrap().1.clone();
        let mut with_session = headers.to_vec();
        with_session.push(("Mcp-Session-Id", &session));
        let (status, _, _) = self.post(&with_session, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(status, 202);
        session
    }

    /// The server's resident memory, in KB.
    pub fn rss_kb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|line| line.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
