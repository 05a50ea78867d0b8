//! `ipython` / `py` blocks: Python's triple-quoted strings (docs/reference/formats.md#fence-scanner step 5).
//!
//! A fence line inside `"""…"""` or `'''…'''` is Python source, not a markdown delimiter.
//! Ordinary `'…'` / `"…"` strings are tracked too, so `'"""'` opens nothing and a `#` inside a
//! string is no comment; they span a line break only when the line ends with a backslash.
//! This is gptme 0.35.1's tracker.

/// String state carried from one line of a Python block to the next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PyQuotes {
    pub triple_double: bool,
    pub triple_single: bool,
    single: bool,
    double: bool,
}

impl PyQuotes {
    /// Whether a triple-quoted string is open.
    pub fn in_triple(&self) -> bool {
        self.triple_double || self.triple_single
    }

    /// The state after one more line.
    pub fn scan_line(mut self, line: &str) -> PyQuotes {
        let bytes = line.as_bytes();
        let n = bytes.len();
        let mut i = 0;
        while i < n {
            let c = bytes[i];
            if self.triple_double || self.triple_single {
                if c == b'\\' {
                    i += 2;
                } else if self.triple_double && bytes[i..].starts_with(b"\"\"\"") {
                    self.triple_double = false;
                    i += 3;
                } else if self.triple_single && bytes[i..].starts_with(b"'''") {
                    self.triple_single = false;
                    i += 3;
                } else {
                    i += 1;
                }
                continue;
            }
            if self.single || self.double {
                if c == b'\\' {
                    i += 2;
                    continue;
                }
                if (self.single && c == b'\'') || (self.double && c == b'"') {
                    self.single = false;
                    self.double = false;
                }
                i += 1;
                continue;
            }
            match c {
                b'#' => break,
                b'"' if bytes[i..].starts_with(b"\"\"\"") => {
                    self.triple_double = true;
                    i += 3;
                }
                b'\'' if bytes[i..].starts_with(b"'''") => {
                    self.triple_single = true;
                    i += 3;
                }
                b'\'' => {
                    self.single = true;
                    i += 1;
                }
                b'"' => {
                    self.double = true;
                    i += 1;
                }
                _ => i += 1,
            }
        }
        if (self.single || self.double) && !ends_with_continuation(bytes) {
            self.single = false;
            self.double = false;
        }
        self
    }
}

/// True if the line ends with an odd number of backslashes.
fn ends_with_continuation(bytes: &[u8]) -> bool {
    bytes.iter().rev().take_while(|b| **b == b'\\').count() % 2 == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(lines: &[&str]) -> PyQuotes {
        lines.iter().fold(PyQuotes::default(), |q, line| q.scan_line(line))
    }

    #[test]
    fn tracks_triple_quotes_across_lines() {
        assert!(after(&["s = \"\"\""]).triple_double);
        assert!(!after(&["s = \"\"\"", "```", "\"\"\""]).in_triple());
        assert!(after(&["s = '''abc"]).triple_single);
        assert!(!after(&["value = '\"\"\"'"]).in_triple());
        assert!(!after(&["# \"\"\""]).in_triple());
        assert!(after(&["prefix = \"#\"; text = \"\"\""]).triple_double);
    }

    #[test]
    fn ordinary_strings_end_at_the_line_unless_continued() {
        assert!(after(&["s = 'abc", "\"\"\""]).in_triple());
        assert!(!after(&["s = 'abc \\", "\"\"\""]).in_triple());
    }
}
