//! The output budget layer: content over the limit keeps its head and tail around a marker,
//! and the full text is spilled to the session's spill directory ([`crate::spill`]), under the
//! call's id, where the model can open it with `read_file` or `grep`.

use std::io::Write;

use crate::output::{ContentPart, ToolOutput};
use crate::spill::{SpillDir, create_spill_file, safe_file_stem};
use crate::text::{budget_marker, cut_middle};

/// The default inline limit, in characters (docs/reference/tools.md#outputs).
pub const DEFAULT_MAX_OUTPUT_CHARS: usize = 30_000;

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

    /// Fits `output` into the budget, spilling the full text into `spill`.
    pub(crate) fn apply(&self, output: &mut ToolOutput, spill: &SpillDir) {
        let text = output.text_content();
        let Some(cut) = cut_middle(&text, self.head_chars(), self.tail_chars()) else {
            return;
        };
        let written = create_spill_file(spill, &format!("{}.txt", safe_file_stem(&output.call_id)))
            .and_then(|(mut file, name)| file.write_all(text.as_bytes()).map(|()| name));
        let spill_path = match written {
            Ok(file_name) => Some(spill.rel_of(&file_name)),
            Err(err) => {
                tracing::warn!(error = %err, "could not save a cut output");
                None
            }
        };
        let marker = budget_marker(cut.omitted_chars, cut.omitted_lines, spill_path.as_deref());
        let cut_text = cut.join(&marker);
        let images = output.content.drain(..).filter(|part| matches!(part, ContentPart::Image { .. }));
        output.content = std::iter::once(ContentPart::Text { text: cut_text }).chain(images).collect();
        output.meta.truncated = true;
        output.meta.spill_path = spill_path;
    }
}
