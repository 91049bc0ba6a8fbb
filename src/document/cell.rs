//! Spreadsheet cells, read with `calamine`: `A1` references, a cell's value as text (the
//! value a formula last computed, as the office program saved it), and a workbook's text.
//! An `.xlsx` sheet is read a cell at a time, sized by the cells it holds: a grid as large
//! as its extent (or as its `dimension` header says) is never made, so a valid sheet with
//! two cells at A1 and XFD1048576 reads in a moment rather than asking for gigabytes.

use std::fmt;
use std::io::Cursor;

use calamine::{Data, Reader, Sheets, Xlsx, open_workbook_auto_from_rs};

use super::{DocumentError, TEXT_LIMIT};

/// A cell's position (row, column, from 0) and value.
type Placed = ((u32, u32), Data);

/// The cells an `.xlsx` sheet holds, in the order the file has them (by row), with their
/// values; none that are empty.
fn xlsx_cells(book: &mut Xlsx<Cursor<&[u8]>>, name: &str) -> Result<Vec<Placed>, DocumentError> {
    let invalid = |e| DocumentError::invalid("spreadsheet", e);
    let mut reader = book.worksheet_cells_reader(name).map_err(invalid)?;
    let mut cells = Vec::new();
    while let Some(cell) = reader.next_cell().map_err(invalid)? {
        let value = Data::from(cell.get_value().clone());
        // An empty text (a formula's "") shows as nothing, as an empty cell does.
        if !show(&value).is_empty() {
            cells.push((cell.get_position(), value));
        }
    }
    Ok(cells)
}

/// `cells` as the rows of the block from the first row and column that hold a cell to
/// the last (as calamine's grid of the sheet has them): tab-separated values, each row
/// ending in a line feed, the rows between them empty lines; more than a check reads is
/// refused as soon as it is.
fn rows_text(out: &mut String, mut cells: Vec<Placed>) -> Result<(), DocumentError> {
    cells.sort_by_key(|(at, _)| *at);
    let (Some(first), Some(left)) = (
        cells.first().map(|(at, _)| at.0),
        cells.iter().map(|(at, _)| at.1).min(),
    ) else {
        return Ok(());
    };
    let too_long = |out: &String| {
        (out.len() > TEXT_LIMIT).then_some(DocumentError::TooLong { bytes: out.len() })
    };
    let (mut row, mut col) = (first, left);
    for ((r, c), value) in cells {
        while row < r {
            out.push('\n');
            (row, col) = (row + 1, left);
            if let Some(e) = too_long(out) {
                return Err(e);
            }
        }
        while col < c {
            out.push('\t');
            col += 1;
        }
        out.push_str(&show(&value));
        if let Some(e) = too_long(out) {
            return Err(e);
        }
    }
    out.push('\n');
    Ok(())
}

/// A cell by its `A1` reference, counted from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CellRef {
    /// Row (A1 is row 0).
    pub(crate) row: u32,
    /// Column (A is 0).
    pub(crate) col: u32,
}

impl CellRef {
    /// Parses `B3`, `$B$3` or `aa10`.
    pub(crate) fn parse(text: &str) -> Result<Self, BadCellRef> {
        let bad = || BadCellRef {
            text: text.to_string(),
        };
        let t: String = text.trim().chars().filter(|&c| c != '$').collect();
        let split = t.find(|c: char| c.is_ascii_digit()).ok_or_else(bad)?;
        let (letters, digits) = t.split_at(split);
        if letters.is_empty()
            || letters.len() > 3
            || !letters.chars().all(|c| c.is_ascii_alphabetic())
        {
            return Err(bad());
        }
        let col = letters.chars().fold(0u32, |n, c| {
            n * 26 + (c.to_ascii_uppercase() as u32 - 'A' as u32 + 1)
        }) - 1;
        let row: u32 = digits.parse().map_err(|_| bad())?;
        if row == 0 || row > 1_048_576 || col >= 16_384 {
            return Err(bad());
        }
        Ok(Self { row: row - 1, col })
    }
}

/// A text that is not a cell reference.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a cell reference like \"B3\"")]
pub(crate) struct BadCellRef {
    /// The text given.
    text: String,
}

impl fmt::Display for CellRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut letters = Vec::new();
        let mut n = self.col + 1;
        while n > 0 {
            let rem = (n - 1) % 26;
            letters.push((b'A' + rem as u8) as char);
            n = (n - 1) / 26;
        }
        letters.reverse();
        write!(
            f,
            "{}{}",
            letters.into_iter().collect::<String>(),
            self.row + 1
        )
    }
}

/// The value of `cell` on `sheet` (the first sheet when `None`) as text: numbers as the
/// shortest decimal that reads back the same, booleans as TRUE/FALSE, errors as `#DIV/0!`
/// and the like, an empty cell as "".
pub(crate) fn cell_value(
    bytes: &[u8],
    sheet: Option<&str>,
    cell: CellRef,
) -> Result<String, DocumentError> {
    let mut book = open_workbook_auto_from_rs(Cursor::new(bytes))
        .map_err(|e| DocumentError::invalid("spreadsheet", e))?;
    let names = book.sheet_names();
    let name = match sheet {
        None => names
            .first()
            .cloned()
            .ok_or_else(|| DocumentError::invalid("spreadsheet", "it has no sheet"))?,
        Some(s) => names
            .iter()
            .find(|n| n.as_str() == s)
            .cloned()
            .ok_or_else(|| DocumentError::NoSheet {
                wanted: s.to_string(),
                have: names.clone(),
            })?,
    };
    if let Sheets::Xlsx(xlsx) = &mut book {
        let cells = xlsx_cells(xlsx, &name)?;
        return Ok(cells
            .into_iter()
            .find(|(at, _)| *at == (cell.row, cell.col))
            .map(|(_, v)| show(&v))
            .unwrap_or_default());
    }
    let range = book
        .worksheet_range(&name)
        .map_err(|e| DocumentError::invalid("spreadsheet", e))?;
    Ok(range
        .get_value((cell.row, cell.col))
        .map(show)
        .unwrap_or_default())
}

/// Every sheet: its name, then its rows, cells separated by tabs.
pub(super) fn workbook_text(bytes: &[u8]) -> Result<String, DocumentError> {
    let mut book = open_workbook_auto_from_rs(Cursor::new(bytes))
        .map_err(|e| DocumentError::invalid("spreadsheet", e))?;
    let mut out = String::new();
    for name in book.sheet_names() {
        if let Sheets::Xlsx(xlsx) = &mut book {
            out.push_str(&name);
            out.push('\n');
            rows_text(&mut out, xlsx_cells(xlsx, &name)?)?;
            continue;
        }
        let range = book
            .worksheet_range(&name)
            .map_err(|e| DocumentError::invalid("spreadsheet", e))?;
        out.push_str(&name);
        out.push('\n');
        for row in range.rows() {
            let cells: Vec<String> = row.iter().map(show).collect();
            out.push_str(cells.join("\t").trim_end_matches('\t'));
            out.push('\n');
        }
    }
    Ok(out)
}

/// A cell's value as a person reads it.
fn show(data: &Data) -> String {
    match data {
        Data::Empty => String::new(),
        Data::String(s) => s.clone(),
        Data::Float(f) => number(*f),
        Data::Int(i) => i.to_string(),
        Data::Bool(b) => if *b { "TRUE" } else { "FALSE" }.to_string(),
        Data::Error(e) => e.to_string(),
        Data::DateTime(d) => number(d.as_f64()),
        Data::DateTimeIso(s) | Data::DurationIso(s) => s.clone(),
    }
}

/// `3` for 3.0, `0.1` for 0.1 (Rust's shortest round-trip form).
fn number(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        f.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_read_and_print_back() {
        for (text, row, col) in [("A1", 0, 0), ("b3", 2, 1), ("$Z$10", 9, 25), ("AA1", 0, 26)] {
            let c = CellRef::parse(text).unwrap();
            assert_eq!((c.row, c.col), (row, col), "{text}");
            assert_eq!(c.to_string(), text.replace('$', "").to_uppercase());
        }
        for bad in ["", "A", "1", "A0", "3B", "ABCD1", "A1B"] {
            assert!(CellRef::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            CellRef::parse(" A0").unwrap_err().to_string(),
            r#"" A0" is not a cell reference like "B3""#
        );
    }

    #[test]
    fn numbers_show_as_people_write_them() {
        assert_eq!(number(3.0), "3");
        assert_eq!(number(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(number(-12.5), "-12.5");
    }

    /// A valid `.xlsx` of one sheet whose `dimension` says `dimension` and whose cells
    /// are `cells` (reference, inline text).
    fn xlsx(dimension: &str, cells: &[(&str, &str)]) -> Vec<u8> {
        use std::io::Write;
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let mut put = |name: &str, text: &str| {
            zip.start_file(name, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(text.as_bytes()).unwrap();
        };
        put(
            "[Content_Types].xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#,
        );
        put(
            "_rels/.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#,
        );
        put(
            "xl/workbook.xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Budget" sheetId="1" r:id="rId1"/></sheets></workbook>"#,
        );
        put(
            "xl/_rels/workbook.xml.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#,
        );
        let mut rows = String::new();
        for (at, text) in cells {
            let row: String = at.chars().filter(char::is_ascii_digit).collect();
            rows.push_str(&format!(
                r#"<row r="{row}"><c r="{at}" t="inlineStr"><is><t>{text}</t></is></c></row>"#
            ));
        }
        put(
            "xl/worksheets/sheet1.xml",
            &format!(
                r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="{dimension}"/><sheetData>{rows}</sheetData></worksheet>"#
            ),
        );
        zip.finish().unwrap().into_inner()
    }

    #[test]
    fn a_sheet_is_sized_by_its_cells_not_by_its_extent_or_its_header() {
        // Two cells at the sheet's two corners, and a header that says so: 1.4 KB.
        let corners = xlsx("A1:XFD1048576", &[("A1", "first"), ("XFD1048576", "last")]);
        assert!(corners.len() < 4096, "{}", corners.len());
        let at = |r| CellRef::parse(r).unwrap();
        assert_eq!(cell_value(&corners, None, at("A1")).unwrap(), "first");
        assert_eq!(
            cell_value(&corners, Some("Budget"), at("XFD1048576")).unwrap(),
            "last"
        );
        assert_eq!(cell_value(&corners, None, at("B2")).unwrap(), "");
        let text = workbook_text(&corners).unwrap();
        assert!(text.starts_with("Budget\nfirst\n\n"), "{}", &text[..40]);
        assert!(text.ends_with(&format!("{}last\n", "\t".repeat(16_383))));
        assert_eq!(text.lines().count(), 1 + 1_048_576);
        // A header that lies the other way changes nothing either.
        let small = xlsx("A1", &[("B2", "x"), ("C4", "y")]);
        assert_eq!(workbook_text(&small).unwrap(), "Budget\nx\n\n\ty\n");
    }
}
