//! The computer-use tools' names and parameters, as recorded plans are checked against
//! them. Models are not offered these: each provider has its own computer tool, whose
//! actions the operator agent turns into these calls.

use std::sync::LazyLock;

use serde_json::json;

use crate::tool::{ParamKind, ParamSpec, ToolSpec};

/// The computer-use tools.
pub(crate) fn computer_tools() -> &'static [ToolSpec] {
    static TOOLS: LazyLock<Vec<ToolSpec>> = LazyLock::new(specs);
    &TOOLS
}

/// A parameter.
fn p(name: &'static str, kind: ParamKind, required: bool, description: &'static str) -> ParamSpec {
    ParamSpec::new(name, kind, required, description)
}

fn schema(value: serde_json::Value) -> ParamKind {
    ParamKind::Schema(value)
}

/// What every pointer action may carry besides its point: the keys held, and what a
/// recording says (the model's own point, the window, the element hit).
fn recorded() -> Vec<ParamSpec> {
    vec![
        p(
            "keys",
            schema(json!({"type": ["array", "string"]})),
            false,
            "keys held meanwhile (names)",
        ),
        p(
            "model",
            schema(json!({"type": "object"})),
            false,
            "the model's own point and its space (for the record)",
        ),
        p(
            "window",
            schema(json!({"type": "object"})),
            false,
            "the window acted in, where it was: {x, y, width, height}",
        ),
        p(
            "element",
            schema(json!({"type": "object"})),
            false,
            "the element hit: name, role, window, path, rect, and `at` on it",
        ),
    ]
}

/// What the recording saw when it acted: every computer-use call of a recorded plan
/// may name it.
fn recorded_screenshot() -> ParamSpec {
    p(
        "recorded_screenshot",
        ParamKind::String,
        false,
        "the screen as the recording saw it (a file beside the recorded plan)",
    )
}

fn pointer(
    name: &'static str,
    description: &'static str,
    button: bool,
    required: bool,
) -> ToolSpec {
    let mut params = vec![
        p("x", ParamKind::Integer, required, "desktop pixel, across"),
        p("y", ParamKind::Integer, required, "desktop pixel, down"),
    ];
    if button {
        params.push(p(
            "button",
            ParamKind::String,
            false,
            "left (default), right, middle (wheel), back, forward",
        ));
    }
    params.extend(recorded());
    ToolSpec {
        limit: None,
        name: name.into(),
        description: description.into(),
        params,
    }
}

/// A tool.
fn tool(name: &'static str, description: &'static str, params: Vec<ParamSpec>) -> ToolSpec {
    ToolSpec::new(name, description, params)
}

fn specs() -> Vec<ToolSpec> {
    let mut all = actions();
    for tool in &mut all {
        tool.params.push(recorded_screenshot());
    }
    all
}

fn actions() -> Vec<ToolSpec> {
    use ParamKind::{Integer, Number, String as Text};
    let mut scroll = pointer(
        "scroll",
        "Turn the wheel at a point (the pointer's place without one).",
        false,
        false,
    );
    scroll.params.insert(
        2,
        p(
            "scroll_x",
            Integer,
            false,
            "notches across (positive: right)",
        ),
    );
    scroll.params.insert(
        3,
        p("scroll_y", Integer, false, "notches down (positive: down)"),
    );
    let mut drag = tool(
        "drag",
        "Hold a button along a path of desktop pixels.",
        vec![
            p(
                "path",
                schema(json!({"type": "array", "items": {"type": "object"}})),
                true,
                "the points [{x, y}, ...], at least two",
            ),
            p("button", Text, false, "left (default), right, middle"),
        ],
    );
    drag.params.extend(recorded());
    let button = |name: &'static str, description: &'static str| {
        let mut t = pointer(name, description, true, false);
        t.params.retain(|p| p.name != "keys");
        t
    };
    vec![
        pointer("click", "Click at a desktop pixel.", true, true),
        pointer(
            "double_click",
            "Double-click at a desktop pixel.",
            true,
            true,
        ),
        pointer(
            "triple_click",
            "Triple-click at a desktop pixel.",
            true,
            true,
        ),
        pointer("move", "Move the pointer to a desktop pixel.", false, true),
        drag,
        scroll,
        button(
            "mouse_down",
            "Press a button (at a point, or where the pointer is).",
        ),
        button(
            "mouse_up",
            "Release a button (at a point, or where the pointer is).",
        ),
        tool(
            "keypress",
            "Press one chord of keys together.",
            vec![
                p(
                    "keys",
                    schema(json!({"type": ["array", "string"]})),
                    true,
                    "key names, such as [\"ctrl\", \"s\"]",
                ),
                p("repeat", Integer, false, "how often (default 1)"),
            ],
        ),
        tool(
            "hold_key",
            "Hold a chord of keys down for a while.",
            vec![
                p(
                    "keys",
                    schema(json!({"type": ["array", "string"]})),
                    true,
                    "key names",
                ),
                p("seconds", Number, false, "how long (default 1, at most 60)"),
            ],
        ),
        tool(
            "type",
            "Type text as it is written (any characters).",
            vec![p("text", Text, true, "the text")],
        ),
        tool("screenshot", "Look at the screen.", vec![]),
        tool(
            "zoom",
            "Look closely at a part of the screen.",
            vec![p(
                "region",
                schema(json!({"type": "object"})),
                true,
                "{x, y, width, height} in desktop pixels",
            )],
        ),
        tool("cursor_position", "Where the pointer is.", vec![]),
    ]
}
