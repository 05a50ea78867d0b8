//! What the protected-path watch adds to every `bash` command and background job: one snapshot
//! before and one after (an `lstat` per watched path) and their comparison, in a workspace
//! where every watched path exists (the slowest case) and in a git repository without settings
//! files (the common case: the children of a missing `.claude` cost nothing).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use tackle_sandbox::process::{ProtectedWatch, SandboxPolicy};

fn bench_watch(c: &mut Criterion) {
    let full = tempfile::tempdir().unwrap();
    let ws = full.path();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    for file in [".git/config", ".git/commondir", "tackle.toml", ".mcp.json", ".claude/settings.json"] {
        std::fs::write(ws.join(file), "x").unwrap();
    }
    let plain = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(plain.path().join(".git/hooks")).unwrap();
    std::fs::write(plain.path().join(".git/config"), "x").unwrap();
    for (name, dir) in [("every_path_present", ws), ("git_repository_only", plain.path())] {
        let watch = ProtectedWatch::new(&SandboxPolicy::new(dir));
        c.bench_function(&format!("protected_watch_around_one_command/{name}"), |b| {
            b.iter(|| {
                let before = watch.snapshot();
                let after = watch.snapshot();
                assert!(watch.changes(&before, &after).is_empty());
            });
        });
    }
}

criterion_group!(benches, bench_watch);
criterion_main!(benches);
