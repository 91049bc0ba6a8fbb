//! Checks on documents: `document_contains` on the text of Word, OpenDocument and
//! spreadsheet files, and `cell_equals` on spreadsheet cells, with files LibreOffice
//! wrote, given to tasks as UFO gives them (`object`, from the project's `files/`).
//! Documents are read in a child process with bounded memory: a hostile one fails its
//! check, not the runner.

use serde_json::json;

use crate::helpers::Project;

/// A fixture document's bytes.
fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/documents")
            .join(name),
    )
    .unwrap()
}

fn project_with(objects: &[&str]) -> Project {
    let p = Project::new();
    for name in objects {
        let path = p.path().join("files").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, fixture(name)).unwrap();
    }
    p
}

fn task(object: &str, evaluate: serde_json::Value) -> serde_json::Value {
    json!({"request": "check the document", "object": object,
        "actions": [{"action": "execute_command", "parameters": {"command": "true"}}],
        "evaluate": evaluate})
}

#[test]
fn documents_and_cells_are_checked_in_every_format() {
    let p = project_with(&["book.xlsx", "book.ods", "doc.docx", "doc.odt"]);
    for book in ["book.xlsx", "book.ods"] {
        let name = book.replace('.', "_");
        p.task(
            &format!("{name}.json"),
            task(
                book,
                json!([
                    {"type": "cell_equals", "path": book, "cell": "B4", "value": 42.5},
                    {"type": "cell_equals", "path": book, "sheet": "Sales", "cell": "A2", "value": "Pens"},
                    {"type": "cell_equals", "path": book, "sheet": "Notes", "cell": "A1", "value": "checked"},
                    {"type": "document_contains", "path": book, "pattern": "^Total\t42.5$"}
                ]),
            ),
        );
    }
    for doc in ["doc.docx", "doc.odt"] {
        let name = doc.replace('.', "_");
        p.task(
            &format!("{name}.json"),
            task(
                doc,
                json!([{"type": "document_contains", "path": doc,
                    "pattern": "^Quarterly report$[\\s\\S]*^Sales & costs rose by 5%\\.$"}]),
            ),
        );
    }
    let out = p.run(&[]);
    out.expect_code(0);
    for id in ["book_xlsx", "book_ods", "doc_docx", "doc_odt"] {
        assert_eq!(out.status_of(id), "passed", "{id}");
    }
}

#[test]
fn a_failed_document_check_says_what_the_document_holds() {
    let p = project_with(&["book.xlsx", "doc.docx"]);
    p.task(
        "cell.json",
        task(
            "book.xlsx",
            json!([{"type": "cell_equals", "path": "book.xlsx", "cell": "B4", "value": 40}]),
        ),
    )
    .task(
        "sheet.json",
        task(
            "book.xlsx",
            json!([{"type": "cell_equals", "path": "book.xlsx", "sheet": "Costs", "cell": "B4", "value": 1}]),
        ),
    )
    .task(
        "text.json",
        task(
            "doc.docx",
            json!([{"type": "document_contains", "path": "doc.docx", "pattern": "Annual"}]),
        ),
    )
    .task(
        "notdocx.json",
        json!({"request": "r", "files": {"fake.docx": "plain text"},
            "actions": [{"action": "execute_command", "parameters": {"command": "true"}}],
            "evaluate": [{"type": "document_contains", "path": "fake.docx", "pattern": "x"}]}),
    );
    let out = p.run(&[]);
    out.expect_code(1);
    let error = |id: &str| out.status(id)["error"].as_str().unwrap().to_string();
    assert_eq!(
        error("cell"),
        "check failed: cell_equals book.xlsx B4: `book.xlsx` cell B4 is \"42.5\", expected 40"
    );
    assert_eq!(
        error("sheet"),
        "check failed: cell_equals book.xlsx Costs!B4: `book.xlsx`: no sheet named \"Costs\"; the workbook has Sales, Notes"
    );
    let text = error("text");
    assert!(
        text.starts_with("check failed: document_contains doc.docx /Annual/: no match for /Annual/ in the text of `doc.docx`")
            && text.contains("Quarterly report"),
        "{text}"
    );
    assert!(
        error("notdocx").contains("`fake.docx`: not a valid Word (.docx) file: "),
        "{}",
        error("notdocx")
    );
}

#[test]
fn validate_names_bad_cells_and_values() {
    let p = Project::new();
    p.task(
        "t.json",
        json!({"request": "r", "actions": [{"action": "execute_command", "parameters": {"command": "true"}}],
            "evaluate": [{"type": "cell_equals", "path": "b.xlsx", "cell": "4B", "value": [1]}]}),
    );
    let out = p.cmd(&["validate", "tasks"]);
    out.expect_code(2);
    assert!(
        out.stdout
            .contains("\"4B\" is not a cell reference like \"B3\"")
            && out
                .stdout
                .contains("the value [1] is not a number, text or true/false"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_document_built_to_exhaust_memory_fails_its_check_and_the_batch_goes_on() {
    // 1.5 KB of valid xlsx with cells at A1 and XFD1048576 (its extent the whole
    // sheet): read by its cells, its check is judged as any other.
    // Under 1 MB of xlsx whose one cell holds 700 MB of text: the reader runs in a child
    // with 1 GiB, and only that child fails.
    let p = project_with(&["corners.xlsx", "book.xlsx"]);
    std::fs::write(p.path().join("files/bomb.xlsx"), huge_cell_xlsx(700 << 20)).unwrap();
    p.task(
        "corners.json",
        task(
            "corners.xlsx",
            json!([{"type": "cell_equals", "path": "corners.xlsx", "cell": "XFD1048576", "value": 2}]),
        ),
    )
    .task(
        "bomb.json",
        task(
            "bomb.xlsx",
            json!([{"type": "cell_equals", "path": "bomb.xlsx", "cell": "A1", "value": 1}]),
        ),
    )
    .task(
        "good.json",
        task(
            "book.xlsx",
            json!([{"type": "cell_equals", "path": "book.xlsx", "cell": "B4", "value": 42.5}]),
        ),
    );
    let out = p.run(&["--jobs", "1"]);
    out.expect_code(1);
    assert_eq!(out.status_of("good"), "passed");
    assert_eq!(
        out.status_of("corners"),
        "passed",
        "{}",
        out.status("corners")
    );
    let bomb = out.status("bomb");
    assert_eq!(bomb["status"], "failed", "{bomb}");
    assert!(
        bomb["error"]
            .as_str()
            .unwrap()
            .contains("`bomb.xlsx`: it could not be read within 1024 MiB of memory"),
        "{bomb}"
    );
}

/// A valid xlsx whose cell A1 is an inline text of `bytes` bytes (deflated: a
/// thousandth of that).
fn huge_cell_xlsx(bytes: usize) -> Vec<u8> {
    workbook(|sheet| {
        sheet.write_all(br#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>"#)?;
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..bytes / chunk.len() {
            sheet.write_all(&chunk)?;
        }
        sheet.write_all(b"</t></is></c></row></sheetData></worksheet>")
    })
}

/// A valid xlsx of one sheet `S`, the corners fixture's parts around the sheet
/// `write_sheet` writes (deflated and streamed: a sheet may be hundreds of megabytes).
pub(crate) fn workbook(
    write_sheet: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Vec<u8> {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    // Without zip64 (`large_file`), which LibreOffice does not open: a sheet stays under
    // 4 GiB.
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for name in [
        "[Content_Types].xml",
        "_rels/.rels",
        "xl/workbook.xml",
        "xl/_rels/workbook.xml.rels",
    ] {
        zip.start_file(name, options).unwrap();
        zip.write_all(&corners_part(name)).unwrap();
    }
    zip.start_file("xl/worksheets/sheet1.xml", options).unwrap();
    write_sheet(&mut zip).unwrap();
    zip.finish().unwrap().into_inner()
}

/// A part of the corners fixture (the parts every workbook has).
fn corners_part(name: &str) -> Vec<u8> {
    let bytes = fixture("corners.xlsx");
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut part = archive.by_name(name).unwrap();
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut part, &mut out).unwrap();
    out
}
