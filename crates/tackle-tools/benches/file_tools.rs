//! File tool speed (issue #3 targets): `str_replace` on a 5,000-line (325 KiB) file with the
//! atomic write (≤ 0.3 ms; ≤ 1 ms with `[tools] durable_writes`, which fsyncs), and
//! `json_edit_tool set` on a 1 MB JSON file (≤ 10 ms). Each iteration is a real edit: the
//! replacement alternates between two values, so the file changes every time.
//!
//! The read tools are measured too, since every path they open goes through the path policy
//! and a beneath-the-root open: `read_file` of 2,000 lines of that file, and `grep` and
//! `glob` over a tree of 2,000 files (8 MB) in 100 directories.
//!
//! Images and PDFs through `read_file` (issue 28 targets): a 4000×3000 PNG, decoded, scaled to
//! 1238×928 and re-encoded (≤ 150 ms), and a 100-page PDF (≤ 300 ms): its first 20 pages (one
//! call) and all 100 (five calls with `pages`).
//!
//! "direct" calls the tool as the peers' numbers were measured (their own tool code, no
//! agent loop); "executor" adds Tackle's whole call pipeline (decode, validate, path policy,
//! schedule, budget).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tackle_core::{Executor, PathPolicy, SessionState, ToolCall, ToolSession, ToolSessionConfig};
use tackle_sandbox::WorkspacePolicy;
use tackle_tools::fs::FsSettings;
use tokio_util::sync::CancellationToken;

fn session(dir: &Path, durable: bool) -> ToolSession {
    let registry = tackle_tools::builtin_registry();
    let selection = registry.select("all", "all").unwrap();
    let mut config = ToolSessionConfig::new(dir.to_owned());
    config.path_policy = Some(Arc::new(WorkspacePolicy::new(dir).unwrap()) as Arc<dyn PathPolicy>);
    let state = SessionState::default();
    state.insert(FsSettings { durable_writes: durable, ..FsSettings::default() });
    ToolSession::with_state(config, registry.instantiate(&selection), state)
}

/// 5,000 lines of code-like text, 325 KiB, with one unique marker in the middle.
fn source_file() -> String {
    let mut text = String::new();
    for i in 0..5_000 {
        if i == 2_500 {
            text.push_str("    let marker = MARKER_A; // the line the bench edits, 67 bytes.\n");
        } else {
            text.push_str(&format!("    let value_{i:05} = compute(input, {i:05}); // line {i:05} of file\n"));
        }
    }
    text
}

/// About 1 MB of JSON: 3,400 pretty-printed records of ~300 bytes.
fn json_file() -> String {
    let records: Vec<Value> = (0..3_400)
        .map(|i| {
            json!({"id": i, "name": format!("user {i}"), "email": format!("user{i}@example.com"), "active": i % 2 == 0,
                   "tags": ["alpha", "beta", "gamma"], "score": (i as f64) * 1.5, "address": {"city": "Springfield", "zip": format!("{:05}", i)}})
        })
        .collect();
    serde_json::to_string_pretty(&json!({"version": 1, "records": records})).unwrap() + "\n"
}

fn bench_str_replace(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let mut group = c.benchmark_group("str_replace_5000_lines");
    for durable in [false, true] {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let root = dir.path().canonicalize().unwrap();
        let text = source_file();
        assert!((320 * 1024..=330 * 1024).contains(&text.len()), "{}", text.len());
        std::fs::write(root.join("big.rs"), &text).unwrap();
        let session = session(&root, durable);
        let tool = Arc::clone(&session.tools().resolve("str_replace_based_edit_tool").unwrap().tool);
        let args = |from: &str, to: &str| json!({"command": "str_replace", "path": "big.rs", "old_str": format!("marker = {from};"), "new_str": format!("marker = {to};")});
        let mut flip = false;
        let name = if durable { "direct_durable" } else { "direct" };
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| {
                flip = !flip;
                let call = if flip { args("MARKER_A", "MARKER_B") } else { args("MARKER_B", "MARKER_A") };
                let prepared = tool.prepare(&call).unwrap();
                let ctx = session.context("bench", "str_replace_based_edit_tool", CancellationToken::new());
                async move {
                    let output = prepared.run(ctx).await.unwrap();
                    assert!(!output.is_error);
                }
            });
        });
        if !durable {
            let executor = Executor::default();
            group.bench_function("executor", |b| {
                b.to_async(&runtime).iter(|| {
                    flip = !flip;
                    let call = if flip { args("MARKER_A", "MARKER_B") } else { args("MARKER_B", "MARKER_A") };
                    let session = &session;
                    let executor = &executor;
                    async move {
                        let output = executor
                            .run(
                                session,
                                ToolCall::new("c", "str_replace_based_edit_tool", call),
                                &CancellationToken::new(),
                            )
                            .await;
                        assert!(!output.is_error, "{}", output.text_content());
                    }
                });
            });
        }
    }
    group.finish();
}

fn bench_json_set(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
    let root = dir.path().canonicalize().unwrap();
    let text = json_file();
    assert!((1_000_000..1_100_000).contains(&text.len()), "{}", text.len());
    std::fs::write(root.join("data.json"), &text).unwrap();
    let session = session(&root, false);
    let tool = Arc::clone(&session.tools().resolve("json_edit_tool").unwrap().tool);
    let mut value = 0u64;
    c.bench_function("json_edit_set_1mb", |b| {
        b.to_async(&runtime).iter(|| {
            value += 1;
            let call = json!({"operation": "set", "file_path": "data.json", "json_path": "$.records[2500].score", "value": value});
            let prepared = tool.prepare(&call).unwrap();
            let ctx = session.context("bench", "json_edit_tool", CancellationToken::new());
            async move {
                let output = prepared.run(ctx).await.unwrap();
                assert!(!output.is_error);
            }
        });
    });
}

/// 2,000 files of about 4 KiB in 100 directories, half of them `.rs`; one in 50 holds `NEEDLE`.
fn search_tree(root: &Path) {
    for i in 0..2_000 {
        let dir = root.join(format!("dir{:03}", i % 100));
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = String::new();
        for line in 0..64 {
            text.push_str(&format!("fn item_{i}_{line}(x: u64) -> u64 {{ x.wrapping_mul({line}) + {i} }} // pad\n"));
        }
        if i % 50 == 0 {
            text.push_str("const NEEDLE: &str = \"found\";\n");
        }
        let ext = if i % 2 == 0 { "rs" } else { "txt" };
        std::fs::write(dir.join(format!("file{i:04}.{ext}")), text).unwrap();
    }
}

fn bench_read_tools(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("big.rs"), source_file()).unwrap();
    search_tree(&root.join("tree"));
    let session = session(&root, false);
    let mut group = c.benchmark_group("read_tools");
    let calls = [
        ("read_file_2000_lines", "read_file", json!({"file_path": "big.rs", "offset": 1, "limit": 2000})),
        ("grep_files_2000", "grep", json!({"pattern": "NEEDLE", "path": "tree"})),
        ("grep_content_2000", "grep", json!({"pattern": "item_7_6[0-3]", "path": "tree", "output_mode": "content"})),
        ("glob_2000", "glob", json!({"pattern": "**/*.rs", "path": "tree"})),
    ];
    for (name, tool_name, call) in calls {
        let tool = Arc::clone(&session.tools().resolve(tool_name).unwrap().tool);
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| {
                let prepared = tool.prepare(&call).unwrap();
                let ctx = session.context("bench", tool_name, CancellationToken::new());
                async move {
                    let output = prepared.run(ctx).await.unwrap();
                    assert!(!output.is_error, "{}", output.text_content());
                }
            });
        });
    }
    group.finish();
}

/// A 4000×3000 photo-like PNG: smooth gradients with fine noise, about 20 MB.
fn large_png() -> Vec<u8> {
    let image = image::RgbImage::from_fn(4000, 3000, |x, y| {
        let noise = (x.wrapping_mul(2_654_435_761) ^ y.wrapping_mul(40_503)) >> 28;
        #[allow(clippy::cast_possible_truncation)]
        image::Rgb([
            ((x / 16) as u8).wrapping_add(noise as u8),
            ((y / 12) as u8).wrapping_add(noise as u8),
            ((x + y) / 28) as u8,
        ])
    });
    let mut out = Vec::new();
    image::DynamicImage::from(image).write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

/// A 100-page PDF of text (40 lines a page, flate-compressed), made with lopdf.
fn hundred_page_pdf() -> Vec<u8> {
    use lopdf::content::{Content, Operation};
    use lopdf::{Document, Object, Stream, dictionary};
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier"});
    let resources_id = doc.add_object(dictionary! {"Font" => dictionary! {"F1" => font_id}});
    let mut kids = Vec::new();
    for page in 1..=100 {
        let mut operations = vec![Operation::new("BT", vec![]), Operation::new("Tf", vec!["F1".into(), 10.into()])];
        for line in 0..40 {
            operations.push(Operation::new("Td", vec![0.into(), (-14).into()]));
            let text = format!("Page {page}, line {line}: the quick brown fox jumps over the lazy dog.");
            operations.push(Operation::new("Tj", vec![Object::string_literal(text)]));
        }
        operations.push(Operation::new("ET", vec![]));
        let mut stream = Stream::new(dictionary! {}, Content { operations }.encode().unwrap());
        stream.compress().unwrap();
        let content_id = doc.add_object(stream);
        kids.push(Object::from(
            doc.add_object(dictionary! {"Type" => "Page", "Parent" => pages_id, "Contents" => content_id}),
        ));
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(
            dictionary! {"Type" => "Pages", "Kids" => kids, "Count" => 100, "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()]},
        ),
    );
    let catalog_id = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
    doc.trailer.set("Root", catalog_id);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

fn bench_read_media(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("photo.png"), large_png()).unwrap();
    std::fs::write(root.join("book.pdf"), hundred_page_pdf()).unwrap();
    let session = session(&root, false);
    let tool = Arc::clone(&session.tools().resolve("read_file").unwrap().tool);
    let read = |calls: Vec<Value>| {
        let tool = Arc::clone(&tool);
        let ctx = session.context("bench", "read_file", CancellationToken::new());
        async move {
            for call in calls {
                let output = tool.prepare(&call).unwrap().run(ctx.clone()).await.unwrap();
                assert!(!output.is_error, "{}", output.text_content());
            }
        }
    };
    let mut group = c.benchmark_group("read_media");
    group.sample_size(20);
    group.bench_function("png_4000x3000_scaled", |b| {
        b.to_async(&runtime).iter(|| read(vec![json!({"file_path": "photo.png"})]));
    });
    group.bench_function("pdf_100_pages_first_20", |b| {
        b.to_async(&runtime).iter(|| read(vec![json!({"file_path": "book.pdf"})]));
    });
    let all: Vec<Value> =
        (0..5).map(|n| json!({"file_path": "book.pdf", "pages": format!("{}-{}", n * 20 + 1, n * 20 + 20)})).collect();
    group.bench_function("pdf_100_pages_all_in_5_calls", |b| {
        b.to_async(&runtime).iter(|| read(all.clone()));
    });
    group.finish();
}

criterion_group!(benches, bench_str_replace, bench_json_set, bench_read_tools, bench_read_media);
criterion_main!(benches);
