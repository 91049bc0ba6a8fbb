//! UI Automation on its own thread: the thread owns the automation object, the task's
//! app processes and the last snapshot's elements, and runs the jobs the async side
//! sends it one after another (COM objects belong to the thread that made them).

use std::path::Path;
use std::process::{Child, Command};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uiautomation::patterns::{UIInvokePattern, UITextPattern, UIValuePattern, UIWindowPattern};
use uiautomation::{UIAutomation, UIElement};

use crate::desktop::action::Button;
use crate::desktop::backend::{AppWindow, Snapshot, Window};
use crate::desktop::control::{Control, ControlType, LISTED, Rect};
use crate::desktop::screenshot::Image;

/// The most elements a walk visits.
const MAX_NODES: usize = 5000;

type Job = Box<dyn FnOnce(&mut State) + Send>;

/// The handle of the UI Automation thread.
pub(super) struct Uia {
    jobs: Option<mpsc::Sender<Job>>,
}

fn ui_error(what: &str) -> impl Fn(uiautomation::Error) -> String + '_ {
    move |e| format!("UI Automation failed ({what}): {e}")
}

impl Uia {
    /// Starts the thread and its automation object.
    pub(super) fn start() -> Result<Self, String> {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (ready, started) = mpsc::channel();
        std::thread::Builder::new()
            .name("ui-automation".to_string())
            .spawn(move || {
                let automation = match UIAutomation::new() {
                    Ok(a) => a,
                    Err(e) => {
                        let _ = ready.send(Err(format!("UI Automation is not available: {e}")));
                        return;
                    }
                };
                let _ = ready.send(Ok(()));
                let mut state = State {
                    automation,
                    apps: Vec::new(),
                    window: None,
                    elements: Vec::new(),
                    listed: Vec::new(),
                };
                while let Ok(job) = inbox.recv() {
                    job(&mut state);
                }
                let _ = state.close_apps(Duration::ZERO);
            })
            .map_err(|e| format!("cannot start the UI Automation thread: {e}"))?;
        started
            .recv()
            .map_err(|_| "the UI Automation thread ended while starting".to_string())??;
        Ok(Self { jobs: Some(jobs) })
    }

    /// Runs `job` on the thread and waits for its answer.
    pub(super) async fn call<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut State) -> Result<T, String> + Send + 'static,
    ) -> Result<T, String> {
        let gone = || "the UI Automation thread has ended".to_string();
        let (answer, answered) = tokio::sync::oneshot::channel();
        self.jobs
            .as_ref()
            .ok_or_else(gone)?
            .send(Box::new(move |state| {
                let _ = answer.send(job(state));
            }))
            .map_err(|_| gone())?;
        answered.await.map_err(|_| gone())?
    }

    /// Lets the thread end (it kills what is left of the apps).
    pub(super) fn stop(&mut self) {
        self.jobs.take();
    }
}

/// What the UI Automation thread holds.
pub(super) struct State {
    automation: UIAutomation,
    apps: Vec<Child>,
    /// The app window the actions go to.
    window: Option<UIElement>,
    /// The last snapshot's elements (a control's handle indexes them).
    elements: Vec<UIElement>,
    /// The windows the last `windows` listed (an app window's handle indexes them).
    listed: Vec<UIElement>,
}

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

fn rect_of(element: &UIElement) -> Rect {
    element
        .get_bounding_rectangle()
        .map(|r| Rect {
            x: r.get_left(),
            y: r.get_top(),
            width: r.get_width(),
            height: r.get_height(),
        })
        .unwrap_or_default()
}

fn control_type_of(element: &UIElement) -> ControlType {
    element
        .get_control_type()
        .ok()
        .and_then(|t| ControlType::parse(&format!("{t:?}")))
        .unwrap_or(ControlType::Custom)
}

impl State {
    fn top_windows(&self) -> Result<Vec<UIElement>, String> {
        let root = self
            .automation
            .get_root_element()
            .map_err(ui_error("the desktop"))?;
        let walker = self
            .automation
            .get_control_view_walker()
            .map_err(ui_error("a tree walker"))?;
        Ok(walker.get_children(&root).unwrap_or_default())
    }

    /// Starts an app in `cwd` and waits for its window.
    pub(super) fn open_app(
        &mut self,
        argv: &[String],
        cwd: &Path,
        timeout: Duration,
    ) -> Result<String, String> {
        let before = self.top_windows()?;
        let (program, args) = argv.split_first().ok_or("no program given")?;
        // The runner's environment (API keys among it) is not the app's.
        let keep = [
            "SYSTEMROOT",
            "WINDIR",
            "PATH",
            "TEMP",
            "TMP",
            "USERPROFILE",
            "APPDATA",
            "LOCALAPPDATA",
            "PROGRAMFILES",
            "PROGRAMDATA",
            "COMSPEC",
            "HOMEDRIVE",
            "HOMEPATH",
            "USERNAME",
        ];
        let child = Command::new(program)
            .args(args)
            .env_clear()
            .envs(
                keep.iter()
                    .filter_map(|k| std::env::var_os(k).map(|v| (k, v))),
            )
            .current_dir(cwd)
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        let pid = child.id();
        self.apps.push(child);
        let clock = Instant::now();
        loop {
            for window in self.top_windows()? {
                let mine = window.get_process_id().is_ok_and(|p| p == pid);
                // Office hands a document to a running instance: a window that was not
                // there before is the app's too.
                let new = !before.iter().any(|b| {
                    self.automation
                        .compare_elements(b, &window)
                        .unwrap_or(false)
                });
                if mine || new {
                    let name = window.get_name().unwrap_or_default();
                    self.window = Some(window);
                    return Ok(format!(
                        "{name} showed its window in {:.1}s",
                        clock.elapsed().as_secs_f64()
                    ));
                }
            }
            if clock.elapsed() > timeout {
                return Err(format!(
                    "{program} showed no window within {}s",
                    timeout.as_secs()
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The desktop's top-level windows that show and have a title.
    pub(super) fn windows(&mut self) -> Result<Vec<AppWindow>, String> {
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
    pub(super) fn select_window(&mut self, handle: usize) -> Result<(), String> {
        let window = self
            .listed
            .get(handle)
            .cloned()
            .ok_or("the window is not in the last list")?;
        let _ = window.set_focus();
        self.window = Some(window);
        Ok(())
    }

    /// Walks the app window's control view.
    pub(super) fn snapshot(&mut self) -> Result<Snapshot, String> {
        self.elements.clear();
        let Some(window) = self.window.clone() else {
            return Ok(Snapshot::default());
        };
        let walker = self
            .automation
            .get_control_view_walker()
            .map_err(ui_error("a tree walker"))?;
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

    fn element(&self, handle: usize) -> Result<&UIElement, String> {
        self.elements
            .get(handle)
            .ok_or_else(|| "the control is not in the current snapshot".to_string())
    }

    pub(super) fn click(
        &mut self,
        handle: usize,
        button: Button,
        double: bool,
    ) -> Result<String, String> {
        let element = self.element(handle)?;
        if button == Button::Left
            && !double
            && let Ok(invoke) = element.get_pattern::<UIInvokePattern>()
        {
            invoke.invoke().map_err(ui_error("invoke"))?;
            return Ok("its Invoke pattern".to_string());
        }
        let done = match (button, double) {
            (Button::Left, false) => element.click(),
            (Button::Left, true) => element.double_click(),
            (Button::Right, _) => element.right_click(),
            (Button::Middle, _) => {
                let at = rect_of(element).center();
                return super::keys::click_at(at, button, double).map(|()| "the mouse".to_string());
            }
        };
        done.map_err(ui_error("a click"))?;
        Ok("the mouse".to_string())
    }

    pub(super) fn set_text(&mut self, handle: usize, text: &str) -> Result<(), String> {
        let element = self.element(handle)?;
        let value = element.get_pattern::<UIValuePattern>().map_err(|_| {
            "the control takes no text (type into it with keyboard_input instead)".to_string()
        })?;
        value.set_value(text).map_err(ui_error("setting text"))?;
        // A control may keep its text (read-only, or one it checks): read it back (a
        // password box reads back nothing).
        if element.is_password().unwrap_or(false) {
            return Ok(());
        }
        let now = value
            .get_value()
            .map_err(ui_error("reading the text back"))?;
        if now.contains(text.trim()) {
            Ok(())
        } else {
            Err(format!(
                "the control did not take the text: it reads {:?}",
                crate::text::shorten(&now, 200)
            ))
        }
    }

    /// Brings the selected window to the foreground, where the keys go.
    pub(super) fn focus_window(&mut self) -> Result<String, String> {
        let window = self.window.as_ref().ok_or("no window is selected")?;
        window.set_focus().map_err(ui_error("the focus"))?;
        Ok("the window".to_string())
    }

    pub(super) fn focus(&mut self, handle: usize) -> Result<(), String> {
        self.element(handle)?
            .set_focus()
            .map_err(ui_error("the focus"))
    }

    pub(super) fn texts(&mut self, handle: usize) -> Result<String, String> {
        let element = self.element(handle)?;
        if let Ok(value) = element.get_pattern::<UIValuePattern>()
            && let Ok(text) = value.get_value()
        {
            return Ok(text);
        }
        if let Ok(text) = element.get_pattern::<UITextPattern>()
            && let Ok(range) = text.get_document_range()
            && let Ok(text) = range.get_text(-1)
        {
            return Ok(text.replace("\r\n", "\n").replace('\r', "\n"));
        }
        element.get_name().map_err(ui_error("a name"))
    }

    /// Asks the app's windows to close, waits up to `timeout`, then ends what is left
    /// (with its child processes).
    pub(super) fn close_apps(&mut self, timeout: Duration) -> Result<String, String> {
        if let Some(window) = self.window.take()
            && let Ok(pattern) = window.get_pattern::<UIWindowPattern>()
        {
            let _ = pattern.close();
        }
        let clock = Instant::now();
        while clock.elapsed() < timeout
            && self
                .apps
                .iter_mut()
                .any(|c| matches!(c.try_wait(), Ok(None)))
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut killed = 0;
        for app in &mut self.apps {
            if matches!(app.try_wait(), Ok(None)) {
                let _ = Command::new("taskkill")
                    .args(["/PID", &app.id().to_string(), "/T", "/F"])
                    .output();
                let _ = app.wait();
                killed += 1;
            }
        }
        self.apps.clear();
        Ok(match killed {
            0 => "the app closed".to_string(),
            n => format!(
                "{n} app processes did not close within {}s and were killed",
                timeout.as_secs()
            ),
        })
    }
}

/// The whole screen.
pub(super) fn screenshot() -> Result<Image, String> {
    let shot = uiautomation::screenshots::Screenshot::capture_desktop()
        .map_err(ui_error("a screenshot"))?
        .to_rgba();
    let rgb = shot
        .pixels()
        .chunks_exact(4)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    Ok(Image {
        width: shot.width(),
        height: shot.height(),
        rgb,
    })
}
