//! What a waiting scanner state needs to see before running it again can change anything, and
//! the byte tests that decide it for each streamed chunk.
//!
//! Streaming cost is dominated by these tests: a provider sends a few bytes at a time, and the
//! whole-text scanner spends about 5 ns on 16 bytes, so a chunk that cannot wake the scanner
//! must be recognised in a couple of nanoseconds. Chunks are looked at 16 bytes at a time as
//! bit masks (one vector compare per byte sought on x86-64; a plain loop elsewhere), so a test
//! costs a few instructions instead of a search's set-up.

/// A state's wake-up condition. Feeding a chunk without it only appends the chunk (the state
/// scans it later from where it stopped), which keeps small-chunk streaming close to
/// whole-text speed: prose and block content are looked at again only when a line starts with
/// a byte that can begin a decision (a backtick, a tag, an `@`), or, in xml prose, when a tag
/// may begin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    Any,
    /// Any of these bytes, anywhere.
    Bytes(Needles),
    /// A line that starts with one of these bytes.
    LineStart(Needles),
    /// xml prose: a `<` anywhere, or a line that starts with a backtick.
    Tags,
    /// Nothing can be found any more.
    Never,
}

/// Three bytes sought, each repeated across a 16-byte lane: built when a state starts to wait,
/// so testing a chunk needs no set-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Needles([[u8; 16]; 3]);

impl Needles {
    const fn new(bytes: [u8; 3]) -> Needles {
        Needles([[bytes[0]; 16], [bytes[1]; 16], [bytes[2]; 16]])
    }

    fn bytes(&self) -> [u8; 3] {
        [self.0[0][0], self.0[1][0], self.0[2][0]]
    }
}

const BREAKS: Needles = Needles::new([b'\n', b'\r', b'\n']);
const TAG: Needles = Needles::new([b'<'; 3]);
const BACKTICK: Needles = Needles::new([b'`'; 3]);

impl Wake {
    /// A line break: a line completes.
    pub const NEWLINE: Wake = Wake::Bytes(BREAKS);

    /// Any of these bytes, anywhere.
    pub const fn bytes(bytes: [u8; 3]) -> Wake {
        Wake::Bytes(Needles::new(bytes))
    }

    /// A line that starts with one of these bytes.
    pub const fn line_start(bytes: [u8; 3]) -> Wake {
        Wake::LineStart(Needles::new(bytes))
    }

    /// One byte (a closer ends with it: the `>` of a tag).
    pub const fn byte(b: u8) -> Wake {
        Wake::bytes([b, b, b])
    }

    /// Whether `chunk`, which follows the byte `previous` (none at the start), holds what the
    /// state waits for. Inlined into the engine's `feed`, which runs it on every chunk.
    #[inline(always)]
    pub fn by(&self, previous: Option<u8>, chunk: &[u8]) -> bool {
        match self {
            Wake::Any => true,
            Wake::Bytes(bytes) => contains(chunk, bytes),
            Wake::LineStart(bytes) => starts_a_line(previous, chunk, bytes),
            Wake::Tags => contains(chunk, &TAG) || starts_a_line(previous, chunk, &BACKTICK),
            Wake::Never => false,
        }
    }
}

/// Whether a line in `chunk` (after the byte `previous`) starts with one of `bytes`.
#[inline(always)]
fn starts_a_line(previous: Option<u8>, chunk: &[u8], bytes: &Needles) -> bool {
    let after_break = matches!(previous, None | Some(b'\n' | b'\r'));
    let Some(last_block) = chunk.len().checked_sub(16) else {
        return starts_a_line_short(after_break, chunk, bytes);
    };
    // Bit 0 of `carry`: the byte before the block ends a line.
    let mut carry = u32::from(after_break);
    let mut at = 0;
    while at < last_block {
        let (breaks, hits) = masks(block(chunk, at), bytes);
        if ((breaks << 1) | carry) & hits != 0 {
            return true;
        }
        carry = breaks >> 15;
        at += 16;
    }
    // The last 16 bytes, overlapping what was looked at (a hit there is a hit all the same).
    let carry = if last_block == 0 { u32::from(after_break) } else { u32::from(is_break(chunk[last_block - 1])) };
    let (breaks, hits) = masks(block(chunk, last_block), bytes);
    ((breaks << 1) | carry) & hits != 0
}

/// [`starts_a_line`] for fewer than 16 bytes.
fn starts_a_line_short(mut after_break: bool, chunk: &[u8], bytes: &Needles) -> bool {
    let bytes = bytes.bytes();
    for byte in chunk {
        if after_break && bytes.contains(byte) {
            return true;
        }
        after_break = is_break(*byte);
    }
    false
}

fn is_break(byte: u8) -> bool {
    matches!(byte, b'\n' | b'\r')
}

/// Whether `haystack` holds any of three bytes.
#[inline]
fn contains(haystack: &[u8], needles: &Needles) -> bool {
    let Some(last_block) = haystack.len().checked_sub(16) else {
        let bytes = needles.bytes();
        return haystack.iter().any(|b| bytes.contains(b));
    };
    if haystack.len() > 64 {
        let [a, b, c] = needles.bytes();
        return memchr::memchr3(a, b, c, haystack).is_some();
    }
    (0..last_block).step_by(16).chain([last_block]).any(|at| mask(block(haystack, at), needles) != 0)
}

/// The 16 bytes at `at`.
#[inline(always)]
fn block(bytes: &[u8], at: usize) -> &[u8; 16] {
    bytes[at..at + 16].try_into().unwrap_or(&[0; 16])
}

/// The line breaks of `block`, and its bytes that are one of `bytes`, as masks.
#[inline(always)]
fn masks(block: &[u8; 16], bytes: &Needles) -> (u32, u32) {
    (mask(block, &BREAKS), mask(block, bytes))
}

/// Bit `i` is set when `block[i]` is one of `needles`.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn mask(block: &[u8; 16], needles: &Needles) -> u32 {
    use std::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_movemask_epi8, _mm_or_si128, _mm_set_epi64x};
    let half = |bytes: &[u8; 16], at: usize| {
        i64::from_le_bytes([
            bytes[at],
            bytes[at + 1],
            bytes[at + 2],
            bytes[at + 3],
            bytes[at + 4],
            bytes[at + 5],
            bytes[at + 6],
            bytes[at + 7],
        ])
    };
    // SAFETY: these intrinsics only need SSE2, which this code is compiled with (the cfg
    // above; it is part of x86-64 itself); they take values, not pointers.
    unsafe {
        let lanes = |bytes: &[u8; 16]| -> __m128i { _mm_set_epi64x(half(bytes, 8), half(bytes, 0)) };
        let text = lanes(block);
        let equal = |needle: &[u8; 16]| _mm_cmpeq_epi8(text, lanes(needle));
        let [a, b, c] = &needles.0;
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(equal(a), equal(b)), equal(c))) as u32
    }
}

/// Bit `i` is set when `block[i]` is one of `needles`: the definition, used where there is no
/// vector version (and, there, by the tests to check it).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), cfg(test))]
fn mask_plain(block: &[u8; 16], needles: &Needles) -> u32 {
    let needles = needles.bytes();
    block.iter().enumerate().fold(0, |mask, (i, b)| mask | (u32::from(needles.contains(b)) << i))
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
use mask_plain as mask;

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain definition the masks must agree with.
    fn starts_a_line_reference(previous: Option<u8>, chunk: &[u8], bytes: [u8; 3]) -> bool {
        let mut after_break = matches!(previous, None | Some(b'\n' | b'\r'));
        chunk.iter().any(|b| {
            let hit = after_break && bytes.contains(b);
            after_break = is_break(*b);
            hit
        })
    }

    #[test]
    fn mask_marks_exactly_the_needles() {
        for needle in 0..=255u8 {
            let block: [u8; 16] = std::array::from_fn(|i| needle.wrapping_add(i as u8 * 17));
            let expected = (0..16).fold(0, |m, i| m | (u32::from(block[i] == needle || block[i] == 0x0a) << i));
            let needles = Needles::new([needle, 0x0a, needle]);
            assert_eq!(mask(&block, &needles), expected, "needle {needle}");
            assert_eq!(mask_plain(&block, &needles), expected, "needle {needle}");
        }
    }

    /// Every length around the 16-byte blocks, every place of one starter and of one line
    /// break, after each kind of previous byte.
    #[test]
    fn the_block_tests_agree_with_the_definitions() {
        let starters = [b'`', b'<', b'@'];
        let needles = Needles::new(starters);
        for len in 0..=50 {
            for starter in (0..len).map(Some).chain([None]) {
                for line_break in (0..len).map(Some).chain([None]) {
                    let mut chunk = vec![b'a'; len];
                    if let Some(at) = line_break {
                        chunk[at] = if at % 2 == 0 { b'\n' } else { b'\r' };
                    }
                    if let Some(at) = starter {
                        chunk[at] = starters[at % 3];
                    }
                    for previous in [None, Some(b'\n'), Some(b'\r'), Some(b'x')] {
                        let expected = starts_a_line_reference(previous, &chunk, starters);
                        assert_eq!(starts_a_line(previous, &chunk, &needles), expected, "{chunk:?} after {previous:?}");
                    }
                    let expected = chunk.iter().any(|b| starters.contains(b));
                    assert_eq!(contains(&chunk, &needles), expected, "{chunk:?}");
                    assert_eq!(contains(&chunk, &BREAKS), chunk.iter().any(|b| is_break(*b)), "{chunk:?}");
                }
            }
        }
    }

    #[test]
    fn long_chunks_are_searched_whole() {
        let mut chunk = vec![b'a'; 1000];
        chunk[700] = b'\n';
        chunk[701] = b'@';
        assert!(starts_a_line(Some(b'x'), &chunk, &Needles::new([b'@'; 3])));
        assert!(contains(&chunk, &Needles::new([b'@'; 3])));
        chunk[701] = b'b';
        assert!(!starts_a_line(Some(b'x'), &chunk, &Needles::new([b'@'; 3])));
        assert!(!contains(&chunk, &Needles::new([b'@'; 3])));
    }
}
