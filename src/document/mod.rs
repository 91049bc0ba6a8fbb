//! Reading the documents desktop tasks make, for checks: the text of a `.docx`, `.odt`,
//! `.pptx`, `.odp`, spreadsheet or plain-text file, and the value of a spreadsheet cell.
//! Office files are read with `zip` and `quick-xml` (text) and `calamine` (cells), never
//! by starting an office program.

mod cell;
mod child;
mod office;

use std::io::Cursor;
use std::path::Path;

pub(crate) use cell::{BadCellRef, CellRef, cell_value};
pub(crate) use child::{Read, ReaderError, TEXT_LIMIT, read_in_child};

/// Why a document cannot be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DocumentError {
    /// Not a kind of document this reads.
    #[error(
        "cannot read the text of a `.{0}` file (documents: .docx .odt .pptx .odp .xlsx .xls .ods .csv .txt)"
    )]
    Unsupported(String),
    /// The file is not what its name says.
    #[error("not a valid {kind} file: {why}")]
    Invalid {
        /// What it should be.
        kind: &'static str,
        /// What is wrong.
        why: String,
    },
    /// No such sheet.
    #[error("no sheet named {wanted:?}; the workbook has {}", have.join(", "))]
    NoSheet {
        /// The sheet asked for.
        wanted: String,
        /// The sheets there are.
        have: Vec<String>,
    },
    /// The cell asked for is not a cell reference.
    #[error(transparent)]
    Cell(#[from] BadCellRef),
    /// The document could not be read from where it was given (the reader's input).
    #[error(transparent)]
    Input(#[from] std::io::Error),
    /// Its text is longer than a check reads.
    #[error(
        "its text is {} MiB, more than the {} MiB a check reads",
        bytes >> 20,
        TEXT_LIMIT >> 20
    )]
    TooLong {
        /// The text's length in bytes.
        bytes: usize,
    },
}

impl DocumentError {
    fn invalid(kind: &'static str, why: impl ToString) -> Self {
        Self::Invalid {
            kind,
            why: why.to_string(),
        }
    }
}

/// The extension of `path`, lower case.
fn extension(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

/// The text of the document in `bytes`, read as its name `path` says: paragraphs on
/// lines of their own; for spreadsheets, each sheet's name on a line, then its rows with
/// cells separated by tabs.
pub(crate) fn text_of(path: &Path, bytes: &[u8]) -> Result<String, DocumentError> {
    match extension(path).as_str() {
        "docx" | "docm" => office::docx_text(Cursor::new(bytes)),
        "pptx" | "pptm" => office::pptx_text(Cursor::new(bytes)),
        "odt" | "odp" | "odg" => office::odf_text(Cursor::new(bytes)),
        "xlsx" | "xlsm" | "xls" | "xlsb" | "ods" => cell::workbook_text(bytes),
        "txt" | "csv" | "md" | "text" | "tsv" | "" => {
            Ok(String::from_utf8_lossy(bytes).into_owned())
        }
        other => Err(DocumentError::Unsupported(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// Documents LibreOffice 7.4 wrote (`soffice --convert-to` of an HTML page and of a
    /// flat spreadsheet with a `=SUM()`).
    fn fixture(name: &str) -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/documents")
            .join(name);
        std::fs::read(path).unwrap()
    }

    #[test]
    fn word_processing_text_keeps_paragraphs_and_entities() {
        for name in ["doc.docx", "doc.odt"] {
            let text = text_of(Path::new(name), &fixture(name)).unwrap();
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            assert_eq!(
                lines,
                [
                    "Quarterly report",
                    "Sales & costs rose by 5%.",
                    "Second paragraph"
                ],
                "{name}: {text:?}"
            );
        }
    }

    #[test]
    fn spreadsheets_give_cells_and_computed_formulas() {
        for name in ["book.xlsx", "book.ods"] {
            let bytes = fixture(name);
            let b4 = CellRef::parse("B4").unwrap();
            assert_eq!(cell_value(&bytes, None, b4).unwrap(), "42.5", "{name}");
            assert_eq!(
                cell_value(&bytes, Some("Sales"), CellRef::parse("A2").unwrap()).unwrap(),
                "Pens"
            );
            assert_eq!(
                cell_value(&bytes, Some("Notes"), CellRef::parse("A1").unwrap()).unwrap(),
                "checked"
            );
            assert_eq!(
                cell_value(&bytes, None, CellRef::parse("Z99").unwrap()).unwrap(),
                ""
            );
            let e = cell_value(&bytes, Some("Costs"), b4)
                .unwrap_err()
                .to_string();
            assert_eq!(
                e,
                r#"no sheet named "Costs"; the workbook has Sales, Notes"#
            );
            let text = text_of(Path::new(name), &bytes).unwrap();
            assert!(
                text.starts_with(
                    "Sales\nItem\tAmount\nPens\t12.5\nPaper\t30\nTotal\t42.5\nNotes\nchecked\n"
                ),
                "{name}: {text:?}"
            );
        }
    }

    #[test]
    fn slides_are_read_in_order() {
        let mut bytes = Vec::new();
        {
            let mut zip = zip::ZipWriter::new(std::io::Cursor::new(&mut bytes));
            let options = zip::write::SimpleFileOptions::default();
            for (n, text) in [(10, "last"), (2, "second"), (1, "first")] {
                zip.start_file(format!("ppt/slides/slide{n}.xml"), options)
                    .unwrap();
                write!(zip, r#"<p:sld xmlns:p="p" xmlns:a="a"><a:p><a:r><a:t>{text}</a:t></a:r></a:p></p:sld>"#).unwrap();
            }
            zip.finish().unwrap();
        }
        assert_eq!(
            text_of(Path::new("deck.pptx"), &bytes).unwrap(),
            "first\nsecond\nlast\n"
        );
    }

    #[test]
    fn wrong_files_are_clear_errors() {
        let e = text_of(Path::new("x.docx"), b"plain text")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("not a valid Word (.docx) file: "), "{e}");
        let e = cell_value(b"nope", None, CellRef::parse("A1").unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("not a valid spreadsheet file: "), "{e}");
        assert!(
            text_of(Path::new("x.pdf"), b"")
                .unwrap_err()
                .to_string()
                .starts_with("cannot read the text of a `.pdf` file")
        );
        assert_eq!(text_of(Path::new("a.txt"), b"hi\n").unwrap(), "hi\n");
    }
}
