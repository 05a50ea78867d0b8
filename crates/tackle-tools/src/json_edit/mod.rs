//! `json_edit_tool` (docs/reference/tools.md#json_edit_tool): view and change a JSON file through RFC 9535 JSONPath
//! (`serde_json_path`, filters included). Trae's names and messages, with its bugs fixed:
//! `null` is a value, `add` never overwrites silently, relative paths work, and the file
//! keeps its key order, indentation and final newline.
//!
//! `value` takes any JSON value. The `openai-strict` dialect cannot express "any JSON", so
//! there it is advertised as JSON text and the executor's decoder parses it back (only in
//! sessions that showed that dialect); the tool itself always receives a JSON value, and
//! tells an absent `value` from an explicit `null`.

mod format;
mod hint;
mod path;
mod scan;
mod splice;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json_path::{JsonPath, NormalizedPath, PathElement};
use tackle_core::spec::PathAccess;
use tackle_core::text::JSON_MAX_DEPTH;
use tackle_core::{Access, InterruptBehavior, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use crate::fs::diff::unified_diff;
use crate::fs::files::mode_of;
use crate::fs::text::{UTF8_BOM, binary_message, has_nul_head};
use crate::fs::{Before, Files, LoadError, Target, blocking, blocking_alone, read_existing, write_failure};
use format::{Layout, MAX_WRITTEN_BYTES, lossy_number, pretty_head};
use path::{Last, bounds_problem, split_last};

/// The wire name.
pub const NAME: &str = "json_edit_tool";
/// Characters of a `view` shown.
pub const VIEW_CAP_CHARS: usize = 20_000;
/// Locations one `set`, `add` or `remove` changes at most.
pub const MAX_LOCATIONS: usize = 100_000;

/// An operation of the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JsonOperation {
    View,
    Set,
    Add,
    Remove,
}

impl JsonOperation {
    fn name(self) -> &'static str {
        match self {
            JsonOperation::View => "view",
            JsonOperation::Set => "set",
            JsonOperation::Add => "add",
            JsonOperation::Remove => "remove",
        }
    }
}

/// `json_edit_tool`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JsonEditInput {
    /// `view` (the whole file, or what `json_path` matches), `set` (replace every match),
    /// `add` (a new key or array element) or `remove` (every match).
    pub operation: JsonOperation,
    /// The JSON file: relative to the workspace, or absolute inside it.
    pub file_path: String,
    /// An RFC 9535 JSONPath: `$.name`, `$.users[0].email`, `$.items[*].price`,
    /// `$.users[?@.age > 30]`, `$..id`. For `add` it must end in a key or an index.
    pub json_path: Option<String>,
    /// The value: required for `set` and `add` (not used by `view` and `remove`); any JSON
    /// value, `null` included.
    // No `default` in the schema (skip_serializing_if): an absent value is not `null`.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "any_value")]
    pub value: Option<Value>,
    /// true: write the file indented (in its own indentation); false: on one line. Default:
    /// as the file is (an indented file keeps its indentation, a one-line file stays one line).
    pub pretty_print: Option<bool>,
}

/// An explicit `null` is a value, not "absent".
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// "Any JSON value": no `type`, so every dialect treats it as such (the strict dialect as
/// JSON text).
fn any_value(_generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::Schema::default()
}

/// The `json_edit_tool` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct JsonEdit;

impl Tool for JsonEdit {
    type Input = JsonEditInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "View or change a JSON file with JSONPath (RFC 9535, filters such as $.users[?@.age > 30] included). \
             `view` shows the file or what json_path matches; `set` replaces every match with `value`; `add` creates \
             a key or inserts an array element (json_path ends in the new key or index); `remove` deletes every \
             match. Key order, indentation and the final newline are kept.",
        )
        .title("Edit JSON")
        .destructive()
        .edits_files()
        .interrupt(InterruptBehavior::Block)
        .path_param("file_path", PathAccess::Write)
    }

    fn is_read_only(&self, input: &JsonEditInput) -> bool {
        input.operation == JsonOperation::View
    }

    fn is_concurrency_safe(&self, input: &JsonEditInput) -> bool {
        input.operation == JsonOperation::View
    }

    fn preview(&self, input: &JsonEditInput, ctx: &ToolContext) -> Option<String> {
        if input.operation == JsonOperation::View {
            return None;
        }
        let planned = plan(&Files::new(ctx), input.clone()).ok()?;
        let (target, old, new) = planned.new_text()?;
        Some(unified_diff(&target.raw, Some(old), &new))
    }

    async fn call(&self, input: JsonEditInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let safe = self.is_concurrency_safe(&input);
        let work = move |ctx: &ToolContext| run(&Files::new(ctx), input);
        let output = if safe { blocking(ctx, work).await } else { blocking_alone(ctx, work).await };
        output.map(ToolOutput::text)
    }
}

/// What a call does, computed without writing: text to show, or the change to write.
#[allow(clippy::large_enum_variant)] // one per call, consumed at once
enum Planned {
    Shown(String),
    /// `target` (now `text`) changes by `change`; `message` is the model's answer.
    Write {
        target: Target,
        meta: std::fs::Metadata,
        text: String,
        change: Change,
        message: String,
    },
}

/// How the file's text changes.
enum Change {
    /// Only the bytes of `range` change, to `piece`: the rest is written from the old bytes,
    /// and the history keeps only the old value.
    Splice { range: std::ops::Range<usize>, piece: String },
    /// The whole file is written anew.
    Whole(String),
}

impl Planned {
    /// The file's text after the change (`None` for a view).
    fn new_text(&self) -> Option<(&Target, &str, String)> {
        let Planned::Write { target, text, change, .. } = self else { return None };
        let new = match change {
            Change::Splice { range, piece } => format!("{}{piece}{}", &text[..range.start], &text[range.end..]),
            Change::Whole(written) => written.clone(),
        };
        Some((target, text, new))
    }
}

fn run(files: &Files<'_>, input: JsonEditInput) -> Result<String, ToolError> {
    let (target, meta, text, change, message) = match plan(files, input)? {
        Planned::Shown(shown) => return Ok(shown),
        Planned::Write { target, meta, text, change, message } => (target, meta, text, change, message),
    };
    match change {
        Change::Splice { range, piece } => {
            files
                .write_splice(&target, text.as_bytes(), range, piece.as_bytes(), mode_of(&meta))
                .map_err(|err| write_failure(&target.raw, err))?;
        }
        Change::Whole(written) => {
            let before = Before::content(text.into_bytes(), mode_of(&meta));
            files.write(&target, written.as_bytes(), before).map_err(|err| write_failure(&target.raw, err))?;
        }
    }
    Ok(message)
}

/// Everything a call does short of writing: the checks, the edit of the document, the text to
/// write; what [`run`] writes and what [`JsonEdit::preview`] shows.
fn plan(files: &Files<'_>, input: JsonEditInput) -> Result<Planned, ToolError> {
    let op = input.operation;
    let json_path = match (&input.json_path, op) {
        (None, JsonOperation::View) => None,
        (None, _) => {
            return Err(ToolError::InvalidInput(format!(
                "json_path parameter is required for the '{}' operation.",
                op.name()
            )));
        }
        // Not trimmed: RFC 9535 allows no whitespace before `$` or after the path.
        (Some(raw), _) => Some(raw.clone()),
    };
    if matches!(op, JsonOperation::Set | JsonOperation::Add) && input.value.is_none() {
        return Err(ToolError::InvalidInput(format!(
            "A 'value' parameter is required for the '{}' operation.",
            op.name()
        )));
    }
    let parsed = json_path.as_deref().map(parse_path).transpose()?;
    let access = if op == JsonOperation::View { Access::Read } else { Access::Write };
    let target = files.target(&input.file_path, access)?;
    let (meta, text) = load(&target)?;
    if let Some(raw) = json_path.as_deref() {
        match plain(op, raw, &text, input.value.as_ref(), input.pretty_print)? {
            Some(Plain::Shown(shown)) => return Ok(Planned::Shown(shown)),
            Some(Plain::Replace { range, piece, compact }) => {
                let message = updated(1, raw, &compact);
                return Ok(Planned::Write { target, meta, text, change: Change::Splice { range, piece }, message });
            }
            None => {}
        }
    }
    let mut document = parse(&target, &text)?;

    let Some((raw_path, path)) = json_path.as_deref().zip(parsed) else {
        return Ok(Planned::Shown(capped(format!("JSON content of {}:\n", target.raw), &document)));
    };
    let message = match op {
        JsonOperation::View => return Ok(Planned::Shown(view(&document, raw_path, &path))),
        JsonOperation::Set => set(&mut document, raw_path, &path, input.value.unwrap_or_default())?,
        JsonOperation::Add => add(&mut document, raw_path, input.value.unwrap_or_default())?,
        JsonOperation::Remove => remove(&mut document, raw_path, &path)?,
    };
    if let Some(number) = lossy_number(&text) {
        return Err(ToolError::Failed(format!(
            "{} holds the number {number}, which would change when the file is written back (it does not fit a \
             64-bit integer or a double). Nothing was changed; edit the file with edit_file instead.",
            target.raw
        )));
    }
    let written = Layout::of(&text).write(&document, input.pretty_print, text.len());
    drop_in_background(document, text.len());
    let written = written.map_err(|_| {
        ToolError::Failed(format!(
            "{} would be written out larger than {MAX_WRITTEN_BYTES} bytes, the most json_edit_tool reads. Nothing \
             was changed; write it compact (pretty_print false), or edit it with jq in the shell.",
            target.raw
        ))
    })?;
    Ok(Planned::Write { target, meta, text, change: Change::Whole(written), message })
}

/// Parses a JSONPath as written (RFC 9535: no whitespace around it); a refusal says what to
/// fix where a common mistake is recognised ([`hint::hint`]).
fn parse_path(raw: &str) -> Result<JsonPath, ToolError> {
    if !raw.starts_with('$') {
        let body = raw.trim_start();
        if body.starts_with('$') {
            return Err(ToolError::InvalidInput(format!(
                "JSONPath must start with '$', with no whitespace before it (e.g. {body})"
            )));
        }
        let suggestion = if body.starts_with(['.', '[']) { format!("${body}") } else { format!("$.{body}") };
        return Err(ToolError::InvalidInput(format!("JSONPath must start with '$' (e.g. {suggestion})")));
    }
    if let Some(problem) = bounds_problem(raw) {
        return Err(ToolError::InvalidInput(problem));
    }
    JsonPath::parse(raw).map_err(|err| {
        let hint = hint::hint(raw).map(|hint| format!(". Hint: {hint}")).unwrap_or_default();
        ToolError::InvalidInput(format!("Invalid JSONPath expression '{raw}': {err}{hint}"))
    })
}

/// Freeing a large document (one allocation per value) takes as long as a good part of the
/// edit; a large one is freed on another thread, off the call's path.
fn drop_in_background(document: Value, source_bytes: usize) {
    const LARGE: usize = 256 * 1024;
    if source_bytes > LARGE {
        std::thread::spawn(move || drop(document));
    }
}

/// What the plain-path route ([`splice`]) did instead of the tree.
enum Plain {
    /// A view's text.
    Shown(String),
    /// `set`: the bytes of `range` become `piece` (`compact` is the value for the message).
    Replace { range: std::ops::Range<usize>, piece: String, compact: String },
}

/// `view` and `set` of a plain path without the tree, when the path names one existing value
/// of a JSON file and the file keeps its layout; `None` sends the call to the tree.
fn plain(
    op: JsonOperation,
    raw: &str,
    text: &str,
    value: Option<&Value>,
    pretty: Option<bool>,
) -> Result<Option<Plain>, ToolError> {
    let Some(steps) = splice::plain_steps(raw) else { return Ok(None) };
    match (op, value) {
        (JsonOperation::View, _) => {
            let Some(range) = scan::locate(text, &steps) else { return Ok(None) };
            let Ok(found) = serde_json::from_str::<Value>(&text[range]) else { return Ok(None) };
            Ok(Some(Plain::Shown(capped(format!("JSONPath '{raw}' matches:\n"), &found))))
        }
        (JsonOperation::Set, Some(value)) => {
            let layout = Layout::of(text);
            if pretty.is_some_and(|pretty| pretty != layout.indent.is_some()) {
                return Ok(None);
            }
            let Some(range) = scan::locate(text, &steps) else { return Ok(None) };
            let compact = check_copies(1, steps.len(), value)?;
            let Ok(piece) = splice::piece(value, &layout, steps.len()) else { return Ok(None) };
            if text.len() - range.len() + piece.len() > MAX_WRITTEN_BYTES {
                return Ok(None);
            }
            Ok(Some(Plain::Replace { range, piece, compact }))
        }
        _ => Ok(None),
    }
}

/// Reads the file as text (its bytes moved into the text, not copied).
fn load(target: &Target) -> Result<(std::fs::Metadata, String), ToolError> {
    let shown = &target.raw;
    let existing = read_existing(target).map_err(|err| match err {
        LoadError::NotFound => ToolError::NotFound(format!("File does not exist: {shown}")),
        LoadError::Directory => {
            ToolError::InvalidInput(format!("{shown} is a directory. Give the path of a JSON file."))
        }
        LoadError::TooLarge { size } => ToolError::Failed(format!(
            "{shown} is {size} bytes; json_edit_tool handles files up to 64 MiB. Use jq in the shell for larger ones."
        )),
        LoadError::Refused(err) => err,
        LoadError::Io(err) => ToolError::Failed(format!("Ran into {err} while trying to read {shown}")),
    })?;
    let meta = existing.meta;
    if has_nul_head(&existing.bytes) {
        return Err(ToolError::Failed(binary_message(shown)));
    }
    // JSON is UTF-8 (RFC 8259 §8.1): other bytes are a syntax error, placed as serde_json
    // places its own (lines from 1, columns in bytes from 1, after a BOM).
    let text = String::from_utf8(existing.bytes).map_err(|err| {
        let (bytes, at) = (err.as_bytes(), err.utf8_error().valid_up_to());
        let body = if bytes.starts_with(UTF8_BOM.as_bytes()) { UTF8_BOM.len() } else { 0 };
        let before = &bytes[body..at];
        let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
        ToolError::Failed(format!(
            "Invalid JSON in file {shown}: invalid UTF-8 byte 0x{:02x} at line {} column {}",
            bytes[at],
            memchr::memchr_iter(b'\n', before).count() + 1,
            before.len() - line_start + 1
        ))
    })?;
    if text.strip_prefix(UTF8_BOM).unwrap_or(&text).trim().is_empty() {
        return Err(ToolError::Failed(format!("File is empty: {shown}")));
    }
    Ok((meta, text))
}

/// Parses the file's text into the tree.
fn parse(target: &Target, text: &str) -> Result<Value, ToolError> {
    let shown = &target.raw;
    let body = text.strip_prefix(UTF8_BOM).unwrap_or(text);
    serde_json::from_str(body).map_err(|err| {
        let message = tackle_core::text::json_error(&err);
        let message = message.split(" at line ").next().unwrap_or(&message).to_owned();
        let too_deep = tackle_core::text::json_too_deep(&err);
        ToolError::Failed(format!(
            "Invalid JSON in file {shown}: {message} at line {} column {}{}",
            err.line(),
            err.column(),
            if too_deep { ". Edit it with edit_file, or jq in the shell." } else { "" }
        ))
    })
}

/// `prefix` and `value` pretty-printed, cut to [`VIEW_CAP_CHARS`] (only what is shown is kept
/// in memory).
fn capped(prefix: String, value: &impl serde::Serialize) -> String {
    let (head, chars) = pretty_head(value, VIEW_CAP_CHARS);
    let total = chars.map(|n| n + prefix.chars().count());
    let mut text = prefix + &head;
    if total.is_some_and(|total| total <= VIEW_CAP_CHARS) {
        return text;
    }
    if let Some((cut, _)) = text.char_indices().nth(VIEW_CAP_CHARS) {
        text.truncate(cut);
    }
    let total = total.map_or_else(|| format!("over {MAX_WRITTEN_BYTES}"), |n| n.to_string());
    format!("{text}\n[... view truncated: {total} characters total; use a narrower json_path ...]")
}

fn view(document: &Value, raw: &str, path: &JsonPath) -> String {
    let nodes = path.query(document).all();
    match nodes.as_slice() {
        [] => format!("No matches found for JSONPath: {raw}"),
        [one] => capped(format!("JSONPath '{raw}' matches:\n"), one),
        // The matches are written as one array, without copying them.
        many => capped(format!("JSONPath '{raw}' matches:\n"), &many),
    }
}

/// The JSON pointers of every match, deepest and last first (so removals do not shift the
/// positions of the matches still to come). At most [`MAX_LOCATIONS`]: each costs its path in
/// memory (and `set` and `add` a copy of the value).
fn pointers(document: &Value, raw: &str, path: &JsonPath) -> Result<Vec<(Vec<Step>, String)>, ToolError> {
    let count = path.query(document).len();
    if count > MAX_LOCATIONS {
        return Err(ToolError::Failed(format!(
            "JSONPath {raw} matches {count} locations; json_edit_tool changes at most {MAX_LOCATIONS} in one call. \
             Nothing was changed; narrow the path, or edit with jq in the shell."
        )));
    }
    let mut found: Vec<(Vec<Step>, String)> =
        path.query_located(document).locations().map(|loc| (steps(loc), loc.to_json_pointer())).collect();
    found.sort_by(|a, b| b.0.cmp(&a.0));
    found.dedup_by(|a, b| a.1 == b.1);
    Ok(found)
}

/// Refuses to put `value` at `locations` places when copies of it alone would make the
/// document larger than it may be written, or when it would nest the document past the JSON
/// limit (the file could not be read back): `above` is how many arrays and objects hold the
/// deepest place. Returns the value's compact text.
fn check_copies(locations: usize, above: usize, value: &Value) -> Result<String, ToolError> {
    let compact = serde_json::to_string(value).unwrap_or_default();
    if locations.saturating_mul(compact.len()) > MAX_WRITTEN_BYTES {
        return Err(ToolError::Failed(format!(
            "{locations} copies of this {}-byte value would make the document larger than {MAX_WRITTEN_BYTES} bytes, \
             the most json_edit_tool writes. Nothing was changed; narrow the path.",
            compact.len()
        )));
    }
    let depth = above + tackle_core::text::json_depth(value);
    if depth > JSON_MAX_DEPTH {
        return Err(ToolError::Failed(format!(
            "The value would nest the document {depth} levels deep; JSON is read at most {JSON_MAX_DEPTH} levels \
             deep, so the file could not be read back. Nothing was changed; use a flatter value."
        )));
    }
    Ok(compact)
}

/// A path element, ordered so that indices compare as numbers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Index(usize),
    Name(String),
}

fn steps(location: &NormalizedPath<'_>) -> Vec<Step> {
    location
        .iter()
        .map(|element| match element {
            PathElement::Index(i) => Step::Index(*i),
            PathElement::Name(name) => Step::Name((*name).to_owned()),
        })
        .collect()
}

fn no_match(raw: &str) -> ToolError {
    ToolError::Failed(format!("No matches found for JSONPath: {raw}"))
}

fn set(document: &mut Value, raw: &str, path: &JsonPath, value: Value) -> Result<String, ToolError> {
    let found = pointers(document, raw, path)?;
    if found.is_empty() {
        return Err(ToolError::Failed(format!("No matches found for JSONPath: {raw} Use add to create it.")));
    }
    let above = found.iter().map(|(steps, _)| steps.len()).max().unwrap_or_default();
    let compact = check_copies(found.len(), above, &value)?;
    for (_, pointer) in &found {
        if let Some(slot) = document.pointer_mut(pointer) {
            *slot = value.clone();
        }
    }
    Ok(updated(found.len(), raw, &compact))
}

/// The answer to a `set` that changed `count` locations.
fn updated(count: usize, raw: &str, compact: &str) -> String {
    format!("Successfully updated {count} location(s) at JSONPath '{raw}' with value: {compact}")
}

fn remove(document: &mut Value, raw: &str, path: &JsonPath) -> Result<String, ToolError> {
    let found = pointers(document, raw, path)?;
    if found.is_empty() {
        return Err(no_match(raw));
    }
    if found.iter().any(|(steps, _)| steps.is_empty()) {
        return Err(ToolError::InvalidInput("Cannot remove the document root".into()));
    }
    let mut removed = 0;
    for (steps, pointer) in &found {
        let parent_pointer = &pointer[..pointer.rfind('/').unwrap_or(0)];
        let Some(parent) = document.pointer_mut(parent_pointer) else { continue };
        let gone = match (parent, steps.last()) {
            (Value::Object(map), Some(Step::Name(name))) => map.shift_remove(name).is_some(),
            (Value::Array(items), Some(Step::Index(i))) if *i < items.len() => {
                items.remove(*i);
                true
            }
            _ => false,
        };
        removed += usize::from(gone);
    }
    Ok(format!("Successfully removed {removed} element(s) at JSONPath '{raw}'"))
}

fn add(document: &mut Value, raw: &str, value: Value) -> Result<String, ToolError> {
    let not_addable = || {
        ToolError::InvalidInput("add needs a path that ends in a key or an array index, e.g. $.a.b or $.a[3]".into())
    };
    let (parent_raw, last) = split_last(raw).ok_or_else(not_addable)?;
    let last = last.ok_or_else(not_addable)?;
    let parent_path = parse_path(&parent_raw)?;
    let parents = pointers(document, &parent_raw, &parent_path)?;
    if parents.is_empty() {
        return Err(ToolError::Failed(format!("Parent path not found: {parent_raw}")));
    }
    // Check every parent first: either all of them take the value or none does.
    for (_, pointer) in &parents {
        let Some(parent) = document.pointer(pointer) else { continue };
        match (parent, &last) {
            (Value::Object(map), Last::Name(key)) if map.contains_key(key) => {
                return Err(ToolError::Failed(format!(
                    "Key '{key}' already exists at {parent_raw}; use set to change it."
                )));
            }
            (Value::Object(_), Last::Name(_)) => {}
            (Value::Array(items), Last::Index(i)) => {
                if usize::try_from(*i).map_or(true, |i| i > items.len()) {
                    return Err(ToolError::Failed(format!(
                        "Index {i} is out of range for an array of length {} at {parent_raw}",
                        items.len()
                    )));
                }
            }
            (_, Last::Name(_)) => {
                return Err(ToolError::Failed(format!("Cannot add key to non-object at path: {parent_raw}")));
            }
            (_, Last::Index(_)) => {
                return Err(ToolError::Failed(format!("Cannot add element to non-array at path: {parent_raw}")));
            }
        }
    }
    // The parent itself holds the value too.
    let above = parents.iter().map(|(steps, _)| steps.len() + 1).max().unwrap_or_default();
    check_copies(parents.len(), above, &value)?;
    for (_, pointer) in &parents {
        match (document.pointer_mut(pointer), &last) {
            (Some(Value::Object(map)), Last::Name(key)) => {
                map.insert(key.clone(), value.clone());
            }
            (Some(Value::Array(items)), Last::Index(i)) => {
                let at = usize::try_from(*i).unwrap_or(items.len()).min(items.len());
                items.insert(at, value.clone());
            }
            _ => {}
        }
    }
    Ok(format!("Successfully added value at JSONPath '{raw}' ({} location(s))", parents.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The RFC 9535 compliance test suite (`tests/data/jsonpath-cts`), through the tool's own
    /// parsing: every valid selector selects what the suite expects, every invalid one is
    /// refused, and the common mistakes among them get a hint.
    #[test]
    fn the_rfc_9535_compliance_suite_passes() {
        let suite: Value = serde_json::from_str(include_str!("../../tests/data/jsonpath-cts/cts.json")).unwrap();
        let tests = suite["tests"].as_array().unwrap();
        assert_eq!(tests.len(), 703);
        let mut failures = Vec::new();
        for test in tests {
            let (name, selector) = (test["name"].as_str().unwrap(), test["selector"].as_str().unwrap());
            match (parse_path(selector), test["invalid_selector"] == true) {
                (Ok(_), true) => failures.push(format!("{name}: {selector:?} was accepted")),
                (Err(err), true) => {
                    let message = err.to_string();
                    let expected = if name.contains("non-singular query") {
                        "can select several values"
                    } else if name.contains("name shorthand, number") {
                        "is not an index"
                    } else if name.contains("name shorthand, symbol") {
                        "only a plain name fits"
                    } else if name.contains("between dot and name") || name.contains("leading whitespace") {
                        "whitespace"
                    } else {
                        ""
                    };
                    if !message.contains(expected) {
                        failures.push(format!("{name}: {selector:?} has no hint: {message}"));
                    }
                }
                (Err(err), false) => failures.push(format!("{name}: {selector:?} was refused: {err}")),
                (Ok(path), false) => {
                    let found = Value::Array(path.query(&test["document"]).all().into_iter().cloned().collect());
                    let expected =
                        test.get("result").map_or_else(|| test["results"].clone(), |one| serde_json::json!([one]));
                    if !expected.as_array().unwrap().contains(&found) {
                        failures.push(format!("{name}: {selector:?} selected {found}"));
                    }
                }
            }
        }
        assert_eq!(failures, Vec::<String>::new());
    }

    #[test]
    fn whitespace_around_the_path_is_refused_with_what_to_write() {
        assert_eq!(
            parse_path(" $.a").unwrap_err().to_string(),
            "JSONPath must start with '$', with no whitespace before it (e.g. $.a)"
        );
        assert_eq!(
            parse_path("$.a ").unwrap_err().to_string(),
            "Invalid JSONPath expression '$.a ': at position 3, parser error. Hint: remove the whitespace after the \
             path: '$.a'"
        );
        // Between segments, RFC 9535 allows it.
        assert!(parse_path("$ .a [0]").is_ok());
    }

    #[test]
    fn value_tells_absent_from_null() {
        let absent: JsonEditInput =
            serde_json::from_value(serde_json::json!({"operation": "set", "file_path": "f"})).unwrap();
        assert_eq!(absent.value, None);
        let null: JsonEditInput =
            serde_json::from_value(serde_json::json!({"operation": "set", "file_path": "f", "value": null})).unwrap();
        assert_eq!(null.value, Some(Value::Null));
    }
}
