//! The Tackle side of `bench/calls.sh`: times the parsers on a transcript file and prints the
//! medians as one JSON object. `--generate BYTES BLOCKS` writes the benchmark transcript to
//! stdout instead (the same generator as the criterion bench).
//!
//! ```text
//! cargo run --release -p tackle-calls --example bench_parse -- --generate 10485760 5000 > t.md
//! cargo run --release -p tackle-calls --example bench_parse -- t.md --runs 9
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../benches/transcript.rs"]
mod transcript;

use tackle_calls::{CodeblockScanner, Parser, TextFormat, Utf8Stream, codeblocks, parse};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--generate") {
        let bytes: usize = args[1].parse().unwrap();
        let blocks: usize = args[2].parse().unwrap();
        print!("{}", transcript::transcript(bytes, blocks));
        return;
    }
    let path = args.first().expect("usage: bench_parse FILE [--runs N]");
    let runs: usize = args.iter().position(|a| a == "--runs").map_or(7, |i| args[i + 1].parse().unwrap());
    let text = std::fs::read_to_string(path).unwrap();
    let tools = transcript::tools();
    let mb = text.len() as f64 / 1e6;

    let blocks = codeblocks(&text).len();
    let calls = parse(TextFormat::Markdown, &text, &tools).len();
    let whole = median(runs, || codeblocks(&text).len());
    let whole_calls = median(runs, || parse(TextFormat::Markdown, &text, &tools).len());
    // Streaming as a provider delivers text: chunks of 16 bytes (cut at the next character
    // boundary), fed as they come.
    let chunks = char_chunks(&text, 16);
    let stream = median(runs, || {
        let mut scanner = CodeblockScanner::new();
        let mut n = 0;
        for chunk in &chunks {
            n += scanner.feed(chunk).len();
        }
        n + scanner.finish().len()
    });
    let stream_calls = median(runs, || {
        let mut parser = Parser::new(TextFormat::Markdown, &tools);
        let mut n = 0;
        for chunk in &chunks {
            n += parser.feed(chunk).len();
        }
        n + parser.finish().len()
    });
    // And as a pipe delivers bytes: 16-byte chunks through the UTF-8 stream (a chunk may end
    // inside a character).
    let stream_bytes = median(runs, || {
        let mut utf8 = Utf8Stream::new();
        let mut scanner = CodeblockScanner::new();
        let mut n = 0;
        for chunk in text.as_bytes().chunks(16) {
            n += scanner.feed(&utf8.decode(chunk).unwrap()).len();
        }
        n + scanner.finish().len()
    });
    println!(
        "{}",
        serde_json::json!({
            "bytes": text.len(),
            "blocks": blocks,
            "calls": calls,
            "codeblocks_mb_s": mb / whole,
            "markdown_calls_mb_s": mb / whole_calls,
            "codeblocks_stream16_mb_s": mb / stream,
            "markdown_calls_stream16_mb_s": mb / stream_calls,
            "codeblocks_stream16_bytes_mb_s": mb / stream_bytes,
            "stream16_over_whole": stream / whole,
            "calls_stream16_over_whole": stream_calls / whole_calls,
            "stream16_bytes_over_whole": stream_bytes / whole,
        })
    );
}

/// The median time of `runs` runs of `f`, in seconds (after one warm-up run): the thread's CPU
/// time, which a machine shared with other work does not inflate the way it does wall time.
fn median<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    std::hint::black_box(f());
    let mut times: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let start = cpu_seconds();
            std::hint::black_box(f());
            cpu_seconds() - start
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// This thread's CPU time.
fn cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

/// `text` in chunks of `size` bytes, each extended to the next character boundary.
fn char_chunks(text: &str, size: usize) -> Vec<&str> {
    let mut chunks = Vec::with_capacity(text.len() / size + 1);
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = size.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (chunk, tail) = rest.split_at(cut);
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}
