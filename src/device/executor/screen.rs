//! A Windows device's screen and the app its agents work in: observed through UFO's
//! data collection tools and saved as the step's screenshots; a window or control named
//! as UFO's UI tools name one (`id` and `name`, from the last listing); the window the
//! HostAgent selected, whose app's tools (its COM tools) the AppAgent's calls go to.

use serde_json::{Map, Value};

use super::{DeviceExecutor, SELECT_WINDOW};
use crate::device::error::DeviceError;
use crate::device::observe;
use crate::device::tools::{DeviceTool, from_listing};
use crate::executor::{Listed, Scope, ScreenView};
use crate::tool::{ResultStatus, ToolCall, ToolResult, ToolSpec, ToolType};

impl DeviceExecutor {
    /// The tools the selected app adds on a Windows device (its COM tools, which UFO's
    /// client offers the AppAgent by the app's `root_name`, config/ufo/mcp.yaml), listed
    /// once per app selected.
    pub(super) async fn list_app_tools(&mut self) {
        let Some(root) = self.root.clone() else {
            return;
        };
        if self.app_tools_of.as_deref() == Some(root.as_str()) {
            return;
        }
        self.app_tools_of = Some(root.clone());
        let Some(listing) = self.tool("list_tools").cloned().or_else(|| {
            // The meta tool is not among the listed ones: asked of the AppAgent.
            let route = self
                .lease
                .device
                .tools
                .iter()
                .find(|t| t.route.agent_name == "AppAgent")?
                .route
                .clone();
            Some(DeviceTool {
                spec: ToolSpec {
                    limit: None,
                    name: "list_tools".into(),
                    description: "".into(),
                    params: Vec::new(),
                },
                tool_type: ToolType::Action,
                route,
                injected: Vec::new(),
                unfilled: Vec::new(),
            })
        }) else {
            return;
        };
        let call = ToolCall::action("list_tools", Map::new());
        let listed = self.send(&call, listing.clone(), Map::new()).await;
        if listed.status != ResultStatus::Success {
            return;
        }
        let injected: Vec<String> = self.run.inject.iter().map(|i| i.argument.clone()).collect();
        let is_injected = |name: &str| injected.iter().any(|i| i == name);
        let added: Vec<DeviceTool> = from_listing(&listed.result, &listing.route, &is_injected)
            .into_iter()
            .filter(|t| {
                self.lease
                    .device
                    .tools
                    .iter()
                    .all(|d| d.spec.name != t.spec.name)
            })
            .collect();
        self.app_tools = added;
    }

    /// Observes a Windows device's screen for `scope` (UFO's data collection tools);
    /// saves it as step `step`'s screenshots (the final ones without a step).
    pub(super) async fn observe(
        &mut self,
        step: Option<u32>,
        scope: Scope,
    ) -> Result<(String, ScreenView), DeviceError> {
        let clock = std::time::Instant::now();
        let mut answers = Vec::new();
        for ask in observe::asks(scope) {
            let answer = self
                .collect(ask.tool, ask.arguments)
                .await
                .ok_or_else(|| DeviceError::NoObserver {
                    device: self.device().to_string(),
                    tool: ask.tool,
                })??;
            answers.push(answer);
        }
        let view = observe::view(scope, &answers)?;
        match &view.listed {
            Listed::Windows(w) => self.windows = w.clone(),
            Listed::Controls(c) => self.controls = c.clone(),
            Listed::Nothing => {}
        }
        // The image's own words (a text today).
        view.clean
            .save(&self.run.dir.screenshot(step, false))
            .map_err(|e| DeviceError::NotSaved(e.to_string()))?;
        view.annotated
            .save(&self.run.dir.screenshot(step, true))
            .map_err(|e| DeviceError::NotSaved(e.to_string()))?;
        let what = match &view.listed {
            Listed::Windows(w) => format!("{} application windows", w.len()),
            Listed::Controls(c) => format!("{} controls", c.len()),
            Listed::Nothing => "the screen".to_string(),
        };
        let note = format!(
            "observed {what} on device {} in {:.3}s",
            self.device(),
            clock.elapsed().as_secs_f64()
        );
        Ok((note, view))
    }

    /// The arguments of a call of `tool`, its control or window named as UFO's tools
    /// name them (see [`named_target`]).
    pub(super) fn labelled(
        &self,
        tool: &DeviceTool,
        given: Map<String, Value>,
    ) -> Map<String, Value> {
        let takes = |p: &str| tool.spec.params.iter().any(|x| x.name == p);
        named_target(
            &tool.spec.name,
            &takes,
            given,
            &self.windows,
            &self.controls,
        )
    }

    /// A successful `select_application_window` answer (`{"root_name", "window_info":
    /// {"name", "title", ...}}`, ui_mcp_server.py) with the window and application named
    /// as the agents read them; the app's root name routes the AppAgent's next calls
    /// (UFO's client picks an app's tool set, its COM tools among them, by `root_name`).
    pub(super) fn selected(&mut self, result: &mut ToolResult) {
        let root = result
            .result
            .get("root_name")
            .and_then(Value::as_str)
            .map(str::to_string);
        let info = result.result.get("window_info");
        let title = info
            .and_then(|i| i.get("title").or_else(|| i.get("name")))
            .and_then(Value::as_str)
            .map(str::to_string);
        self.process = info
            .and_then(|i| i.get("name").or_else(|| i.get("title")))
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Value::Object(m) = &mut result.result {
            if let Some(title) = &title {
                m.insert("window".into(), Value::String(title.clone()));
            }
            if let Some(root) = &root {
                m.insert("application".into(), Value::String(root.clone()));
            }
        }
        self.root = root;
    }
}

/// UFO's Windows UI tools name a control, and `select_application_window` a window, by
/// both `id` (its label in the last listing) and `name` (`ui_mcp_server.py`: each declares
/// `id: str` and `name: str`, both required, and FastMCP refuses any other argument). A
/// call of `tool` (which `takes` the parameters it does) that names one by `name` (and
/// `control_type`), as recordings do, or by `id` alone, has the other found in the last
/// listing (`windows`, `controls`); `control_type`, which UFO's tools do not take, only
/// helps to find it.
pub(in crate::device) fn named_target(
    tool: &str,
    takes: &dyn Fn(&str) -> bool,
    mut given: Map<String, Value>,
    windows: &[crate::desktop::backend::AppWindow],
    controls: &[crate::desktop::control::Control],
) -> Map<String, Value> {
    if !(takes("id") && takes("name")) {
        return given;
    }
    let text = |v: Option<&Value>| match v {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let id = text(given.get("id"));
    let name = text(given.get("name"));
    let wanted_type = text(given.get("control_type"))
        .and_then(|t| crate::desktop::control::ControlType::parse(&t));
    // The id given decides when it is listed and its name is the one given (UFO works by
    // id: `_verify_id`); a stale id (a recording's, from another screen) gives way to the
    // name; a name that finds nothing leaves the id as given.
    let name_given = name.as_deref().filter(|n| !n.is_empty());
    let found = if tool == SELECT_WINDOW {
        let by_id = id
            .as_deref()
            .and_then(|i| windows.iter().find(|w| w.id == i));
        let by_name = name_given.and_then(|n| {
            let n = n.to_lowercase();
            let exact = windows.iter().find(|w| w.name.to_lowercase() == n);
            let mut partial = windows
                .iter()
                .filter(|w| w.name.to_lowercase().contains(&n));
            // A part of a title decides only when it is one window's.
            exact.or_else(|| match (partial.next(), partial.next()) {
                (Some(one), None) => Some(one),
                _ => None,
            })
        });
        match by_id {
            Some(w) if name_given.is_none_or(|n| n.eq_ignore_ascii_case(&w.name)) => Some(w),
            _ => by_name.or(by_id),
        }
        .map(|w| (w.id.clone(), w.name.clone()))
    } else {
        let by_id = id
            .as_deref()
            .and_then(|i| controls.iter().find(|c| c.id == i));
        let by_name = name_given.and_then(|n| {
            controls
                .iter()
                .find(|c| c.name == n && wanted_type.is_none_or(|t| t == c.control_type))
        });
        match by_id {
            Some(c) if name_given.is_none_or(|n| n == c.name) => Some(c),
            _ => by_name.or(by_id),
        }
        .map(|c| (c.id.clone(), c.name.clone()))
    };
    let (id, name) = match found {
        Some(found) => found,
        None => (id.unwrap_or_default(), name.unwrap_or_default()),
    };
    given.insert("id".into(), Value::String(id));
    given.insert("name".into(), Value::String(name));
    if !takes("control_type") {
        given.remove("control_type");
    }
    given
}
