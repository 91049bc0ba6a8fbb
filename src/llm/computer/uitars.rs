//! UI-TARS's replies (ByteDance's `ui_tars/action_parser.py` format): `Thought: …` then
//! `Action: …`, each action a call such as `click(start_box='(x1,y1)')`,
//! `drag(start_box=…, end_box=…)`, `hotkey(key='ctrl c')`, `type(content='…')`,
//! `scroll(start_box=…, direction='down')`, `wait()`, `finished(content='…')`; several
//! actions apart by blank lines. UI-TARS-2 writes points as `point='<point>x y</point>'`
//! and also `press`, `keydown`, `keyup`, `mouse_down`, `mouse_up`, `move_to`. A point is
//! `(x,y)` (or a box `(x1,y1,x2,y2)`, its centre), with or without UI-TARS's
//! `<|box_start|>` tokens; its space is the format's (a 0–1000 grid, or UI-TARS-1.5's
//! pixels of its resized image).

use super::{ModelAction, Point, ScrollUnit, number};

/// A call's name and its `key='value'` arguments.
#[derive(Debug)]
pub(super) struct Call {
    pub(super) name: String,
    pub(super) args: Vec<(String, String)>,
}

impl Call {
    fn arg(&self, keys: &[&str]) -> Option<&str> {
        self.args
            .iter()
            .find(|(k, _)| keys.contains(&k.as_str()))
            .map(|(_, v)| v.as_str())
    }
}

/// The thought and the action calls of a reply.
pub(super) fn parse(text: &str) -> Result<(Option<String>, Vec<Call>), String> {
    let (before, action) = match text.rfind("Action:") {
        Some(i) => (&text[..i], &text[i + "Action:".len()..]),
        None => {
            return Err(
                "the reply has no `Action:` line (write `Thought: …` then `Action: …`)".to_string(),
            );
        }
    };
    let thought = ["Thought:", "Reflection:", "Action_Summary:"]
        .iter()
        .find_map(|k| {
            before
                .find(k)
                .map(|i| before[i + k.len()..].trim().to_string())
        })
        .or_else(|| Some(before.trim().to_string()))
        .filter(|t| !t.is_empty());
    let mut calls = Vec::new();
    let mut rest = action.trim();
    while !rest.is_empty() {
        let (call, after) = one_call(rest)?;
        calls.push(call);
        rest = after.trim_start();
    }
    if calls.is_empty() {
        return Err("the `Action:` line holds no action".to_string());
    }
    Ok((thought, calls))
}

/// One `name(key='value', ...)` at the start of `text`, and what follows it.
fn one_call(text: &str) -> Result<(Call, &str), String> {
    let open = text.find('(').ok_or_else(|| {
        format!(
            "cannot read the action {:?}: no `(`",
            crate::text::shorten(text, 80)
        )
    })?;
    let name = text[..open].trim().to_string();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("cannot read the action name {name:?}"));
    }
    let mut args = Vec::new();
    let chars: Vec<(usize, char)> = text[open + 1..].char_indices().collect();
    let base = open + 1;
    let mut i = 0;
    loop {
        while i < chars.len() && (chars[i].1.is_whitespace() || chars[i].1 == ',') {
            i += 1;
        }
        if i >= chars.len() {
            return Err(format!("the action `{name}(` has no closing `)`"));
        }
        if chars[i].1 == ')' {
            let end = base + chars[i].0 + 1;
            return Ok((Call { name, args }, &text[end..]));
        }
        let key_start = i;
        while i < chars.len() && chars[i].1 != '=' && chars[i].1 != ')' {
            i += 1;
        }
        if i >= chars.len() || chars[i].1 != '=' {
            return Err(format!("the action `{name}` has an argument without `=`"));
        }
        let key: String = chars[key_start..i]
            .iter()
            .map(|c| c.1)
            .collect::<String>()
            .trim()
            .to_string();
        i += 1;
        while i < chars.len() && chars[i].1.is_whitespace() {
            i += 1;
        }
        let quote = chars.get(i).map(|c| c.1);
        let mut value = String::new();
        match quote {
            Some(q @ ('\'' | '"')) => {
                i += 1;
                let mut closed = false;
                while i < chars.len() {
                    let c = chars[i].1;
                    if c == '\\' && i + 1 < chars.len() {
                        let n = chars[i + 1].1;
                        value.push(match n {
                            'n' => '\n',
                            't' => '\t',
                            other => other,
                        });
                        i += 2;
                        continue;
                    }
                    if c == q {
                        closed = true;
                        i += 1;
                        break;
                    }
                    value.push(c);
                    i += 1;
                }
                if !closed {
                    return Err(format!(
                        "the argument `{key}` of `{name}` has no closing quote"
                    ));
                }
            }
            _ => {
                while i < chars.len() && chars[i].1 != ',' && chars[i].1 != ')' {
                    value.push(chars[i].1);
                    i += 1;
                }
                value = value.trim().to_string();
            }
        }
        args.push((key, value));
    }
}

/// A point written as `(x,y)`, `<point>x y</point>`, `[x, y]` or a box's four
/// numbers (its centre).
pub(super) fn point(text: &str) -> Option<Point> {
    let cleaned: String = text
        .replace("<|box_start|>", " ")
        .replace("<|box_end|>", " ")
        .replace("<point>", " ")
        .replace("</point>", " ")
        .replace("<bbox>", " ")
        .replace("</bbox>", " ");
    let numbers: Vec<f64> = cleaned
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .filter(|s| !s.is_empty())
        .filter_map(|s| number(Some(&serde_json::Value::String(s.to_string()))))
        .collect();
    match numbers.as_slice() {
        [x, y] => Some((*x, *y)),
        [x1, y1, x2, y2] => Some(((x1 + x2) / 2.0, (y1 + y2) / 2.0)),
        _ => None,
    }
}

/// The action a call asks for.
pub(super) fn action(call: &Call) -> Result<ModelAction, String> {
    let at = |keys: &[&str]| -> Result<Point, String> {
        let text = call
            .arg(keys)
            .ok_or_else(|| format!("`{}` needs `{}`", call.name, keys[0]))?;
        point(text).ok_or_else(|| format!("cannot read the point {text:?} of `{}`", call.name))
    };
    let start = ["start_box", "point", "start_point"];
    let click = |button: &str, count: u8| -> Result<ModelAction, String> {
        Ok(ModelAction::Click {
            at: Some(at(&start)?),
            button: button.to_string(),
            count,
            keys: Vec::new(),
        })
    };
    let content = || call.arg(&["content", "text"]).unwrap_or("").to_string();
    let hotkey = || -> Vec<String> {
        call.arg(&["key", "hotkey", "keys"])
            .unwrap_or("")
            .split(|c: char| c.is_whitespace() || c == '+')
            .filter(|k| !k.is_empty())
            .map(str::to_string)
            .collect()
    };
    match call.name.as_str() {
        "click" | "left_single" => click("left", 1),
        "left_double" | "double_click" => click("left", 2),
        "left_triple" | "triple_click" => click("left", 3),
        "right_single" | "right_click" => click("right", 1),
        "middle_single" | "middle_click" => click("middle", 1),
        "move_to" | "hover" | "mouse_move" => Ok(ModelAction::Move {
            at: at(&start)?,
            keys: Vec::new(),
        }),
        "drag" | "select" => Ok(ModelAction::Drag {
            path: vec![at(&start)?, at(&["end_box", "end_point"])?],
            keys: Vec::new(),
        }),
        "hotkey" | "press" => {
            let keys = hotkey();
            if keys.is_empty() {
                return Err(format!("`{}` needs `key`, such as 'ctrl c'", call.name));
            }
            Ok(ModelAction::Keypress { keys, repeat: 1 })
        }
        "keydown" | "keyup" => Err(format!(
            "`{}` is not supported: press the keys together with hotkey(key='ctrl c')",
            call.name
        )),
        "mouse_down" | "mouse_up" => Ok(ModelAction::Button {
            at: call.arg(&start).and_then(point),
            button: call.arg(&["button"]).unwrap_or("left").to_string(),
            down: call.name == "mouse_down",
        }),
        "type" => Ok(ModelAction::Type { text: content() }),
        "scroll" => {
            let direction = call
                .arg(&["direction"])
                .unwrap_or("down")
                .trim()
                .to_ascii_lowercase();
            let (dx, dy) = match direction.as_str() {
                "up" => (0.0, -5.0),
                "down" => (0.0, 5.0),
                "left" => (-5.0, 0.0),
                "right" => (5.0, 0.0),
                other => {
                    return Err(format!(
                        "`scroll` goes up, down, left or right, not {other:?}"
                    ));
                }
            };
            Ok(ModelAction::Scroll {
                at: call.arg(&start).and_then(point),
                dx,
                dy,
                unit: ScrollUnit::Notches,
                keys: Vec::new(),
            })
        }
        "wait" => Ok(ModelAction::Wait { seconds: 5.0 }),
        "finished" => Ok(ModelAction::Done {
            success: true,
            message: content(),
        }),
        "call_user" => Ok(ModelAction::AskUser {
            question: content(),
        }),
        other => Err(format!(
            "unknown action `{other}` (click, left_double, right_single, drag, hotkey, type, scroll, wait, finished)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ui_tars_replies_are_read() {
        let text = "Thought: The document is open; I click into it.\nAction: click(start_box='<|box_start|>(503,312)<|box_end|>')\n\ntype(content='naïve — 東京 ✓\\n')";
        let (thought, calls) = parse(text).unwrap();
        assert_eq!(
            thought.as_deref(),
            Some("The document is open; I click into it.")
        );
        assert_eq!(calls.len(), 2);
        assert_eq!(
            action(&calls[0]).unwrap(),
            ModelAction::Click {
                at: Some((503.0, 312.0)),
                button: "left".into(),
                count: 1,
                keys: vec![]
            }
        );
        assert_eq!(
            action(&calls[1]).unwrap(),
            ModelAction::Type {
                text: "naïve — 東京 ✓\n".into()
            }
        );
    }

    #[test]
    fn ui_tars_2_points_boxes_and_keys() {
        let (_, calls) = parse(
            "Action: drag(start_point='<point>10 20</point>', end_point='<point>30 40</point>')",
        )
        .unwrap();
        assert_eq!(
            action(&calls[0]).unwrap(),
            ModelAction::Drag {
                path: vec![(10.0, 20.0), (30.0, 40.0)],
                keys: vec![]
            }
        );
        assert_eq!(point("(100,200,300,400)"), Some((200.0, 300.0)));
        let (_, calls) = parse("Action: hotkey(key='ctrl s')").unwrap();
        assert_eq!(
            action(&calls[0]).unwrap(),
            ModelAction::Keypress {
                keys: vec!["ctrl".into(), "s".into()],
                repeat: 1
            }
        );
        let (_, calls) = parse("Action: finished(content='saved')").unwrap();
        assert!(matches!(
            action(&calls[0]).unwrap(),
            ModelAction::Done { success: true, .. }
        ));
    }

    #[test]
    fn bad_replies_say_why() {
        assert!(
            parse("I would click the button")
                .unwrap_err()
                .contains("no `Action:`")
        );
        assert!(
            parse("Action: click(start_box='(1,2)'")
                .unwrap_err()
                .contains("no closing `)`")
        );
        let (_, calls) = parse("Action: teleport(to='x')").unwrap();
        assert!(
            action(&calls[0])
                .unwrap_err()
                .starts_with("unknown action `teleport`")
        );
        let (_, calls) = parse("Action: click()").unwrap();
        assert_eq!(action(&calls[0]).unwrap_err(), "`click` needs `start_box`");
    }
}
