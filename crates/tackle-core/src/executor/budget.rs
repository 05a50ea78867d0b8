//! The output budget layer: content over the limit keeps its head and tail around a marker,
//! and the full text is spilled to `.tackle/outputs/{session}/{call}.txt` (workspace-relative,
//! so the model can open it with `read_file` or `grep`). Spill files older than 7 days are
//! removed when a session starts.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::output::{ContentPart, ToolOutput};
use crate::text::{budget_marker, cut_middle};

/// The default inline limit, in characters (tools.md §0.3).
pub const DEFAULT_MAX_OUTPUT_CHARS: usize = 30_000;

/// How long spill files are kept.
const SPILL_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// The inline size limit of outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputBudget {
    max_chars: usize,
}

impl Default for OutputBudget {
    fn default() -> Self {
        OutputBudget { max_chars: DEFAULT_MAX_OUTPUT_CHARS }
    }
}

impl OutputBudget {
    /// A budget of `max_chars`, clamped to 4,000–128,000.
    pub fn new(max_chars: usize) -> Self {
        OutputBudget { max_chars: max_chars.clamp(4_000, 128_000) }
    }

    /// The whole inline limit.
    pub fn max_chars(&self) -> usize {
        self.max_chars
    }

    /// Characters kept from the start (one third).
    pub fn head_chars(&self) -> usize {
        self.max_chars / 3
    }

    /// Characters kept from the end (the rest).
    pub fn tail_chars(&self) -> usize {
        self.max_chars - self.head_chars()
    }

    /// Fits `output` into the budget, spilling the full text under `spill_dir` (an absolute
    /// directory) and naming it by `spill_rel` (its workspace-relative form).
    pub(crate) fn apply(&self, output: &mut ToolOutput, spill_dir: &Path, spill_rel: &str) {
        let text = output.text_content();
        let Some(cut) = cut_middle(&text, self.head_chars(), self.tail_chars()) else {
            return;
        };
        let written = create_spill_file(spill_dir, &format!("{}.txt", safe_file_stem(&output.call_id)))
            .and_then(|(mut file, name)| file.write_all(text.as_bytes()).map(|()| name));
        let spill_path = match written {
            Ok(file_name) => Some(format!("{spill_rel}/{file_name}")),
            Err(err) => {
                tracing::warn!(error = %err, "could not save a cut output");
                None
            }
        };
        let marker = budget_marker(cut.omitted_chars, cut.omitted_lines, spill_path.as_deref());
        let cut_text = cut.join(&marker);
        let images = output.content.drain(..).filter(|part| matches!(part, ContentPart::Image { .. }));
        output.content =
            std::iter::once(ContentPart::Text { text: cut_text }).chain(images.collect::<Vec<_>>()).collect();
        output.meta.truncated = true;
        output.meta.spill_path = spill_path;
    }
}

/// Creates a new spill file named `file_name` in `dir` (made if missing) and returns it with
/// the name it got: when the name is taken (two calls with one id, or ids that become the
/// same file name) `-2`, `-3`, … goes before the first `.`, so no output overwrites another's.
pub fn create_spill_file(dir: &Path, file_name: &str) -> std::io::Result<(std::fs::File, String)> {
    std::fs::create_dir_all(dir)?;
    let (stem, extension) = file_name.split_at(file_name.find('.').unwrap_or(file_name.len()));
    let mut name = file_name.to_owned();
    for n in 2u32.. {
        match std::fs::OpenOptions::new().write(true).create_new(true).open(dir.join(&name)) {
            Ok(file) => return Ok((file, name)),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists && n < 10_000 => {
                name = format!("{stem}-{n}{extension}");
            }
            Err(err) => return Err(err),
        }
    }
    Err(std::io::Error::other("no free spill file name"))
}

/// A call id made safe as a file name (model-chosen ids may hold anything).
pub fn safe_file_stem(id: &str) -> String {
    let stem: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' })
        .take(100)
        .collect();
    if stem.is_empty() || stem.starts_with('.') { format!("call{stem}") } else { stem }
}

/// The spill directory of a session, absolute and workspace-relative.
pub fn spill_dirs(workspace: &Path, session_id: &str) -> (PathBuf, String) {
    let rel = format!(".tackle/outputs/{}", safe_file_stem(session_id));
    (workspace.join(&rel), rel)
}

/// Removes session spill directories older than the retention period.
pub fn remove_old_spills(workspace: &Path) {
    let root = workspace.join(".tackle/outputs");
    let Ok(entries) = std::fs::read_dir(&root) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|modified| now.duration_since(modified).is_ok_and(|age| age > SPILL_RETENTION));
        if old {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
