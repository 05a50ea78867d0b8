//! The closest-candidate finder (docs/reference/tools.md#edit_file): when an edit's old text is not in the file,
//! show the model the lines that most resemble it, so it can copy the real text instead of
//! guessing again.
//!
//! A window of as many lines as the old text has slides over the file; each window is scored
//! by the normalized Levenshtein similarity of its whitespace-normalized text (runs of
//! whitespace become one space, lines trimmed), and the best window scoring at least 0.6 is
//! shown (the earliest on ties). Most windows are ruled out by two cheap lower bounds on the
//! distance (the length difference and the byte-multiset difference) before a banded
//! Levenshtein computation that stops as soon as the window cannot beat the best so far; a
//! work cap keeps a pathological input (a huge old text against a huge file) bounded.

use crate::fs::text::{numbered, split_lines};

/// The lowest similarity shown, as a fraction `NUM / DEN`.
const MIN_SCORE_NUM: usize = 6;
const MIN_SCORE_DEN: usize = 10;
/// Dynamic-programming cells computed at most per search.
const MAX_CELLS: usize = 30_000_000;

/// The lines most like the text that was not found.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// 1-based first line.
    pub first_line: usize,
    /// 1-based last line.
    pub last_line: usize,
    /// The lines as they are in the file (without line endings).
    pub lines: Vec<String>,
    /// The candidate equals the wanted text once whitespace is normalized.
    pub whitespace_only: bool,
}

impl Candidate {
    /// The lines numbered as `cat -n` shows them.
    pub fn numbered(&self) -> String {
        numbered(self.lines.iter().map(String::as_str), self.first_line)
    }

    /// The message block: `\nThe most similar text is at lines {a}-{b}{of}:\n{numbered}`,
    /// then `(differs only in whitespace)` on its own line when that is so. `of` is empty
    /// or ` of {path}`.
    pub fn describe(&self, of: &str) -> String {
        let mut out = format!(
            "\nThe most similar text is at lines {}-{}{of}:\n{}",
            self.first_line,
            self.last_line,
            self.numbered()
        );
        if self.whitespace_only {
            out.push_str("\n(differs only in whitespace)");
        }
        out
    }
}

fn normalize(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for word in line.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// The best candidate for `wanted` in `text`, if one scores at least 0.6.
pub fn closest(text: &str, wanted: &str) -> Option<Candidate> {
    let file: Vec<&str> = split_lines(text).collect();
    let mut wanted_lines: Vec<&str> = split_lines(wanted).collect();
    if wanted_lines.len() > 1 && wanted_lines.last() == Some(&"") {
        wanted_lines.pop();
    }
    let k = wanted_lines.len();
    if k == 0 || k > file.len() {
        return None;
    }
    let target = wanted_lines.iter().map(|l| normalize(l)).collect::<Vec<_>>().join("\n");
    let target = target.as_bytes();
    let normalized: Vec<String> = file.iter().map(|l| normalize(l)).collect();
    let mut prefix = vec![0usize; normalized.len() + 1];
    for (i, line) in normalized.iter().enumerate() {
        prefix[i + 1] = prefix[i] + line.len();
    }
    let mut target_bag = [0i64; 256];
    target.iter().for_each(|&b| target_bag[usize::from(b)] += 1);
    let mut window_bag = [0i64; 256];
    let add = |bag: &mut [i64; 256], line: &str, sign: i64| line.bytes().for_each(|b| bag[usize::from(b)] += sign);
    for line in &normalized[..k] {
        add(&mut window_bag, line, 1);
    }
    window_bag[usize::from(b'\n')] += i64::try_from(k - 1).unwrap_or(0);

    // (distance, max length, first line index) of the best window so far.
    let mut best: Option<(usize, usize, usize)> = None;
    let mut cells = 0usize;
    let mut joined = String::new();
    for start in 0..=file.len() - k {
        if start > 0 {
            add(&mut window_bag, &normalized[start - 1], -1);
            add(&mut window_bag, &normalized[start + k - 1], 1);
        }
        let window_len = prefix[start + k] - prefix[start] + (k - 1);
        let longest = window_len.max(target.len());
        if longest == 0 {
            best = Some((0, 0, start));
            break;
        }
        // The largest distance that would still be shown and beat the best so far.
        let mut limit = longest * (MIN_SCORE_DEN - MIN_SCORE_NUM) / MIN_SCORE_DEN;
        if let Some((best_d, best_len, _)) = best {
            if best_d == 0 {
                break;
            }
            // d / longest < best_d / best_len
            limit = limit.min((best_d * longest).saturating_sub(1) / best_len);
        }
        if window_len.abs_diff(target.len()) > limit {
            continue;
        }
        let (mut extra, mut missing) = (0i64, 0i64);
        for (w, t) in window_bag.iter().zip(&target_bag) {
            if w > t {
                extra += w - t;
            } else {
                missing += t - w;
            }
        }
        if usize::try_from(extra.max(missing)).unwrap_or(usize::MAX) > limit {
            continue;
        }
        joined.clear();
        for (i, line) in normalized[start..start + k].iter().enumerate() {
            if i > 0 {
                joined.push('\n');
            }
            joined.push_str(line);
        }
        if let Some(d) = bounded_levenshtein(joined.as_bytes(), target, limit, &mut cells) {
            best = Some((d, longest, start));
        }
        if cells > MAX_CELLS {
            break;
        }
    }
    let (distance, _, start) = best?;
    Some(Candidate {
        first_line: start + 1,
        last_line: start + k,
        lines: file[start..start + k].iter().map(|l| (*l).to_owned()).collect(),
        whitespace_only: distance == 0,
    })
}

/// The Levenshtein distance of `a` and `b` if it is at most `max`, computed in a band of
/// width `2 * max + 1`; `cells` counts the work done.
fn bounded_levenshtein(a: &[u8], b: &[u8], max: usize, cells: &mut usize) -> Option<usize> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    let (a, b) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let (n, m) = (a.len(), b.len());
    if m - n > max {
        return None;
    }
    if n == 0 {
        return Some(m);
    }
    let big = max + 1;
    let mut prev = vec![big; m + 1];
    let mut cur = vec![big; m + 1];
    for (j, slot) in prev.iter_mut().enumerate().take(m.min(max) + 1) {
        *slot = j;
    }
    for i in 1..=n {
        let lo = i.saturating_sub(max).max(1);
        let hi = (i + max).min(m);
        cur[lo - 1] = if lo == 1 && i <= max { i } else { big };
        let mut row_min = cur[lo - 1];
        for j in lo..=hi {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let value = (prev[j - 1] + cost).min(prev[j] + 1).min(cur[j - 1] + 1).min(big);
            cur[j] = value;
            row_min = row_min.min(value);
        }
        if hi < m {
            cur[hi + 1] = big;
        }
        *cells += hi + 1 - lo;
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    (prev[m] <= max).then_some(prev[m])
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn plain_levenshtein(a: &[u8], b: &[u8]) -> usize {
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for i in 1..=a.len() {
            let mut cur = vec![i; b.len() + 1];
            for j in 1..=b.len() {
                cur[j] = (prev[j - 1] + usize::from(a[i - 1] != b[j - 1])).min(prev[j] + 1).min(cur[j - 1] + 1);
            }
            prev = cur;
        }
        prev[b.len()]
    }

    #[test]
    fn banded_distance_matches_the_plain_one_within_the_band() {
        let words = ["kitten", "sitting", "", "flaw", "lawn", "intention", "execution", "abcdefgh", "hgfedcba"];
        for a in words {
            for b in words {
                let exact = plain_levenshtein(a.as_bytes(), b.as_bytes());
                for max in 0..10 {
                    let got = bounded_levenshtein(a.as_bytes(), b.as_bytes(), max, &mut 0);
                    assert_eq!(got, (exact <= max).then_some(exact), "{a} {b} {max}");
                }
            }
        }
    }

    #[test]
    fn finds_the_window_that_differs_only_in_whitespace() {
        let text = "fn a() {}\nfn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n";
        let found = closest(text, "fn main() {\n  let x = 1;\n").unwrap();
        assert_eq!((found.first_line, found.last_line, found.whitespace_only), (2, 3, true));
        assert_eq!(
            found.describe(" of src/main.rs"),
            "\nThe most similar text is at lines 2-3 of src/main.rs:\n     2\tfn main() {\n     3\t    let x = 1;\n(differs only in whitespace)"
        );
    }

    #[test]
    fn finds_a_near_miss_and_ignores_unrelated_text() {
        let text = "alpha beta\ngamma delta\nfunction computeTotal(items) {\nreturn 0;\n";
        let found = closest(text, "function computeTotals(item) {").unwrap();
        assert_eq!((found.first_line, found.whitespace_only), (3, false));
        assert_eq!(found.lines, ["function computeTotal(items) {"]);
        assert_eq!(closest(text, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"), None);
        assert_eq!(closest("short\n", "one\ntwo\nthree\nfour"), None);
    }

    #[test]
    fn a_large_file_is_searched_quickly_and_the_earliest_best_wins() {
        let mut text = String::new();
        for i in 0..20_000 {
            text.push_str(&format!("    let value_{i} = compute({i}, \"label {i}\");\n"));
        }
        let found = closest(&text, "let value_12345 = compute(12345, \"label 1234\");").unwrap();
        assert_eq!(found.first_line, 12_346);
        let same = "x = 1\nx = 1\n";
        assert_eq!(closest(same, "x  =  1").unwrap().first_line, 1);
    }
}
