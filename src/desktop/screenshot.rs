//! Screenshots: an RGB image of the screen, written as PNG, and its annotated copy
//! (UFO's `action_step{N}_annotated.png`): every listed control boxed and labelled with
//! its id, so that a person or a model can name a control by its label.

use std::path::{Path, PathBuf};

use super::control::{Control, Rect};
use super::error::DesktopError;
use crate::tool::{Blame, Blamed};

/// Why an image cannot be encoded, decoded or saved.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ImageError {
    /// The PNG encoder failed.
    #[error("cannot encode a PNG: {0}")]
    Encode(#[source] png::EncodingError),
    /// The bytes are not a PNG this reads.
    #[error("cannot decode a PNG: {0}")]
    Decode(#[source] png::DecodingError),
    /// A PNG larger than the bound.
    #[error("a PNG of {width}x{height} is larger than {max_pixels} pixels")]
    TooLarge {
        /// Its width.
        width: u32,
        /// Its height.
        height: u32,
        /// The bound.
        max_pixels: u64,
    },
    /// A PNG whose size overflows.
    #[error("cannot decode a PNG: its size overflows")]
    Overflow,
    /// A PNG with a palette.
    #[error("cannot decode an indexed PNG")]
    Indexed,
    /// The file cannot be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// A screenshot that cannot be saved, or an image that cannot be read: the machine's
/// (or the device's that sent it).
impl Blamed for ImageError {
    fn blame(&self) -> Blame {
        Blame::Environment
    }
}

impl From<ImageError> for DesktopError {
    fn from(e: ImageError) -> Self {
        DesktopError::classified(e)
    }
}

/// An RGB image, 3 bytes a pixel, rows top to bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Image {
    /// Width in pixels.
    pub(crate) width: u32,
    /// Height in pixels.
    pub(crate) height: u32,
    /// The pixels.
    pub(crate) rgb: Vec<u8>,
}

/// The colours of the boxes, taken in turn so that neighbours differ.
const COLOURS: [[u8; 3]; 4] = [[230, 25, 75], [0, 130, 200], [245, 130, 48], [60, 180, 75]];
/// Label glyphs are drawn this many pixels a font dot.
const SCALE: u32 = 3;

impl Image {
    /// A black image.
    pub(crate) fn new(width: u32, height: u32) -> Self {
        Self {
            width,
            height,
            rgb: vec![0; (width * height * 3) as usize],
        }
    }

    /// Encodes it as PNG.
    pub(crate) fn png(&self) -> Result<Vec<u8>, ImageError> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, self.width, self.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Fast);
        let mut writer = encoder.write_header().map_err(ImageError::Encode)?;
        writer
            .write_image_data(&self.rgb)
            .map_err(ImageError::Encode)?;
        writer.finish().map_err(ImageError::Encode)?;
        Ok(out)
    }

    /// Decodes an 8-bit RGB or RGBA PNG (as `png` writes them), at most `max_pixels`.
    pub(crate) fn from_png(bytes: &[u8], max_pixels: u64) -> Result<Image, ImageError> {
        let bad = ImageError::Decode;
        let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().map_err(bad)?;
        let (width, height) = (reader.info().width, reader.info().height);
        if u64::from(width) * u64::from(height) > max_pixels {
            return Err(ImageError::TooLarge {
                width,
                height,
                max_pixels,
            });
        }
        let size = reader.output_buffer_size().ok_or(ImageError::Overflow)?;
        let mut buf = vec![0; size];
        let frame = reader.next_frame(&mut buf).map_err(bad)?;
        let channels = match frame.color_type {
            png::ColorType::Rgb => 3,
            png::ColorType::Rgba => 4,
            png::ColorType::Grayscale => 1,
            png::ColorType::GrayscaleAlpha => 2,
            png::ColorType::Indexed => return Err(ImageError::Indexed),
        };
        let mut rgb = Vec::with_capacity((width * height * 3) as usize);
        for px in buf[..frame.buffer_size()].chunks_exact(channels) {
            match channels {
                1 | 2 => rgb.extend_from_slice(&[px[0], px[0], px[0]]),
                _ => rgb.extend_from_slice(&px[..3]),
            }
        }
        Ok(Image { width, height, rgb })
    }

    /// Writes it as a PNG file.
    pub(crate) fn save(&self, path: &Path) -> Result<(), ImageError> {
        let bytes = self.png()?;
        std::fs::write(path, bytes).map_err(|source| ImageError::Write {
            path: path.to_path_buf(),
            source,
        })
    }

    /// A copy with every control of `controls` boxed and labelled by its id.
    pub(crate) fn annotated(&self, controls: &[Control]) -> Image {
        let labels: Vec<(&str, Rect)> = controls.iter().map(|c| (c.id.as_str(), c.rect)).collect();
        self.labelled(&labels)
    }

    /// A copy with every rectangle of `labels` boxed and labelled.
    pub(crate) fn labelled(&self, labels: &[(&str, Rect)]) -> Image {
        let mut out = self.clone();
        for (i, (label, rect)) in labels.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            out.outline(*rect, colour);
            out.label(*rect, label, colour);
        }
        out
    }

    /// A copy whose longer side is at most `max_side` pixels (averaging the pixels each
    /// new one covers); the image itself when it is that small already.
    pub(crate) fn bounded(&self, max_side: u32) -> std::borrow::Cow<'_, Image> {
        let longer = self.width.max(self.height);
        if max_side == 0 || longer <= max_side || self.width == 0 || self.height == 0 {
            return std::borrow::Cow::Borrowed(self);
        }
        let scale = f64::from(longer) / f64::from(max_side);
        let width = ((f64::from(self.width) / scale).round() as u32).max(1);
        let height = ((f64::from(self.height) / scale).round() as u32).max(1);
        std::borrow::Cow::Owned(self.resized(width, height))
    }

    /// A copy of `width` x `height` pixels (each new pixel the average of the source
    /// pixels it covers; upscaled, each source pixel repeated).
    pub(crate) fn resized(&self, width: u32, height: u32) -> Image {
        let (width, height) = (width.max(1), height.max(1));
        if (width, height) == (self.width, self.height) || self.width == 0 || self.height == 0 {
            return self.clone();
        }
        let mut out = Image::new(width, height);
        for y in 0..height {
            let (y0, y1) = span(y, height, self.height);
            for x in 0..width {
                let (x0, x1) = span(x, width, self.width);
                let mut sum = [0u64; 3];
                for sy in y0..y1 {
                    for sx in x0..x1 {
                        let i = ((sy * self.width + sx) * 3) as usize;
                        for (c, total) in sum.iter_mut().enumerate() {
                            *total += u64::from(self.rgb[i + c]);
                        }
                    }
                }
                let n = u64::from((y1 - y0) * (x1 - x0)).max(1);
                let o = ((y * width + x) * 3) as usize;
                for (c, total) in sum.iter().enumerate() {
                    out.rgb[o + c] = (total / n) as u8;
                }
            }
        }
        out
    }

    /// The part of the image `rect` covers (clipped to the image; an empty image when
    /// they do not meet).
    pub(crate) fn cropped(&self, rect: Rect) -> Image {
        let x0 = rect.x.clamp(0, self.width as i32) as u32;
        let y0 = rect.y.clamp(0, self.height as i32) as u32;
        let x1 = rect.right().clamp(0, self.width as i32) as u32;
        let y1 = rect.bottom().clamp(0, self.height as i32) as u32;
        let (w, h) = (x1.saturating_sub(x0), y1.saturating_sub(y0));
        let mut rgb = Vec::with_capacity((w * h * 3) as usize);
        for y in y0..y1 {
            let from = ((y * self.width + x0) * 3) as usize;
            rgb.extend_from_slice(&self.rgb[from..from + (w * 3) as usize]);
        }
        Image {
            width: w,
            height: h,
            rgb,
        }
    }

    /// This image at the top left of a black `width` x `height` canvas.
    pub(crate) fn on_canvas(&self, width: u32, height: u32) -> Image {
        let mut out = Image::new(width, height);
        for y in 0..self.height.min(height) {
            let w = self.width.min(width) as usize * 3;
            let from = (y * self.width * 3) as usize;
            let to = (y * width * 3) as usize;
            out.rgb[to..to + w].copy_from_slice(&self.rgb[from..from + w]);
        }
        out
    }

    fn put(&mut self, x: i64, y: i64, colour: [u8; 3]) {
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return;
        }
        let at = ((y as u64 * u64::from(self.width) + x as u64) * 3) as usize;
        self.rgb[at..at + 3].copy_from_slice(&colour);
    }

    fn fill(&mut self, x: i64, y: i64, w: i64, h: i64, colour: [u8; 3]) {
        for yy in y.max(0)..(y + h).min(i64::from(self.height)) {
            for xx in x.max(0)..(x + w).min(i64::from(self.width)) {
                self.put(xx, yy, colour);
            }
        }
    }

    /// A two-pixel box along `rect`'s edges.
    fn outline(&mut self, rect: Rect, colour: [u8; 3]) {
        let (x, y, w, h) = (
            i64::from(rect.x),
            i64::from(rect.y),
            i64::from(rect.width),
            i64::from(rect.height),
        );
        self.fill(x, y, w, 2, colour);
        self.fill(x, y + h - 2, w, 2, colour);
        self.fill(x, y, 2, h, colour);
        self.fill(x + w - 2, y, 2, h, colour);
    }

    /// `text` in white on a box of `colour` at the top left corner of `rect`.
    fn label(&mut self, rect: Rect, text: &str, colour: [u8; 3]) {
        let glyph_w = (GLYPH_W + 1) * SCALE;
        let w = i64::from(glyph_w * text.chars().count() as u32 + SCALE);
        let h = i64::from((GLYPH_H + 2) * SCALE);
        let (x, y) = (i64::from(rect.x), i64::from(rect.y));
        self.fill(x, y, w, h, colour);
        for (i, c) in text.chars().enumerate() {
            let Some(rows) = glyph(c) else { continue };
            let gx = x + i64::from(SCALE + i as u32 * glyph_w);
            let gy = y + i64::from(SCALE);
            for (row, bits) in rows.iter().enumerate() {
                for col in 0..GLYPH_W {
                    if bits & (1 << (GLYPH_W - 1 - col)) != 0 {
                        self.fill(
                            gx + i64::from(col * SCALE),
                            gy + (row as i64) * i64::from(SCALE),
                            i64::from(SCALE),
                            i64::from(SCALE),
                            [255, 255, 255],
                        );
                    }
                }
            }
        }
    }
}

/// The source pixels `[from, to)` that new pixel `i` of `new` covers, of `old` in all.
fn span(i: u32, new: u32, old: u32) -> (u32, u32) {
    let from = (u64::from(i) * u64::from(old) / u64::from(new)) as u32;
    let to = ((u64::from(i) + 1) * u64::from(old) / u64::from(new)) as u32;
    (from.min(old - 1), to.clamp(from + 1, old))
}

/// Glyph size in font dots.
const GLYPH_W: u32 = 3;
const GLYPH_H: u32 = 5;

/// The dots of a label character (labels are numbers), a row of 3 bits per line.
fn glyph(c: char) -> Option<[u8; GLYPH_H as usize]> {
    Some(match c {
        '0' => [0b111, 0b101, 0b101, 0b101, 0b111],
        '1' => [0b010, 0b110, 0b010, 0b010, 0b111],
        '2' => [0b111, 0b001, 0b111, 0b100, 0b111],
        '3' => [0b111, 0b001, 0b111, 0b001, 0b111],
        '4' => [0b101, 0b101, 0b111, 0b001, 0b001],
        '5' => [0b111, 0b100, 0b111, 0b001, 0b111],
        '6' => [0b111, 0b100, 0b111, 0b101, 0b111],
        '7' => [0b111, 0b001, 0b010, 0b010, 0b010],
        '8' => [0b111, 0b101, 0b111, 0b101, 0b111],
        '9' => [0b111, 0b101, 0b111, 0b001, 0b111],
        '-' => [0b000, 0b000, 0b111, 0b000, 0b000],
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desktop::control::ControlType;

    fn control(id: &str, rect: Rect) -> Control {
        Control {
            id: id.into(),
            name: "OK".into(),
            control_type: ControlType::Button,
            rect,
            editable: false,
            enabled: true,
            handle: 0,
        }
    }

    fn pixel(image: &Image, x: u32, y: u32) -> [u8; 3] {
        let at = ((y * image.width + x) * 3) as usize;
        [image.rgb[at], image.rgb[at + 1], image.rgb[at + 2]]
    }

    #[test]
    fn annotation_boxes_each_control_and_draws_its_label() {
        let image = Image::new(100, 60);
        let rect = Rect {
            x: 10,
            y: 10,
            width: 50,
            height: 30,
        };
        let out = image.annotated(&[control("17", rect)]);
        // The box's edges are drawn, its inside is not.
        assert_eq!(pixel(&out, 59, 30), COLOURS[0]);
        assert_eq!(pixel(&out, 30, 39), COLOURS[0]);
        assert_eq!(pixel(&out, 40, 30), [0, 0, 0]);
        // The label: white dots of "1" and "7" on the colour box at the top left.
        let white = (10..40)
            .flat_map(|x| (10..32).map(move |y| (x, y)))
            .filter(|&(x, y)| pixel(&out, x, y) == [255, 255, 255])
            .count();
        // "1" has 8 dots and "7" 7, each SCALE x SCALE pixels.
        assert_eq!(white, (8 + 7) * (SCALE * SCALE) as usize);
        // The original is untouched.
        assert!(image.rgb.iter().all(|&b| b == 0));
    }

    #[test]
    fn boxes_off_the_image_are_clipped() {
        let image = Image::new(20, 20);
        let rect = Rect {
            x: -10,
            y: 15,
            width: 100,
            height: 100,
        };
        let out = image.annotated(&[control("3", rect)]);
        assert_eq!(out.rgb.len(), image.rgb.len());
    }

    #[test]
    fn a_large_image_is_scaled_down_to_its_bound() {
        let mut image = Image::new(1280, 800);
        image.rgb.iter_mut().for_each(|b| *b = 200);
        let small = image.bounded(640);
        assert_eq!((small.width, small.height), (640, 400));
        assert_eq!(pixel(&small, 10, 10), [200, 200, 200]);
        assert!(matches!(image.bounded(2000), std::borrow::Cow::Borrowed(_)));
        let tall = Image::new(3, 1000);
        let odd = tall.bounded(7);
        assert_eq!((odd.width, odd.height), (1, 7));
    }

    #[test]
    fn a_png_decodes_to_the_image_it_was() {
        let mut image = Image::new(30, 10);
        image.rgb[3..6].copy_from_slice(&[1, 2, 3]);
        let back = Image::from_png(&image.png().unwrap(), 1000).unwrap();
        assert_eq!(back, image);
        let large = Image::from_png(&image.png().unwrap(), 100).unwrap_err();
        assert_eq!(
            large.to_string(),
            "a PNG of 30x10 is larger than 100 pixels"
        );
        let garbage = Image::from_png(b"not a png", 1000).unwrap_err();
        assert!(matches!(garbage, ImageError::Decode(_)), "{garbage}");
    }

    #[test]
    fn a_screenshot_that_cannot_be_saved_is_the_machines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no-such-folder").join("shot.png");
        let e = Image::new(2, 2).save(&path).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("cannot write {}: ", path.display())),
            "{e}"
        );
        let e = DesktopError::from(e);
        assert!(matches!(e, DesktopError::Desktop { .. }));
        let failure = e.failure();
        assert_eq!(failure.blame, Blame::Environment);
        // The io error's words appear once.
        assert_eq!(failure.message, e.to_string());
    }

    #[test]
    fn png_round_trips() {
        let mut image = Image::new(4, 3);
        image.rgb[0] = 200;
        let bytes = image.png().unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (4, 3));
        assert_eq!(buf[0], 200);
    }
}
