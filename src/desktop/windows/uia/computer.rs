//! The computer-use side of UI Automation: the target window's place, the element under
//! a point (the smallest control-view element that holds it, down the window's own
//! subtree: `ElementFromPoint` answers for whatever window covers the point), and a
//! recorded element found again down its path, else by its control type and name.

use std::collections::VecDeque;

use uiautomation::UIElement;

use super::{MAX_NODES, State, UiaError, failed, rect_of};
use crate::desktop::backend::Window;
use crate::desktop::element::{Element, MAX_DEPTH, Neutral, PathStep, pick_child};

/// An element's role as a path names it: its control type.
fn role_of(element: &UIElement) -> String {
    element
        .get_control_type()
        .map(|t| format!("{t:?}"))
        .unwrap_or_else(|_| "Custom".to_string())
}

fn name_of(element: &UIElement) -> String {
    element
        .get_name()
        .unwrap_or_default()
        .trim_end()
        .to_string()
}

impl State {
    /// The window the actions go to, where it is now.
    pub(in crate::desktop::windows) fn target(&mut self) -> Result<Option<Window>, UiaError> {
        Ok(self.window.as_ref().map(|w| Window {
            name: name_of(w),
            rect: rect_of(w),
            application: String::new(),
        }))
    }

    fn children_of(&self, element: &UIElement) -> Result<Vec<UIElement>, UiaError> {
        let walker = self
            .automation
            .get_control_view_walker()
            .map_err(failed("a tree walker"))?;
        Ok(walker.get_children(element).unwrap_or_default())
    }

    /// The window, of the target and the top-level ones, that holds `at`.
    fn window_at(&self, at: (i32, i32)) -> Result<Option<UIElement>, UiaError> {
        if let Some(w) = &self.window
            && rect_of(w).contains(at)
        {
            return Ok(Some(w.clone()));
        }
        Ok(self
            .top_windows()?
            .into_iter()
            .find(|w| rect_of(w).contains(at)))
    }

    /// The element under `at`, with the way to it from its window.
    pub(in crate::desktop::windows) fn element_at(
        &mut self,
        at: (i32, i32),
    ) -> Result<Option<Element>, UiaError> {
        let Some(window) = self.window_at(at)? else {
            return Ok(None);
        };
        let title = name_of(&window);
        let mut path = vec![PathStep {
            role: role_of(&window),
            name: title.clone(),
            index: 0,
        }];
        let mut node = window.clone();
        let mut rect = rect_of(&window);
        // Down the window's own subtree: the child that holds the point, the smallest
        // if several do (ElementFromPoint answers for whatever window is in front).
        while path.len() < MAX_DEPTH {
            let kids = self.children_of(&node)?;
            let mut best: Option<(i64, usize)> = None;
            for (i, kid) in kids.iter().enumerate() {
                let r = rect_of(kid);
                if r.contains(at) && !kid.is_offscreen().unwrap_or(false) {
                    let area = i64::from(r.width) * i64::from(r.height);
                    if best.is_none_or(|(a, _)| area < a) {
                        best = Some((area, i));
                    }
                }
            }
            let Some((_, i)) = best else { break };
            node = kids[i].clone();
            rect = rect_of(&node);
            path.push(PathStep {
                role: role_of(&node),
                name: name_of(&node),
                index: i as u32,
            });
        }
        let last = path.last().cloned().expect("the window's own level");
        Ok(Some(Element {
            name: last.name,
            role: last.role,
            window: title,
            path,
            rect,
        }))
    }

    /// The element `recorded` names, found again in its window.
    pub(in crate::desktop::windows) fn find_element(
        &mut self,
        recorded: &Element,
        neutral: &Neutral,
    ) -> Result<Option<Element>, UiaError> {
        let mut windows: Vec<UIElement> = self
            .top_windows()?
            .into_iter()
            .filter(|w| neutral(&name_of(w)).trim() == recorded.window.trim())
            .collect();
        windows.extend(self.window.clone());
        for window in windows {
            if let Some(found) = self.find_in(&window, recorded, neutral)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    fn find_in(
        &self,
        window: &UIElement,
        recorded: &Element,
        neutral: &Neutral,
    ) -> Result<Option<Element>, UiaError> {
        let found = |e: &UIElement| Element {
            window: name_of(window),
            rect: rect_of(e),
            ..recorded.clone()
        };
        // Down the recorded path.
        let mut node = Some(window.clone());
        for step in recorded.path.iter().skip(1) {
            let Some(current) = node.take() else { break };
            let kids = self.children_of(&current)?;
            let described: Vec<(String, String)> = kids
                .iter()
                .map(|k| (role_of(k), neutral(&name_of(k))))
                .collect();
            node = pick_child(step, &described).map(|i| kids[i].clone());
        }
        let ends_on_it = recorded.path.len() > 1
            && recorded
                .path
                .last()
                .is_some_and(|s| s.role == recorded.role);
        if ends_on_it
            && let Some(e) = node
            && rect_of(&e).is_visible()
        {
            return Ok(Some(found(&e)));
        }
        if recorded.name.trim().is_empty() {
            return Ok(None);
        }
        // By its control type and name, breadth first, bounded: only one may fit.
        let mut queue = VecDeque::from([(window.clone(), 0usize)]);
        let mut seen = 0;
        let mut fits = Vec::new();
        while let Some((e, depth)) = queue.pop_front() {
            if seen > MAX_NODES || depth > MAX_DEPTH {
                break;
            }
            let kids = self.children_of(&e)?;
            seen += kids.len();
            for kid in kids {
                if role_of(&kid) == recorded.role
                    && neutral(&name_of(&kid)).trim() == recorded.name.trim()
                    && rect_of(&kid).is_visible()
                {
                    fits.push(kid.clone());
                }
                queue.push_back((kid, depth + 1));
            }
        }
        Ok(match fits.as_slice() {
            [one] => Some(found(one)),
            _ => None,
        })
    }
}
