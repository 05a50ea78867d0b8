//! PDFs for `read_file` (docs/reference/tools.md#read_file): the text of a PDF page by page,
//! each page under a `--- page N ---` heading, at most [`MAX_PAGES_PER_CALL`] pages a call,
//! chosen with `pages: "3-5"`.
//!
//! The text comes from `lopdf`'s extraction (the fonts' encodings and `ToUnicode` maps; no
//! layout analysis), chosen over `pdf-extract` because it is one crate on a parser the
//! workspace needs anyway, and the release binary has little room (docs/architecture.md).
//! The file is hostile input: lopdf bounds nesting while it parses, each stream decompresses
//! to at most [`MAX_STREAM_BYTES`] (a compression bomb fails instead of filling memory), the
//! file is at most [`MAX_PDF_FILE_BYTES`], and extraction stops at [`TIME_LIMIT`].

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use lopdf::{Document, LoadOptions};

/// Pages shown by one call.
pub const MAX_PAGES_PER_CALL: u32 = 20;
/// The largest PDF file read.
pub const MAX_PDF_FILE_BYTES: u64 = 32 * 1024 * 1024;
/// The most bytes one stream (or one page's content) may decompress to.
pub const MAX_STREAM_BYTES: usize = 16 * 1024 * 1024;
/// Extraction stops after this long (the pages done so far are shown).
pub const TIME_LIMIT: Duration = Duration::from_secs(20);

/// Whether a file starting with `prefix` is a PDF (`%PDF-` in its first 1,024 bytes, as
/// readers accept it).
pub fn is_pdf(prefix: &[u8]) -> bool {
    memchr::memmem::find(&prefix[..prefix.len().min(1024)], b"%PDF-").is_some()
}

/// A range of pages, 1-based and inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRange {
    pub first: u32,
    pub last: u32,
}

/// Reads `pages` (`"3"`, `"3-5"`, `"3-"`), checking it against the document's `count`.
pub fn parse_pages(text: &str, count: u32) -> Result<PageRange, String> {
    let bad = || format!("pages {text:?} is not a page or a range of pages; write it as \"3\", \"3-5\" or \"3-\"");
    let number = |part: &str| part.trim().parse::<u32>().map_err(|_| bad());
    let (first, last) = match text.split_once('-') {
        Some((first, last)) if last.trim().is_empty() => (number(first)?, count.max(1)),
        Some((first, last)) => (number(first)?, number(last)?),
        None => {
            let page = number(text)?;
            (page, page)
        }
    };
    if first == 0 {
        return Err(format!("pages {text:?}: pages are numbered from 1"));
    }
    if first > last {
        return Err(format!("pages {text:?} is reversed; write the first page first (\"{last}-{first}\")"));
    }
    if first > count {
        return Err(format!("pages {text:?} is out of range: the PDF has {count} page{}", plural(count)));
    }
    Ok(PageRange { first, last: last.min(count) })
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The text of the PDF in `bytes`: the pages `pages` names (default: from the first), at most
/// [`MAX_PAGES_PER_CALL`] of them and `max_chars` characters, each under its heading, with a
/// last line saying how to read on when pages are left.
pub fn pdf_text(bytes: &[u8], pages: Option<&str>, max_chars: usize) -> Result<String, String> {
    let started = Instant::now();
    let options = LoadOptions { max_decompressed_size: Some(MAX_STREAM_BYTES), ..LoadOptions::default() };
    let document = Document::load_mem_with_options(bytes, options).map_err(|err| {
        if matches!(err, lopdf::Error::Decryption(_) | lopdf::Error::AlreadyEncrypted) {
            format!("the PDF is encrypted and cannot be read without its password ({err})")
        } else {
            format!("the PDF cannot be read (malformed or damaged): {err}")
        }
    })?;
    if document.is_encrypted() && !document.was_encrypted() {
        return Err("the PDF is encrypted and cannot be read without its password".to_owned());
    }
    let page_ids = document.get_pages();
    let count = u32::try_from(page_ids.len()).unwrap_or(u32::MAX);
    if count == 0 {
        return Err("the PDF has no pages that can be found (its page tree is empty or damaged)".to_owned());
    }
    let range = match pages {
        Some(text) => parse_pages(text, count)?,
        None => PageRange { first: 1, last: count },
    };
    let last_wanted = range.last.min(range.first.saturating_add(MAX_PAGES_PER_CALL - 1));
    let mut out = format!("PDF, {count} page{}\n", plural(count));
    let mut shown_last = None;
    let mut stopped_early = None;
    for page in range.first..=last_wanted {
        if started.elapsed() > TIME_LIMIT {
            stopped_early = Some(format!("text extraction took over {} s", TIME_LIMIT.as_secs()));
            break;
        }
        let mut block = format!("--- page {page} ---\n");
        block.push_str(&page_text(&document, page));
        if !block.ends_with('\n') {
            block.push('\n');
        }
        let used = out.chars().count();
        let room = max_chars.saturating_sub(used);
        if block.chars().count() > room {
            if shown_last.is_none() {
                // The first page alone is over the limit: show what fits of it.
                let cut: String = block.chars().take(room.saturating_sub(60)).collect();
                let _ = writeln!(out, "{cut}\n[page {page} cut: its text is over the output limit]");
                shown_last = Some(page);
            }
            stopped_early.get_or_insert_with(|| "the output limit was reached".to_owned());
            break;
        }
        out.push_str(&block);
        shown_last = Some(page);
    }
    let shown_last = shown_last.unwrap_or(range.first.saturating_sub(1));
    if shown_last < range.last {
        let next = shown_last + 1;
        let why = stopped_early.map_or_else(
            || format!("at most {MAX_PAGES_PER_CALL} pages are shown per call"),
            |why| format!("stopped early: {why}"),
        );
        let next_last = range.last.min(next.saturating_add(MAX_PAGES_PER_CALL - 1));
        let _ = write!(
            out,
            "(Showing pages {}-{shown_last} of {count}; {why}. Use pages=\"{next}-{next_last}\" to continue.)",
            range.first
        );
    }
    Ok(out)
}

/// One page's text, or a note saying why it has none.
fn page_text(document: &Document, page: u32) -> String {
    let chunks = document.extract_text_chunks_with_limit(&[page], MAX_STREAM_BYTES);
    let mut text = String::new();
    let mut failure = None;
    for chunk in chunks {
        match chunk {
            Ok(piece) => text.push_str(&piece),
            Err(err) => {
                failure.get_or_insert(err);
            }
        }
    }
    match failure {
        Some(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })) => format!(
            "{text}[the page's content decompresses to over {} MiB; not shown]",
            MAX_STREAM_BYTES / (1024 * 1024)
        ),
        Some(err) if text.trim().is_empty() => format!("[no text could be extracted from this page: {err}]"),
        _ if text.trim().is_empty() => "[no text on this page (it may be scanned images)]".to_owned(),
        _ => text,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use lopdf::content::{Content, Operation};
    use lopdf::{Object, Stream, dictionary};
    use pretty_assertions::assert_eq;

    /// A PDF whose pages hold `texts`, one line each (`compress`: flate-encoded content).
    pub(crate) fn pdf_with_pages(texts: &[String], compress: bool) -> Vec<u8> {
        let contents: Vec<Vec<u8>> = texts
            .iter()
            .map(|text| {
                Content {
                    operations: vec![
                        Operation::new("BT", vec![]),
                        Operation::new("Tf", vec!["F1".into(), 12.into()]),
                        Operation::new("Td", vec![72.into(), 720.into()]),
                        Operation::new("Tj", vec![Object::string_literal(text.as_str())]),
                        Operation::new("ET", vec![]),
                    ],
                }
                .encode()
                .unwrap()
            })
            .collect();
        pdf_with_contents(contents, compress)
    }

    /// A PDF whose pages have these raw content streams.
    pub(crate) fn pdf_with_contents(contents: Vec<Vec<u8>>, compress: bool) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font_id = doc.add_object(dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier"});
        let resources_id = doc.add_object(dictionary! {"Font" => dictionary! {"F1" => font_id}});
        let mut kids = Vec::new();
        for content in contents {
            let mut stream = Stream::new(dictionary! {}, content);
            if compress {
                stream.compress().unwrap();
            }
            let content_id = doc.add_object(stream);
            kids.push(Object::from(doc.add_object(dictionary! {
                "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
            })));
        }
        let count = i64::try_from(kids.len()).unwrap();
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Kids" => kids, "Count" => count, "Resources" => resources_id,
                "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
            }),
        );
        let catalog_id = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
        doc.trailer.set("Root", catalog_id);
        let mut out = Vec::new();
        doc.save_to(&mut out).unwrap();
        out
    }

    fn numbered(n: u32) -> Vec<String> {
        (1..=n).map(|i| format!("This is page {i}.")).collect()
    }

    #[test]
    fn pdfs_are_known_by_their_first_bytes() {
        assert!(is_pdf(b"%PDF-1.7\n"));
        assert!(is_pdf(b"\xEF\xBB\xBF  %PDF-1.4"));
        assert!(!is_pdf(b"%!PS-Adobe"));
        assert!(!is_pdf(b"PDF"));
    }

    #[test]
    fn every_page_comes_under_its_heading() {
        let text = pdf_text(&pdf_with_pages(&numbered(3), true), None, 50_000).unwrap();
        assert!(text.starts_with("PDF, 3 pages\n--- page 1 ---\n"), "{text}");
        for page in 1..=3 {
            let heading = text.find(&format!("--- page {page} ---")).unwrap();
            let body = text.find(&format!("This is page {page}.")).unwrap();
            assert!(heading < body, "{text}");
        }
        assert!(!text.contains("Showing pages"), "{text}");
    }

    #[test]
    fn pages_choose_a_range() {
        let pdf = pdf_with_pages(&numbered(10), false);
        let text = pdf_text(&pdf, Some("3-5"), 50_000).unwrap();
        assert!(text.contains("--- page 3 ---") && text.contains("This is page 5."), "{text}");
        assert!(!text.contains("This is page 2.") && !text.contains("This is page 6."), "{text}");
        let text = pdf_text(&pdf, Some("9-"), 50_000).unwrap();
        assert!(text.contains("This is page 9.") && text.contains("This is page 10."), "{text}");
        let text = pdf_text(&pdf, Some(" 7 "), 50_000).unwrap();
        assert!(text.contains("This is page 7.") && !text.contains("page 8"), "{text}");
        // A range past the end is cut to the last page.
        let text = pdf_text(&pdf, Some("8-99"), 50_000).unwrap();
        assert!(text.contains("This is page 10.") && !text.contains("Showing"), "{text}");
    }

    #[test]
    fn bad_ranges_are_explained() {
        for (pages, expected) in [
            ("", "is not a page or a range"),
            ("abc", "is not a page or a range"),
            ("3-x", "is not a page or a range"),
            ("-3", "is not a page or a range"),
            ("1-2-3", "is not a page or a range"),
            ("0", "numbered from 1"),
            ("5-3", "reversed; write the first page first (\"3-5\")"),
            ("11", "out of range: the PDF has 10 pages"),
            ("11-12", "out of range"),
        ] {
            let err = parse_pages(pages, 10).unwrap_err();
            assert!(err.contains(expected), "{pages:?}: {err}");
        }
    }

    #[test]
    fn at_most_twenty_pages_a_call_and_how_to_read_on() {
        let pdf = pdf_with_pages(&numbered(50), true);
        let text = pdf_text(&pdf, None, 50_000).unwrap();
        assert!(text.contains("This is page 20.") && !text.contains("This is page 21."), "{text}");
        assert!(
            text.ends_with(
                "(Showing pages 1-20 of 50; at most 20 pages are shown per call. Use pages=\"21-40\" to continue.)"
            ),
            "{text}"
        );
        let text = pdf_text(&pdf, Some("41-50"), 50_000).unwrap();
        assert!(!text.contains("Showing"), "{text}");
    }

    #[test]
    fn the_output_limit_stops_at_a_page_boundary() {
        let long: Vec<String> = (1..=5).map(|i| format!("page {i} {}", "word ".repeat(400))).collect();
        let pdf = pdf_with_pages(&long, true);
        let text = pdf_text(&pdf, None, 5_000).unwrap();
        assert!(text.chars().count() <= 5_000 + 200, "{}", text.len());
        assert!(text.contains("stopped early: the output limit was reached. Use pages=\"3-5\""), "{text}");
        // A single page over the limit is cut, not dropped.
        let text = pdf_text(&pdf, Some("2"), 1_000).unwrap();
        assert!(text.contains("[page 2 cut: its text is over the output limit]"), "{text}");
        assert!(text.chars().count() <= 1_100, "{}", text.len());
    }

    #[test]
    fn malformed_pdfs_are_clear_errors() {
        let err = pdf_text(b"%PDF-1.4\nthis is not a pdf at all", None, 50_000).unwrap_err();
        assert!(err.starts_with("the PDF cannot be read") || err.contains("no pages"), "{err}");
        let pdf = pdf_with_pages(&numbered(2), true);
        let err = pdf_text(&pdf[..pdf.len() / 3], None, 50_000);
        assert!(err.is_err() || err.as_ref().unwrap().contains("PDF"), "{err:?}");
        let err = pdf_text(b"%PDF-", None, 50_000).unwrap_err();
        assert!(!err.is_empty());
    }

    #[test]
    fn an_encrypted_pdf_is_refused() {
        let mut doc = Document::load_mem(&pdf_with_pages(&numbered(1), false)).unwrap();
        let encrypt_id = doc.add_object(dictionary! {
            "Filter" => "Standard", "V" => 2, "R" => 3, "Length" => 128, "P" => -4,
            "O" => Object::string_literal(vec![7u8; 32]), "U" => Object::string_literal(vec![9u8; 32]),
        });
        doc.trailer.set("Encrypt", encrypt_id);
        doc.trailer.set("ID", vec![Object::string_literal(vec![1u8; 16]), Object::string_literal(vec![1u8; 16])]);
        let mut bytes = Vec::new();
        doc.save_to(&mut bytes).unwrap();
        let err = pdf_text(&bytes, None, 50_000).unwrap_err();
        assert!(err.contains("encrypted"), "{err}");
    }

    #[test]
    fn a_compression_bomb_fails_fast_without_filling_memory() {
        // 64 MB of spaces compresses to about 64 KB.
        let bomb = vec![b' '; 64 * 1024 * 1024];
        let pdf = pdf_with_contents(vec![b"BT /F1 12 Tf (fine) Tj ET".to_vec(), bomb], true);
        assert!(pdf.len() < 1024 * 1024, "{}", pdf.len());
        let started = Instant::now();
        let text = pdf_text(&pdf, None, 50_000).unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(text.contains("fine"), "{text}");
        assert!(text.contains("--- page 2 ---\n[the page's content decompresses to over 16 MiB; not shown]"), "{text}");
    }

    #[test]
    fn deep_nesting_is_refused_not_a_stack_overflow() {
        let depth = 100_000;
        let mut content = b"BT /F1 12 Tf ".to_vec();
        content.extend(std::iter::repeat_n(b'[', depth));
        content.extend(std::iter::repeat_n(b']', depth));
        content.extend_from_slice(b" TJ (after) Tj ET");
        let pdf = pdf_with_contents(vec![content], true);
        // Run on a small stack, as a blocking pool thread has.
        let text = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(move || pdf_text(&pdf, None, 50_000))
            .unwrap()
            .join()
            .unwrap();
        assert!(text.is_ok() || text.is_err(), "returns without a crash");
        // And a nested page tree, as objects.
        let mut raw = b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [2 0 R] /Count 1 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF".to_vec();
        raw.extend_from_slice(b"\n");
        let err = pdf_text(&raw, None, 50_000).unwrap_err();
        assert!(err.contains("no pages") || err.contains("cannot be read"), "{err}");
    }

    #[test]
    fn the_range_check_uses_the_page_count() {
        assert_eq!(parse_pages("2-3", 3).unwrap(), PageRange { first: 2, last: 3 });
        assert_eq!(parse_pages("1", 1).unwrap(), PageRange { first: 1, last: 1 });
        assert!(parse_pages("2", 1).unwrap_err().contains("the PDF has 1 page"));
    }
}
