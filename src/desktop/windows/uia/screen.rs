//! What the screen shows, through UI Automation: the desktop's top-level windows, the
//! windows an agent can select, and the walk of the app window's control view (its
//! control list, labelled in tree order, and its UI tree).

use serde_json::{Value, json};
use uiautomation::UIElement;
use uiautomation::patterns::UIValuePattern;

use super::{MAX_NODES, State, UiaError, failed, rect_of};
use crate::desktop::backend::{AppWindow, Snapshot, Window};
use crate::desktop::control::{Control, ControlType, LISTED};

/// The executable's file name of process `pid` (`WINWORD.EXE`), UFO's `app_root`.
fn process_name(pid: u32) -> Option<String> {
    use windows::Win32::Foundation::CloseHandle;
    use windows::Win32::System::Threading::{
        OpenProcess, PROCESS_NAME_WIN32, PROCESS_QUERY_LIMITED_INFORMATION,
        QueryFullProcessImageNameW,
    };
    use windows::core::PWSTR;
    let mut buf = [0u16; 1024];
    let mut len = buf.len() as u32;
    // SAFETY: the handle is closed below; the buffer outlives the call and `len` says
    // its size.
    unsafe {
        let handle = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, false, pid).ok()?;
        let named = QueryFullProcessImageNameW(
            handle,
            PROCESS_NAME_WIN32,
            PWSTR(buf.as_mut_ptr()),
            &mut len,
        );
        let _ = CloseHandle(handle);
        named.ok()?;
    }
    let path = String::from_utf16_lossy(&buf[..len as usize]);
    path.rsplit('\\').next().map(str::to_string)
}

fn control_type_of(element: &UIElement) -> ControlType {
    element
        .get_control_type()
        .ok()
        .and_then(|t| ControlType::parse(&format!("{t:?}")))
        .unwrap_or(ControlType::Custom)
}

impl State {
    pub(super) fn top_windows(&self) -> Result<Vec<UIElement>, UiaError> {
        let root = self
            .automation
            .get_root_element()
            .map_err(failed("the desktop"))?;
        let walker = self
            .automation
            .get_control_view_walker()
            .map_err(failed("a tree walker"))?;
        Ok(walker.get_children(&root).unwrap_or_default())
    }

    /// The desktop's top-level windows that show and have a title.
    pub(in crate::desktop::windows) fn windows(&mut self) -> Result<Vec<AppWindow>, UiaError> {
        self.listed.clear();
        let mut out = Vec::new();
        for window in self.top_windows()? {
            let name = window.get_name().unwrap_or_default().trim_end().to_string();
            let rect = rect_of(&window);
            if name.is_empty() || !rect.is_visible() || window.is_offscreen().unwrap_or(true) {
                continue;
            }
            let application = window
                .get_process_id()
                .map(|p| process_name(p).unwrap_or_else(|| format!("process {p}")))
                .unwrap_or_default();
            out.push(AppWindow {
                id: (out.len() + 1).to_string(),
                name,
                application,
                rect,
                handle: self.listed.len(),
            });
            self.listed.push(window);
        }
        Ok(out)
    }

    /// Makes a listed window the one the actions go to.
    pub(in crate::desktop::windows) fn select_window(
        &mut self,
        handle: usize,
    ) -> Result<(), UiaError> {
        let window = self
            .listed
            .get(handle)
            .cloned()
            .ok_or(UiaError::NotListed)?;
        let _ = window.set_focus();
        self.window = Some(window);
        Ok(())
    }

    /// Walks the app window's control view.
    pub(in crate::desktop::windows) fn snapshot(&mut self) -> Result<Snapshot, UiaError> {
        self.elements.clear();
        let Some(window) = self.window.clone() else {
            return Ok(Snapshot::default());
        };
        let walker = self
            .automation
            .get_control_view_walker()
            .map_err(failed("a tree walker"))?;
        // Breadth first, remembering each element's children.
        let mut children: Vec<Vec<usize>> = Vec::new();
        self.elements.push(window.clone());
        children.push(Vec::new());
        let mut next = 0;
        while next < self.elements.len() && self.elements.len() < MAX_NODES {
            let element = self.elements[next].clone();
            if element.is_offscreen().unwrap_or(false) && next > 0 {
                next += 1;
                continue;
            }
            for child in walker.get_children(&element).unwrap_or_default() {
                if self.elements.len() >= MAX_NODES {
                    break;
                }
                children[next].push(self.elements.len());
                self.elements.push(child);
                children.push(Vec::new());
            }
            next += 1;
        }
        let mut controls = Vec::new();
        let mut order = Vec::new();
        let mut stack = vec![0];
        while let Some(i) = stack.pop() {
            order.push(i);
            stack.extend(children[i].iter().rev());
        }
        for i in order {
            let element = &self.elements[i];
            let control_type = control_type_of(element);
            let rect = rect_of(element);
            if !LISTED.contains(&control_type)
                || !rect.is_visible()
                || element.is_offscreen().unwrap_or(true)
            {
                continue;
            }
            controls.push(Control {
                id: (controls.len() + 1).to_string(),
                name: element
                    .get_name()
                    .unwrap_or_default()
                    .trim_end()
                    .to_string(),
                control_type,
                rect,
                editable: element.get_pattern::<UIValuePattern>().is_ok(),
                enabled: element.is_enabled().unwrap_or(false),
                handle: i,
            });
        }
        let tree = self.tree(0, &children);
        let application = window
            .get_process_id()
            .map(|p| process_name(p).unwrap_or_else(|| format!("process {p}")))
            .unwrap_or_default();
        Ok(Snapshot {
            window: Some(Window {
                name: window.get_name().unwrap_or_default(),
                rect: rect_of(&window),
                application,
            }),
            controls,
            tree: Value::Array(vec![tree]),
            nodes: self.elements.len(),
        })
    }

    fn tree(&self, i: usize, children: &[Vec<usize>]) -> Value {
        let element = &self.elements[i];
        let rect = rect_of(element);
        json!({
            "name": element.get_name().unwrap_or_default(),
            "control_type": control_type_of(element).to_string(),
            "rectangle": {"left": rect.x, "top": rect.y, "right": rect.right(), "bottom": rect.bottom()},
            "enabled": element.is_enabled().unwrap_or(false),
            "focused": element.has_keyboard_focus().unwrap_or(false),
            "children": children[i].iter().map(|&c| self.tree(c, children)).collect::<Vec<_>>(),
        })
    }
}
