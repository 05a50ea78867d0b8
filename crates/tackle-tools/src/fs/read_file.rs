//! `read_file` (Claude Code's `Read`, docs/reference/tools.md#read_file): a file, or a window of its lines, as
//! `cat -n` shows them. The tool keeps its own output within 50,000 characters (whole lines
//! only), streams the file so a huge one is never loaded whole, and records the read in the
//! ledger (a partial read counts). A whole read of a `.ipynb` file shows its cells instead
//! ([`crate::fs::notebook`]). A file whose first bytes say it is a PNG, JPEG, GIF or WebP
//! image comes back as an image part with a line naming its size ([`crate::fs::images`]),
//! and a PDF as its text page by page ([`crate::fs::pdf`]), whatever the file's name.

use std::fs::File;
use std::io::Read as _;
use std::os::unix::fs::FileExt as _;

use base64::Engine as _;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::spec::PathAccess;
use tackle_core::{Access, ContentPart, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use crate::fs::images::{ImageKind, MAX_IMAGE_FILE_BYTES, show_image};
use crate::fs::pdf::{MAX_PDF_FILE_BYTES, is_pdf, pdf_text};

use crate::fs::notebook::{Notebook, is_notebook_path};
use crate::fs::reader::{Line, scan};
use crate::fs::suggest::missing_file_message;
use crate::fs::text::{as_text, binary_message, human_size, push_numbered};
use crate::fs::{FileStamp, Files, LoadError, Target, blocking, ledger, open_read, read_existing};

/// The wire name.
pub const NAME: &str = "read_file";
/// Lines read when `limit` is not given.
pub const DEFAULT_LIMIT: u64 = 2000;
/// Characters of a line shown before it is cut.
pub const MAX_LINE_CHARS: usize = 2000;
/// Characters of output, at most.
pub const MAX_OUTPUT_CHARS: usize = 50_000;
/// Files larger than this need `offset` or `limit`.
pub const MAX_WHOLE_BYTES: u64 = 256 * 1024;

/// `read_file`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileInput {
    /// The file to read: relative to the workspace, or absolute inside it.
    pub file_path: String,
    /// The first line to read, 1-based (default 1).
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// How many lines to read (default 2000).
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
    /// PDF files only: the pages to read, as "3", "3-5" or "3-" (at most 20 a call; default
    /// from the first page).
    pub pages: Option<String>,
}

/// The `read_file` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct ReadFile;

impl Tool for ReadFile {
    type Input = ReadFileInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "Read a file. Text comes numbered as by `cat -n` (number, tab, line), up to 2000 lines from `offset` \
             (1-based; use `offset` and `limit` for long files). Lines longer than 2000 characters are cut. Images \
             (PNG, JPEG, GIF, WebP) are shown to you, scaled down when large. PDFs come as text page by page, at \
             most 20 pages a call: choose them with `pages` (\"3-5\"). Read a file before you change it with \
             write_file or edit_file. Paths are relative to the workspace, or absolute inside it.",
        )
        .title("Read file")
        .alias("Read")
        .read_only()
        .idempotent()
        .concurrency_safe()
        .manages_output_budget()
        .path_param("file_path", PathAccess::Read)
    }

    async fn call(&self, input: ReadFileInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        blocking(ctx, move |ctx| read(&Files::new(ctx), &input)).await
    }
}

fn read(files: &Files<'_>, input: &ReadFileInput) -> Result<ToolOutput, ToolError> {
    let target = files.target(&input.file_path, Access::Read)?;
    let mut note = None;
    if input.offset.is_none() && input.limit.is_none() && input.pages.is_none() && is_notebook_path(&target.path) {
        match read_notebook(files, &target) {
            NotebookRead::Cells(cells) => return Ok(*cells),
            NotebookRead::Malformed(why) => note = Some(why),
            NotebookRead::AsText => {}
        }
    }
    let (file, meta) = open_file(files, &target)?;
    let mut prefix = [0u8; 1024];
    let sniffed = read_prefix(&file, &mut prefix).map_err(|err| read_error(&target, &err))?;
    let prefix = &prefix[..sniffed];
    if let Some(kind) = ImageKind::sniff(prefix) {
        return read_image(&target, &file, meta.len(), kind);
    }
    if is_pdf(prefix) {
        return read_pdf(&target, &file, meta.len(), input.pages.as_deref()).map(ToolOutput::text);
    }
    if input.pages.is_some() {
        return Err(ToolError::InvalidInput(format!("pages is for PDF files; {} is not a PDF", target.raw)));
    }
    let lines = read_lines(files, &target, file, &meta, input)?;
    Ok(ToolOutput::text(match note {
        Some(why) => format!("(not shown as a notebook: {why}; the raw text follows)\n{lines}"),
        None => lines,
    }))
}

fn read_error(target: &Target, err: &std::io::Error) -> ToolError {
    ToolError::Failed(format!("Ran into {err} while trying to read {}", target.raw))
}

/// Fills `buf` from the start of `file` (fewer bytes for a shorter file).
fn read_prefix(file: &File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read_at(&mut buf[filled..], filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(filled)
}

/// Reads a PNG, JPEG, GIF or WebP file whole (at most [`MAX_IMAGE_FILE_BYTES`]) and returns
/// the line naming its size and the image.
fn read_image(target: &Target, file: &File, size: u64, kind: ImageKind) -> Result<ToolOutput, ToolError> {
    let bytes = read_capped(target, file, size, MAX_IMAGE_FILE_BYTES, "image")?;
    let shown = show_image(&bytes, kind).map_err(|err| ToolError::Failed(format!("{}: {err}", target.raw)))?;
    let mut output = ToolOutput::text(format!("{}: {}", target.raw, shown.summary));
    output.content.push(ContentPart::Image { mime_type: shown.mime_type.to_owned(), data: shown.data });
    Ok(output)
}

/// Reads a PDF whole (at most [`MAX_PDF_FILE_BYTES`]) and returns the text of its pages.
fn read_pdf(target: &Target, file: &File, size: u64, pages: Option<&str>) -> Result<String, ToolError> {
    let bytes = read_capped(target, file, size, MAX_PDF_FILE_BYTES, "PDF")?;
    pdf_text(&bytes, pages, MAX_OUTPUT_CHARS).map_err(|err| {
        if err.starts_with("pages ") {
            ToolError::InvalidInput(err)
        } else {
            ToolError::Failed(format!("{}: {err}", target.raw))
        }
    })
}

/// The whole of `file`, refused when over `limit` bytes (checked again while reading, since
/// the file may grow).
fn read_capped(target: &Target, file: &File, size: u64, limit: u64, what: &str) -> Result<Vec<u8>, ToolError> {
    let too_large = |size: u64| {
        ToolError::Failed(format!(
            "{} is a {what} of {}, over the {} limit of read_file",
            target.raw,
            human_size(size),
            human_size(limit)
        ))
    };
    if size > limit {
        return Err(too_large(size));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|err| read_error(target, &err))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// What a whole read of a `.ipynb` file gives.
enum NotebookRead {
    /// The cells, rendered, and their output images.
    Cells(Box<ToolOutput>),
    /// Not a notebook the tools understand (why): shown as text with a note.
    Malformed(String),
    /// Not loadable whole (missing, too large, binary…): the text read says why.
    AsText,
}

/// Loads a notebook whole, records the read in the ledger, and renders its cells.
fn read_notebook(files: &Files<'_>, target: &Target) -> NotebookRead {
    let Ok(existing) = read_existing(target) else {
        return NotebookRead::AsText;
    };
    let Some(text) = as_text(&existing.bytes) else {
        return NotebookRead::AsText;
    };
    match Notebook::parse(text) {
        Ok(notebook) => {
            files.record_read(target, &existing.meta, &existing.bytes);
            let mut output = ToolOutput::text(notebook.render(MAX_OUTPUT_CHARS));
            add_notebook_images(&mut output, &notebook);
            NotebookRead::Cells(Box::new(output))
        }
        Err(why) => NotebookRead::Malformed(why),
    }
}

/// Opens the file (through the path policy's opener), with the model-facing error when it
/// cannot be.
fn open_file(files: &Files<'_>, target: &Target) -> Result<(File, std::fs::Metadata), ToolError> {
    let shown = &target.raw;
    match open_read(target) {
        Ok(opened) => Ok(opened),
        Err(LoadError::NotFound) => Err(ToolError::NotFound(missing_file_message(files.ctx(), target))),
        Err(LoadError::Directory) => {
            Err(ToolError::InvalidInput(format!("{shown} is a directory. Use glob, or bash ls, to list it.")))
        }
        Err(LoadError::Refused(err)) => Err(err),
        Err(LoadError::Io(err)) => Err(read_error(target, &err)),
        Err(err @ LoadError::TooLarge { .. }) => Err(ToolError::Failed(err.to_string())),
    }
}

/// Output images of a notebook shown, at most.
pub const MAX_NOTEBOOK_IMAGES: usize = 8;

/// Adds the notebook's output images (at most [`MAX_NOTEBOOK_IMAGES`]) to its rendering as
/// images are shown ([`show_image`]), each after a line naming its cell and size.
fn add_notebook_images(output: &mut ToolOutput, notebook: &Notebook) {
    let images = notebook.output_images();
    let mut lines = Vec::new();
    let mut parts = Vec::new();
    for (cell, text) in images.iter().take(MAX_NOTEBOOK_IMAGES) {
        let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let shown = base64::engine::general_purpose::STANDARD
            .decode(compact.as_bytes())
            .map_err(|err| format!("its data is not base64 ({err})"))
            .and_then(|bytes| {
                let kind = ImageKind::sniff(&bytes).ok_or("its data is not a PNG, JPEG, GIF or WebP image")?;
                show_image(&bytes, kind).map_err(|err| err.0)
            });
        match shown {
            Ok(image) => {
                lines.push(format!("[image of cell {cell}: {}]", image.summary));
                parts.push(ContentPart::Image { mime_type: image.mime_type.to_owned(), data: image.data });
            }
            Err(why) => lines.push(format!("[image of cell {cell} not shown: {why}]")),
        }
    }
    if images.len() > MAX_NOTEBOOK_IMAGES {
        lines.push(format!("[{} more output images not shown]", images.len() - MAX_NOTEBOOK_IMAGES));
    }
    if !lines.is_empty() {
        output.content.push(ContentPart::Text { text: lines.join("\n") });
        output.content.extend(parts);
    }
}

/// The file's lines in the window `input` asks for, numbered.
fn read_lines(
    files: &Files<'_>,
    target: &Target,
    mut file: File,
    meta: &std::fs::Metadata,
    input: &ReadFileInput,
) -> Result<String, ToolError> {
    let shown = &target.raw;
    let read_error = |err: std::io::Error| read_error(target, &err);
    if input.offset.is_none() && input.limit.is_none() && meta.len() > MAX_WHOLE_BYTES {
        return Err(ToolError::Failed(format!(
            "File content ({}) exceeds maximum allowed size (256 KiB). Use offset and limit to read part of it, or \
             grep to search it.",
            human_size(meta.len())
        )));
    }
    let offset = input.offset.unwrap_or(1).max(1);
    let limit = input.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    let mut out = String::new();
    let mut out_chars = 0usize;
    let mut last_shown = None;
    let window = offset - 1..offset.saturating_sub(1).saturating_add(limit);
    let scanned = scan(&mut file, window, MAX_LINE_CHARS * 4, false, |line: Line<'_>| {
        let mut formatted = String::new();
        let number = usize::try_from(line.index + 1).unwrap_or(usize::MAX);
        if line.chars > MAX_LINE_CHARS {
            let cut: String = line.text.chars().take(MAX_LINE_CHARS).collect();
            push_numbered(&mut formatted, number, &cut);
            formatted.push_str(&format!("… [line truncated, {} chars]", line.chars));
        } else {
            push_numbered(&mut formatted, number, line.text);
        }
        let chars = formatted.chars().count() + usize::from(!out.is_empty());
        if out_chars + chars > MAX_OUTPUT_CHARS {
            return false;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&formatted);
        out_chars += chars;
        last_shown = Some(line.index + 1);
        true
    })
    .map_err(read_error)?;
    if scanned.binary {
        return Err(ToolError::Failed(binary_message(shown)));
    }
    if let Some(hash) = scanned.hash {
        files.record_stamp(target, FileStamp { size: scanned.size, mtime_ns: ledger::mtime_ns(meta), hash });
    }
    if scanned.size == 0 {
        return Ok("(the file exists but is empty)".to_owned());
    }
    let total = scanned.cat_lines();
    if offset > total {
        return Err(ToolError::InvalidInput(format!("offset {offset} is past the end of the file ({total} lines)")));
    }
    let last = last_shown.unwrap_or(offset - 1);
    if last < total {
        out.push_str(&format!("\n(Showing lines {offset}-{last} of {total}. Use offset={} to continue.)", last + 1));
    }
    Ok(out)
}
