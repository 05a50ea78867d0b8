//! The one pass over a JSON file that the plain-path route ([`super::splice`]) needs: it
//! checks that the text is JSON exactly as the tree reads it, and notes where the value a
//! plain path names lies, without allocating.
//!
//! Checking with serde (`IgnoredAny`) and then scanning again for the value read a 1 MB
//! file twice, a third of a `set` each. This scanner is the grammar of RFC 8259 (UTF-8 is
//! already checked when the file is read as text), with serde_json's limits, so that it
//! accepts exactly the documents the tree accepts: escapes are checked and surrogate
//! escapes must pair, a number must fit a double, and arrays and objects nest at most
//! [`JSON_MAX_DEPTH`] levels. A document it refuses goes to the tree, which says what is wrong.

use std::ops::Range;

use tackle_core::text::JSON_MAX_DEPTH;

use super::path::Last;
use crate::fs::text::UTF8_BOM;

/// Where the value at `steps` lies in `text` (a BOM skipped), when `text` is JSON and the
/// value exists. Keys are compared decoded. A key on the path that the object repeats gives
/// `None` (serde_json's tree keeps the last one: the tree decides).
///
/// One pass over the text, which checks that it is JSON exactly as the tree reads it
/// (RFC 8259, as serde_json accepts it: escapes checked, surrogates paired, numbers within
/// a double, at most [`JSON_MAX_DEPTH`] levels) and notes the value's bytes on the way.
pub fn locate(text: &str, steps: &[Last]) -> Option<Range<usize>> {
    let start = if text.starts_with(UTF8_BOM) { UTF8_BOM.len() } else { 0 };
    let mut scan = Scan { text, bytes: text.as_bytes(), at: start, steps, found: None };
    scan.whitespace();
    scan.value(0, Some(0)).ok()?;
    scan.whitespace();
    if scan.at != text.len() {
        return None;
    }
    scan.found
}

/// Why a scan stopped: the text is not JSON, or a key on the path is repeated (either way
/// the tree decides, and says why).
#[derive(Debug)]
struct Stop;

/// The state of [`locate`]'s scan: `at` is the next byte to read.
struct Scan<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    steps: &'a [Last],
    found: Option<Range<usize>>,
}

/// Bytes that end the plain run of a string: the closing quote, an escape, a control
/// character (which a JSON string may not hold raw).
const STRING_STOP: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Digits before the point (or of an integer) up to which a number without an exponent is
/// surely within a double (`f64::MAX` is about 1.8e308).
const SURELY_FINITE_DIGITS: usize = 300;

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn whitespace(&mut self) {
        self.skip_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    }

    /// Moves past the bytes that `keep` holds for (a slice search: no bounds check per byte).
    fn skip_while(&mut self, keep: impl Fn(u8) -> bool) {
        let rest = &self.bytes[self.at..];
        self.at += rest.iter().position(|&b| !keep(b)).unwrap_or(rest.len());
    }

    fn expect(&mut self, byte: u8) -> Result<(), Stop> {
        if self.peek() != Some(byte) {
            return Err(Stop);
        }
        self.at += 1;
        Ok(())
    }

    /// One value, inside `depth` arrays and objects; `matched`: how many steps of the path
    /// lead here (`None` off the path).
    fn value(&mut self, depth: usize, matched: Option<usize>) -> Result<(), Stop> {
        let start = self.at;
        match self.peek().ok_or(Stop)? {
            b'{' => self.object(depth + 1, matched)?,
            b'[' => self.array(depth + 1, matched)?,
            b'"' => self.string()?,
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'n' => self.literal(b"null")?,
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return Err(Stop),
        }
        if matched == Some(self.steps.len()) {
            self.found = Some(start..self.at);
        }
        Ok(())
    }

    /// The step after `matched` ones, when the value is on the path.
    fn next_step(&self, matched: Option<usize>) -> Option<(usize, &'a Last)> {
        let steps = self.steps;
        matched.and_then(|m| Some((m, steps.get(m)?)))
    }

    fn object(&mut self, depth: usize, matched: Option<usize>) -> Result<(), Stop> {
        if depth > JSON_MAX_DEPTH {
            return Err(Stop);
        }
        self.at += 1;
        let wanted = match self.next_step(matched) {
            Some((m, Last::Name(name))) => Some((m, name.as_str())),
            _ => None,
        };
        let mut seen = false;
        self.whitespace();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(Stop);
            }
            let key = self.at;
            self.string()?;
            let child = match wanted {
                Some((m, name)) if self.key_is(key, name) => {
                    if seen {
                        return Err(Stop);
                    }
                    seen = true;
                    Some(m + 1)
                }
                _ => None,
            };
            self.whitespace();
            self.expect(b':')?;
            self.whitespace();
            self.value(depth, child)?;
            self.whitespace();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.whitespace();
                }
                Some(b'}') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(Stop),
            }
        }
    }

    fn array(&mut self, depth: usize, matched: Option<usize>) -> Result<(), Stop> {
        if depth > JSON_MAX_DEPTH {
            return Err(Stop);
        }
        self.at += 1;
        let wanted = match self.next_step(matched) {
            Some((m, Last::Index(index))) => usize::try_from(*index).ok().map(|index| (m, index)),
            _ => None,
        };
        self.whitespace();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(());
        }
        let mut index = 0usize;
        loop {
            let child = wanted.filter(|(_, wanted)| *wanted == index).map(|(m, _)| m + 1);
            self.value(depth, child)?;
            index += 1;
            self.whitespace();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.whitespace();
                }
                Some(b']') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(Stop),
            }
        }
    }

    /// Whether the key that was just scanned from `open` (its opening quote) is `name`,
    /// decoded.
    fn key_is(&self, open: usize, name: &str) -> bool {
        let raw = &self.text[open + 1..self.at - 1];
        if raw.contains('\\') {
            serde_json::from_str::<String>(&self.text[open..self.at]).is_ok_and(|key| key == name)
        } else {
            raw == name
        }
    }

    fn string(&mut self) -> Result<(), Stop> {
        self.at += 1;
        loop {
            self.skip_while(|b| !STRING_STOP[usize::from(b)]);
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some(b'\\') => self.escape()?,
                // A raw control character, or the end of the text.
                _ => return Err(Stop),
            }
        }
    }

    /// An escape (`at` on its backslash). Surrogates must come in pairs, a leading one
    /// then a trailing one, as serde_json reads them into text.
    fn escape(&mut self) -> Result<(), Stop> {
        self.at += 1;
        match self.peek().ok_or(Stop)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                self.at += 1;
                Ok(())
            }
            b'u' => match self.hex4()? {
                0xDC00..=0xDFFF => Err(Stop),
                0xD800..=0xDBFF => {
                    self.expect(b'\\')?;
                    match self.hex4()? {
                        0xDC00..=0xDFFF => Ok(()),
                        _ => Err(Stop),
                    }
                }
                _ => Ok(()),
            },
            _ => Err(Stop),
        }
    }

    /// `u` and four hex digits (`at` on the `u`): their value.
    fn hex4(&mut self) -> Result<u16, Stop> {
        self.expect(b'u')?;
        let digits = self.text.get(self.at..self.at + 4).ok_or(Stop)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Stop);
        }
        self.at += 4;
        u16::from_str_radix(digits, 16).map_err(|_| Stop)
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Stop> {
        if !self.bytes[self.at..].starts_with(word) {
            return Err(Stop);
        }
        self.at += word.len();
        Ok(())
    }

    /// A number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, whose value must be
    /// a finite double, as the tree reads it.
    fn number(&mut self) -> Result<(), Stop> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        let integer = match self.peek() {
            Some(b'0') => {
                self.at += 1;
                1
            }
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(Stop),
        };
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(Stop);
            }
        }
        let mut exponent = false;
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(Stop);
            }
            exponent = true;
        }
        // Only a long or scaled number can leave a double's range: ask serde_json itself.
        if (exponent || integer > SURELY_FINITE_DIGITS)
            && serde_json::from_str::<serde_json::Number>(&self.text[start..self.at]).is_err()
        {
            return Err(Stop);
        }
        Ok(())
    }

    /// Skips ASCII digits; how many.
    fn digits(&mut self) -> usize {
        let from = self.at;
        self.skip_while(|b| b.is_ascii_digit());
        self.at - from
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// serde_json's verdict, the reference: the tree parse of the file.
    fn tree_accepts(text: &str) -> bool {
        serde_json::from_str::<Value>(text.strip_prefix(UTF8_BOM).unwrap_or(text)).is_ok()
    }

    fn scan_accepts(text: &str) -> bool {
        // The empty path names the whole document: found exactly when the text is JSON.
        locate(text, &[]).is_some()
    }

    fn agree(text: &str) {
        assert_eq!(scan_accepts(text), tree_accepts(text), "{text:?}");
    }

    #[test]
    fn the_edge_cases_of_the_grammar_are_judged_as_the_tree_judges_them() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let deep_objects = |n: usize| format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n));
        let cases = [
            "0",
            "-0",
            "1",
            "-1",
            "01",
            "-01",
            "1.",
            ".5",
            "1.5",
            "-",
            "+1",
            "1e",
            "1e+",
            "1e5",
            "1E-5",
            "1.5e+07",
            "1e400",
            "-1e400",
            "1e-400",
            "1.7976931348623157e308",
            "18446744073709551616",
            "0x10",
            "1_000",
            "Infinity",
            "NaN",
            "true",
            "false",
            "null",
            "tru",
            "nul",
            "True",
            "\"\"",
            "\"a\"",
            "\"a",
            "a\"",
            "\"\\\"\"",
            "\"\\/\"",
            "\"\\b\\f\\n\\r\\t\"",
            "\"\\x\"",
            "\"\\u00e9\"",
            "\"\\u00G9\"",
            "\"\\u00e\"",
            "\"\\ud83d\\ude00\"",
            "\"\\ud83d\"",
            "\"\\ude00\"",
            "\"\\ud83d\\u0041\"",
            "\"\\ud83d\\ud83d\"",
            "\"\\ud83dx\"",
            "\"\\ud83d\\n\"",
            "\"\t\"",
            "\"\u{1}\"",
            "\"\u{7f}\"",
            "\"é ✓ 😀\"",
            "[]",
            "[1,]",
            "[,1]",
            "[1 2]",
            "[1,,2]",
            "[",
            "]",
            "{}",
            "{\"a\":1}",
            "{\"a\":1,}",
            "{a:1}",
            "{\"a\" 1}",
            "{\"a\":}",
            "{\"a\":1 \"b\":2}",
            "{1:1}",
            "{\"a\":1}}",
            "[1]]",
            " \t\r\n[ 1 , { \"a\" : [ ] } ] \n",
            "[1]\u{b}",
            "\u{a0}1",
            "[1] x",
            "",
            "   ",
            "\u{feff}[1]",
            "\u{feff}\u{feff}[1]",
            "[\"\\u0000\"]",
            "{\"a\":1,\"a\":2}",
            "[1e1.5]",
            "[-]",
            "[1.e5]",
            "[0e0]",
        ];
        for case in cases {
            agree(case);
        }
        for n in [1, 126, 127, 128, 129, 500] {
            agree(&deep(n));
            agree(&deep_objects(n));
        }
        let long = "9".repeat(400);
        for number in [long.clone(), format!("0.{long}"), format!("{long}.5"), format!("1{}e-300", "0".repeat(400))] {
            agree(&number);
        }
    }

    /// A small deterministic generator (xorshift), so a failure names its seed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    /// A random document as text, written by hand (so its spelling varies: whitespace,
    /// escapes, number forms), valid unless a piece is wrong on purpose.
    fn document(rng: &mut Rng, depth: usize, out: &mut String) {
        const SCALARS: &[&str] = &[
            "0",
            "-0",
            "12",
            "-3.25",
            "1e10",
            "2E-3",
            "6.02e+23",
            "1e308",
            "1e309",
            "true",
            "false",
            "null",
            "\"plain\"",
            "\"tab\\there\"",
            "\"\\u00e9\\ud83d\\ude00\"",
            "\"\\ud800\"",
            "\"é✓\"",
            "\"\"",
            "18446744073709551615",
            "-9223372036854775809",
        ];
        const SPACE: &[&str] = &["", "", " ", "\n  ", "\r\n", "\t"];
        match if depth > 6 { 2 } else { rng.below(4) } {
            0 => {
                out.push('[');
                for i in 0..rng.below(4) {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(rng.pick(SPACE));
                    document(rng, depth + 1, out);
                }
                out.push_str(rng.pick(SPACE));
                out.push(']');
            }
            1 => {
                out.push('{');
                for i in 0..rng.below(4) {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(rng.pick(SPACE));
                    // Distinct keys (`c\u0061` is `ca`): a repeated key is left to the tree.
                    out.push_str(["\"a\"", "\"b\\n\"", "\"c\\u0061\"", "\"\""][i]);
                    out.push_str(rng.pick(SPACE));
                    out.push(':');
                    document(rng, depth + 1, out);
                }
                out.push('}');
            }
            _ => out.push_str(rng.pick(SCALARS)),
        }
    }

    /// Breaks `text` in one place: a byte removed, inserted, or replaced with one that
    /// matters to the grammar.
    fn mutate(rng: &mut Rng, text: &str) -> String {
        const BYTES: &[&str] =
            &["\"", "\\", ",", ":", "[", "]", "{", "}", "-", "+", ".", "e", "0", "1", " ", "\u{1}", "u", "x"];
        let mut bytes = text.as_bytes().to_vec();
        let at = rng.below(bytes.len() + 1);
        let piece = rng.pick(BYTES).as_bytes()[0];
        match rng.below(3) {
            0 if at < bytes.len() => {
                bytes.remove(at);
            }
            1 if at < bytes.len() => bytes[at] = piece,
            _ => bytes.insert(at, piece),
        }
        // Only ASCII is inserted or removed at a boundary... or not: keep what is UTF-8.
        String::from_utf8(bytes).unwrap_or_else(|_| text.to_owned())
    }

    #[test]
    fn a_generated_corpus_is_judged_as_the_tree_judges_it() {
        let (mut valid, mut invalid) = (0, 0);
        for seed in 1..=20_000u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let mut text = String::new();
            document(&mut rng, 0, &mut text);
            let text = if rng.below(2) == 0 { mutate(&mut rng, &text) } else { text };
            let accepted = tree_accepts(&text);
            assert_eq!(scan_accepts(&text), accepted, "seed {seed}: {text:?}");
            if accepted { valid += 1 } else { invalid += 1 }
        }
        // Both kinds are well represented, so the agreement means something.
        assert!(valid > 5_000 && invalid > 5_000, "{valid} valid, {invalid} invalid");
    }

    #[test]
    fn the_value_found_is_the_one_the_tree_finds() {
        for seed in 1..=3_000u64 {
            let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
            let mut text = String::new();
            document(&mut rng, 0, &mut text);
            let Ok(tree) = serde_json::from_str::<Value>(&text) else { continue };
            // Follow a random plain path through the tree: the scan finds the bytes of the
            // value the tree holds there.
            let (mut steps, mut here) = (Vec::new(), &tree);
            loop {
                match here {
                    Value::Array(items) if !items.is_empty() => {
                        let i = rng.below(items.len());
                        steps.push(Last::Index(i as i64));
                        here = &items[i];
                    }
                    Value::Object(map) if !map.is_empty() => {
                        let (key, value) = map.iter().nth(rng.below(map.len())).unwrap();
                        steps.push(Last::Name(key.clone()));
                        here = value;
                    }
                    _ => break,
                }
                if rng.below(3) == 0 {
                    break;
                }
            }
            let range = locate(&text, &steps).unwrap_or_else(|| panic!("{text:?} {steps:?}: not found"));
            assert_eq!(&serde_json::from_str::<Value>(&text[range]).unwrap(), here, "{text:?} {steps:?}");
        }
    }
}
