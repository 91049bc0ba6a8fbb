//! UFO's app tools (its `ui_mcp_server`: HostAgent, AppAgent and data collection), with
//! UFO's names and parameters, as the model is offered them and task files are checked
//! against. A control is named by `id` (its label in the current control list) and/or
//! `name` and `control_type`. What a call of one asks the desktop to do, its arguments
//! read, is `action`'s.

use std::sync::LazyLock;

use crate::tool::desktop_names::APP_AGENT_TOOLS;
use crate::tool::{ParamKind, ParamSpec, ToolSpec};

pub(crate) use crate::tool::is_desktop_tool;

/// UFO's app tools.
pub(crate) fn desktop_tools() -> &'static [ToolSpec] {
    static TOOLS: LazyLock<Vec<ToolSpec>> = LazyLock::new(specs);
    &TOOLS
}

/// The tools an AppAgent acts with in its window (UFO's AppAgent functions).
pub(crate) fn app_agent_tools() -> &'static [ToolSpec] {
    static TOOLS: LazyLock<Vec<ToolSpec>> = LazyLock::new(|| {
        desktop_tools()
            .iter()
            .filter(|t| APP_AGENT_TOOLS.contains(&t.name.as_ref()))
            .cloned()
            .collect()
    });
    &TOOLS
}

/// A parameter.
fn p(name: &'static str, kind: ParamKind, required: bool, description: &'static str) -> ParamSpec {
    ParamSpec::new(name, kind, required, description)
}

/// A tool.
fn tool(name: &'static str, description: &'static str, params: Vec<ParamSpec>) -> ToolSpec {
    ToolSpec::new(name, description, params)
}

/// The parameters that name a control.
fn control() -> Vec<ParamSpec> {
    vec![
        p(
            "id",
            ParamKind::String,
            false,
            "the control's label in the current control list",
        ),
        p("name", ParamKind::String, false, "the control's name"),
        p(
            "control_type",
            ParamKind::String,
            false,
            "its UI Automation control type (Button, Edit, MenuItem, ...)",
        ),
    ]
}

/// `params` and `more`.
fn with(mut params: Vec<ParamSpec>, more: Vec<ParamSpec>) -> Vec<ParamSpec> {
    params.extend(more);
    params
}

/// `field_list`.
fn fields() -> ParamSpec {
    p(
        "field_list",
        ParamKind::Schema(serde_json::json!({"type": "array", "items": {"type": "string"}})),
        true,
        "the fields wanted (control_text, control_type, control_rect, ...)",
    )
}

/// The flags of the window lists.
fn apps() -> Vec<ParamSpec> {
    vec![
        p(
            "remove_empty",
            ParamKind::Boolean,
            false,
            "leave out windows that show nothing (default true)",
        ),
        p(
            "refresh_app_windows",
            ParamKind::Boolean,
            false,
            "list the windows again (default true)",
        ),
    ]
}

fn button() -> ParamSpec {
    p(
        "button",
        ParamKind::String,
        false,
        "left (default), right or middle",
    )
}

fn double() -> ParamSpec {
    p("double", ParamKind::Boolean, false, "a double click")
}

fn specs() -> Vec<ToolSpec> {
    let mut all = control_specs();
    all.extend(pointer_specs());
    all.extend(host_specs());
    all
}

/// The tools that act on a control of the app's window.
fn control_specs() -> Vec<ToolSpec> {
    use ParamKind::{Boolean, String as Text};
    vec![
        tool(
            "click_input",
            "Click a control with the mouse.",
            with(control(), vec![button(), double()]),
        ),
        tool(
            "set_edit_text",
            "Replace the text of an edit control.",
            with(
                control(),
                vec![
                    p("text", Text, true, "the new text"),
                    p(
                        "clear_current_text",
                        Boolean,
                        false,
                        "clear it first (always done)",
                    ),
                ],
            ),
        ),
        tool(
            "keyboard_input",
            "Type keys (pywinauto syntax: ^s is Ctrl+S, {ENTER}, {TAB 2}), after focusing the control when one is named.",
            with(
                control(),
                vec![
                    p("keys", Text, true, "the keys"),
                    p(
                        "control_focus",
                        Boolean,
                        false,
                        "focus the control first (default true)",
                    ),
                ],
            ),
        ),
        tool(
            "wheel_mouse_input",
            "Turn the mouse wheel over a control (positive: up).",
            // An integer, as UFO declares it (`wheel_dist: int = 0`).
            with(
                control(),
                vec![p("wheel_dist", ParamKind::Integer, false, "notches")],
            ),
        ),
        tool("texts", "Read the text of a control.", control()),
    ]
}

/// The tools that act at a point of the app's window, wait, or say what they see.
fn pointer_specs() -> Vec<ToolSpec> {
    use ParamKind::{Number, String as Text};
    vec![
        tool(
            "click_on_coordinates",
            "Click at a point of the app window, given as fractions of its width and height.",
            vec![
                p("x", Number, true, "0 (left) to 1 (right)"),
                p("y", Number, true, "0 (top) to 1 (bottom)"),
                button(),
                double(),
            ],
        ),
        tool(
            "drag_on_coordinates",
            "Drag between two points of the app window, given as fractions.",
            vec![
                p("start_x", Number, true, "from, across"),
                p("start_y", Number, true, "from, down"),
                p("end_x", Number, true, "to, across"),
                p("end_y", Number, true, "to, down"),
                button(),
                p("duration", Number, false, "seconds (default 1)"),
                p("key_hold", Text, false, "ctrl, shift or alt held meanwhile"),
            ],
        ),
        tool(
            "wait",
            "Wait a number of seconds.",
            // Required, as UFO declares it (`seconds: float`).
            vec![p("seconds", Number, true, "seconds (at most 300)")],
        ),
        tool(
            "summary",
            "Say what you see; the text is the result.",
            vec![p("text", Text, true, "the summary")],
        ),
    ]
}

/// The tools that open or select an app or a window, and those that look at the screen.
fn host_specs() -> Vec<ToolSpec> {
    use ParamKind::{Boolean, String as Text};
    vec![
        tool(
            "select_application",
            "Open an application by name (word, excel, powerpoint, notepad), or select it when it is open.",
            vec![p("app_name", Text, true, "the application's name")],
        ),
        tool(
            "click_element",
            "Click a control named by its label: its id in the control list, or its name.",
            vec![
                p("label", Text, true, "the control's id or name"),
                button(),
                double(),
            ],
        ),
        tool(
            "select_application_window",
            "Select the application window to work in.",
            vec![
                p("id", Text, false, "the window's label"),
                p("name", Text, false, "the window's title"),
            ],
        ),
        tool(
            "capture_window_screenshot",
            "Save a screenshot of the app window.",
            vec![],
        ),
        tool(
            "capture_desktop_screenshot",
            "Save a screenshot of the whole desktop.",
            vec![p(
                "all_screens",
                Boolean,
                false,
                "every screen (there is one)",
            )],
        ),
        tool("get_ui_tree", "The app window's UI tree.", vec![]),
        // UFO declares `field_list: List[str]`, required, and the two flags with
        // default true (ui_mcp_server.py).
        tool(
            "get_app_window_info",
            "The selected window's info: the fields asked for (control_text, control_rect, control_type, ...).",
            vec![fields()],
        ),
        tool(
            "get_desktop_app_info",
            "The desktop's application windows: id, name, type and kind of each.",
            apps(),
        ),
        tool(
            "get_desktop_app_target_info",
            "The desktop's application windows as targets: kind, name, id and type of each.",
            apps(),
        ),
        tool(
            "get_app_window_controls_info",
            "The selected window's controls: the fields asked for of each, with its label.",
            vec![fields()],
        ),
        tool(
            "get_app_window_controls_target_info",
            "The selected window's controls as targets: kind, name, id, type and rect of each.",
            vec![fields()],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;
    use crate::desktop::action::DesktopAction;

    #[test]
    fn the_names_below_the_desktop_are_the_specs_names() {
        let ui: Vec<&str> = desktop_tools().iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(ui, crate::tool::desktop_names::UI_TOOLS);
        let office: Vec<&str> = crate::desktop::office::office_tools()
            .iter()
            .map(|t| t.name.as_ref())
            .collect();
        assert_eq!(office, crate::tool::desktop_names::OFFICE_TOOLS);
    }

    #[test]
    fn every_tool_has_a_spec() {
        for spec in desktop_tools() {
            let mut args = Map::new();
            for p in spec.params.iter().filter(|p| p.required) {
                let v = match p.kind {
                    ParamKind::Number => json!(0.5),
                    ParamKind::Boolean => json!(true),
                    ParamKind::Integer | ParamKind::Count => json!(1),
                    ParamKind::String => json!("a"),
                    ParamKind::Schema(_) => json!(["control_text"]),
                };
                args.insert(p.name.to_string(), v);
            }
            args.insert("name".into(), json!("x"));
            assert!(is_desktop_tool(&spec.name));
            let parsed = DesktopAction::parse(&spec.name, &args);
            assert!(parsed.is_ok(), "{}: {parsed:?}", spec.name);
        }
    }
}
