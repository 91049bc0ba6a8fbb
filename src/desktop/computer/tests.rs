//! Tests of reading computer-use calls: points and held keys, recorded elements and
//! windows, bad arguments, every tool's spec.

use serde_json::{Value, json};

use super::*;
use crate::desktop::keys::{Key, Modifier};

fn parse(tool: &str, args: Value) -> Result<ComputerAction, ComputerArgError> {
    ComputerAction::parse(tool, args.as_object().unwrap())
}

#[test]
fn pointer_actions_read_their_point_and_held_keys() {
    let click = parse(
        "double_click",
        json!({"x": 10, "y": 20.4, "button": "wheel", "keys": ["shift"]}),
    )
    .unwrap();
    assert_eq!(
        click,
        ComputerAction::Click {
            aim: Some(Aim {
                at: (10, 20),
                element: None,
                window: None
            }),
            button: Button::Middle,
            count: 2,
            held: vec![KeyAction::Down(Key::Modifier(Modifier::Shift))],
        }
    );
    let scroll = parse("scroll", json!({"scroll_y": -3})).unwrap();
    assert!(matches!(
        scroll,
        ComputerAction::Scroll {
            aim: None,
            dx: 0,
            dy: -3,
            ..
        }
    ));
    let drag = parse(
        "drag",
        json!({"path": [{"x": 1, "y": 2}, {"x": 3, "y": 4}, {"x": 5, "y": 6}]}),
    )
    .unwrap();
    assert!(matches!(drag, ComputerAction::Drag { ref path, .. } if path.len() == 3));
}

#[test]
fn a_recorded_element_and_window_are_read() {
    let click = parse(
        "click",
        json!({"x": 5, "y": 6,
               "window": {"x": 0, "y": 0, "width": 640, "height": 480},
               "element": {"name": "Save", "role": "push button", "window": "w",
                           "path": [{"role": "frame", "name": "w", "index": 0}],
                           "rect": {"x": 1, "y": 2, "width": 30, "height": 20}, "at": [0.25, 0.75]}}),
    )
    .unwrap();
    let ComputerAction::Click { aim: Some(aim), .. } = click else {
        panic!()
    };
    let (element, at) = aim.element.unwrap();
    assert_eq!((element.name.as_str(), at), ("Save", (0.25, 0.75)));
    assert_eq!(aim.window.unwrap().width, 640);
}

#[test]
fn bad_arguments_say_what_is_wrong() {
    for (tool, args, words) in [
        (
            "click",
            json!({"y": 3}),
            "`click` needs `x`: a whole number of desktop pixels",
        ),
        (
            "click",
            json!({"x": 1, "y": 2, "button": "thumb"}),
            "unknown mouse button `thumb`",
        ),
        (
            "keypress",
            json!({"keys": []}),
            "`keypress` needs at least one key",
        ),
        (
            "keypress",
            json!({"keys": ["ctrl", "warp"]}),
            "no key is named \"warp\"",
        ),
        (
            "keypress",
            json!({"keys": 5}),
            "`keys` must be a list of key names",
        ),
        (
            "drag",
            json!({"path": [{"x": 1, "y": 2}]}),
            "`drag` needs a `path` of 2",
        ),
        (
            "scroll",
            json!({"scroll_y": 5000}),
            "`scroll_y` must be a whole number",
        ),
        (
            "hold_key",
            json!({"keys": ["a"], "seconds": 600}),
            "`seconds` must be a number of seconds",
        ),
        (
            "zoom",
            json!({"region": {"x": 0, "y": 0, "width": 0, "height": 5}}),
            "`region` must be",
        ),
        (
            "teleport",
            json!({}),
            "`teleport` is not a computer-use tool",
        ),
    ] {
        let e = parse(tool, args).unwrap_err();
        assert!(e.to_string().contains(words), "{tool}: {e}");
        assert_eq!(e.blame(), Blame::Agent);
    }
    let long = "x".repeat(MAX_TYPED + 1);
    assert!(matches!(
        parse("type", json!({"text": long})),
        Err(ComputerArgError::LongText(_))
    ));
}

#[test]
fn every_tool_has_a_spec_and_parses() {
    for spec in computer_tools() {
        assert!(is_computer_tool(&spec.name), "{}", spec.name);
    }
    let names: Vec<&str> = computer_tools().iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, crate::tool::desktop_names::COMPUTER_TOOLS);
}
