//! Images for `read_file` (docs/reference/tools.md#read_file): a PNG, JPEG, GIF or WebP file,
//! recognised by its first bytes whatever its name, becomes an image part the model sees and a
//! text line naming its size.
//!
//! The size a model is shown follows Anthropic's vision guidance (which Claude Code follows):
//! an image whose long edge is over [`MAX_LONG_EDGE`] pixels, or which has more than
//! [`MAX_PIXELS`] pixels (about 1,600 tokens), is scaled down to fit both, since the provider
//! would scale it down anyway and the bytes cost time and context. An image that fits and is
//! small enough is sent as its own bytes; one that is scaled (or too large in bytes) is
//! re-encoded, as JPEG when it came as JPEG or has no alpha and PNG would be too large, else
//! as PNG.
//!
//! The file is hostile input: it is decoded under [`image::Limits`] (at most
//! [`MAX_DIMENSION`] pixels a side, [`MAX_DECODE_ALLOC`] bytes of allocation), and its header's
//! size is checked first, so a file claiming to be 100000×100000 is refused before anything
//! is allocated.

use std::io::Cursor;

use base64::Engine as _;
use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::{CompressionType, FilterType as PngFilter, PngEncoder};
use image::{DynamicImage, ImageFormat, ImageReader, Limits};

/// The longest edge a model is shown, in pixels (Anthropic's guidance).
pub const MAX_LONG_EDGE: u32 = 1568;
/// The most pixels a model is shown (about 1.15 megapixels, ~1,600 tokens).
pub const MAX_PIXELS: u64 = 1_150_000;
/// The widest or tallest image decoded at all (Anthropic refuses larger ones).
pub const MAX_DIMENSION: u32 = 8000;
/// The most memory the decoder may allocate.
pub const MAX_DECODE_ALLOC: u64 = 256 * 1024 * 1024;
/// The largest image file read.
pub const MAX_IMAGE_FILE_BYTES: u64 = 32 * 1024 * 1024;
/// The most bytes sent for one image (base64 makes it 5 MB, Anthropic's per-image limit).
pub const MAX_SENT_BYTES: usize = 3_750_000;

/// The image formats a model is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    Png,
    Jpeg,
    Gif,
    WebP,
}

impl ImageKind {
    /// The kind these first bytes of a file announce, if any.
    pub fn sniff(prefix: &[u8]) -> Option<ImageKind> {
        if prefix.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(ImageKind::Png)
        } else if prefix.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(ImageKind::Jpeg)
        } else if prefix.starts_with(b"GIF87a") || prefix.starts_with(b"GIF89a") {
            Some(ImageKind::Gif)
        } else if prefix.len() >= 12 && prefix.starts_with(b"RIFF") && &prefix[8..12] == b"WEBP" {
            Some(ImageKind::WebP)
        } else {
            None
        }
    }

    /// The MIME type.
    pub fn mime_type(self) -> &'static str {
        match self {
            ImageKind::Png => "image/png",
            ImageKind::Jpeg => "image/jpeg",
            ImageKind::Gif => "image/gif",
            ImageKind::WebP => "image/webp",
        }
    }

    fn format(self) -> ImageFormat {
        match self {
            ImageKind::Png => ImageFormat::Png,
            ImageKind::Jpeg => ImageFormat::Jpeg,
            ImageKind::Gif => ImageFormat::Gif,
            ImageKind::WebP => ImageFormat::WebP,
        }
    }
}

/// An image ready for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownImage {
    /// The MIME type of `data`.
    pub mime_type: &'static str,
    /// The image's bytes, base64-encoded.
    pub data: String,
    /// The size in the file.
    pub original: (u32, u32),
    /// The size shown.
    pub shown: (u32, u32),
    /// The line that goes with it: `image/png 4000×3000, shown at 1238×928 (image/jpeg, 210.4 KiB)`.
    pub summary: String,
}

/// Why an image cannot be shown (the message is for the model).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ImageError(pub String);

/// The size an image of `width`×`height` is shown at: scaled down, keeping its aspect ratio,
/// until its long edge is at most [`MAX_LONG_EDGE`] and it has at most [`MAX_PIXELS`] pixels.
pub fn fitted_size(width: u32, height: u32) -> (u32, u32) {
    let (w, h) = (f64::from(width.max(1)), f64::from(height.max(1)));
    let scale = (f64::from(MAX_LONG_EDGE) / w.max(h)).min((MAX_PIXELS as f64 / (w * h)).sqrt());
    if scale >= 1.0 {
        return (width, height);
    }
    // Rounded down (past the float error of an exact fit), at least one pixel; the casts are
    // of values in 1..=width.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let scaled = |side: f64| ((side * scale + 1e-6).floor() as u32).max(1);
    (scaled(w), scaled(h))
}

/// Decodes `bytes` (a file of `kind`), scales it to [`fitted_size`], and encodes it for the
/// model.
pub fn show_image(bytes: &[u8], kind: ImageKind) -> Result<ShownImage, ImageError> {
    let mime = kind.mime_type();
    let reader = || ImageReader::with_format(Cursor::new(bytes), kind.format());
    let (width, height) = reader().into_dimensions().map_err(|err| {
        ImageError(format!("the file starts like an image ({mime}) but its header cannot be read: {err}"))
    })?;
    if width > MAX_DIMENSION || height > MAX_DIMENSION {
        return Err(ImageError(format!(
            "the {mime} image claims to be {width}×{height} pixels, over the {MAX_DIMENSION}×{MAX_DIMENSION} limit; \
             it was not decoded"
        )));
    }
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_DIMENSION);
    limits.max_image_height = Some(MAX_DIMENSION);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    let mut decoding = reader();
    decoding.limits(limits);
    let decoded = decoding.decode().map_err(|err| match err {
        image::ImageError::Limits(why) => {
            ImageError(format!("the {mime} image ({width}×{height}) needs more memory to decode than allowed: {why}"))
        }
        other => ImageError(format!("the {mime} image ({width}×{height}) is corrupt or truncated: {other}")),
    })?;
    let shown = fitted_size(width, height);
    let (mime_type, encoded) = if shown == (width, height) && bytes.len() <= MAX_SENT_BYTES {
        (mime, bytes.to_vec())
    } else {
        let scaled = if shown == (width, height) { decoded } else { decoded.thumbnail_exact(shown.0, shown.1) };
        encode(&scaled, kind)?
    };
    let summary = format!(
        "{mime} {width}×{height}, shown at {}×{} ({mime_type}, {})",
        shown.0,
        shown.1,
        crate::fs::text::human_size(encoded.len() as u64)
    );
    Ok(ShownImage {
        mime_type,
        data: base64::engine::general_purpose::STANDARD.encode(&encoded),
        original: (width, height),
        shown,
        summary,
    })
}

/// Encodes a scaled image: JPEG for a JPEG source, PNG otherwise unless the PNG is over
/// [`MAX_SENT_BYTES`] and the image has no transparency, then JPEG.
fn encode(image: &DynamicImage, kind: ImageKind) -> Result<(&'static str, Vec<u8>), ImageError> {
    let failed = |err: image::ImageError| ImageError(format!("the scaled image could not be encoded: {err}"));
    if kind != ImageKind::Jpeg {
        let mut png = Vec::new();
        let encoder = PngEncoder::new_with_quality(&mut png, CompressionType::Fast, PngFilter::Adaptive);
        let pixels: DynamicImage =
            if image.color().has_alpha() { image.to_rgba8().into() } else { image.to_rgb8().into() };
        pixels.write_with_encoder(encoder).map_err(failed)?;
        if png.len() <= MAX_SENT_BYTES || image.color().has_alpha() {
            return Ok(("image/png", png));
        }
    }
    let mut jpeg = Vec::new();
    DynamicImage::from(image.to_rgb8())
        .write_with_encoder(JpegEncoder::new_with_quality(&mut jpeg, 85))
        .map_err(failed)?;
    Ok(("image/jpeg", jpeg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgb, RgbImage, Rgba, RgbaImage};
    use pretty_assertions::assert_eq;

    pub(crate) fn png(width: u32, height: u32) -> Vec<u8> {
        let image =
            RgbImage::from_fn(width, height, |x, y| Rgb([(x % 256) as u8, (y % 256) as u8, ((x ^ y) % 256) as u8]));
        let mut out = Vec::new();
        DynamicImage::from(image).write_to(&mut Cursor::new(&mut out), ImageFormat::Png).unwrap();
        out
    }

    fn decode(shown: &ShownImage) -> DynamicImage {
        let bytes = base64::engine::general_purpose::STANDARD.decode(&shown.data).unwrap();
        image::load_from_memory(&bytes).unwrap()
    }

    #[test]
    fn formats_are_known_by_their_first_bytes() {
        assert_eq!(ImageKind::sniff(&png(2, 2)), Some(ImageKind::Png));
        assert_eq!(ImageKind::sniff(b"GIF89a..."), Some(ImageKind::Gif));
        assert_eq!(ImageKind::sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Some(ImageKind::Jpeg));
        assert_eq!(ImageKind::sniff(b"RIFF\x10\0\0\0WEBPVP8 "), Some(ImageKind::WebP));
        assert_eq!(ImageKind::sniff(b"RIFF\x10\0\0\0WAVEfmt "), None);
        assert_eq!(ImageKind::sniff(b"\x89PNG"), None, "a cut signature is no PNG");
        assert_eq!(ImageKind::sniff(b"hello"), None);
    }

    #[test]
    fn the_fitted_size_keeps_the_aspect_ratio_within_both_limits() {
        assert_eq!(fitted_size(800, 600), (800, 600));
        assert_eq!(fitted_size(1072, 1072), (1072, 1072));
        let (w, h) = fitted_size(4000, 3000);
        assert!(u64::from(w) * u64::from(h) <= MAX_PIXELS && w <= MAX_LONG_EDGE, "{w}×{h}");
        assert!((f64::from(w) / f64::from(h) - 4.0 / 3.0).abs() < 0.01, "{w}×{h}");
        assert!(u64::from(w + 2) * u64::from(h + 2) > MAX_PIXELS, "not scaled further than needed: {w}×{h}");
        // A long strip is held by the long edge.
        assert_eq!(fitted_size(6000, 100), (1568, 26));
        assert_eq!(fitted_size(1, 8000), (1, 1568));
    }

    #[test]
    fn a_small_image_is_sent_as_its_own_bytes() {
        let bytes = png(40, 30);
        let shown = show_image(&bytes, ImageKind::Png).unwrap();
        assert_eq!(base64::engine::general_purpose::STANDARD.decode(&shown.data).unwrap(), bytes);
        assert_eq!((shown.mime_type, shown.original, shown.shown), ("image/png", (40, 30), (40, 30)));
        assert!(shown.summary.starts_with("image/png 40×30, shown at 40×30 (image/png, "), "{}", shown.summary);
    }

    #[test]
    fn a_large_image_is_scaled_down_and_re_encoded() {
        let shown = show_image(&png(3000, 2000), ImageKind::Png).unwrap();
        let (w, h) = fitted_size(3000, 2000);
        assert_eq!(shown.shown, (w, h));
        let decoded = decode(&shown);
        assert_eq!((decoded.width(), decoded.height()), (w, h));
        assert!(shown.summary.starts_with(&format!("image/png 3000×2000, shown at {w}×{h}")), "{}", shown.summary);
        // A JPEG stays a JPEG.
        let mut jpeg = Vec::new();
        DynamicImage::from(RgbImage::from_pixel(2000, 100, Rgb([9, 9, 9])))
            .write_to(&mut Cursor::new(&mut jpeg), ImageFormat::Jpeg)
            .unwrap();
        let shown = show_image(&jpeg, ImageKind::Jpeg).unwrap();
        assert_eq!((shown.mime_type, shown.shown), ("image/jpeg", (1568, 78)));
    }

    #[test]
    fn transparency_survives_scaling() {
        let image = RgbaImage::from_pixel(2000, 2000, Rgba([255, 0, 0, 0]));
        let mut bytes = Vec::new();
        DynamicImage::from(image).write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png).unwrap();
        let shown = show_image(&bytes, ImageKind::Png).unwrap();
        assert_eq!(shown.mime_type, "image/png");
        assert_eq!(decode(&shown).to_rgba8().get_pixel(0, 0)[3], 0);
    }

    #[test]
    fn gif_and_webp_are_read() {
        for format in [ImageFormat::Gif, ImageFormat::WebP] {
            let mut bytes = Vec::new();
            DynamicImage::from(RgbaImage::from_pixel(20, 10, Rgba([1, 2, 3, 255])))
                .write_to(&mut Cursor::new(&mut bytes), format)
                .unwrap();
            let kind = ImageKind::sniff(&bytes).unwrap();
            let shown = show_image(&bytes, kind).unwrap();
            assert_eq!((shown.original, shown.mime_type), ((20, 10), kind.mime_type()), "{format:?}");
        }
    }

    /// A PNG whose header claims `width`×`height` (8-bit RGBA, or 16-bit with `deep`),
    /// followed by a few bytes of pixel data that are not what it claims.
    pub(crate) fn png_header_claiming(width: u32, height: u32, deep: bool) -> Vec<u8> {
        let mut ihdr = b"IHDR".to_vec();
        ihdr.extend_from_slice(&width.to_be_bytes());
        ihdr.extend_from_slice(&height.to_be_bytes());
        ihdr.extend_from_slice(&[if deep { 16 } else { 8 }, 6, 0, 0, 0]);
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        for chunk in [ihdr, b"IDAT\x78\x9c\x63\x00\x00\x00\x01\x00\x01".to_vec(), b"IEND".to_vec()] {
            out.extend_from_slice(&u32::try_from(chunk.len() - 4).unwrap().to_be_bytes());
            out.extend_from_slice(&chunk);
            out.extend_from_slice(&crc32(&chunk).to_be_bytes());
        }
        out
    }

    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = 0xFFFF_FFFFu32;
        for &byte in bytes {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
            }
        }
        !crc
    }

    #[test]
    fn a_header_claiming_a_huge_image_is_refused_before_decoding() {
        let started = std::time::Instant::now();
        let err = show_image(&png_header_claiming(100_000, 100_000, false), ImageKind::Png).unwrap_err();
        assert!(err.0.contains("100000×100000") && err.0.contains("8000×8000 limit"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        // Within the side limit but over the allocation limit (16-bit RGBA, 8000×8000 = 512 MB).
        let err = show_image(&png_header_claiming(8000, 8000, true), ImageKind::Png).unwrap_err();
        assert!(err.0.contains("more memory"), "{err}");
    }

    #[test]
    fn truncated_and_corrupt_images_are_clear_errors() {
        let bytes = png(300, 200);
        let err = show_image(&bytes[..bytes.len() / 2], ImageKind::Png).unwrap_err();
        assert!(err.0.contains("corrupt or truncated"), "{err}");
        let err = show_image(&png_header_claiming(10, 10, false), ImageKind::Png).unwrap_err();
        assert!(err.0.contains("corrupt or truncated"), "{err}");
        let err = show_image(b"\x89PNG\r\n\x1a\ngarbage", ImageKind::Png).unwrap_err();
        assert!(err.0.contains("header cannot be read"), "{err}");
        let err = show_image(&[0xFF, 0xD8, 0xFF, 0xE0, 0, 0], ImageKind::Jpeg).unwrap_err();
        assert!(err.0.contains("image/jpeg") && !err.0.is_empty(), "{err}");
    }
}
