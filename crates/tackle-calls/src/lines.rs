//! Lines for the fence scanner, split lazily from the retained input with look-ahead.
//!
//! `\n`, `\r\n` and a lone `\r` all end a line (docs/reference/formats.md#fence-scanner step 3), and a line's text
//! never includes its terminator. A line is known only once its terminator has arrived: a
//! `\r` at the very end of the received text waits for the next byte, which may make it a
//! `\r\n`. At the end of the message the last line is whatever follows the last terminator,
//! possibly empty, just as Python's `text.split("\n")` gives.

use std::collections::VecDeque;

use crate::input::Input;

/// One line: its text is `[start, end)`, the next line starts at `next`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    pub start: usize,
    pub end: usize,
    pub next: usize,
}

impl Line {
    /// The line's text.
    pub fn text<'a>(&self, input: &'a Input) -> &'a str {
        input.str(self.start, self.end)
    }
}

/// The answer to "give me line k".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineAt {
    Line(Line),
    /// Not received yet.
    Wait,
    /// The message ended before it.
    End,
}

/// Lines from a starting position, split on demand and kept until popped.
#[derive(Debug, Default)]
pub(crate) struct LineWindow {
    lines: VecDeque<Line>,
    /// Where the next line to split starts.
    next_start: usize,
    /// How far the search for that line's terminator has got.
    search: usize,
    /// The final line has been split.
    ended: bool,
}

impl LineWindow {
    /// Starts splitting afresh at `at`.
    pub fn reset(&mut self, at: usize) {
        self.lines.clear();
        self.next_start = at;
        self.search = at;
        self.ended = false;
    }

    /// Line `k` of the window (0 is the current line).
    pub fn get(&mut self, input: &mut Input, k: usize) -> LineAt {
        while self.lines.len() <= k {
            match self.split(input) {
                LineAt::Line(line) => self.lines.push_back(line),
                other => return other,
            }
        }
        LineAt::Line(self.lines[k])
    }

    /// Where the current line starts, if it has started arriving (before `end`).
    pub fn current_start(&self, end: usize) -> Option<usize> {
        let start = self.lines.front().map_or(self.next_start, |l| l.start);
        (start < end).then_some(start)
    }

    /// Drops the current line.
    pub fn pop(&mut self) {
        self.lines.pop_front();
    }

    fn split(&mut self, input: &mut Input) -> LineAt {
        if self.ended {
            return LineAt::End;
        }
        let end = input.end();
        let found = memchr::memchr2(b'\n', b'\r', input.bytes(self.search, end));
        match found {
            Some(offset) => {
                input.examine(offset + 1);
                let at = self.search + offset;
                let next = if input.byte(at) == Some(b'\n') {
                    at + 1
                } else if at + 1 < end {
                    at + 1 + usize::from(input.byte(at + 1) == Some(b'\n'))
                } else if input.finished() {
                    at + 1
                } else {
                    // A `\r` at the end of what has arrived: `\r` or `\r\n`?
                    self.search = at;
                    return LineAt::Wait;
                };
                let line = Line { start: self.next_start, end: at, next };
                self.next_start = next;
                self.search = next;
                LineAt::Line(line)
            }
            None => {
                input.examine(end - self.search);
                self.search = end;
                if input.finished() {
                    self.ended = true;
                    LineAt::Line(Line { start: self.next_start, end, next: end })
                } else {
                    LineAt::Wait
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(chunks: &[&str]) -> Vec<String> {
        let mut input = Input::default();
        let mut window = LineWindow::default();
        let mut out = Vec::new();
        let take = |input: &mut Input, window: &mut LineWindow, out: &mut Vec<String>| {
            while let LineAt::Line(line) = window.get(input, 0) {
                out.push(line.text(input).to_owned());
                window.pop();
            }
        };
        for chunk in chunks {
            input.push(chunk);
            take(&mut input, &mut window, &mut out);
        }
        input.finish();
        take(&mut input, &mut window, &mut out);
        out
    }

    #[test]
    fn splits_like_python_after_newline_normalisation() {
        assert_eq!(lines_of(&["a\r\nb\rc\n"]), ["a", "b", "c", ""]);
        assert_eq!(lines_of(&["a\r", "\nb"]), ["a", "b"]);
        assert_eq!(lines_of(&["a\r", "b"]), ["a", "b"]);
        assert_eq!(lines_of(&["a\r"]), ["a", ""]);
        assert_eq!(lines_of(&[""]), [""]);
    }
}
