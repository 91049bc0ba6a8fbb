//! A device's tools, asked for once it registers: `list_tools` through each agent a
//! device of its platform serves (a Windows device's HostAgent and AppAgent, a Linux
//! device's LinuxAgent), merged into one tool set.

use crate::device::config::DeviceSettings;
use crate::device::fleet::Platform;
use crate::device::link::{CallError, Link};
use crate::device::protocol::{self, Route};
use crate::device::tools::{DeviceTool, from_listing};
use crate::tool::ToolCall;

/// Tools a Windows device's HostAgent has that go through it even when its AppAgent
/// lists them too.
const HOST_ONLY: [&str; 3] = [
    "select_application_window",
    "get_desktop_app_info",
    "capture_desktop_screenshot",
];

/// The agents whose tool sets a device of `platform` is asked for.
fn routes(platform: &Platform) -> Vec<Route> {
    let agents: &[&str] = match platform {
        Platform::Windows => &["HostAgent", "AppAgent"],
        _ => &["LinuxAgent"],
    };
    agents
        .iter()
        .map(|a| Route {
            agent_name: (*a).to_string(),
            ..Route::default()
        })
        .collect()
}

/// Asks the device for its tools through each agent it serves; an agent that does not
/// answer (UFO's clients answer nothing for an agent they have no tools for) adds none.
pub(super) async fn list_tools(
    link: &Link,
    platform: &Platform,
    settings: &DeviceSettings,
) -> Vec<DeviceTool> {
    let injected = |name: &str| settings.inject.iter().any(|i| i.argument == name);
    let mut tools: Vec<DeviceTool> = Vec::new();
    for route in routes(platform) {
        let call = ToolCall::action("list_tools", serde_json::Map::new());
        let action = protocol::action(&call, &serde_json::Map::new());
        let response_id = format!("list-{}", call.call_id);
        let frame = protocol::command(&route, &[action], "ufo-batch", "list_tools", &response_id);
        match link
            .call(frame, response_id, settings.command_timeout)
            .await
        {
            Ok(results) => {
                let listed = protocol::result_of(&call, &results).result;
                for tool in from_listing(&listed, &route, &injected) {
                    match tools.iter_mut().find(|t| t.spec.name == tool.spec.name) {
                        // A tool both agents list goes through the AppAgent, but the
                        // HostAgent's own (window selection, the desktop's listing).
                        Some(known) if !HOST_ONLY.contains(&known.spec.name.as_ref()) => {
                            *known = tool
                        }
                        Some(_) => {}
                        None => tools.push(tool),
                    }
                }
            }
            Err(CallError::Timeout(_) | CallError::Gone(_)) => {}
        }
    }
    tools
}
