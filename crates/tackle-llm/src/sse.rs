//! A small incremental reader of Server-Sent Events (the WHATWG rules both providers use):
//! bytes in, `(event, data)` pairs out. Lines may end in `\n`, `\r\n` or `\r`, and may be
//! split anywhere across chunks (inside a multi-byte character too: a line is decoded only
//! once it is complete). Comments (`: …`) and unknown fields are ignored.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` name, if the server gave one.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// The reader state between chunks.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    event: Option<String>,
    data: Option<String>,
    /// The previous chunk ended in `\r`: a `\n` at the start of the next belongs to it.
    skip_lf: bool,
}

impl SseParser {
    /// A reader at the start of a stream.
    pub fn new() -> Self {
        SseParser::default()
    }

    /// Feeds bytes; returns the events completed by them.
    pub fn feed(&mut self, mut chunk: &[u8]) -> Vec<SseEvent> {
        if self.skip_lf {
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
            self.skip_lf = false;
        }
        self.buf.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut start = 0;
        let mut i = 0;
        while i < self.buf.len() {
            match self.buf[i] {
                b'\n' | b'\r' => {
                    let line = String::from_utf8_lossy(&self.buf[start..i]).into_owned();
                    if self.buf[i] == b'\r' {
                        if i + 1 == self.buf.len() {
                            self.skip_lf = true;
                        } else if self.buf[i + 1] == b'\n' {
                            i += 1;
                        }
                    }
                    i += 1;
                    start = i;
                    if let Some(event) = self.line(&line) {
                        events.push(event);
                    }
                }
                _ => i += 1,
            }
        }
        self.buf.drain(..start);
        events
    }

    /// Ends the stream: an event whose blank line never came is still dispatched.
    pub fn finish(&mut self) -> Option<SseEvent> {
        if !self.buf.is_empty() {
            let line = String::from_utf8_lossy(&std::mem::take(&mut self.buf)).into_owned();
            if let Some(event) = self.line(&line) {
                return Some(event);
            }
        }
        self.dispatch()
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        let data = self.data.take()?;
        Some(SseEvent { event: event.filter(|e| !e.is_empty()), data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], split: usize) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        for chunk in input.chunks(split.max(1)) {
            events.extend(parser.feed(chunk));
        }
        events.extend(parser.finish());
        events
    }

    #[test]
    fn events_survive_any_chunking_and_line_ending() {
        let text = "event: message_start\r\ndata: {\"a\":\"é\"}\r\n\r\n: ping comment\n\ndata: one\ndata: two\n\nretry: 5\nid: 1\ndata: [DONE]\r\rdata: tail";
        let expected = vec![
            SseEvent { event: Some("message_start".into()), data: "{\"a\":\"é\"}".into() },
            SseEvent { event: None, data: "one\ntwo".into() },
            SseEvent { event: None, data: "[DONE]".into() },
            SseEvent { event: None, data: "tail".into() },
        ];
        for split in 1..text.len() {
            assert_eq!(all(text.as_bytes(), split), expected, "split {split}");
        }
    }

    #[test]
    fn garbage_lines_are_ignored() {
        let events = all(b"garbage without colon\ndata:x\n\n", 4);
        assert_eq!(events, vec![SseEvent { event: None, data: "x".into() }]);
    }
}
