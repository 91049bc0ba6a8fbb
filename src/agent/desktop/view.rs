//! What a desktop agent is shown of the screen each step: the things it can name, as
//! text (each labelled as the annotated screenshot labels it: UFO's control info), and
//! the screenshots as image parts (the annotated one, then the clean one), scaled down
//! to a bound. Without vision only the text goes (UFO's non-visual mode).

use std::fmt::Write;

use serde_json::json;

use crate::executor::{Listed, ScreenView};
use crate::llm::{Message, Part};

/// The most controls listed to the model; a longer list says how many were left out.
const MAX_LISTED: usize = 300;

/// How a screen is shown.
#[derive(Clone, Copy, Debug)]
pub(super) struct Showing {
    /// Send the screenshots.
    pub(super) vision: bool,
    /// Their longer side, at most.
    pub(super) max_side: u32,
}

/// The list of what can be named on `view`, one JSON object per line.
pub(super) fn listing(view: &ScreenView) -> String {
    let mut m = String::new();
    match &view.listed {
        Listed::Controls(controls) => {
            if let Some(window) = &view.window {
                let _ = writeln!(m, "<Application window> {window}");
            }
            let _ = writeln!(
                m,
                "<Controls> ({} in the window; name one by its id and by its name and control_type)",
                controls.len()
            );
            for c in controls.iter().take(MAX_LISTED) {
                let _ = writeln!(
                    m,
                    "{}",
                    json!({"id": c.id, "name": c.name, "control_type": c.control_type.to_string()})
                );
            }
            if controls.len() > MAX_LISTED {
                let _ = writeln!(m, "… and {} more controls", controls.len() - MAX_LISTED);
            }
            if controls.is_empty() {
                m.push_str(
                    "(no control shows: the window may still be opening; wait or look again)\n",
                );
            }
        }
        Listed::Windows(windows) => {
            let _ = writeln!(
                m,
                "<Desktop windows> ({} application windows)",
                windows.len()
            );
            for w in windows {
                let _ = writeln!(
                    m,
                    "{}",
                    json!({"id": w.id, "name": w.name, "application": w.application})
                );
            }
            if windows.is_empty() {
                m.push_str("(no application window shows)\n");
            }
        }
        Listed::Nothing => {}
    }
    m
}

/// `text`, the listing of `view` and its screenshots, as one message; and what that
/// message becomes once its step is done (the text and a line for the screen: only the
/// step under way shows it in full).
pub(super) fn screen_message(
    text: String,
    view: Option<&ScreenView>,
    showing: Showing,
) -> (Message, Message) {
    let Some(view) = view else {
        let text =
            format!("{text}\n(The screen could not be observed this step; see the last results.)");
        return (Message::user(text.clone()), Message::user(text));
    };
    // Names on the screen are the app's, and may hold anything a document holds.
    let listing = crate::secrets::scrub(&listing(view)).into_owned();
    let what = match &view.listed {
        Listed::Controls(c) => format!("{} controls", c.len()),
        Listed::Windows(w) => format!("{} windows", w.len()),
        Listed::Nothing => "nothing".to_string(),
    };
    let folded = Message::user(format!(
        "{text}\n(The screen of this step, {what} listed, is not shown again.)"
    ));
    let mut parts = vec![Part::text(format!("{text}\n{listing}"))];
    if showing.vision {
        for (label, image) in [
            (
                "<Annotated screenshot> every listed item boxed, its id in the box's corner:",
                &view.annotated,
            ),
            ("<Clean screenshot>", &view.clean),
        ] {
            if let Ok(png) = image.bounded(showing.max_side).png() {
                parts.push(Part::text(label));
                parts.push(Part::png(&png));
            }
        }
    }
    (Message::user_parts(parts), folded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desktop::backend::AppWindow;
    use crate::desktop::control::{Control, ControlType, Rect};
    use crate::desktop::screenshot::Image;

    fn view(listed: Listed) -> ScreenView {
        ScreenView {
            clean: Image::new(40, 20),
            annotated: Image::new(40, 20),
            listed,
            window: Some("report.docx - LibreOffice Writer".into()),
            window_rect: None,
            application: Some("soffice".into()),
        }
    }

    #[test]
    fn controls_are_listed_with_their_labels_and_the_screens_follow() {
        let control = Control {
            id: "7".into(),
            name: "Bold".into(),
            control_type: ControlType::Button,
            rect: Rect {
                x: 1,
                y: 1,
                width: 5,
                height: 5,
            },
            editable: false,
            enabled: true,
            handle: 0,
        };
        let v = view(Listed::Controls(vec![control]));
        let showing = |vision| Showing {
            vision,
            max_side: 20,
        };
        let (m, folded) = screen_message("hello".into(), Some(&v), showing(true));
        let text = m.text();
        assert!(
            text.starts_with("hello\n<Application window> report.docx"),
            "{text}"
        );
        assert!(
            text.contains(r#"{"id":"7","name":"Bold","control_type":"Button"}"#),
            "{text}"
        );
        assert_eq!(m.images(), 2);
        assert_eq!(folded.images(), 0);
        assert_eq!(
            folded.text(),
            "hello\n(The screen of this step, 1 controls listed, is not shown again.)"
        );
        let (text_only, _) = screen_message("hello".into(), Some(&v), showing(false));
        assert_eq!(text_only.images(), 0);
        assert!(text_only.text().contains("Bold"));
    }

    #[test]
    fn windows_are_listed_for_the_host() {
        let w = AppWindow {
            id: "1".into(),
            name: "budget.xlsx - LibreOffice Calc".into(),
            application: "soffice".into(),
            ..AppWindow::default()
        };
        let text = listing(&view(Listed::Windows(vec![w])));
        assert!(
            text.contains("<Desktop windows> (1 application windows)"),
            "{text}"
        );
        assert!(
            text.contains(
                r#"{"id":"1","name":"budget.xlsx - LibreOffice Calc","application":"soffice"}"#
            ),
            "{text}"
        );
    }
}
