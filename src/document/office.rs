//! The text of word-processing and presentation files: the XML parts inside their zip,
//! read element by element. A paragraph ends a line; tabs and line breaks are kept.

use std::io::{Read, Seek};

use quick_xml::Reader;
use quick_xml::events::Event;

use super::DocumentError;

/// The most bytes one XML part may unpack to (a zip bomb stops here).
const PART_LIMIT: u64 = 64 << 20;

/// How a format marks text, paragraphs, tabs and breaks (local names).
struct Markup {
    kind: &'static str,
    /// Elements whose character content is text.
    text: &'static [&'static str],
    /// Elements that end a paragraph.
    paragraph: &'static [&'static str],
    /// Empty elements that stand for a tab.
    tab: &'static [&'static str],
    /// Empty elements that stand for a line break.
    line_break: &'static [&'static str],
}

const WORD: Markup = Markup {
    kind: "Word (.docx)",
    text: &["t"],
    paragraph: &["p"],
    tab: &["tab"],
    line_break: &["br", "cr"],
};

const SLIDES: Markup = Markup {
    kind: "PowerPoint (.pptx)",
    text: &["t"],
    paragraph: &["p"],
    tab: &[],
    line_break: &["br"],
};

const ODF: Markup = Markup {
    kind: "OpenDocument",
    text: &["p", "h", "span", "a"],
    paragraph: &["p", "h"],
    tab: &["tab"],
    line_break: &["line-break"],
};

/// The text of a `.docx`: `word/document.xml`.
pub(super) fn docx_text(file: impl Read + Seek) -> Result<String, DocumentError> {
    let mut zip = open(file, WORD.kind)?;
    let xml = part(&mut zip, "word/document.xml", WORD.kind)?;
    xml_text(&xml, &WORD)
}

/// The text of a `.pptx`: its slides in order.
pub(super) fn pptx_text(file: impl Read + Seek) -> Result<String, DocumentError> {
    let mut zip = open(file, SLIDES.kind)?;
    let mut slides: Vec<(u32, String)> = zip
        .file_names()
        .filter_map(|name| {
            let name = name.ok()?;
            let n = name
                .strip_prefix("ppt/slides/slide")?
                .strip_suffix(".xml")?
                .parse()
                .ok()?;
            Some((n, name.to_string()))
        })
        .collect();
    slides.sort();
    let mut out = String::new();
    for (_, name) in slides {
        let xml = part(&mut zip, &name, SLIDES.kind)?;
        out.push_str(&xml_text(&xml, &SLIDES)?);
    }
    Ok(out)
}

/// The text of an OpenDocument file: `content.xml`.
pub(super) fn odf_text(file: impl Read + Seek) -> Result<String, DocumentError> {
    let mut zip = open(file, ODF.kind)?;
    let xml = part(&mut zip, "content.xml", ODF.kind)?;
    xml_text(&xml, &ODF)
}

fn open<R: Read + Seek>(file: R, kind: &'static str) -> Result<zip::ZipArchive<R>, DocumentError> {
    zip::ZipArchive::new(file).map_err(|e| DocumentError::invalid(kind, e))
}

fn part<R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    name: &str,
    kind: &'static str,
) -> Result<Vec<u8>, DocumentError> {
    let entry = zip
        .by_name(name)
        .map_err(|_| DocumentError::invalid(kind, format!("it has no {name}")))?;
    let mut bytes = Vec::new();
    entry
        .take(PART_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| DocumentError::invalid(kind, e))?;
    if bytes.len() as u64 > PART_LIMIT {
        return Err(DocumentError::invalid(
            kind,
            format!("{name} unpacks to more than {} MiB", PART_LIMIT >> 20),
        ));
    }
    Ok(bytes)
}

/// The text of one XML part.
fn xml_text(xml: &[u8], markup: &Markup) -> Result<String, DocumentError> {
    let mut reader = Reader::from_reader(xml);
    let mut out = String::new();
    // How many text elements we are inside.
    let mut depth_in_text = 0usize;
    let mut buf = Vec::new();
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| DocumentError::invalid(markup.kind, e))?;
        match event {
            Event::Start(e) if markup.text.contains(&e.local_name().as_ref()) => {
                depth_in_text += 1;
            }
            Event::Empty(e) => {
                let local = e.local_name();
                let name = local.as_ref();
                if markup.tab.contains(&name) {
                    out.push('\t');
                } else if markup.line_break.contains(&name) || markup.paragraph.contains(&name) {
                    out.push('\n');
                } else if name == "s" && markup.kind == ODF.kind {
                    // `<text:s text:c="3"/>`: that many spaces.
                    let n = e
                        .try_get_attribute("text:c")
                        .ok()
                        .flatten()
                        .and_then(|a| a.value.parse().ok())
                        .unwrap_or(1usize);
                    out.push_str(&" ".repeat(n.min(1000)));
                }
            }
            Event::End(e) => {
                let local = e.local_name();
                let name = local.as_ref();
                if markup.text.contains(&name) {
                    depth_in_text = depth_in_text.saturating_sub(1);
                }
                if markup.paragraph.contains(&name) {
                    out.push('\n');
                }
            }
            Event::Text(t) if depth_in_text > 0 => {
                out.push_str(&t.xml10_content());
            }
            Event::GeneralRef(r) if depth_in_text > 0 => {
                out.push_str(match &*r {
                    "amp" => "&",
                    "lt" => "<",
                    "gt" => ">",
                    "quot" => "\"",
                    "apos" => "'",
                    _ => "",
                });
                if let Ok(Some(c)) = r.resolve_char_ref() {
                    out.push(c);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    Ok(out)
}
