//! Jupyter notebooks (nbformat 4) as the file tools see them (docs/reference/tools.md#notebook_edit):
//! [`Notebook::parse`] checks the structure the tools rely on, [`Notebook::render`] is what
//! `read_file` shows of a `.ipynb` file (cells with their text outputs, images named by a
//! line), and [`Notebook::edit`] is `notebook_edit`'s replace / insert / delete, written back
//! in the file's own JSON style (indent, key order, final newline) so a diff shows only the
//! edited cell.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::fs::text::human_size;

/// Characters kept free for the note of a cut rendering.
const NOTE_RESERVE: usize = 160;

/// How a notebook is edited (the variants carry no doc comments, so the schema is a plain
/// string enum, not a `oneOf`): replace the source of the cell `cell_id` (the default); insert
/// a new cell after `cell_id`, or at the top without one; delete the cell `cell_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EditMode {
    #[default]
    Replace,
    Insert,
    Delete,
}

/// The type of a new or replaced cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CellType {
    Code,
    Markdown,
}

impl CellType {
    fn as_str(self) -> &'static str {
        match self {
            CellType::Code => "code",
            CellType::Markdown => "markdown",
        }
    }
}

/// One edit of a notebook.
#[derive(Debug, Clone)]
pub struct Edit<'a> {
    pub cell_id: Option<&'a str>,
    pub new_source: &'a str,
    pub cell_type: Option<CellType>,
    pub mode: EditMode,
}

/// A parsed nbformat 4 notebook, with the JSON style of its file.
#[derive(Debug, Clone)]
pub struct Notebook {
    /// The top-level object; its `cells` entry is a placeholder while [`Notebook::cells`]
    /// holds them (it keeps the key's place in the file's order).
    root: Map<String, Value>,
    cells: Vec<Value>,
    /// One level of indent (spaces or tabs, as the file's second line starts); `None`: the
    /// file was written on one line.
    indent: Option<String>,
    /// The file's lines end in CRLF.
    crlf: bool,
    final_newline: bool,
}

/// Why a file is not a notebook the tools can work with.
pub type NotNotebook = String;

impl Notebook {
    /// Parses `text` as an nbformat 4 notebook: a JSON object with `nbformat: 4` and a
    /// `cells` array of objects, each with a string `cell_type` and a `source` that is a string
    /// or an array of strings.
    pub fn parse(text: &str) -> Result<Notebook, NotNotebook> {
        let value: Value = serde_json::from_str(text).map_err(|err| format!("it is not valid JSON ({err})"))?;
        let Value::Object(mut root) = value else {
            return Err("its top level is not a JSON object".into());
        };
        if root.get("nbformat").and_then(Value::as_u64) != Some(4) {
            return Err("it is not nbformat 4 (`nbformat` is not 4)".into());
        }
        let Some(Value::Array(cells)) = root.get_mut("cells").map(Value::take) else {
            return Err("it has no `cells` array".into());
        };
        for (index, cell) in cells.iter().enumerate() {
            let Value::Object(cell) = cell else {
                return Err(format!("cell {index} is not a JSON object"));
            };
            if !cell.get("cell_type").is_some_and(Value::is_string) {
                return Err(format!("cell {index} has no string `cell_type`"));
            }
            if multiline(cell.get("source")).is_none() {
                return Err(format!("the source of cell {index} is not a string or an array of strings"));
            }
        }
        let indent = text.split('\n').nth(1).map(|line| {
            let level = &line[..line.len() - line.trim_start_matches([' ', '\t']).len()];
            if level.is_empty() { " ".to_owned() } else { level.to_owned() }
        });
        Ok(Notebook { root, cells, indent, crlf: text.contains("\r\n"), final_newline: text.ends_with('\n') })
    }

    fn cells(&self) -> &[Value] {
        &self.cells
    }

    /// Whether the notebook's cells carry ids (nbformat 4.5 and later require them).
    fn has_ids(&self) -> bool {
        self.root.get("nbformat_minor").and_then(Value::as_u64).is_some_and(|minor| minor >= 5)
    }

    /// The id a cell is shown and addressed by: its `id`, or `cell-{index}` when it has none.
    fn shown_id(cell: &Value, index: usize) -> String {
        cell.get("id").and_then(Value::as_str).map_or_else(|| format!("cell-{index}"), str::to_owned)
    }

    /// The image data of the cells' outputs (`image/png`, `image/jpeg`, `image/gif`,
    /// `image/webp`), in order: the cell's number (1-based, as its header shows it) and the
    /// base64 text as the file holds it.
    pub fn output_images(&self) -> Vec<(usize, String)> {
        let mut images = Vec::new();
        for (index, cell) in self.cells().iter().enumerate() {
            for output in cell.get("outputs").and_then(Value::as_array).map_or(&[][..], Vec::as_slice) {
                let Some(Value::Object(data)) = output.get("data") else { continue };
                for (mime, value) in data {
                    if matches!(mime.as_str(), "image/png" | "image/jpeg" | "image/gif" | "image/webp")
                        && let Some(text) = multiline(Some(value))
                    {
                        images.push((index + 1, text));
                    }
                }
            }
        }
        images
    }

    /// The cells as `read_file` shows them, at most `budget` characters.
    pub fn render(&self, budget: usize) -> String {
        let cells = self.cells();
        let mut out = String::new();
        let mut used = 0usize;
        for (index, cell) in cells.iter().enumerate() {
            let block = render_cell(cell, index);
            let chars = block.chars().count() + usize::from(!out.is_empty());
            // Room is kept for the note that says where the output was cut.
            let reserve = if index + 1 < cells.len() { NOTE_RESERVE } else { 0 };
            if used + chars + reserve > budget {
                let note = format!(
                    "\n… [notebook cut at {budget} characters, in cell {} of {}; read the raw JSON with offset \
                     and limit]",
                    index + 1,
                    cells.len()
                );
                let separator = usize::from(!out.is_empty());
                let room = budget.saturating_sub(used + separator + note.chars().count());
                if separator == 1 {
                    out.push('\n');
                }
                out.extend(block.chars().take(room));
                out.push_str(&note);
                return out;
            }
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&block);
            used += chars;
        }
        if cells.is_empty() {
            out.push_str("(the notebook has no cells)");
        }
        out
    }

    /// Applies `edit`; returns what was done, for the model.
    pub fn edit(&mut self, edit: &Edit<'_>) -> Result<String, String> {
        let found = edit.cell_id.map(|id| self.find(id)).transpose()?;
        let required = || "cell_id is required to replace or delete a cell.".to_owned();
        match edit.mode {
            EditMode::Insert => {
                let cell_type = edit.cell_type.ok_or(
                    "cell_type is required when edit_mode is insert: give \"code\" or \"markdown\".".to_owned(),
                )?;
                let id = self.has_ids().then(|| self.fresh_id());
                let cell = new_cell(cell_type, id.as_deref(), edit.new_source);
                let at = found.map_or(0, |index| index + 1);
                self.cells.insert(at, cell);
                let shown = Notebook::shown_id(&self.cells[at], at);
                Ok(format!("Inserted {} cell {shown} at position {}.", cell_type.as_str(), at + 1))
            }
            EditMode::Delete => {
                let index = found.ok_or_else(required)?;
                let shown = Notebook::shown_id(&self.cells[index], index);
                self.cells.remove(index);
                Ok(format!("Deleted cell {shown}."))
            }
            EditMode::Replace => {
                let index = found.ok_or_else(required)?;
                let shown = Notebook::shown_id(&self.cells[index], index);
                let cell = self.cells[index].as_object_mut().ok_or_else(|| format!("cell {index} is not an object"))?;
                let as_string = cell.get("source").is_some_and(Value::is_string);
                cell.insert("source".into(), source_value(edit.new_source, as_string));
                if let Some(cell_type) = edit.cell_type {
                    cell.insert("cell_type".into(), cell_type.as_str().into());
                }
                if cell.get("cell_type").and_then(Value::as_str) == Some("code") {
                    cell.insert("execution_count".into(), Value::Null);
                    cell.insert("outputs".into(), Value::Array(Vec::new()));
                } else {
                    cell.remove("execution_count");
                    cell.remove("outputs");
                }
                Ok(format!("Updated cell {shown}."))
            }
        }
    }

    /// The index of the cell `id` addresses: a cell's `id`, or `cell-{index}` for a cell
    /// without one. An id several cells share is refused (it would be a guess).
    fn find(&self, id: &str) -> Result<usize, String> {
        let cells = self.cells();
        let matches: Vec<usize> =
            (0..cells.len()).filter(|&index| Notebook::shown_id(&cells[index], index) == id).collect();
        match matches.as_slice() {
            [index] => Ok(*index),
            [] => {
                let ids: Vec<String> =
                    cells.iter().enumerate().take(10).map(|(index, cell)| Notebook::shown_id(cell, index)).collect();
                let more = if cells.len() > 10 { format!(", … ({} cells)", cells.len()) } else { String::new() };
                Err(match ids.is_empty() {
                    true => format!("Cell with ID \"{id}\" not found in notebook: it has no cells."),
                    false => {
                        format!("Cell with ID \"{id}\" not found in notebook. Cell ids: {}{more}.", ids.join(", "))
                    }
                })
            }
            many => Err(format!(
                "Cell ID \"{id}\" is used by {} cells (at positions {}); the notebook is not valid. Nothing was \
                 changed; fix the ids with edit_file.",
                many.len(),
                many.iter().map(|index| (index + 1).to_string()).collect::<Vec<_>>().join(", ")
            )),
        }
    }

    /// A random cell id no cell has (8 hex digits, as Jupyter's are short random strings).
    fn fresh_id(&self) -> String {
        loop {
            let id = format!("{:08x}", rand::random::<u32>());
            if !self.cells().iter().any(|cell| cell.get("id").and_then(Value::as_str) == Some(id.as_str())) {
                return id;
            }
        }
    }

    /// The notebook as its file holds it: the same indent (Jupyter writes one space), keys in
    /// their order, the same line endings, the final newline kept.
    pub fn to_text(&self) -> Result<String, serde_json::Error> {
        let mut root = self.root.clone();
        root.insert("cells".into(), Value::Array(self.cells.clone()));
        let mut bytes = Vec::new();
        match &self.indent {
            None => serde_json::to_writer(&mut bytes, &root)?,
            Some(indent) => {
                let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
                root.serialize(&mut serde_json::Serializer::with_formatter(&mut bytes, formatter))?;
            }
        }
        if self.final_newline {
            bytes.push(b'\n');
        }
        // serde_json writes UTF-8 only; a line break inside a JSON string is escaped, so every
        // `\n` here ends a line.
        let text = String::from_utf8_lossy(&bytes);
        Ok(if self.crlf { text.replace('\n', "\r\n") } else { text.into_owned() })
    }
}

/// Whether `path` names a notebook (by its `.ipynb` extension, in any case).
pub fn is_notebook_path(path: &std::path::Path) -> bool {
    path.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("ipynb"))
}

/// A string, or an array of strings joined (how nbformat stores multi-line text).
fn multiline(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => parts.iter().map(|part| part.as_str()).collect::<Option<String>>(),
        _ => None,
    }
}

/// A source in the form the notebook uses: one string, or the lines as Jupyter writes them
/// (each keeping its `\n`).
fn source_value(source: &str, as_string: bool) -> Value {
    if as_string {
        return Value::String(source.to_owned());
    }
    Value::Array(source.split_inclusive('\n').map(|line| Value::String(line.to_owned())).collect())
}

/// A new cell with the keys nbformat 4 requires for its type, in Jupyter's (sorted) order.
fn new_cell(cell_type: CellType, id: Option<&str>, source: &str) -> Value {
    let mut cell = Map::new();
    cell.insert("cell_type".into(), cell_type.as_str().into());
    if cell_type == CellType::Code {
        cell.insert("execution_count".into(), Value::Null);
    }
    if let Some(id) = id {
        cell.insert("id".into(), id.into());
    }
    cell.insert("metadata".into(), Value::Object(Map::new()));
    if cell_type == CellType::Code {
        cell.insert("outputs".into(), Value::Array(Vec::new()));
    }
    cell.insert("source".into(), source_value(source, false));
    Value::Object(cell)
}

fn render_cell(cell: &Value, index: usize) -> String {
    let cell_type = cell.get("cell_type").and_then(Value::as_str).unwrap_or("?");
    let (id, cell_type) = (plain_or_quoted(&Notebook::shown_id(cell, index)), plain_or_quoted(cell_type));
    let mut out = format!("<cell {} id={id} type={cell_type}>\n", index + 1);
    out.push_str(&multiline(cell.get("source")).unwrap_or_default());
    if !out.ends_with('\n') {
        out.push('\n');
    }
    for output in cell.get("outputs").and_then(Value::as_array).map_or(&[][..], Vec::as_slice) {
        out.push_str(&render_output(output));
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out.push_str("</cell>");
    out
}

/// A value from the file for a cell's header line: as it is when it is what nbformat allows
/// in an id (letters, digits, `-`, `_`), else as a JSON string, so an id or type holding a
/// line break or a `>` cannot forge a cell boundary in what the model reads.
fn plain_or_quoted(value: &str) -> String {
    let plain = !value.is_empty() && value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if plain { value.to_owned() } else { Value::String(value.to_owned()).to_string() }
}

fn render_output(output: &Value) -> String {
    let kind = output.get("output_type").and_then(Value::as_str).unwrap_or("?");
    match kind {
        "stream" => {
            let name = output.get("name").and_then(Value::as_str).unwrap_or("stream");
            format!("[output: {name}]\n{}", multiline(output.get("text")).unwrap_or_default())
        }
        "error" => {
            let field = |key| output.get(key).and_then(Value::as_str).unwrap_or("");
            format!("[output: error]\n{}: {}", field("ename"), field("evalue"))
        }
        "execute_result" | "display_data" => {
            let mut out = String::new();
            let Some(Value::Object(data)) = output.get("data") else {
                return format!("[output: {kind}, no data]");
            };
            for (mime, value) in data {
                if mime == "text/plain" {
                    out.push_str(&format!("[output: {kind}]\n{}\n", multiline(Some(value)).unwrap_or_default()));
                } else {
                    let size = multiline(Some(value)).map_or(0, |text| encoded_size(mime, &text));
                    out.push_str(&format!("[output: {mime}, {}]\n", human_size(size)));
                }
            }
            out
        }
        other => format!("[output: {other}]"),
    }
}

/// The size of an output's data: decoded for base64 images, as is for text.
fn encoded_size(mime: &str, text: &str) -> u64 {
    let len = text.len() as u64;
    if mime.starts_with("image/") && mime != "image/svg+xml" {
        let payload = text.bytes().filter(|b| !b.is_ascii_whitespace()).count() as u64;
        let padding = text.bytes().rev().filter(|b| !b.is_ascii_whitespace()).take_while(|&b| b == b'=').count();
        return (payload / 4 * 3).saturating_sub(padding as u64);
    }
    len
}
