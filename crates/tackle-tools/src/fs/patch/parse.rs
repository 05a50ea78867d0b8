//! Parsing Codex's patch format (docs/reference/tools.md#apply_patch), leniently as Codex does: a heredoc around the
//! patch is stripped, whitespace around marker lines is ignored, the first hunk of an update
//! may omit its `@@`, and an empty line inside a hunk is an empty context line.

/// A parsed patch: file operations in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedPatch {
    pub ops: Vec<FileOp>,
}

/// One file operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// `*** Add File:` with the new file's lines.
    Add { path: String, lines: Vec<String> },
    /// `*** Delete File:`.
    Delete { path: String },
    /// `*** Update File:`, maybe `*** Move to:`, and its hunks.
    Update { path: String, move_to: Option<String>, hunks: Vec<Hunk> },
}

/// One `@@` hunk of an update.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunk {
    /// The text after `@@`, if any: the cursor first moves past the next line equal to it.
    pub header: Option<String>,
    /// The lines in patch order.
    pub lines: Vec<HunkLine>,
    /// `*** End of File` followed: the old side must end at the file's last line.
    pub end_of_file: bool,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine {
    /// ` line` (or an empty line): in the file before and after.
    Context(String),
    /// `-line`: removed.
    Removed(String),
    /// `+line`: added.
    Added(String),
}

impl Hunk {
    /// The old side: context and removed lines.
    pub fn old(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|line| match line {
                HunkLine::Context(text) | HunkLine::Removed(text) => Some(text.as_str()),
                HunkLine::Added(_) => None,
            })
            .collect()
    }

    /// Whether the hunk has no line at all.
    fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.header.is_none()
    }
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";

/// A patch that cannot be parsed: `Invalid patch: {what} (line {n})`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid patch: {what} (line {line})")]
pub struct ParseError {
    pub what: String,
    pub line: usize,
}

fn error(what: impl Into<String>, line: usize) -> ParseError {
    ParseError { what: what.into(), line }
}

/// The body of a heredoc around the patch (`<<'EOF'` … `EOF`, optionally after the word
/// `apply_patch`), or the text itself.
fn strip_heredoc(lines: &[&str]) -> (usize, usize) {
    let (Some(first), Some(last)) = (lines.first(), lines.last()) else {
        return (0, lines.len());
    };
    let opener = first.trim();
    let opener = opener.strip_prefix("apply_patch").or_else(|| opener.strip_prefix("applypatch")).unwrap_or(opener);
    let Some(marker) = opener.trim_start().strip_prefix("<<") else {
        return (0, lines.len());
    };
    let delimiter = marker.trim_start_matches('-').trim().trim_matches(|c| c == '\'' || c == '"');
    if lines.len() >= 2 && !delimiter.is_empty() && last.trim() == delimiter {
        (1, lines.len() - 1)
    } else {
        (0, lines.len())
    }
}

/// Parses a patch.
pub fn parse(text: &str) -> Result<ParsedPatch, ParseError> {
    let all: Vec<&str> = text.lines().collect();
    // Trailing blank lines do not count as the last line.
    let end = all.iter().rposition(|l| !l.trim().is_empty()).map_or(0, |i| i + 1);
    let (start, end) = strip_heredoc(&all[..end]);
    let lines = &all[start..end];
    let number = |index: usize| start + index + 1;
    if lines.first().map(|l| l.trim()) != Some(BEGIN) {
        return Err(error(format!("the first line must be '{BEGIN}'"), number(0)));
    }
    if lines.len() < 2 || lines.last().map(|l| l.trim()) != Some(END) {
        return Err(error(format!("the last line must be '{END}'"), number(lines.len().saturating_sub(1))));
    }
    let body = &lines[1..lines.len() - 1];
    let mut ops = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let line = body[i];
        let marker = line.trim();
        let at = number(i + 1);
        if marker.is_empty() {
            i += 1;
            continue;
        }
        if let Some(path) = marker.strip_prefix(ADD) {
            let path = file_path(path, ADD, at)?;
            i += 1;
            let mut added = Vec::new();
            while i < body.len() && !body[i].trim_start().starts_with("***") {
                match body[i].strip_prefix('+') {
                    Some(text) => added.push(text.to_owned()),
                    None if body[i].trim().is_empty() && next_is_marker(body, i) => {}
                    None => {
                        return Err(error(
                            format!("every line of '{ADD} {path}' must start with '+', got '{}'", body[i]),
                            number(i + 1),
                        ));
                    }
                }
                i += 1;
            }
            ops.push(FileOp::Add { path, lines: added });
        } else if let Some(path) = marker.strip_prefix(DELETE) {
            ops.push(FileOp::Delete { path: file_path(path, DELETE, at)? });
            i += 1;
        } else if let Some(path) = marker.strip_prefix(UPDATE) {
            let path = file_path(path, UPDATE, at)?;
            i += 1;
            let mut move_to = None;
            if let Some(target) = body.get(i).and_then(|l| l.trim().strip_prefix(MOVE)) {
                move_to = Some(file_path(target, MOVE, number(i + 1))?);
                i += 1;
            }
            let (hunks, next) = parse_hunks(body, i, &number)?;
            if hunks.is_empty() {
                return Err(error(format!("'{UPDATE} {path}' has no hunks"), at));
            }
            i = next;
            ops.push(FileOp::Update { path, move_to, hunks });
        } else {
            return Err(error(
                format!(
                    "'{line}' is not a file operation; expected '{ADD} <path>', '{DELETE} <path>' or '{UPDATE} <path>'"
                ),
                at,
            ));
        }
    }
    if ops.is_empty() {
        return Err(error(format!("there are no file operations between '{BEGIN}' and '{END}'"), number(1)));
    }
    Ok(ParsedPatch { ops })
}

/// Whether only blank lines remain before the next marker line (or the end).
fn next_is_marker(body: &[&str], from: usize) -> bool {
    body[from..].iter().find(|l| !l.trim().is_empty()).is_none_or(|l| l.trim_start().starts_with("***"))
}

fn file_path(rest: &str, marker: &str, line: usize) -> Result<String, ParseError> {
    let path = rest.trim();
    if path.is_empty() {
        return Err(error(format!("'{marker}' needs a path"), line));
    }
    Ok(path.to_owned())
}

/// The hunks of one update, from `body[i]` to the next file operation.
fn parse_hunks(body: &[&str], mut i: usize, number: &dyn Fn(usize) -> usize) -> Result<(Vec<Hunk>, usize), ParseError> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut current: Option<Hunk> = None;
    while i < body.len() {
        let line = body[i];
        let trimmed = line.trim();
        if trimmed == END_OF_FILE {
            let hunk = current.get_or_insert_with(Hunk::default);
            hunk.end_of_file = true;
            i += 1;
            continue;
        }
        if trimmed.starts_with("***") {
            break;
        }
        if let Some(header) = trimmed.strip_prefix("@@") {
            hunks.extend(current.take().filter(|h| !h.is_empty()));
            let header = header.trim();
            // `@@ -1,3 +1,4 @@` style numbers carry no context; `@@ def f():` does.
            let header = header.strip_suffix("@@").map_or(header, str::trim);
            current = Some(Hunk {
                header: (!header.is_empty() && !is_line_numbers(header)).then(|| header.to_owned()),
                ..Hunk::default()
            });
            i += 1;
            continue;
        }
        let hunk = current.get_or_insert_with(Hunk::default);
        if line.is_empty() {
            hunk.lines.push(HunkLine::Context(String::new()));
        } else if let Some(text) = line.strip_prefix(' ') {
            hunk.lines.push(HunkLine::Context(text.to_owned()));
        } else if let Some(text) = line.strip_prefix('-') {
            hunk.lines.push(HunkLine::Removed(text.to_owned()));
        } else if let Some(text) = line.strip_prefix('+') {
            hunk.lines.push(HunkLine::Added(text.to_owned()));
        } else {
            return Err(error(
                format!(
                    "'{line}' in a hunk must start with ' ' (context), '-' (removed) or '+' (added); an empty line is \
                     empty context"
                ),
                number(i + 1),
            ));
        }
        i += 1;
    }
    hunks.extend(current.filter(|h| !h.is_empty()));
    Ok((hunks, i))
}

/// `-12,5 +12,6` (unified-diff line numbers, which Codex's format does not use).
fn is_line_numbers(header: &str) -> bool {
    header.split_whitespace().all(|word| {
        let word = word.trim_start_matches(['-', '+']);
        !word.is_empty() && word.chars().all(|c| c.is_ascii_digit() || c == ',')
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn parses_every_operation() {
        let patch = parse(
            "*** Begin Patch\n*** Add File: new.txt\n+hello\n+\n*** Delete File: old.txt\n*** Update File: src/a.py\n\
             *** Move to: src/b.py\n@@ def f():\n     x = 1\n-    return x\n+    return x + 1\n\n@@\n-last\n+LAST\n*** End of \
             File\n*** End Patch\n",
        )
        .unwrap();
        assert_eq!(
            patch.ops,
            vec![
                FileOp::Add { path: "new.txt".into(), lines: vec!["hello".into(), String::new()] },
                FileOp::Delete { path: "old.txt".into() },
                FileOp::Update {
                    path: "src/a.py".into(),
                    move_to: Some("src/b.py".into()),
                    hunks: vec![
                        Hunk {
                            header: Some("def f():".into()),
                            lines: vec![
                                HunkLine::Context("    x = 1".into()),
                                HunkLine::Removed("    return x".into()),
                                HunkLine::Added("    return x + 1".into()),
                                HunkLine::Context(String::new()),
                            ],
                            end_of_file: false,
                        },
                        Hunk {
                            header: None,
                            lines: vec![HunkLine::Removed("last".into()), HunkLine::Added("LAST".into())],
                            end_of_file: true,
                        },
                    ],
                },
            ]
        );
    }

    #[test]
    fn lenient_forms_are_accepted() {
        let plain = parse("*** Begin Patch\n*** Update File: a\n-x\n+y\n*** End Patch").unwrap();
        for text in [
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a\n-x\n+y\n*** End Patch\nEOF\n",
            "<<EOF\n*** Begin Patch\n*** Update File: a\n-x\n+y\n*** End Patch\nEOF",
            "  *** Begin Patch  \n  *** Update File:   a  \n-x\n+y\n *** End Patch \n\n\n",
            "*** Begin Patch\r\n*** Update File: a\r\n-x\r\n+y\r\n*** End Patch\r\n",
            "*** Begin Patch\n*** Update File: a\n@@ -1,1 +1,1 @@\n-x\n+y\n*** End Patch",
        ] {
            assert_eq!(parse(text).unwrap(), plain, "{text:?}");
        }
    }

    #[test]
    fn errors_name_the_problem_and_the_line() {
        let cases = [
            ("", "Invalid patch: the first line must be '*** Begin Patch' (line 1)"),
            ("--- a/x\n+++ b/x\n", "Invalid patch: the first line must be '*** Begin Patch' (line 1)"),
            (
                "*** Begin Patch\n*** Update File: a\n-x\n",
                "Invalid patch: the last line must be '*** End Patch' (line 3)",
            ),
            (
                "*** Begin Patch\n*** End Patch",
                "Invalid patch: there are no file operations between '*** Begin Patch' and '*** End Patch' (line 2)",
            ),
            (
                "*** Begin Patch\n*** Modify File: a\n*** End Patch",
                "Invalid patch: '*** Modify File: a' is not a file operation; expected '*** Add File: <path>', '*** Delete File: <path>' or '*** Update File: <path>' (line 2)",
            ),
            (
                "*** Begin Patch\n*** Add File: n\nno plus\n*** End Patch",
                "Invalid patch: every line of '*** Add File: n' must start with '+', got 'no plus' (line 3)",
            ),
            (
                "*** Begin Patch\n*** Update File: a\n*** End Patch",
                "Invalid patch: '*** Update File: a' has no hunks (line 2)",
            ),
            (
                "*** Begin Patch\n*** Update File: a\n@@\nx\n*** End Patch",
                "Invalid patch: 'x' in a hunk must start with ' ' (context), '-' (removed) or '+' (added); an empty line is empty context (line 4)",
            ),
            (
                "*** Begin Patch\n*** Delete File:\n*** End Patch",
                "Invalid patch: '*** Delete File:' needs a path (line 2)",
            ),
        ];
        for (text, message) in cases {
            assert_eq!(parse(text).unwrap_err().to_string(), message, "{text:?}");
        }
    }
}
