//! The tackle binary that goes into the container, and whether it can run there: its
//! architecture (read from its ELF header) must be the image's, and the C library loader it
//! names (`PT_INTERP`, absent in a static binary) must exist in the container. A binary that
//! cannot run is refused before anything starts, with a message naming `--tackle-binary`.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};

use crate::ContainerError;

/// The most bytes of program headers read (a real binary has a few dozen).
const MAX_PROGRAM_HEADERS: usize = 256;

/// The longest loader path accepted.
const MAX_INTERPRETER: u64 = 4096;

/// What the binary needs from the container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needs {
    /// The binary's path on the host.
    pub path: PathBuf,
    /// The architecture in the engine's words (`amd64`, `arm64`, …).
    pub arch: String,
    /// The dynamic loader (`/lib64/ld-linux-x86-64.so.2`); `None` for a static binary.
    pub interpreter: Option<String>,
}

/// What to do about a binary that cannot run.
pub const HOW_TO_FIX: &str = "name a tackle that can with --tackle-binary PATH (or [container] binary in your user config); \
     a static musl build runs in any Linux image of its architecture: \
     `rustup target add x86_64-unknown-linux-musl && cargo build --release --target x86_64-unknown-linux-musl -p tackle-cli` \
     (docs/containers.md#the-binary-that-goes-in)";

impl Needs {
    /// Reads the ELF header of `path`.
    pub fn of(path: &Path) -> Result<Needs, ContainerError> {
        let refuse = |why: String| {
            ContainerError::Incompatible(format!("the tackle binary {} {why}; {HOW_TO_FIX}", path.display()))
        };
        let mut file = std::fs::File::open(path).map_err(|err| refuse(format!("cannot be read ({err})")))?;
        let mut header = [0u8; 64];
        file.read_exact(&mut header).map_err(|_| refuse("is not an ELF executable".to_owned()))?;
        if &header[..4] != b"\x7fELF" || header[4] != 2 || header[5] != 1 {
            return Err(refuse("is not a 64-bit little-endian ELF executable".to_owned()));
        }
        let u16_at = |at: usize| u16::from_le_bytes([header[at], header[at + 1]]);
        let u64_at = |bytes: &[u8], at: usize| {
            let mut word = [0u8; 8];
            word.copy_from_slice(&bytes[at..at + 8]);
            u64::from_le_bytes(word)
        };
        let arch = match u16_at(18) {
            0x3e => "amd64",
            0xb7 => "arm64",
            0xf3 => "riscv64",
            0x15 => "ppc64le",
            0x16 => "s390x",
            other => return Err(refuse(format!("is for an unknown machine (ELF e_machine {other:#x})"))),
        };
        let table_at = u64_at(&header, 32);
        let entry_size = usize::from(u16_at(54));
        let entries = usize::from(u16_at(56)).min(MAX_PROGRAM_HEADERS);
        let mut interpreter = None;
        if entry_size >= 56 && entries > 0 {
            let mut table = vec![0u8; entry_size * entries];
            file.seek(SeekFrom::Start(table_at)).map_err(|err| refuse(format!("cannot be read ({err})")))?;
            file.read_exact(&mut table).map_err(|_| refuse("has a truncated program header table".to_owned()))?;
            for entry in table.chunks_exact(entry_size) {
                // PT_INTERP
                if u32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]) == 3 {
                    let offset = u64_at(entry, 8);
                    let size = u64_at(entry, 32).min(MAX_INTERPRETER);
                    let mut name = vec![0u8; usize::try_from(size).unwrap_or(0)];
                    file.seek(SeekFrom::Start(offset)).map_err(|err| refuse(format!("cannot be read ({err})")))?;
                    file.read_exact(&mut name).map_err(|_| refuse("has a truncated loader path".to_owned()))?;
                    let name = String::from_utf8_lossy(&name).trim_end_matches('\0').to_owned();
                    interpreter = Some(name);
                }
            }
        }
        Ok(Needs { path: path.to_path_buf(), arch: arch.to_owned(), interpreter })
    }

    /// Refuses an image of another architecture.
    pub fn check_arch(&self, image: &str, image_arch: Option<&str>) -> Result<(), ContainerError> {
        let theirs = image_arch.map(normalize_arch).unwrap_or_default();
        if theirs.is_empty() || theirs == self.arch {
            return Ok(());
        }
        Err(ContainerError::Incompatible(format!(
            "the tackle binary {} is built for {} but the image {image} is {theirs}, so it cannot run there; {HOW_TO_FIX}",
            self.path.display(),
            self.arch
        )))
    }

    /// The refusal when the container lacks the binary's loader.
    pub fn missing_loader(&self, image: &str, loader: &str) -> ContainerError {
        ContainerError::Incompatible(format!(
            "the tackle binary {} needs the C library loader {loader}, which {image} does not have \
             (the image's C library differs from the one tackle was built against, such as musl in Alpine); {HOW_TO_FIX}",
            self.path.display()
        ))
    }
}

/// The engine's architecture names (`x86_64` → `amd64`, `aarch64` → `arm64`).
pub fn normalize_arch(arch: &str) -> String {
    match arch {
        "x86_64" | "x86-64" => "amd64".to_owned(),
        "aarch64" => "arm64".to_owned(),
        other => other.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_binary_itself_is_read() {
        let me = std::env::current_exe().unwrap();
        let needs = Needs::of(&me).unwrap();
        assert_eq!(needs.arch, normalize_arch(std::env::consts::ARCH));
        assert!(needs.interpreter.as_deref().is_some_and(|loader| loader.starts_with('/')), "{needs:?}");
    }

    #[test]
    fn a_text_file_and_a_short_file_are_refused_naming_the_option() {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in [("script", b"#!/bin/sh\necho hi\n".repeat(10)), ("short", b"\x7fELF".to_vec())] {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            let err = Needs::of(&path).unwrap_err().to_string();
            assert!(err.contains("--tackle-binary"), "{err}");
        }
    }

    #[test]
    fn another_architecture_is_refused() {
        let needs = Needs { path: "/t".into(), arch: "amd64".into(), interpreter: None };
        assert!(needs.check_arch("img", Some("x86_64")).is_ok());
        let err = needs.check_arch("img", Some("arm64")).unwrap_err().to_string();
        assert!(err.contains("arm64") && err.contains("--tackle-binary"), "{err}");
    }
}
