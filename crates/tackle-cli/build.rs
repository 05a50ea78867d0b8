//! Link options of the `tackle` binary in release builds (docs/architecture.md#the-release-binary).
//!
//! With LLD (the linker Rust uses on x86-64 Linux), `--icf=all` folds functions whose machine
//! code came out identical (monomorphized copies), which keeps the release binary under its
//! 60 MB budget without building any hot path for size. Rust promises no distinct address per
//! function, so folding is sound for Rust code. The flag is used only when a probe shows that
//! this toolchain's linker takes it (a distribution's rustc may link with GNU ld, which does
//! not); debug builds never use it.

use std::path::PathBuf;
use std::process::{Command, Stdio};

const FOLD: &str = "-Wl,--icf=all";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let release = std::env::var("PROFILE").is_ok_and(|profile| profile == "release");
    if release && linker_takes(FOLD) {
        println!("cargo:rustc-link-arg-bins={FOLD}");
    }
}

/// Whether a trivial program links with `arg`, with this build's compiler, target and flags.
fn linker_takes(arg: &str) -> bool {
    let (Some(rustc), Some(out), Some(target)) =
        (std::env::var_os("RUSTC"), std::env::var_os("OUT_DIR"), std::env::var_os("TARGET"))
    else {
        return false;
    };
    let dir = PathBuf::from(out).join("link-probe");
    if std::fs::create_dir_all(&dir).is_err() || std::fs::write(dir.join("probe.rs"), "fn main() {}\n").is_err() {
        return false;
    }
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    Command::new(rustc)
        .args(flags.split('\u{1f}').filter(|flag| !flag.is_empty()))
        .arg("--target")
        .arg(target)
        .args(["-C", &format!("link-arg={arg}"), "-o"])
        .arg(dir.join("probe"))
        .arg(dir.join("probe.rs"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}
