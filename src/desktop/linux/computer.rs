//! The computer-use side of a Linux desktop: a person's pointer and keyboard on the
//! virtual display (XTEST), the target window's place, and the hit test of the element
//! under a point over AT-SPI, inside the target window first (a desktop-wide hit test
//! would pick whatever window overlaps it).

use super::atspi::{self, ObjectId};
use super::desktop::LinuxDesktop;
use crate::desktop::backend::{Pointer, Window};
use crate::desktop::control::Rect;
use crate::desktop::element::Element;
use crate::desktop::error::DesktopError;
use crate::desktop::keys::{Key, KeyAction, Named};

/// The key taps that type `text` as written.
fn typed(text: &str) -> Vec<KeyAction> {
    let tap = |key| KeyAction::Tap { key, held: vec![] };
    let mut out = Vec::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // `\r\n` and a lone `\r` are one Enter.
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push(tap(Key::Named(Named::Enter)));
            }
            '\n' => out.push(tap(Key::Named(Named::Enter))),
            '\t' => out.push(tap(Key::Named(Named::Tab))),
            c if c.is_control() => {}
            c => out.push(tap(Key::Char(c))),
        }
    }
    out
}

impl LinuxDesktop {
    pub(super) async fn pointer_input(&mut self, input: Pointer) -> Result<(), DesktopError> {
        let display = self.display();
        match input {
            Pointer::Move((x, y)) => display.move_to(x, y).await?,
            Pointer::Button { button, down } => display.button(button, down).await?,
            Pointer::Click { at, button, count } => {
                display.click_times(at.0, at.1, button, count).await?;
            }
            Pointer::Scroll { dx, dy } => display.scroll(dx, dy).await?,
            Pointer::Drag { path, button } => display.drag_path(path, button).await?,
        }
        self.settle_now().await;
        Ok(())
    }

    pub(super) async fn cursor_at(&mut self) -> Result<(i32, i32), DesktopError> {
        Ok(self.display().pointer().await?)
    }

    pub(super) async fn type_text_as_written(&mut self, text: &str) -> Result<(), DesktopError> {
        use crate::desktop::backend::Backend;
        self.keys(typed(text)).await
    }

    /// The selected window: its id, title and place now.
    async fn selected(&mut self) -> Result<Option<(ObjectId, Window)>, DesktopError> {
        let Some((window, application)) = self.selected_window() else {
            return Ok(None);
        };
        let apps = match atspi::applications(self.bus()).await {
            Ok(apps) => apps,
            Err(e) => return Err(self.gone_or(e)),
        };
        for app in apps {
            for (id, (title, rect)) in app.windows.iter().zip(&app.titles) {
                if *id == window {
                    let w = Window {
                        name: title.clone(),
                        rect: *rect,
                        application: application.clone(),
                    };
                    return Ok(Some((window, w)));
                }
            }
        }
        Ok(None)
    }

    pub(super) async fn target(&mut self) -> Result<Option<Window>, DesktopError> {
        Ok(self.selected().await?.map(|(_, w)| w))
    }

    /// The showing windows of every app: id, title, place (the selected one first).
    async fn all_windows(&mut self) -> Result<Vec<(ObjectId, String, Rect)>, DesktopError> {
        let selected = self.selected_window().map(|(id, _)| id);
        let apps = match atspi::applications(self.bus()).await {
            Ok(apps) => apps,
            Err(e) => return Err(self.gone_or(e)),
        };
        let mut all: Vec<(ObjectId, String, Rect)> = apps
            .into_iter()
            .flat_map(|a| {
                a.windows
                    .into_iter()
                    .zip(a.titles)
                    .map(|(id, (title, rect))| (id, title, rect))
            })
            .collect();
        all.sort_by_key(|(id, _, _)| Some(id) != selected.as_ref());
        Ok(all)
    }

    pub(super) async fn hit(&mut self, at: (i32, i32)) -> Result<Option<Element>, DesktopError> {
        self.settle_now().await;
        let windows = self.all_windows().await?;
        // Of the windows that hold the point, the one in front: a dialog (it opens over
        // its window), else the active one, else the selected one (there is no window
        // manager to say which is on top).
        let mut holding: Vec<(ObjectId, String, u8)> = Vec::new();
        for (order, (id, title, rect)) in windows.into_iter().enumerate() {
            if rect.contains(at) {
                let front = atspi::in_front(self.bus(), &id).await;
                holding.push((id, title, front * 100 + (99 - order.min(99) as u8)));
            }
        }
        holding.sort_by_key(|(_, _, rank)| std::cmp::Reverse(*rank));
        let Some((id, title, _)) = holding.into_iter().next() else {
            return Ok(None);
        };
        match atspi::element_at(self.bus(), &id, &title, at).await {
            Ok(found) => Ok(found),
            Err(e) => Err(self.gone_or(e)),
        }
    }

    pub(super) async fn find_again(
        &mut self,
        recorded: &Element,
        neutral: &crate::desktop::element::Neutral,
    ) -> Result<Option<Element>, DesktopError> {
        self.settle_now().await;
        let windows = self.all_windows().await?;
        let want = recorded.window.trim();
        // The window of the recorded title first, then the selected one.
        let mut candidates: Vec<(ObjectId, String)> = windows
            .iter()
            .filter(|(_, title, _)| neutral(title).trim() == want)
            .map(|(id, title, _)| (id.clone(), title.clone()))
            .collect();
        if let Some((id, title, _)) = windows.first()
            && !candidates.iter().any(|(c, _)| c == id)
        {
            candidates.push((id.clone(), title.clone()));
        }
        for (id, title) in candidates {
            match atspi::find_element(self.bus(), &id, &title, recorded, neutral).await {
                Ok(Some(found)) => return Ok(Some(found)),
                Ok(None) => {}
                Err(e) => return Err(self.gone_or(e)),
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_typed_as_written() {
        let taps = typed("naïve — 東京 ✓\r\nok\t.");
        let chars: String = taps
            .iter()
            .map(|t| match t {
                KeyAction::Tap {
                    key: Key::Char(c), ..
                } => *c,
                KeyAction::Tap {
                    key: Key::Named(Named::Enter),
                    ..
                } => '⏎',
                KeyAction::Tap {
                    key: Key::Named(Named::Tab),
                    ..
                } => '⇥',
                _ => '?',
            })
            .collect();
        assert_eq!(chars, "naïve — 東京 ✓⏎ok⇥.");
    }
}
