//! Criterion benchmarks of the text-format parsers: whole-text and 16-byte streaming, on a
//! model-like transcript (the side-by-side run against gptme is `bench/calls.sh`).

mod transcript;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tackle_calls::{CodeblockScanner, Parser, TextFormat, codeblocks, parse};

fn benches(c: &mut Criterion) {
    let text = transcript::transcript(1 << 20, 500);
    let tools = transcript::tools();
    let chunks: Vec<&str> = char_chunks(&text, 16).collect();
    let mut group = c.benchmark_group("calls");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("codeblocks/whole", |b| b.iter(|| codeblocks(&text)));
    group.bench_function("codeblocks/stream16", |b| {
        b.iter(|| {
            let mut scanner = CodeblockScanner::new();
            let mut n = 0;
            for chunk in &chunks {
                n += scanner.feed(chunk).len();
            }
            n + scanner.finish().len()
        });
    });
    for format in TextFormat::ALL {
        group.bench_function(format!("{format}/whole"), |b| b.iter(|| parse(format, &text, &tools)));
    }
    group.bench_function("markdown/stream16", |b| {
        b.iter(|| {
            let mut parser = Parser::new(TextFormat::Markdown, &tools);
            let mut n = 0;
            for chunk in &chunks {
                n += parser.feed(chunk).len();
            }
            n + parser.finish().len()
        });
    });
    group.finish();
}

/// `text` in chunks of about `size` bytes, cut at character boundaries.
fn char_chunks(text: &str, size: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut cut = size.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (chunk, tail) = rest.split_at(cut);
        rest = tail;
        Some(chunk)
    })
}

criterion_group!(calls, benches);
criterion_main!(calls);
