//! UFO's Office API tools, the hybrid half of its AppAgent: beside the UI tools, calls of
//! the app's own API, served by UFO on Windows by its COM servers
//! (`../ufo/ufo/client/mcp/local_servers/word_wincom_mcp_server.py`,
//! `excel_wincom_mcp_server.py`, `ppt_wincom_mcp_server.py`). Here: their names and
//! parameters as those servers declare them, which app each is for, and what a call's
//! answer becomes. Carrying them out is the platform's (`Backend::office`): LibreOffice's
//! UNO API on Linux, COM on Windows.

use std::sync::LazyLock;

use serde_json::{Value, json};

use super::app::Known;
use crate::tool::{Bound, Limit, ParamKind, ParamSpec, ToolSpec};

/// The bounds of the arguments that size an Office call's work (docs/desktop.md's
/// table says them): a call beyond one is the agent's failure, told to it before the
/// app is asked. A sheet's rows and columns are Excel's (and Calc's).
pub(crate) const SHEET_ROWS: i64 = 1_048_576;
/// The columns of a sheet (XFD).
pub(crate) const SHEET_COLUMNS: i64 = 16_384;
/// The most cells one call reads or writes (`get_range_values`, `insert_excel_table`,
/// `insert_table`, the block `reorder_columns` rewrites): 100,000 cells of values are
/// megabytes for a model to read, and LibreOffice holds each cell many times over.
pub(crate) const MAX_CELLS: u64 = 100_000;
/// The longest text searched for (`select_text`), a name (a font's, a sheet's) or a
/// file name part (`save_as`).
const MAX_TEXT: usize = 10_000;
const MAX_NAME: usize = 255;
/// The most tables and paragraphs a call may count to, and slides it may name.
const MAX_INDEX: i64 = 100_000;

/// The apps that have API tools, by the key their tools are grouped under.
pub(crate) fn api_of(app: Known) -> Option<&'static str> {
    match app {
        Known::Word => Some("word"),
        Known::Excel => Some("excel"),
        Known::PowerPoint => Some("powerpoint"),
        Known::Notepad => None,
    }
}

/// The tools of each app (UFO's servers'), by name.
const WORD: [&str; 6] = [
    "insert_table",
    "select_text",
    "select_table",
    "select_paragraph",
    "save_as",
    "set_font",
];
const EXCEL: [&str; 5] = [
    "insert_excel_table",
    "select_table_range",
    "save_as",
    "reorder_columns",
    "get_range_values",
];
const POWERPOINT: [&str; 2] = ["set_background_color", "save_as"];

fn names_of(app: Known) -> &'static [&'static str] {
    match app {
        Known::Word => &WORD,
        Known::Excel => &EXCEL,
        Known::PowerPoint => &POWERPOINT,
        Known::Notepad => &[],
    }
}

/// Every API tool, once (`save_as` with the parameters of all three apps'): what task
/// files are checked against.
pub(crate) fn office_tools() -> &'static [ToolSpec] {
    static TOOLS: LazyLock<Vec<ToolSpec>> = LazyLock::new(specs);
    &TOOLS
}

/// Whether `tool` is one of the API tools.
pub(crate) fn is_office_tool(tool: &str) -> bool {
    office_tools().iter().any(|t| t.name == tool)
}

/// The API tools of the app whose API is `api` (`api_of`), as its AppAgent is offered
/// them.
pub(crate) fn tools_of(api: &str) -> Vec<ToolSpec> {
    [Known::Word, Known::Excel, Known::PowerPoint]
        .into_iter()
        .find(|app| api_of(*app) == Some(api))
        .map(tools_for)
        .unwrap_or_default()
}

/// The API tools of `app`, as its AppAgent is offered them.
pub(crate) fn tools_for(app: Known) -> Vec<ToolSpec> {
    let mut tools: Vec<ToolSpec> = names_of(app)
        .iter()
        .filter_map(|name| office_tools().iter().find(|t| t.name == *name).cloned())
        .collect();
    // `current_slide_only` is PowerPoint's alone.
    if app != Known::PowerPoint
        && let Some(save) = tools.iter_mut().find(|t| t.name == "save_as")
    {
        save.params.retain(|p| p.name != "current_slide_only");
    }
    tools
}

/// Why `tool` cannot be called on `app`, if it cannot.
pub(crate) fn refused_on(tool: &str, app: Option<Known>) -> Option<String> {
    let owners: Vec<&str> = [Known::Word, Known::Excel, Known::PowerPoint]
        .into_iter()
        .filter(|a| names_of(*a).contains(&tool))
        .map(|a| match a {
            Known::Word => "Word (LibreOffice Writer)",
            Known::Excel => "Excel (LibreOffice Calc)",
            _ => "PowerPoint (LibreOffice Impress)",
        })
        .collect();
    match app {
        Some(app) if names_of(app).contains(&tool) => None,
        _ => Some(format!(
            "`{tool}` is an API tool of {}, and this task's app is {}",
            owners.join(" and "),
            match app {
                Some(Known::Notepad) => "a text editor",
                Some(Known::Word) => "Word (LibreOffice Writer)",
                Some(Known::Excel) => "Excel (LibreOffice Calc)",
                Some(Known::PowerPoint) => "PowerPoint (LibreOffice Impress)",
                None => "none of them",
            }
        )),
    }
}

/// A call's answer as a result: UFO's text (what a recorded plan's `expect.text`
/// compares), and for `get_range_values` the values too, with the text their JSON.
pub(crate) fn result(answer: Value) -> Value {
    match answer {
        Value::String(text) => json!({ "text": text }),
        values => json!({ "text": values.to_string(), "values": values }),
    }
}

/// A parameter.
fn p(name: &'static str, kind: ParamKind, required: bool, description: &'static str) -> ParamSpec {
    ParamSpec::new(name, kind, required, description)
}

/// A tool.
fn tool(name: &'static str, description: &'static str, params: Vec<ParamSpec>) -> ToolSpec {
    ToolSpec::new(name, description, params)
}

/// A JSON array.
fn array() -> ParamKind {
    ParamKind::Schema(json!({"type": "array"}))
}

/// A sheet's range of cells, its end as `verb` says.
fn range(verb: &'static str) -> Vec<ParamSpec> {
    use ParamKind::Integer;
    vec![
        sheet_name(),
        first_row(),
        first_col(),
        p("end_row", Integer, true, verb).within(Bound::Range(-1, SHEET_ROWS)),
        p("end_col", Integer, true, verb).within(Bound::Range(-1, SHEET_COLUMNS)),
    ]
}

/// The sheet a call is on.
fn sheet_name() -> ParamSpec {
    p("sheet_name", ParamKind::String, true, "the sheet").within(Bound::Length(MAX_NAME))
}

/// The first row of a range or table.
fn first_row() -> ParamSpec {
    p(
        "start_row",
        ParamKind::Integer,
        true,
        "the first row (from 1)",
    )
    .within(Bound::Range(1, SHEET_ROWS))
}

/// The first column of a range or table.
fn first_col() -> ParamSpec {
    p(
        "start_col",
        ParamKind::Integer,
        true,
        "the first column (from 1)",
    )
    .within(Bound::Range(1, SHEET_COLUMNS))
}

fn specs() -> Vec<ToolSpec> {
    let mut all = word_specs();
    all.push(save_as_spec());
    all.extend(excel_specs());
    all.extend(powerpoint_specs());
    all
}

/// Word's (word_wincom_mcp_server.py), but `save_as`.
fn word_specs() -> Vec<ToolSpec> {
    use ParamKind::{Boolean, Integer, String as Text};
    vec![
        tool(
            "insert_table",
            "Insert a table at the end of the Word document.",
            vec![
                p("rows", Integer, true, "the number of rows in the table")
                    .within(Bound::Range(1, 10_000)),
                p(
                    "columns",
                    Integer,
                    true,
                    "the number of columns in the table",
                )
                .within(Bound::Range(1, 1_000)),
            ],
        )
        .limited(Limit::Grid(MAX_CELLS)),
        tool(
            "select_text",
            "Select the text in the Word document for further operations, such as changing the font size or color.",
            vec![
                p("text", Text, true, "the exact text to be selected")
                    .within(Bound::Length(MAX_TEXT)),
            ],
        ),
        tool(
            "select_table",
            "Select a table in the Word document (the first is 1).",
            vec![
                p(
                    "number",
                    Integer,
                    true,
                    "the index number of the table to be selected",
                )
                .within(Bound::Range(1, MAX_INDEX)),
            ],
        ),
        tool(
            "select_paragraph",
            "Select paragraphs of the Word document (the first is 1).",
            vec![
                p(
                    "start_index",
                    Integer,
                    true,
                    "the start index of the paragraph to be selected",
                )
                .within(Bound::Range(0, MAX_INDEX)),
                p(
                    "end_index",
                    Integer,
                    true,
                    "the end index of the paragraph; -1 selects to the end of the document",
                )
                .within(Bound::Range(-1, MAX_INDEX)),
                p(
                    "non_empty",
                    Boolean,
                    false,
                    "count non-empty paragraphs only (default true)",
                ),
            ],
        ),
        tool(
            "set_font",
            "Set the font of the selected text in the Word document; the text must be selected first.",
            vec![
                p(
                    "font_name",
                    Text,
                    false,
                    "the name of the font (e.g. 'Arial'); not changed when absent",
                )
                .within(Bound::Length(MAX_NAME)),
                p(
                    "font_size",
                    Integer,
                    false,
                    "the font size (e.g. 12); not changed when absent",
                )
                .within(Bound::Range(1, 999)),
            ],
        ),
    ]
}

/// `save_as`, with the parameters of all three apps'.
fn save_as_spec() -> ToolSpec {
    use ParamKind::{Boolean, String as Text};
    tool(
        "save_as",
        "The fastest way to save or export the document to a file format, with one command (Word: default .pdf; Excel: .csv; PowerPoint: .pptx).",
        vec![
            p(
                "file_dir",
                Text,
                false,
                "the folder, relative to the document's (default: the document's folder)",
            )
            .within(Bound::Length(crate::relpath::PATH_LIMIT)),
            p(
                "file_name",
                Text,
                false,
                "the file name without extension (default: the document's)",
            )
            .within(Bound::Name(MAX_NAME)),
            p(
                "file_ext",
                Text,
                false,
                "the extension, such as .pdf, .docx, .xlsx, .csv, .pptx, .png",
            )
            .within(Bound::Name(16)),
            p(
                "current_slide_only",
                Boolean,
                false,
                "PowerPoint, images: the current slide only",
            ),
        ],
    )
}

/// Excel's (excel_wincom_mcp_server.py), but `save_as`.
fn excel_specs() -> Vec<ToolSpec> {
    vec![
        tool(
            "insert_excel_table",
            "Insert a table (a list of rows) into a sheet at a start cell; texts that are numbers or formulas become them.",
            vec![
                p("table", array(), true, "the rows, each a list of values")
                    .within(Bound::Length(MAX_CELLS as usize)),
                sheet_name(),
                first_row(),
                first_col(),
            ],
        )
        .limited(Limit::Table(MAX_CELLS)),
        tool(
            "select_table_range",
            "Select a range of cells of a sheet.",
            range("the last row or column; -1 selects to the sheet's end"),
        ),
        tool(
            "reorder_columns",
            "Reorder a sheet's columns by their header names; columns not named are dropped.",
            vec![
                sheet_name(),
                p(
                    "desired_order",
                    array(),
                    true,
                    "the header names, in the order wanted",
                )
                .within(Bound::Length(SHEET_COLUMNS as usize)),
            ],
        ),
        tool(
            "get_range_values",
            "Get the values of a range of cells as rows (an empty cell is null).",
            range("the last row or column; -1 goes to the last one used"),
        )
        .limited(Limit::Range(MAX_CELLS)),
    ]
}

/// PowerPoint's (ppt_wincom_mcp_server.py), but `save_as`.
fn powerpoint_specs() -> Vec<ToolSpec> {
    use ParamKind::String as Text;
    vec![tool(
        "set_background_color",
        "Set the background color of slides.",
        vec![
            p("color", Text, true, "the color as hex RGB, such as FF0000")
                .within(Bound::Length(16)),
            p(
                "slide_index",
                array(),
                false,
                "the slides (from 1); all when absent",
            )
            .within(Bound::Length(MAX_INDEX as usize)),
        ],
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_app_has_ufos_tools_and_only_they_are_offered() {
        assert_eq!(office_tools().len(), 11);
        let word: Vec<String> = tools_for(Known::Word)
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        assert_eq!(word, WORD);
        let save = tools_for(Known::Excel)
            .into_iter()
            .find(|t| t.name == "save_as")
            .unwrap();
        assert!(save.params.iter().all(|p| p.name != "current_slide_only"));
        assert!(tools_for(Known::Notepad).is_empty());
        assert_eq!(tools_of("powerpoint").len(), 2);
        assert!(tools_of("notepad").is_empty());
        assert_eq!(refused_on("insert_table", Some(Known::Word)), None);
        assert_eq!(
            refused_on("insert_table", Some(Known::Excel)).unwrap(),
            "`insert_table` is an API tool of Word (LibreOffice Writer), and this task's app is Excel (LibreOffice Calc)"
        );
        assert!(
            refused_on("save_as", None)
                .unwrap()
                .contains("Word (LibreOffice Writer) and Excel")
        );
        assert_eq!(
            result(json!("Table 1 is selected.")),
            json!({"text": "Table 1 is selected."})
        );
        assert_eq!(
            result(json!([["a", 1.0]])),
            json!({"text": "[[\"a\",1.0]]", "values": [["a", 1.0]]})
        );
    }

    #[test]
    fn arguments_that_size_work_are_bounded_before_any_call() {
        let spec = |name: &str| office_tools().iter().find(|t| t.name == name).unwrap();
        let check = |name: &str, args: Value| {
            spec(name)
                .check_arguments(args.as_object().unwrap())
                .map_err(|e| e.to_string())
        };
        // The attack: every row of the sheet by 200 columns.
        let e = check(
            "get_range_values",
            json!({"sheet_name": "Budget", "start_row": 1, "start_col": 1, "end_row": 1_048_576, "end_col": 200}),
        )
        .unwrap_err();
        assert!(
            e.contains("the range holds 209715200 cells; a call may take at most 100000"),
            "{e}"
        );
        // Its variants: past the sheet, a table too large, a text too long, a save that
        // names a folder in its file name or extension.
        for (tool, args, said) in [
            (
                "get_range_values",
                json!({"sheet_name": "S", "start_row": 1, "start_col": 1, "end_row": 2_000_000, "end_col": 1}),
                "is not from -1 to 1048576",
            ),
            (
                "select_table_range",
                json!({"sheet_name": "S", "start_row": 0, "start_col": 1, "end_row": 1, "end_col": 1}),
                "is not from 1 to 1048576",
            ),
            (
                "insert_table",
                json!({"rows": 1000, "columns": 1000}),
                "the table would have 1000000 cells",
            ),
            (
                "insert_excel_table",
                json!({"sheet_name": "S", "start_row": 1, "start_col": 1, "table": vec![vec![1; 1000]; 101]}),
                "the table has 101000 cells",
            ),
            (
                "select_text",
                json!({"text": "x".repeat(10_001)}),
                "it is 10001 characters long",
            ),
            (
                "set_font",
                json!({"font_size": 100_000}),
                "is not from 1 to 999",
            ),
            (
                "save_as",
                json!({"file_name": "../../outside"}),
                "is not a file name",
            ),
            (
                "save_as",
                json!({"file_ext": "/../../etc/x"}),
                "is not a file name",
            ),
            ("save_as", json!({"file_name": ".."}), "is not a file name"),
        ] {
            let e = check(tool, args).unwrap_err();
            assert!(e.contains(said), "{tool}: {e}");
            assert!(e.len() < 300, "{tool}: the error is short: {e}");
        }
        // Within the bounds, and -1 ends (the app's to find, and its helper checks them).
        for (tool, args) in [
            (
                "get_range_values",
                json!({"sheet_name": "S", "start_row": 1, "start_col": 1, "end_row": -1, "end_col": -1}),
            ),
            (
                "get_range_values",
                json!({"sheet_name": "S", "start_row": 1, "start_col": 1, "end_row": 1000, "end_col": 100}),
            ),
            (
                "select_table_range",
                json!({"sheet_name": "S", "start_row": 1, "start_col": 1, "end_row": -1, "end_col": -1}),
            ),
            (
                "save_as",
                json!({"file_dir": "out", "file_name": "report", "file_ext": ".pdf"}),
            ),
        ] {
            assert_eq!(check(tool, args.clone()), Ok(()), "{tool} {args}");
        }
        // The helper checks the ranges the office finds against the same bound.
        let helper = include_str!("linux/uno_helper.py");
        assert!(helper.contains(&format!("MAX_CELLS = {}", "100_000")));
        assert_eq!(MAX_CELLS, 100_000);
    }
}
