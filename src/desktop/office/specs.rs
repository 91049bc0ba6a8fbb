//! The API tools' specs: their names and parameters as UFO's COM servers declare them,
//! with the bounds of the arguments that size a call's work.

use serde_json::json;

use super::{MAX_CELLS, MAX_INDEX, MAX_NAME, MAX_TEXT, SHEET_COLUMNS, SHEET_ROWS};
use crate::tool::{Bound, Limit, ParamKind, ParamSpec, ToolSpec};

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

pub(super) fn specs() -> Vec<ToolSpec> {
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
