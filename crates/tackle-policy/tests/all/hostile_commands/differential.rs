//! The differential harness (docs/reference/safety.md#threat-model): every command of
//! `tests/data/shell_corpus.txt` runs under real bash in a throwaway bubblewrap sandbox whose
//! programs are stubs that log their name, and the analysis must have reported every program
//! bash ran — or have called the command unanalyzable. Where tree-sitter-bash and bash read a
//! command differently, this is where it shows.
//!
//! The sandbox's `/usr/bin` (and `/bin`, `/sbin`, `/usr/sbin`, `/usr/local/bin`) holds only
//! stubs: one per name of [`STUBS`], each appending its name to a log. The wrappers
//! ([`REAL_WRAPPERS`]) then exec the real wrapper, which runs its command through the stubs in
//! turn; the shells exec the real bash; `busybox` and `time` exec the command they were given.
//! Everything else only logs. The policy-level outcome is checked for every command that ran
//! `rm`: in the default mode it is not allowed, and with a `Bash(rm:*)` or `Bash(rm *)` deny
//! rule it is denied even in bypass mode.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tackle_core::ToolSpec;
use tackle_core::permission::{Decision, PermissionMode, PermissionRequest};
use tackle_policy::permission::rule::RuleBase;
use tackle_policy::permission::rules::{RuleBook, RuleKind, RulePolicy};
use tackle_policy::shell::{analyze, program_name};

/// Programs that only log.
const STUBS: &[&str] = &[
    "rm", "ls", "cat", "git", "sed", "sort", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "date", "touch",
    "mv", "cp", "chmod", "chown", "mkdir", "rmdir", "ln", "curl", "wget", "python", "python3", "node", "npm", "cargo",
    "make", "uniq", "cut", "tr", "diff", "cmp", "basename", "dirname", "realpath", "stat", "du", "df", "tree", "file",
    "which", "tee", "awk", "perl", "ruby", "vim", "less", "more", "id", "whoami", "uname", "sleep", "printf", "echo",
    "true", "false", "test", "[", "pwd", "yes", "dd", "install", "truncate", "shred", "ssh", "scp", "rsync", "tar",
    "zip", "unzip", "gzip", "kill", "pkill", "mktemp", "readlink", "seq", "strace", "ltrace", "watch", "unshare",
    "sudo", "doas", "script", "fakeroot", "parallel", "su", "chroot", "x", "v", "evil", "payload", "a", "b",
];

/// Wrappers whose real program runs (it then runs its command through the stubs).
const REAL_WRAPPERS: &[&str] =
    &["xargs", "timeout", "nice", "nohup", "env", "stdbuf", "setsid", "flock", "ionice", "taskset", "chrt", "find"];

/// Wrappers written as small scripts, since the real one is not installed everywhere: they
/// skip their options as the real one does, then exec the command.
const SCRIPTED_WRAPPERS: &[(&str, &str)] = &[
    (
        "time",
        r#"while [ $# -gt 0 ]; do case "$1" in
  -o|-f) shift 2;; --output=*|--format=*) shift;; --output|--format) shift 2;;
  -[apqv]|--append|--portability|--quiet|--verbose) shift;; --) shift; break;; -*) exit 125;; *) break;; esac; done
[ $# -gt 0 ] && exec "$@""#,
    ),
    (
        "chronic",
        r#"while [ $# -gt 0 ]; do case "$1" in -e|-v|-ev|-ve) shift;; *) break;; esac; done
[ $# -gt 0 ] && exec "$@""#,
    ),
    ("busybox", r#"case "$1" in -*|'') exit 0;; esac; exec "$@""#),
];

/// Shells, which run the real bash.
const SHELLS: &[&str] = &["bash", "sh", "dash", "zsh", "ksh", "ash", "mksh"];

/// The corpus: one command per line; `⏎` stands for a newline; `#` starts a comment line.
fn corpus() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/shell_corpus.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).map(|l| l.replace('⏎', "\n")).collect()
}

struct Sandbox {
    _dir: tempfile::TempDir,
    bin: PathBuf,
    work: PathBuf,
    log: PathBuf,
    bash: PathBuf,
    reals: Vec<(String, PathBuf)>,
    bwrap: Option<PathBuf>,
}

fn find_program(name: &str) -> Option<PathBuf> {
    ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"]
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|p| p.is_file())
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        let work = dir.path().join("work");
        let log = dir.path().join("log");
        for d in [&bin, &work, &log] {
            std::fs::create_dir(d).unwrap();
        }
        let bash = find_program("bash").expect("bash is installed");
        let bwrap = find_program("bwrap").filter(|bwrap| {
            Command::new(bwrap)
                .args(["--unshare-all", "--ro-bind", "/", "/", "true"])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
        // Inside bubblewrap the real programs are under /real; without it, where they are.
        let real_path = |name: &str, path: &Path| {
            if bwrap.is_some() { format!("/real/{name}") } else { path.display().to_string() }
        };
        let interpreter = if bwrap.is_some() { "/real/bash".to_owned() } else { bash.display().to_string() };
        let log_file = if bwrap.is_some() { "/log/log".to_owned() } else { log.join("log").display().to_string() };
        let write = |name: &str, body: &str| {
            let path = bin.join(name);
            // `-p`: the stub ignores `BASH_ENV` (the shells it execs do not).
            let script = format!("#!{interpreter} -p\nprintf '%s\\n' \"${{0##*/}}\" >> {log_file}\n{body}\n");
            std::fs::write(&path, script).unwrap();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        };
        for name in STUBS {
            write(name, "exit 0");
        }
        let mut reals = vec![("bash".to_owned(), bash.clone())];
        for name in REAL_WRAPPERS {
            match find_program(name) {
                Some(path) => {
                    write(name, &format!("exec {} \"$@\"", real_path(name, &path)));
                    reals.push(((*name).to_owned(), path));
                }
                None => write(name, "exit 0"),
            }
        }
        for (name, body) in SCRIPTED_WRAPPERS {
            write(name, body);
        }
        for name in SHELLS {
            write(name, &format!("exec -a {name} {} \"$@\"", real_path("bash", &bash)));
        }
        Sandbox { _dir: dir, bin, work, log, bash, reals, bwrap }
    }

    /// Runs `command` under bash; the names of the programs it ran.
    fn run(&self, command: &str) -> BTreeSet<String> {
        // Inside bubblewrap each command logs to a directory of its own, so a process a
        // previous command left behind (`setsid -f`, `&`) cannot write into this one's log.
        let log_dir = match &self.bwrap {
            Some(_) => tempfile::tempdir_in(&self.log).unwrap().keep(),
            None => self.log.clone(),
        };
        let log = log_dir.join("log");
        std::fs::write(&log, "").unwrap();
        // Each command starts in an empty directory.
        std::fs::remove_dir_all(&self.work).unwrap();
        std::fs::create_dir(&self.work).unwrap();
        let mut child = match &self.bwrap {
            Some(bwrap) => {
                let mut cmd = Command::new(bwrap);
                cmd.args(["--unshare-all", "--die-with-parent", "--new-session", "--clearenv"]);
                for dir in ["/usr/lib", "/usr/lib64", "/usr/libexec", "/etc/alternatives", "/etc/ld.so.cache"] {
                    if Path::new(dir).exists() {
                        cmd.args(["--ro-bind", dir, dir]);
                    }
                }
                cmd.args(["--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64"]);
                for dir in ["/usr/bin", "/usr/sbin", "/usr/local/bin"] {
                    cmd.arg("--ro-bind").arg(&self.bin).arg(dir);
                }
                cmd.args(["--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin"]);
                for (name, path) in &self.reals {
                    cmd.arg("--ro-bind").arg(path).arg(format!("/real/{name}"));
                }
                cmd.arg("--bind").arg(&self.work).arg("/work");
                cmd.arg("--bind").arg(&log_dir).arg("/log");
                cmd.args(["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--chdir", "/work"]);
                cmd.args(["--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/work"]);
                cmd.args(["/real/bash", "--noprofile", "--norc", "-c", command]);
                cmd
            }
            None => {
                let mut cmd = Command::new(&self.bash);
                cmd.env_clear().env("PATH", &self.bin).env("HOME", &self.work).current_dir(&self.work);
                cmd.args(["--noprofile", "--norc", "-c", command]);
                cmd
            }
        }
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                child.kill().unwrap();
                child.wait().unwrap();
                panic!("{command:?} ran longer than 10 s");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        std::fs::read_to_string(&log).unwrap().lines().map(str::to_owned).collect()
    }
}

/// The program names the analysis reports for `command`, or `None` when it is unanalyzable.
fn reported(command: &str) -> Option<BTreeSet<String>> {
    let analysis = analyze(command);
    if analysis.unanalyzable.is_some() {
        return None;
    }
    let mut names = BTreeSet::new();
    for sub in &analysis.commands {
        names.extend(sub.words.first().map(|w| program_name(w).to_owned()));
        // The wrappers, still on in the forms deny rules see.
        for text in &sub.deny_texts {
            names.extend(text.split(' ').next().map(|w| program_name(w.trim_matches('\'')).to_owned()));
        }
    }
    Some(names)
}

fn decide(policy: &RulePolicy, command: &str) -> Decision {
    let spec = ToolSpec::new("bash", "").alias("Bash").command_param("command");
    let args = json!({ "command": command });
    let request = PermissionRequest::new("c", &spec, &args);
    policy.check(&request).1
}

fn policy(mode: PermissionMode, deny: &[&str]) -> RulePolicy {
    let base = RuleBase { workspace: "/ws".into(), rule_dir: "/ws".into(), home: None };
    let book = RuleBook::default();
    for rule in deny {
        book.add(RuleKind::Deny, rule, &base, "test").unwrap();
    }
    RulePolicy { book: std::sync::Arc::new(book), mode, workspace: "/ws".into(), restrict_read_only: true }
}

#[test]
fn the_differential_corpus_is_large_enough() {
    let corpus = corpus();
    assert!(corpus.len() >= 300, "{}", corpus.len());
    let unique: BTreeSet<&String> = corpus.iter().collect();
    assert_eq!(unique.len(), corpus.len(), "the corpus repeats a command");
}

#[test]
fn bash_runs_no_program_the_analysis_did_not_report() {
    let sandbox = Sandbox::new();
    let default = policy(PermissionMode::Default, &[]);
    let bypass = policy(PermissionMode::Bypass, &["Bash(rm:*)"]);
    // Claude Code's other spelling of the same rule, which needs an argument after `rm`.
    let bypass_spaced = policy(PermissionMode::Bypass, &["Bash(rm *)"]);
    let mut failures = Vec::new();
    let mut ran_rm = 0;
    let mut skipped = 0;
    for command in corpus() {
        if sandbox.bwrap.is_none() && command.contains('/') {
            // Without bubblewrap a path could reach a real program.
            skipped += 1;
            continue;
        }
        let ran = sandbox.run(&command);
        if let Some(reported) = reported(&command) {
            let missed: Vec<&String> = ran.iter().filter(|p| !reported.contains(*p)).collect();
            if !missed.is_empty() {
                failures.push(format!("{command:?}: bash ran {missed:?}, the analysis reported {reported:?}"));
            }
        }
        if ran.contains("rm") {
            ran_rm += 1;
            if decide(&default, &command) == Decision::Allow {
                failures.push(format!("{command:?} ran rm and is allowed in the default mode"));
            }
            if !matches!(decide(&bypass, &command), Decision::Deny { .. }) {
                failures.push(format!("{command:?} ran rm and is not denied by Bash(rm:*) in bypass mode"));
            }
            if !matches!(decide(&bypass_spaced, &command), Decision::Deny { .. }) {
                failures.push(format!("{command:?} ran rm and is not denied by Bash(rm *) in bypass mode"));
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    if sandbox.bwrap.is_some() {
        assert_eq!(skipped, 0);
        // The harness itself works: the attack commands really ran `rm`.
        assert!(ran_rm >= 150, "only {ran_rm} commands ran rm");
    }
}
