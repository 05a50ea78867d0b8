//! The read tools against a hostile process in the workspace that swaps paths while they
//! run (docs/file-tools.md, "Opening beneath the root"): a file or a directory is exchanged
//! atomically (`renameat2(RENAME_EXCHANGE)`) with a symlink to a secret outside the
//! workspace, or a file with a FIFO, in a tight loop, while every tool that reads files is
//! called again and again. No output may ever hold the secret, no listing its name, no call
//! may hang, and both sides of the race must have been seen (so the loop really raced).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::shell_common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::Ws;
use serde_json::{Value, json};
use shell_common::{Harness, Mode};

/// How long each race runs.
const RACE: Duration = Duration::from_secs(3);
/// The longest a single call may take before it counts as hung.
const CALL_BOUND: Duration = Duration::from_secs(5);

const INSIDE: &str = "{\"v\": \"INSIDE\"}\n";
const SECRET: &str = "{\"v\": \"SECRET\"}\n";

/// Exchanges the names `a` and `b` in `dir` until stopped; counts the exchanges.
struct Swapper {
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Swapper {
    fn start(dir: &Path, a: &'static str, b: &'static str) -> Swapper {
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let fd = rustix::fs::open(
            dir,
            rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::RDONLY,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        let (stop2, swaps2) = (Arc::clone(&stop), Arc::clone(&swaps));
        let thread = std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                rustix::fs::renameat_with(&fd, a, &fd, b, rustix::fs::RenameFlags::EXCHANGE).unwrap();
                swaps2.fetch_add(1, Ordering::Relaxed);
            }
        });
        Swapper { stop, swaps, thread: Some(thread) }
    }

    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap();
        self.swaps.load(Ordering::Relaxed)
    }
}

/// How the calls of one tool went.
#[derive(Debug, Default)]
struct Tally {
    calls: u64,
    /// Outputs that show the inside content (or, for a listing, the inside name).
    inside: u64,
    /// Error outputs (refusals: outside the workspace, not a regular file, …).
    errors: u64,
    /// Outputs that hold the secret: must stay 0.
    leaks: u64,
    example_leak: Option<String>,
}

/// One tool call of the race: its name, its arguments, and what in its output is a leak.
struct Probe {
    label: &'static str,
    tool: &'static str,
    args: Value,
    leaked: fn(&str) -> bool,
}

fn holds_secret(text: &str) -> bool {
    text.contains("SECRET")
}

/// Calls every probe in turn for [`RACE`], each within [`CALL_BOUND`].
async fn race(ws: &Ws, probes: &[Probe]) -> BTreeMap<&'static str, Tally> {
    let mut tallies: BTreeMap<&'static str, Tally> = BTreeMap::new();
    let started = Instant::now();
    while started.elapsed() < RACE {
        for probe in probes {
            let output = tokio::time::timeout(CALL_BOUND, ws.call(probe.tool, probe.args.clone()))
                .await
                .unwrap_or_else(|_| panic!("{} did not answer within {CALL_BOUND:?}", probe.label));
            let text = output.text_content();
            let tally = tallies.entry(probe.label).or_default();
            tally.calls += 1;
            if (probe.leaked)(&text) {
                tally.leaks += 1;
                tally.example_leak.get_or_insert(text.clone());
            }
            if text.contains("INSIDE") || text.contains("inside-name") {
                tally.inside += 1;
            } else if output.is_error {
                tally.errors += 1;
            }
        }
    }
    tallies
}

fn assert_no_leak_and_both_sides(tallies: &BTreeMap<&'static str, Tally>, need_errors: bool) {
    for (label, tally) in tallies {
        assert_eq!(tally.leaks, 0, "{label} read a file it must not read: {tally:?}");
        assert!(tally.inside > 0, "{label} never read the inside file, so the race proves nothing: {tally:?}");
        if need_errors {
            assert!(tally.errors > 0, "{label} never met the swapped link, so the race proves nothing: {tally:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_swapped_with_a_link_out_never_leaks_through_any_reader() {
    let ws = Ws::one_shot();
    let outside = ws.outside();
    std::fs::write(outside.join("secret.json"), SECRET).unwrap();
    ws.write("f.json", INSIDE);
    std::os::unix::fs::symlink(outside.join("secret.json"), ws.path("swap.json")).unwrap();
    let probes = [
        Probe { label: "read_file", tool: "read_file", args: json!({"file_path": "f.json"}), leaked: holds_secret },
        Probe {
            label: "view",
            tool: "str_replace_based_edit_tool",
            args: json!({"command": "view", "path": "f.json"}),
            leaked: holds_secret,
        },
        Probe {
            label: "json_edit view",
            tool: "json_edit_tool",
            args: json!({"operation": "view", "file_path": "f.json"}),
            leaked: holds_secret,
        },
        Probe {
            label: "grep content",
            tool: "grep",
            args: json!({"pattern": "SECRET|INSIDE", "path": "f.json", "output_mode": "content"}),
            leaked: holds_secret,
        },
        // The closest-text hint quotes the file: a leak if the file read was the secret.
        Probe {
            label: "edit_file",
            tool: "edit_file",
            args: json!({"file_path": "f.json", "old_string": "{\"v\": \"XNSIDE\"}", "new_string": "x"}),
            leaked: holds_secret,
        },
        // A patch whose context is the secret applies only if the secret was read.
        Probe {
            label: "apply_patch",
            tool: "apply_patch",
            args: json!({"input": "*** Begin Patch\n*** Update File: f.json\n@@\n-{\"v\": \"SECRET\"}\n+{\"v\": \"COPIED\"}\n*** End Patch"}),
            leaked: |text| text.starts_with("Success"),
        },
    ];
    let swapper = Swapper::start(&ws.root, "f.json", "swap.json");
    let tallies = race(&ws, &probes).await;
    let swaps = swapper.stop();
    assert!(swaps > 1000, "only {swaps} swaps");
    // apply_patch never succeeds: its context is the secret, which it must never read.
    let (patch, others): (BTreeMap<_, _>, BTreeMap<_, _>) =
        tallies.into_iter().partition(|(label, _)| *label == "apply_patch");
    assert_no_leak_and_both_sides(&others, true);
    assert_eq!(patch["apply_patch"].leaks, 0, "{:?}", patch["apply_patch"]);
    assert_eq!(std::fs::read_to_string(outside.join("secret.json")).unwrap(), SECRET);
}

/// A link swapped in that stays inside the workspace is refused too: the policy resolved
/// every link of the path it checked, and the file the link leads to may be one a
/// `Read(...)` deny rule hides. Here `private/**` is denied: reading the link itself is
/// refused at admission, and a read of `f.json` must never reach `private/other.json`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_swapped_with_a_link_to_a_denied_file_inside_never_leaks() {
    use tackle_core::permission::PermissionMode;
    use tackle_policy::permission::rule::RuleBase;
    use tackle_policy::permission::rules::{ReadRules, RuleBook, RuleKind, RulePolicy};

    let mut ws = Ws::one_shot();
    let base = RuleBase { workspace: ws.root.clone(), rule_dir: ws.root.clone(), home: None };
    let book = Arc::new(RuleBook::default());
    book.add(RuleKind::Deny, "Read(private/**)", &base, "test").unwrap();
    book.add(RuleKind::Deny, "Edit(private/**)", &base, "test").unwrap();
    ws.session.state().insert(ReadRules(Some(Arc::clone(&book))));
    let policy =
        RulePolicy { book, mode: PermissionMode::Bypass, workspace: ws.root.clone(), restrict_read_only: true };
    ws.executor = tackle_core::Executor::default().with_policy(Arc::new(policy));
    ws.write("f.json", INSIDE);
    ws.write("private/other.json", "{\"v\": \"DENIED\"}\n");
    std::os::unix::fs::symlink("private/other.json", ws.path("swap.json")).unwrap();
    assert!(ws.call("read_file", json!({"file_path": "swap.json"})).await.meta.rejected);
    let denied = |text: &str| text.contains("DENIED");
    let probes = [
        Probe { label: "read_file", tool: "read_file", args: json!({"file_path": "f.json"}), leaked: denied },
        Probe {
            label: "view",
            tool: "str_replace_based_edit_tool",
            args: json!({"command": "view", "path": "f.json"}),
            leaked: denied,
        },
        Probe {
            label: "json_edit view",
            tool: "json_edit_tool",
            args: json!({"operation": "view", "file_path": "f.json"}),
            leaked: denied,
        },
        Probe {
            label: "grep content",
            tool: "grep",
            args: json!({"pattern": "DENIED|INSIDE", "path": "f.json", "output_mode": "content"}),
            leaked: denied,
        },
    ];
    let mut swapper = Swapper::start(&ws.root, "f.json", "swap.json");
    let tallies = race(&ws, &probes).await;
    // Writes through the same race never land on the denied file. A write admitted while
    // `f.json` was the file may rename its new file over the name just as the link sits
    // there: the link is replaced (never written through) and the race would be over, so
    // the link is put back whenever it is gone, until both outcomes have been seen.
    let (mut written, mut refused, mut links_replaced) = (0, 0, 0);
    let mut swaps = 0;
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(2) || (refused == 0 && started.elapsed() < Duration::from_secs(20)) {
        let args = json!({"file_path": "f.json", "content": INSIDE});
        let output = tokio::time::timeout(CALL_BOUND, ws.call("write_file", args)).await.expect("write_file hung");
        if output.is_error {
            refused += 1;
        } else {
            written += 1;
        }
        let is_link = |name: &str| std::fs::symlink_metadata(ws.path(name)).unwrap().is_symlink();
        if !is_link("f.json") && !is_link("swap.json") {
            swaps += swapper.stop();
            if !is_link("f.json") && !is_link("swap.json") {
                links_replaced += 1;
                std::fs::remove_file(ws.path("swap.json")).unwrap();
                std::os::unix::fs::symlink("private/other.json", ws.path("swap.json")).unwrap();
            }
            swapper = Swapper::start(&ws.root, "f.json", "swap.json");
        }
    }
    swaps += swapper.stop();
    assert!(swaps > 1000, "only {swaps} swaps");
    eprintln!("{written} written, {refused} refused, the link replaced {links_replaced} times");
    assert_no_leak_and_both_sides(&tallies, true);
    assert!(written > 0 && refused > 0, "{written} written, {refused} refused");
    assert_eq!(ws.read("private/other.json"), "{\"v\": \"DENIED\"}\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_with_a_link_out_is_never_walked_or_read_through() {
    let ws = Ws::one_shot();
    let outside = ws.outside();
    std::fs::write(outside.join("a.json"), SECRET).unwrap();
    std::fs::write(outside.join("secret-name.json"), SECRET).unwrap();
    ws.write("d/a.json", INSIDE);
    ws.write("d/inside-name.json", INSIDE);
    std::os::unix::fs::symlink(&outside, ws.path("swap")).unwrap();
    let names_secret = |text: &str| text.contains("secret-name") || text.contains("SECRET");
    let probes = [
        Probe { label: "read_file", tool: "read_file", args: json!({"file_path": "d/a.json"}), leaked: holds_secret },
        Probe {
            label: "view file",
            tool: "str_replace_based_edit_tool",
            args: json!({"command": "view", "path": "d/a.json"}),
            leaked: holds_secret,
        },
        Probe {
            label: "view directory",
            tool: "str_replace_based_edit_tool",
            args: json!({"command": "view", "path": "."}),
            leaked: names_secret,
        },
        Probe {
            label: "grep",
            tool: "grep",
            args: json!({"pattern": "SECRET|INSIDE", "output_mode": "content"}),
            leaked: names_secret,
        },
        Probe {
            label: "grep files",
            tool: "grep",
            args: json!({"pattern": "SECRET|INSIDE", "path": "d"}),
            leaked: names_secret,
        },
        Probe { label: "glob", tool: "glob", args: json!({"pattern": "**/*.json"}), leaked: names_secret },
    ];
    let swapper = Swapper::start(&ws.root, "d", "swap");
    let tallies = race(&ws, &probes).await;
    let swaps = swapper.stop();
    assert!(swaps > 1000, "only {swaps} swaps");
    for (label, tally) in &tallies {
        assert_eq!(tally.leaks, 0, "{label} leaked the outside directory: {tally:?}");
        assert!(tally.inside > 0, "{label} never saw the inside directory: {tally:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_swapped_in_never_hangs_a_reader() {
    let ws = Ws::one_shot();
    ws.write("f.json", INSIDE);
    let fifo = ws.path("fifo.json");
    mkfifo(&fifo);
    let never = |_: &str| false;
    let probes = [
        Probe { label: "read_file", tool: "read_file", args: json!({"file_path": "f.json"}), leaked: never },
        Probe {
            label: "view",
            tool: "str_replace_based_edit_tool",
            args: json!({"command": "view", "path": "f.json"}),
            leaked: never,
        },
        Probe {
            label: "json_edit view",
            tool: "json_edit_tool",
            args: json!({"operation": "view", "file_path": "f.json"}),
            leaked: never,
        },
        Probe {
            label: "grep",
            tool: "grep",
            args: json!({"pattern": "INSIDE", "output_mode": "content"}),
            leaked: never,
        },
        Probe {
            label: "edit_file",
            tool: "edit_file",
            args: json!({"file_path": "f.json", "old_string": "{\"v\": \"XNSIDE\"}", "new_string": "x"}),
            leaked: never,
        },
    ];
    let swapper = Swapper::start(&ws.root, "f.json", "fifo.json");
    // `race` fails the test if any call takes longer than its bound.
    let tallies = race(&ws, &probes).await;
    let swaps = swapper.stop();
    assert!(swaps > 1000, "only {swaps} swaps");
    for (label, tally) in &tallies {
        assert!(tally.inside > 0 || tally.errors > 0, "{label}: {tally:?}");
    }
    // A FIFO in place is refused as not a regular file, whichever tool meets it.
    if std::fs::metadata(ws.path("f.json")).unwrap().is_file() {
        std::fs::rename(&fifo, ws.path("f.json")).unwrap();
    }
    for (tool, args) in [
        ("read_file", json!({"file_path": "f.json"})),
        ("str_replace_based_edit_tool", json!({"command": "view", "path": "f.json"})),
        ("json_edit_tool", json!({"operation": "view", "file_path": "f.json"})),
    ] {
        assert_eq!(ws.err(tool, args).await, "f.json is not a regular file", "{tool}");
    }
}

/// Makes a FIFO at `path`.
fn mkfifo(path: &Path) {
    rustix::fs::mknodat(rustix::fs::CWD, path, rustix::fs::FileType::Fifo, rustix::fs::Mode::from_raw_mode(0o644), 0)
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ignore_file_that_is_a_fifo_never_hangs_a_walk() {
    let ws = Ws::one_shot();
    ws.write("d/inside-name.json", INSIDE);
    ws.write("d/skipped.log", INSIDE);
    ws.write(".gitignore", "*.log\n");
    // Every ignore file ripgrep's walker would open by name, a FIFO; `.gitignore` swapped
    // with one all along.
    std::fs::create_dir_all(ws.path(".git/info")).unwrap();
    for name in [".ignore", ".rgignore", "d/.gitignore", "d/.ignore", ".git/info/exclude", "swap"] {
        mkfifo(&ws.path(name));
    }
    // A `.git` that is a FIFO (a worktree's `.git` file is read).
    ws.write("e/kept.txt", INSIDE);
    mkfifo(&ws.path("e/.git"));
    let never = |_: &str| false;
    let probes = [
        Probe {
            label: "grep",
            tool: "grep",
            args: json!({"pattern": "INSIDE", "output_mode": "files_with_matches"}),
            leaked: never,
        },
        Probe { label: "glob", tool: "glob", args: json!({"pattern": "**/*.json"}), leaked: never },
        Probe {
            label: "view directory",
            tool: "str_replace_based_edit_tool",
            args: json!({"command": "view", "path": "."}),
            leaked: never,
        },
    ];
    let swapper = Swapper::start(&ws.root, ".gitignore", "swap");
    // `race` fails the test if any call takes longer than its bound.
    let tallies = race(&ws, &probes).await;
    let swaps = swapper.stop();
    assert!(swaps > 1000, "only {swaps} swaps");
    for (label, tally) in &tallies {
        assert!(tally.inside > 0 && tally.errors == 0, "{label}: {tally:?}");
    }
    // With the real .gitignore in place, its rule holds; the FIFOs count as absent.
    if !std::fs::metadata(ws.path(".gitignore")).unwrap().is_file() {
        std::fs::rename(ws.path("swap"), ws.path(".gitignore")).unwrap();
    }
    let listed = ws.ok("glob", json!({"pattern": "d/*"})).await;
    assert_eq!(listed, "d/inside-name.json");
}

#[tokio::test]
async fn links_that_stay_inside_a_root_keep_working() {
    let dir = tempfile::tempdir().unwrap();
    let extra = dir.path().canonicalize().unwrap().join("extra");
    std::fs::create_dir_all(extra.join("lib")).unwrap();
    std::fs::write(extra.join("lib/x.json"), INSIDE).unwrap();
    let ws = Ws::with(false, |policy| policy.add_root(&extra, false).unwrap());
    ws.write("src/f.json", INSIDE);
    std::os::unix::fs::symlink(ws.path("src"), ws.path("in_link")).unwrap();
    std::os::unix::fs::symlink(extra.join("lib"), ws.path("extra_link")).unwrap();
    for path in ["in_link/f.json", "extra_link/x.json"] {
        assert!(ws.ok("read_file", json!({"file_path": path})).await.contains("INSIDE"), "{path}");
        let view = json!({"command": "view", "path": path});
        assert!(ws.ok("str_replace_based_edit_tool", view).await.contains("INSIDE"), "{path}");
        let args = json!({"operation": "view", "file_path": path});
        assert!(ws.ok("json_edit_tool", args).await.contains("INSIDE"), "{path}");
        let args = json!({"pattern": "INSIDE", "path": path, "output_mode": "content"});
        assert!(ws.ok("grep", args).await.contains("INSIDE"), "{path}");
    }
    let listed = ws.ok("glob", json!({"pattern": "*.json", "path": "extra_link"})).await;
    assert!(listed.contains("x.json"), "{listed}");
}

/// The attack as the hardening issue found it: a background job, in a sandbox that hides the
/// secret's directory from it, exchanges a workspace file with a link to the secret while
/// `read_file` reads that file again and again. The job cannot read the secret itself
/// (bubblewrap hides it); `read_file` must not read it for the job either.
async fn a_sandboxed_job_cannot_read_a_hidden_file_through_read_file(mode: Mode) {
    let hidden = tempfile::tempdir().unwrap();
    let hidden_dir = hidden.path().canonicalize().unwrap();
    std::fs::write(hidden_dir.join("secret.json"), SECRET).unwrap();
    let h = Harness::with_policy(mode, |policy| policy.hide.push(hidden_dir.clone()));
    std::fs::write(h.path("f.json"), INSIDE).unwrap();
    std::os::unix::fs::symlink(hidden_dir.join("secret.json"), h.path("swap.json")).unwrap();
    if matches!(mode, Mode::Bwrap { .. }) {
        let seen = h.sh("cat swap.json; cat f.json").await;
        assert!(!seen.contains("SECRET") && seen.contains("INSIDE"), "{seen}");
    }
    // RENAME_EXCHANGE in a tight loop for a bounded time, announced by a file once started.
    let swapper = "import ctypes, os, time\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        end, n = time.time() + 6, 0\n\
        while time.time() < end:\n\
        \x20   n += libc.renameat2(-100, b'f.json', -100, b'swap.json', 2) == 0\n\
        \x20   if n == 100: open('started', 'w').close()\n\
        print('swaps', n)\n";
    std::fs::write(h.path("swap.py"), swapper).unwrap();
    let out = h.call("background_run", json!({"command": "/usr/bin/python3 swap.py"})).await;
    assert!(!out.is_error, "{}", out.text_content());
    assert!(
        shell_common::eventually(Duration::from_secs(5), || h.path("started").exists()).await,
        "the job never swapped"
    );
    let (mut inside, mut refused, mut leaks) = (0u64, 0u64, Vec::new());
    let started = Instant::now();
    while started.elapsed() < RACE {
        let output = tokio::time::timeout(CALL_BOUND, h.call("read_file", json!({"file_path": "f.json"})))
            .await
            .expect("read_file did not answer");
        let text = output.text_content();
        if text.contains("SECRET") {
            leaks.push(text);
        } else if text.contains("INSIDE") {
            inside += 1;
        } else if output.is_error {
            refused += 1;
        }
    }
    h.close().await;
    assert!(leaks.is_empty(), "{} leaks, first: {}", leaks.len(), leaks[0]);
    assert!(inside > 0 && refused > 0, "the race proves nothing: {inside} inside, {refused} refused");
    assert_eq!(std::fs::read_to_string(hidden_dir.join("secret.json")).unwrap(), SECRET);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_under_bubblewrap_cannot_read_a_hidden_file_through_read_file() {
    a_sandboxed_job_cannot_read_a_hidden_file_through_read_file(Mode::Bwrap { network: false }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_under_landlock_cannot_read_a_file_outside_through_read_file() {
    a_sandboxed_job_cannot_read_a_hidden_file_through_read_file(Mode::Landlock).await;
}
