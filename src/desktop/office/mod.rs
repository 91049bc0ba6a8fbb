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
use crate::tool::ToolSpec;

mod specs;

use specs::specs;

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

#[cfg(test)]
mod tests;
