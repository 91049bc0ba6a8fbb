//! Spreadsheet cells, read with `calamine`: `A1` references, a cell's value as text (the
//! value a formula last computed, as the office program saved it), and a workbook's text.

use std::fmt;
use std::io::Cursor;

use calamine::{Data, Reader, open_workbook_auto_from_rs};

use super::DocumentError;

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
}
