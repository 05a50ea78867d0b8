//! `tackle parse` (docs/reference/formats.md#tackle-parse): the real binary, stdin in, one JSON document out.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::process::{Command, Stdio};

use assert_cmd::cargo::CommandCargoExt as _;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// Runs `tackle ARGS` with `stdin`: the exit code, stdout parsed as one JSON document (`null`
/// when it is not one), and the raw stdout and stderr.
fn tackle(args: &[&str], stdin: &[u8]) -> (i32, Value, String) {
    let (code, stdout, stderr) = run(args, stdin);
    let json = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (code, json, if stdout.trim().is_empty() || stdout.trim_start().starts_with('[') { stderr } else { stdout })
}

fn run(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let mut child = Command::cargo_bin("tackle")
        .unwrap()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // Dribble the input so --streaming sees several reads.
        for chunk in bytes.chunks(4096) {
            if input.write_all(chunk).is_err() {
                break;
            }
        }
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn markdown_is_the_default_format() {
    let text = "Done.\n```task_done\n{}\n```\n\n```python\nprint(1)\n```\n";
    let (code, out, _) = tackle(&["parse"], text.as_bytes());
    assert_eq!(code, 0);
    assert_eq!(out, json!([{"tool": "task_done", "args": {}, "id": "call_1_1", "start": 6, "end": 25}]));
}

#[test]
fn each_format_and_malformed_calls_with_their_error() {
    let (_, out, _) = tackle(&["parse", "--format", "tool"], b"@task_done(t1): {}\n@task_done(t2): {\"a\": }\n");
    assert_eq!(
        out,
        json!([
            {"tool": "task_done", "args": {}, "id": "t1", "start": 0, "end": 18},
            {"tool": "task_done", "args": {}, "id": "t2", "start": 19, "end": 42,
             "error": "Invalid JSON in arguments for tool 'task_done': expected value at line 1 column 7. Send the arguments as one JSON object."}
        ])
    );
    let xml = "<function_calls><invoke name=\"sequentialthinking\" id=\"x1\"><parameter name=\"thought\">hm</parameter><parameter name=\"thought_number\">1</parameter></invoke></function_calls>";
    let (_, out, _) = tackle(&["parse", "--format", "xml"], xml.as_bytes());
    assert_eq!(out[0]["args"], json!({"thought": "hm", "thought_number": 1}));
    assert_eq!(out[0]["id"], "x1");
}

#[test]
fn codeblocks_prints_the_blocks() {
    let (code, out, _) = tackle(&["parse", "--codeblocks"], "a\n```sh\nls\n```\n".as_bytes());
    assert_eq!(code, 0);
    assert_eq!(out, json!([{"lang": "sh", "content": "ls", "start": 2, "end": 14}]));
}

#[test]
fn streaming_prints_the_same_array() {
    let mut text = String::new();
    for i in 0..3000 {
        text.push_str(&format!(
            "Step {i}: é\r\n```task_done\r\n{{}}\r\n```\r\n\r\n```python\r\nx = {i}\r\n```\r\n@task_done(c{i}): {{}}\n"
        ));
    }
    for (args, count) in
        [(&["parse"][..], 3000), (&["parse", "--format", "tool"], 3000), (&["parse", "--codeblocks"], 6000)]
    {
        let (_, whole, _) = tackle(args, text.as_bytes());
        let streaming: Vec<&str> = args.iter().copied().chain(["--streaming"]).collect();
        let (code, streamed, _) = tackle(&streaming, text.as_bytes());
        assert_eq!(code, 0);
        assert_eq!(streamed, whole, "{args:?}");
        assert_eq!(whole.as_array().unwrap().len(), count);
    }
}

#[test]
fn events_are_json_lines_with_the_input_offset() {
    let text = "```task_done\n{}\n```\n";
    let (code, _, stdout) = tackle(&["parse", "--streaming", "--events"], text.as_bytes());
    assert_eq!(code, 0);
    let lines: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(
        lines,
        vec![
            json!({"fed_bytes": text.len(), "call": {"tool": "task_done", "args": {}, "id": "call_1_1", "start": 0, "end": 19}})
        ]
    );
    let (_, _, stdout) = tackle(&["parse", "--codeblocks", "--events"], b"```x\ny\n```");
    assert_eq!(stdout.trim(), r#"{"fed_bytes":10,"block":{"lang":"x","content":"y","start":0,"end":10}}"#);
}

#[test]
fn tools_narrows_what_dispatches() {
    let text = "```task_done\n{}\n```\n";
    let (_, out, _) = tackle(&["parse", "--tools", "sequentialthinking"], text.as_bytes());
    assert_eq!(out, json!([]));
}

#[test]
fn invalid_utf8_is_a_usage_error() {
    for args in [&["parse"][..], &["parse", "--streaming"]] {
        let (code, out, stderr) = tackle(args, b"ok\n\xff\xfe");
        assert_eq!(code, 2);
        assert_eq!(out, Value::Null);
        assert!(stderr.contains("stdin is not valid UTF-8 (byte 3); tackle parse reads UTF-8 text"), "{stderr}");
    }
    let (code, _, stderr) = tackle(&["parse", "--streaming"], "ok 😀".as_bytes().split_last().unwrap().1);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn an_unknown_format_is_a_usage_error() {
    let (code, _, stderr) = tackle(&["parse", "--format", "yaml"], b"");
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown call format 'yaml'; use markdown, xml or tool"), "{stderr}");
}

/// The number of `write` system calls of the exited (not yet reaped) process `pid`, from
/// `/proc/PID/io`, which covers all its threads.
fn writes_of_exited(pid: u32) -> u64 {
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let pid = libc::id_t::from(pid);
    // SAFETY: waitid with WNOWAIT only waits; the child is reaped by its owner afterwards.
    let waited = unsafe { libc::waitid(libc::P_PID, pid, &raw mut info, libc::WEXITED | libc::WNOWAIT) };
    assert_eq!(waited, 0, "{}", std::io::Error::last_os_error());
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap();
    let line = io.lines().find_map(|l| l.strip_prefix("syscw: ")).unwrap();
    line.trim().parse().unwrap()
}

#[test]
fn a_large_document_leaves_in_few_writes() {
    // 5,000 code blocks, 7 MB: about 30,000 lines of indented JSON, each of which used to be
    // its own `write`.
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..5_000 {
        text.push_str(&format!("Step {i}.\n```python\n"));
        for line in 0..20 {
            text.push_str(&format!("value_{line} = compute(\"input {i}\", {line})  # a line of code of the block\n"));
        }
        text.push_str("```\n\n");
    }
    std::fs::write(dir.path().join("in.md"), &text).unwrap();
    let mut child = Command::cargo_bin("tackle")
        .unwrap()
        .args(["parse", "--codeblocks"])
        .stdin(std::fs::File::open(dir.path().join("in.md")).unwrap())
        .stdout(std::fs::File::create(dir.path().join("out.json")).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let writes = writes_of_exited(child.id());
    assert!(child.wait().unwrap().success());
    let out = std::fs::read_to_string(dir.path().join("out.json")).unwrap();
    let lines = out.lines().count();
    let blocks: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(blocks.as_array().unwrap().len(), 5_000);
    assert!(out.len() > 7_000_000 && lines > 30_000, "{} bytes, {lines} lines", out.len());
    assert!(writes <= 2_000, "{writes} writes for {} bytes in {lines} lines", out.len());
}

#[test]
fn streaming_events_are_flushed_as_they_are_found() {
    use std::io::BufRead as _;
    let mut child = Command::cargo_bin("tackle")
        .unwrap()
        .args(["parse", "--codeblocks", "--streaming", "--events"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let output = std::io::BufReader::new(child.stdout.take().unwrap());
    let (lines, arrived) = std::sync::mpsc::channel();
    std::thread::spawn(move || output.lines().map_while(Result::ok).try_for_each(|line| lines.send(line)));
    // Each block's line arrives while stdin is still open.
    let mut received = Vec::new();
    for i in 0..3 {
        input.write_all(format!("```sh\necho {i}\n```\n").as_bytes()).unwrap();
        input.flush().unwrap();
        match arrived.recv_timeout(std::time::Duration::from_secs(10)) {
            Ok(line) => received.push(line),
            Err(_) => break,
        }
    }
    drop(input);
    let _ = child.kill();
    child.wait().unwrap();
    assert_eq!(received.len(), 3, "only {received:?} arrived before stdin closed");
    for (i, line) in received.iter().enumerate() {
        let event: Value = serde_json::from_str(line).unwrap();
        assert_eq!(event["block"]["content"], format!("echo {i}"));
    }
}
