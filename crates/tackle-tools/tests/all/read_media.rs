//! `read_file` of images and PDFs on real files through the executor
//! (docs/reference/tools.md#read_file): recognised by their bytes whatever their name, under the
//! path policy, with clear errors for hostile files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::Cursor;

use base64::Engine as _;
use common::Ws;
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use serde_json::json;
use tackle_core::ContentPart;

fn png(width: u32, height: u32) -> Vec<u8> {
    let image = RgbImage::from_fn(width, height, |x, y| Rgb([(x % 251) as u8, (y % 241) as u8, 40]));
    let mut out = Vec::new();
    DynamicImage::from(image).write_to(&mut Cursor::new(&mut out), ImageFormat::Png).unwrap();
    out
}

fn images(output: &tackle_core::ToolOutput) -> Vec<(String, Vec<u8>)> {
    output
        .content
        .iter()
        .filter_map(|part| match part {
            ContentPart::Image { mime_type, data } => {
                Some((mime_type.clone(), base64::engine::general_purpose::STANDARD.decode(data).unwrap()))
            }
            ContentPart::Text { .. } => None,
        })
        .collect()
}

/// A minimal one-page PDF written by hand, its text in the clear.
fn hand_written_pdf(text: &str) -> Vec<u8> {
    let content = format!("BT /F1 12 Tf 72 720 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_owned(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (n, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", n + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes(),
    );
    out
}

#[tokio::test]
async fn an_image_comes_back_as_an_image_part_with_a_line_naming_its_size() {
    let ws = Ws::new();
    let small = png(40, 30);
    ws.write("shot.png", &small);
    let output = ws.call("read_file", json!({"file_path": "shot.png"})).await;
    assert!(!output.is_error, "{}", output.text_content());
    assert!(output.text_content().starts_with("shot.png: image/png 40×30, shown at 40×30 (image/png, "));
    assert_eq!(images(&output), vec![("image/png".to_owned(), small)]);
    // A large one is scaled down.
    ws.write("big.png", png(4000, 3000));
    let output = ws.call("read_file", json!({"file_path": "big.png"})).await;
    assert!(
        output.text_content().starts_with("big.png: image/png 4000×3000, shown at 1238×928"),
        "{}",
        output.text_content()
    );
    let (_, bytes) = &images(&output)[0];
    let decoded = image::load_from_memory(bytes).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (1238, 928));
}

#[tokio::test]
async fn the_bytes_decide_not_the_name() {
    let ws = Ws::new();
    ws.write("notes.txt", png(8, 8));
    let output = ws.call("read_file", json!({"file_path": "notes.txt"})).await;
    assert_eq!(images(&output).len(), 1, "{}", output.text_content());
    ws.write("fake.png", "just text\n");
    assert_eq!(ws.ok("read_file", json!({"file_path": "fake.png"})).await, "     1\tjust text");
    ws.write("garbage.png", [0u8, 1, 2, 3, 255, 254]);
    let err = ws.err("read_file", json!({"file_path": "garbage.png"})).await;
    assert!(err.contains("binary"), "{err}");
    ws.write("doc.bin", hand_written_pdf("Hello from a PDF"));
    let text = ws.ok("read_file", json!({"file_path": "doc.bin"})).await;
    assert!(text.contains("--- page 1 ---") && text.contains("Hello from a PDF"), "{text}");
}

#[tokio::test]
async fn hostile_images_are_clear_errors() {
    let ws = Ws::new();
    let whole = png(300, 200);
    ws.write("cut.png", &whole[..whole.len() / 2]);
    let err = ws.err("read_file", json!({"file_path": "cut.png"})).await;
    assert!(err.starts_with("cut.png: the image/png image (300×200) is corrupt or truncated"), "{err}");
    let mut huge = whole[..16].to_vec();
    huge.extend_from_slice(&100_000u32.to_be_bytes());
    huge.extend_from_slice(&100_000u32.to_be_bytes());
    huge.extend_from_slice(&whole[24..]);
    ws.write("huge.png", &huge);
    let started = std::time::Instant::now();
    let err = ws.err("read_file", json!({"file_path": "huge.png"})).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    assert!(err.contains("cannot be read") || err.contains("over the 8000×8000 limit"), "{err}");
}

#[tokio::test]
async fn pdfs_read_page_by_page_and_pages_is_checked() {
    let ws = Ws::new();
    ws.write("a.pdf", hand_written_pdf("First and only page"));
    let text = ws.ok("read_file", json!({"file_path": "a.pdf"})).await;
    assert!(text.starts_with("PDF, 1 page\n--- page 1 ---\n"), "{text}");
    assert!(text.contains("First and only page"), "{text}");
    assert!(ws.err("read_file", json!({"file_path": "a.pdf", "pages": "2"})).await.contains("out of range"));
    assert!(ws.err("read_file", json!({"file_path": "a.pdf", "pages": "1-x"})).await.contains("not a page"));
    ws.write("t.txt", "text\n");
    assert_eq!(
        ws.err("read_file", json!({"file_path": "t.txt", "pages": "1"})).await,
        "pages is for PDF files; t.txt is not a PDF"
    );
    ws.write("broken.pdf", "%PDF-1.7\n1 0 obj << /Type /Catalog");
    let err = ws.err("read_file", json!({"file_path": "broken.pdf"})).await;
    assert!(err.starts_with("broken.pdf: the PDF"), "{err}");
}

#[tokio::test]
async fn images_and_pdfs_stay_under_the_path_policy() {
    let ws = Ws::new();
    let outside = ws.outside().join("secret.png");
    std::fs::write(&outside, png(4, 4)).unwrap();
    let err = ws.err("read_file", json!({"file_path": outside.to_str().unwrap()})).await;
    assert!(!err.contains("image/png"), "{err}");
    std::os::unix::fs::symlink(&outside, ws.path("link.png")).unwrap();
    let output = ws.call("read_file", json!({"file_path": "link.png"})).await;
    assert!(output.is_error && images(&output).is_empty(), "{}", output.text_content());
}
