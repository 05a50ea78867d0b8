//! `tackle` on a pseudo-terminal that is its controlling terminal, as in a person's shell: keys
//! typed there (Ctrl-C included) reach it as they would, `/dev/tty` is that terminal, and what it
//! printed can be read raw or as the screen shows it once the cursor movements are applied
//! (`vt100`).

use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The terminal's size.
pub const ROWS: u16 = 40;
pub const COLS: u16 = 100;

/// How stdin is connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdin {
    /// The terminal.
    Terminal,
    /// A pipe holding the given text, then closed (`git diff | tackle run -`).
    Pipe,
}

/// Whether the terminal becomes the process's controlling terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Controlling {
    Yes,
    /// A new session without a controlling terminal (`setsid`), stdout and stderr still on the
    /// terminal: `/dev/tty` cannot be opened.
    No,
}

/// A running `tackle` on a pseudo-terminal.
pub struct Pty {
    master: std::fs::File,
    seen: Arc<Mutex<Vec<u8>>>,
    pub child: Child,
}

/// `tackle` with no API keys, no model from the environment and no user configuration.
pub fn tackle_command(workspace: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tackle"));
    command
        .current_dir(workspace)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("TACKLE_MODEL")
        .env_remove("NO_COLOR")
        .env_remove("TACKLE_TRUST_WORKSPACE")
        .env_remove("TACKLE_ALLOW_PROJECT_MCP")
        .env("TACKLE_CONFIG_DIR", workspace.join(".test-user-config"))
        .env("TERM", "xterm-256color");
    command
}

impl Pty {
    /// Starts `tackle ARGS` in `workspace` on a new terminal, stdin as `stdin` says (a pipe
    /// gets `input`, then end of input).
    pub fn spawn(workspace: &Path, args: &[&str], stdin: Stdin, input: &str, controlling: Controlling) -> Pty {
        Pty::start(workspace, args, stdin, input, controlling, &[])
    }

    /// Starts `tackle ARGS` on a terminal that is also its stdin, with `env` set.
    pub fn spawn_with_env(workspace: &Path, args: &[&str], env: &[(&str, &str)]) -> Pty {
        Pty::start(workspace, args, Stdin::Terminal, "", Controlling::Yes, env)
    }

    fn start(
        workspace: &Path,
        args: &[&str],
        stdin: Stdin,
        input: &str,
        controlling: Controlling,
        env: &[(&str, &str)],
    ) -> Pty {
        let size = nix::pty::Winsize { ws_row: ROWS, ws_col: COLS, ws_xpixel: 0, ws_ypixel: 0 };
        let pty = nix::pty::openpty(Some(&size), None).unwrap();
        let slave = std::fs::File::from(pty.slave);
        let mut command = tackle_command(workspace);
        command
            .args(args)
            .envs(env.iter().copied())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave.try_clone().unwrap());
        match stdin {
            Stdin::Terminal => command.stdin(slave.try_clone().unwrap()),
            Stdin::Pipe => command.stdin(Stdio::piped()),
        };
        let take_terminal = controlling == Controlling::Yes;
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // stderr is the terminal whatever stdin is.
                if take_terminal && libc::ioctl(2, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command.spawn().unwrap();
        drop(slave);
        if let Some(mut pipe) = child.stdin.take() {
            pipe.write_all(input.as_bytes()).unwrap();
        }
        let master = std::fs::File::from(pty.master);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().unwrap();
        let sink = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Pty { master, seen, child }
    }

    /// Everything printed so far, as text (escape sequences included).
    pub fn raw(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }

    /// What a terminal shows after everything printed so far: the lines of a screen tall enough
    /// that nothing scrolled away, trailing blanks trimmed.
    pub fn screen(&self) -> String {
        let mut parser = vt100::Parser::new(2000, COLS, 0);
        // The terminal turns each "\n" into "\r\n" (onlcr); the raw bytes already have them.
        parser.process(&self.seen.lock().unwrap());
        let text = parser.screen().contents();
        text.lines().map(str::trim_end).collect::<Vec<_>>().join("\n").trim_end().to_owned()
    }

    /// Waits (at most 20 s) until the raw output holds `text` `count` times.
    pub fn expect(&self, text: &str, count: usize) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.raw().matches(text).count() < count {
            assert!(Instant::now() < deadline, "no {text:?} (x{count}) in:\n{}", self.raw());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types `keys` on the terminal, as they are.
    pub fn type_keys(&mut self, keys: &str) {
        self.master.write_all(keys.as_bytes()).unwrap();
        self.master.flush().unwrap();
    }

    /// Types `line` and Enter.
    pub fn type_line(&mut self, line: &str) {
        self.type_keys(&format!("{line}\r"));
    }

    /// Waits (at most 20 s) for the process to end; its exit code (`None` if a signal ended it).
    pub fn wait(&mut self) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader take what the process printed last.
                std::thread::sleep(Duration::from_millis(100));
                return status.code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("tackle did not end:\n{}", self.raw());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Processes on this machine whose command line contains `needle` (from /proc).
pub fn processes_running(needle: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().chars().all(|c| c.is_ascii_digit()))
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " "))
        .filter(|line| line.contains(needle))
        .collect()
}
