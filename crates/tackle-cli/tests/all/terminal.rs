//! `tackle chat` and `tackle run` at a terminal, as a person meets them: the real binary on a
//! pseudo-terminal that is its controlling terminal (tests/support/pty.rs), against the
//! scripted model server. Ctrl-C typed while a task runs, the todo line beside streamed text,
//! approvals asked on `/dev/tty` when stdin is a pipe, diffs of edits, and the chat controls.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::pty;

use std::time::{Duration, Instant};

use pty::{Controlling, Pty, Stdin, processes_running};
use serde_json::{Value, json};
use tackle_testkit::{Expect, FakeLlm, Fault, Reply, Script, Turn};

fn model_args<'a>(command: &'a str, server_url: &'a str) -> Vec<&'a str> {
    vec![command, "--model", "openai/fake", "--base-url", server_url]
}

/// Waits (at most 10 s) until a process whose command line holds `needle` runs.
fn wait_for_process(pty: &Pty, needle: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while processes_running(needle).is_empty() {
        assert!(Instant::now() < deadline, "{needle} never started:\n{}", pty.raw());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits (at most 10 s) until no process whose command line holds `needle` runs.
fn wait_for_no_process(needle: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_running(needle).is_empty() {
        assert!(Instant::now() < deadline, "{needle} still runs: {:?}", processes_running(needle));
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The OpenAI-wire message answering `call_id` in a recorded request body.
fn tool_result(body: &Value, call_id: &str) -> Option<String> {
    body["messages"].as_array()?.iter().find_map(|message| {
        (message["role"] == "tool" && message["tool_call_id"] == call_id)
            .then(|| message["content"].as_str().map_or_else(|| message["content"].to_string(), str::to_owned))
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_ctrl_c_cancels_the_running_task_and_a_second_press_leaves() {
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("s1", "bash", json!({"command": "sleep 36.25"})))
            .expect(Expect::last_user_contains("sleep please")),
        Turn::reply(Reply::text("It was cancelled.")).expect(Expect::last_user_contains("what happened")),
        Turn::reply(Reply::text("").call("s2", "bash", json!({"command": "sleep 37.25"}))),
    ]))
    .await;
    let workspace = tempfile::tempdir().unwrap();
    let url = server.openai_base_url();
    let path = workspace.path().to_owned();
    let (code, seen) = tokio::task::spawn_blocking(move || {
        let mut args = model_args("chat", &url);
        args.push("--yes");
        let mut pty = Pty::spawn(&path, &args, Stdin::Terminal, "", Controlling::Yes);
        pty.expect("tackle> ", 1);
        pty.type_line("sleep please");
        wait_for_process(&pty, "sleep 36.25");
        // One Ctrl-C, typed: the task is cancelled, its command killed, the prompt back.
        pty.type_keys("\x03");
        pty.expect("tackle> ", 2);
        wait_for_no_process("sleep 36.25");
        std::thread::sleep(Duration::from_millis(2100));
        pty.type_line("what happened");
        pty.expect("It was cancelled.", 1);
        pty.expect("tackle> ", 3);
        pty.type_line("sleep again");
        wait_for_process(&pty, "sleep 37.25");
        // Two presses 0.5 s apart: the second leaves chat, killing the command.
        pty.type_keys("\x03");
        std::thread::sleep(Duration::from_millis(500));
        pty.type_keys("\x03");
        let code = pty.wait();
        (code, pty.raw())
    })
    .await
    .unwrap();
    wait_for_no_process("sleep 37.25");
    assert_eq!(code, Some(130), "{seen}");
    server.assert_clean();
    // The next message carries the cancelled turn, its call answered as cancelled.
    let requests = server.requests();
    let answer = tool_result(&requests[1].body, "s1").unwrap_or_else(|| panic!("{}", requests[1].body));
    assert!(answer.to_lowercase().contains("cancelled by the user"), "{answer}");
    assert!(!seen.contains("✓ bash"), "{seen}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kill_int_cancels_a_chat_task_too() {
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("k1", "bash", json!({"command": "sleep 38.25"}))),
        Turn::reply(Reply::text("Fine.")),
    ]))
    .await;
    let workspace = tempfile::tempdir().unwrap();
    let url = server.openai_base_url();
    let path = workspace.path().to_owned();
    tokio::task::spawn_blocking(move || {
        let mut args = model_args("chat", &url);
        args.push("--yes");
        let mut pty = Pty::spawn(&path, &args, Stdin::Terminal, "", Controlling::Yes);
        pty.expect("tackle> ", 1);
        pty.type_line("sleep please");
        wait_for_process(&pty, "sleep 38.25");
        let pid = nix::unistd::Pid::from_raw(i32::try_from(pty.child.id()).unwrap());
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
        pty.expect("tackle> ", 2);
        wait_for_no_process("sleep 38.25");
        pty.type_line("next");
        pty.expect("Fine.", 1);
        pty.type_line("/exit");
        assert_eq!(pty.wait(), Some(0), "{}", pty.raw());
    })
    .await
    .unwrap();
    server.assert_clean();
}

const ANSWER_LINES: [&str; 3] = [
    "Line 1 of a longer story about the code base.",
    "Line 2 says what the parser does with its input.",
    "Line 3 ends it.",
];

#[tokio::test(flavor = "multi_thread")]
async fn the_todo_line_never_splits_streamed_text() {
    let todos = json!({"todos": [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Explain it", "status": "in_progress", "activeForm": "Explaining"},
    ]});
    let answer = format!("{}\n", ANSWER_LINES.join("\n"));
    let slow = Fault { delay_between_chunks_ms: Some(15), ..Fault::default() };
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("Planning.").call("t1", "todo_write", todos)),
        Turn::reply(Reply::text(answer).chunk_chars(7)).with_fault(slow),
    ]))
    .await;
    let workspace = tempfile::tempdir().unwrap();
    let url = server.openai_base_url();
    let path = workspace.path().to_owned();
    let (code, screen) = tokio::task::spawn_blocking(move || {
        let mut args = model_args("run", &url);
        args.extend(["--yes", "explain the code"]);
        let mut pty = Pty::spawn(&path, &args, Stdin::Terminal, "", Controlling::Yes);
        let code = pty.wait();
        (code, pty.screen())
    })
    .await
    .unwrap();
    assert_eq!(code, Some(0), "{screen}");
    let lines: Vec<&str> = screen.lines().collect();
    for expected in ANSWER_LINES {
        assert!(lines.contains(&expected), "no line {expected:?} on the screen:\n{screen}");
    }
    assert!(!screen.lines().any(|line| line.contains("Line") && line.contains("Explaining")), "{screen}");
}

/// A script whose model runs `echo ran > proof.txt` (a command that asks in the default mode).
fn one_command_script() -> Script {
    Script::new([
        Turn::reply(Reply::text("").call("c1", "bash", json!({"command": "echo ran > proof.txt"}))),
        Turn::reply(Reply::text("Done.")),
    ])
}

#[tokio::test(flavor = "multi_thread")]
async fn with_stdin_a_pipe_the_approval_is_asked_on_the_terminal() {
    let server = FakeLlm::start(one_command_script()).await;
    let workspace = tempfile::tempdir().unwrap();
    let url = server.openai_base_url();
    let path = workspace.path().to_owned();
    let (code, seen) = tokio::task::spawn_blocking(move || {
        let mut args = model_args("run", &url);
        args.push("-");
        let mut pty = Pty::spawn(&path, &args, Stdin::Pipe, "write the proof file\n", Controlling::Yes);
        pty.expect("Allow?", 1);
        pty.type_line("y");
        let code = pty.wait();
        (code, pty.raw())
    })
    .await
    .unwrap();
    assert_eq!(code, Some(0), "{seen}");
    assert_eq!(std::fs::read_to_string(workspace.path().join("proof.txt")).unwrap(), "ran\n", "{seen}");
    let answer = tool_result(&server.requests()[1].body, "c1").unwrap();
    assert!(!answer.contains("non-interactive"), "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_controlling_terminal_the_run_stays_non_interactive() {
    let server = FakeLlm::start(one_command_script()).await;
    let workspace = tempfile::tempdir().unwrap();
    let url = server.openai_base_url();
    let path = workspace.path().to_owned();
    let seen = tokio::task::spawn_blocking(move || {
        let mut args = model_args("run", &url);
        args.push("-");
        let mut pty = Pty::spawn(&path, &args, Stdin::Pipe, "write the proof file\n", Controlling::No);
        pty.wait();
        pty.raw()
    })
    .await
    .unwrap();
    assert!(!seen.contains("Allow?"), "{seen}");
    assert!(!workspace.path().join("proof.txt").exists(), "{seen}");
    let answer = tool_result(&server.requests()[1].body, "c1").unwrap();
    assert!(answer.contains("non-interactive"), "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn approvals_show_a_diff_and_the_prefix_rule_and_each_edit_shows_its_diff() {
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("r1", "read_file", json!({"file_path": "calc.py"}))),
        Turn::reply(Reply::text("").call(
            "e1",
            "edit_file",
            json!({"file_path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}),
        )),
        Turn::reply(Reply::text("").call("p1", "bash", json!({"command": "python3 -m pytest -q"}))),
        Turn::reply(Reply::text("Fixed.")),
    ]))
    .await;
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
    let url = server.openai_base_url();
    let path = workspace.path().to_owned();
    let (code, raw, screen) = tokio::task::spawn_blocking(move || {
        let mut args = model_args("run", &url);
        args.push("fix add");
        let mut pty = Pty::spawn(&path, &args, Stdin::Terminal, "", Controlling::Yes);
        pty.expect("Allow?", 1);
        // The person takes their time: the call's duration leaves it out.
        std::thread::sleep(Duration::from_millis(1500));
        pty.type_line("y");
        pty.expect("Allow?", 2);
        pty.type_line("n");
        let code = pty.wait();
        (code, pty.raw(), pty.screen())
    })
    .await
    .unwrap();
    // The test command was denied and no task_done followed: the run is incomplete.
    assert_eq!(code, Some(1), "{screen}");
    assert!(screen.contains("incomplete · 1 call denied: Bash(python3 -m pytest -q)"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("calc.py")).unwrap(),
        "def add(a, b):\n    return a + b\n"
    );
    // The edit's question: a diff, not the raw fields; the choices fit 80 columns, N the default.
    assert!(!screen.contains("old_string:") && !screen.contains("new_string:"), "{screen}");
    assert!(screen.contains("Allow? [y/a/p/N/f]"), "{screen}");
    for line in screen
        .lines()
        .filter(|line| line.starts_with("  y  ") || line.starts_with("  a  ") || line.starts_with("Allow?"))
    {
        assert!(line.chars().count() <= 80, "{line:?} is wider than 80 columns");
    }
    // The command's "always" is the module's prefix rule.
    assert!(screen.contains("  a  yes, and always this session: Bash(python3 -m pytest:*)"), "{screen}");
    // After the edit, its line (without the 1.5 s of waiting) and its diff, in colour.
    let lines: Vec<&str> = screen.lines().collect();
    let done =
        lines.iter().position(|line| line.starts_with("✓ edit_file calc.py")).unwrap_or_else(|| panic!("{screen}"));
    assert_eq!(lines[done], "✓ edit_file calc.py (0.0 s)", "{screen}");
    assert_eq!(
        &lines[done + 1..done + 6],
        ["  --- a/calc.py", "  +++ b/calc.py", "  @@ -1,2 +1,2 @@", "   def add(a, b):", "  -    return a - b"],
        "{screen}"
    );
    assert_eq!(lines[done + 6], "  +    return a + b", "{screen}");
    assert!(raw.contains("\x1b[32m+    return a + b\x1b[0m"), "{raw:?}");
    assert_eq!(screen.matches("+    return a + b").count(), 2, "once in the question, once after the edit:\n{screen}");
}

#[tokio::test(flavor = "multi_thread")]
async fn approvals_of_apply_patch_the_editor_and_json_edit_show_their_diffs() {
    let patch = "*** Begin Patch\n*** Update File: calc.py\n@@\n def add(a, b):\n-    return a - b\n+    return a + b\n*** Delete File: old.txt\n*** Add File: added.txt\n+fresh\n*** End Patch\n";
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("p1", "apply_patch", json!({"input": patch}))),
        Turn::reply(Reply::text("").call(
            "s1",
            "str_replace_based_edit_tool",
            json!({"command": "str_replace", "path": "notes.md", "old_str": "two", "new_str": "TWO"}),
        )),
        Turn::reply(Reply::text("").call(
            "j1",
            "json_edit_tool",
            json!({"operation": "set", "file_path": "pkg.json", "json_path": "$.version", "value": 2}),
        )),
        Turn::reply(Reply::text("Done.")),
    ]))
    .await;
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
    std::fs::write(workspace.path().join("old.txt"), "bye\n").unwrap();
    std::fs::write(workspace.path().join("notes.md"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(workspace.path().join("pkg.json"), "{\n  \"version\": 1\n}\n").unwrap();
    let url = server.openai_base_url();
    let path = workspace.path().to_owned();
    let (raw, screen) = tokio::task::spawn_blocking(move || {
        let mut args = model_args("run", &url);
        args.extend(["--tools", "all", "edit the files"]);
        let mut pty = Pty::spawn(&path, &args, Stdin::Terminal, "", Controlling::Yes);
        for (question, answer) in [(1, "y"), (2, "n"), (3, "n")] {
            pty.expect("Allow?", question);
            pty.type_line(answer);
        }
        pty.wait();
        (pty.raw(), pty.screen())
    })
    .await
    .unwrap();
    let read = |name: &str| std::fs::read_to_string(workspace.path().join(name)).ok();
    assert_eq!(read("calc.py").as_deref(), Some("def add(a, b):\n    return a + b\n"), "{screen}");
    assert_eq!((read("old.txt"), read("added.txt").as_deref()), (None, Some("fresh\n")), "{screen}");
    assert_eq!(read("notes.md").as_deref(), Some("one\ntwo\nthree\n"));
    assert_eq!(read("pkg.json").as_deref(), Some("{\n  \"version\": 1\n}\n"));
    // Each question shows the diff the call would make, not its raw arguments.
    let questions: Vec<&str> = screen.split("Allow?").collect();
    assert_eq!(questions.len(), 4, "{screen}");
    let patch_question = questions[0].rsplit("apply_patch wants to run").next().unwrap();
    for line in [
        "  --- a/calc.py",
        "  +++ b/calc.py",
        "  -    return a - b",
        "  +    return a + b",
        "  --- a/old.txt\n  +++ /dev/null\n  @@ -1 +0,0 @@\n  -bye",
        "  --- /dev/null\n  +++ b/added.txt\n  @@ -0,0 +1 @@\n  +fresh",
    ] {
        assert!(patch_question.contains(line), "{line:?} not in\n{patch_question}");
    }
    assert!(!patch_question.contains("*** Begin Patch"), "{patch_question}");
    let editor_question = questions[1].rsplit("str_replace_based_edit_tool wants to run").next().unwrap();
    assert!(editor_question.contains("  path: notes.md\n"), "{editor_question}");
    assert!(editor_question.contains("   one\n  -two\n  +TWO\n   three\n"), "{editor_question}");
    assert!(!editor_question.contains("old_str"), "{editor_question}");
    let json_question = questions[2].rsplit("json_edit_tool wants to run").next().unwrap();
    assert!(json_question.contains("  -  \"version\": 1\n  +  \"version\": 2\n"), "{json_question}");
    assert!(raw.contains("\x1b[31m-two\x1b[0m") && raw.contains("\x1b[32m+fresh\x1b[0m"), "{raw:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_color_leaves_the_diffs_plain() {
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("w1", "write_file", json!({"file_path": "new.txt", "content": "hello\n"}))),
        Turn::reply(Reply::text("Written.")),
    ]))
    .await;
    let workspace = tempfile::tempdir().unwrap();
    let url = server.openai_base_url();
    let path = workspace.path().to_owned();
    let (code, raw, screen) = tokio::task::spawn_blocking(move || {
        let mut args = model_args("run", &url);
        args.extend(["--permission-mode", "accept-edits", "write new.txt"]);
        let mut pty = Pty::spawn_with_env(&path, &args, &[("NO_COLOR", "1")]);
        let code = pty.wait();
        (code, pty.raw(), pty.screen())
    })
    .await
    .unwrap();
    assert_eq!(code, Some(0), "{screen}");
    assert!(screen.contains("  --- /dev/null\n  +++ b/new.txt\n  @@ -0,0 +1 @@\n  +hello"), "{screen}");
    assert!(!raw.contains("\x1b[32m+hello"), "{raw:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_shows_the_rules_and_changes_the_mode_with_shift_tab_and_permissions() {
    let write = |id: &str| Reply::text("").call(id, "write_file", json!({"file_path": "a.txt", "content": "x\n"}));
    let server = FakeLlm::start(Script::new([
        Turn::reply(write("w1")).expect(Expect::last_user_contains("write it now")),
        Turn::reply(Reply::text("Planned.")),
        Turn::reply(write("w2")).expect(Expect::last_user_contains("write it again")),
        Turn::reply(Reply::text("Written.")),
    ]))
    .await;
    let workspace = tempfile::tempdir().unwrap();
    let url = server.openai_base_url();
    let path = workspace.path().to_owned();
    let seen = tokio::task::spawn_blocking(move || {
        let mut args = model_args("chat", &url);
        args.extend(["--allow", "Bash(git status)"]);
        let mut pty = Pty::spawn(&path, &args, Stdin::Terminal, "", Controlling::Yes);
        pty.expect("tackle> ", 1);
        pty.type_line("/permissions");
        pty.expect("Permission mode: default", 1);
        pty.expect("Bash(git status)", 1);
        // Shift-Tab twice: accept-edits, then plan; the line typed so far is kept.
        pty.type_keys("write it");
        pty.type_keys("\x1b[Z");
        pty.expect("Permission mode: accept-edits", 1);
        pty.type_keys("\x1b[Z");
        pty.expect("Permission mode: plan", 1);
        pty.type_line(" now");
        pty.expect("Planned.", 1);
        pty.type_line("/permissions accept-edits");
        pty.expect("Permission mode: accept-edits", 2);
        pty.type_line("write it again");
        pty.expect("Written.", 1);
        pty.type_line("/exit");
        assert_eq!(pty.wait(), Some(0), "{}", pty.screen());
        pty.screen()
    })
    .await
    .unwrap();
    server.assert_clean();
    let requests = server.requests();
    // Plan mode refused the write, telling the model how the person leaves plan mode.
    let refused = tool_result(&requests[1].body, "w1").unwrap();
    assert!(refused.contains("plan mode") && refused.contains("Shift-Tab"), "{refused}");
    // In accept-edits the write ran without a question.
    assert_eq!(std::fs::read_to_string(workspace.path().join("a.txt")).unwrap(), "x\n", "{seen}");
    assert!(!seen.contains("Allow?"), "{seen}");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_edit_tool_shows_what_it_changed() {
    let patch = "*** Begin Patch\n*** Update File: p.txt\n-old patch line\n+new patch line\n*** End Patch";
    let server = FakeLlm::start(Script::new([
        Turn::reply(
            Reply::text("")
                .call("a1", "apply_patch", json!({"input": patch}))
                .call(
                    "s1",
                    "str_replace_based_edit_tool",
                    json!({"command": "create", "path": "made.txt", "file_text": "made by the editor\n"}),
                )
                .call(
                    "j1",
                    "json_edit_tool",
                    json!({"operation": "set", "file_path": "c.json", "json_path": "$.n", "value": 2}),
                ),
        ),
        Turn::reply(Reply::text("Edited.")),
    ]))
    .await;
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("p.txt"), "old patch line\n").unwrap();
    std::fs::write(workspace.path().join("c.json"), "{\"n\": 1}\n").unwrap();
    let url = server.openai_base_url();
    // Not a terminal: plain lines, no colour, the diffs all the same.
    let out = pty::tackle_command(workspace.path())
        .args(model_args("run", &url))
        .args(["--tools", "all", "--permission-mode", "accept-edits", "edit the files"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    for expected in [
        "  -old patch line\n  +new patch line\n",
        "  --- /dev/null\n  +++ b/made.txt\n  @@ -0,0 +1 @@\n  +made by the editor\n",
        "  +++ b/c.json\n",
    ] {
        assert!(stdout.contains(expected), "no {expected:?} in:\n{stdout}");
    }
    assert!(!stdout.contains('\x1b'), "{stdout:?}");
    // The model never sees the diffs.
    let sent = server.requests()[1].body["messages"].to_string();
    assert!(!sent.contains("+++ b/made.txt"), "{sent}");
}
