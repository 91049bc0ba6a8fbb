//! What a desktop agent's step adds to its `response.log` line: UFO's HostAgent and
//! AppAgent keys (ufo.md §4), with the ones UFO drops, and the keys of the first action
//! every agent's line has.

use serde_json::{Map, Value, json};

use super::host;
use crate::record::ActionRecord;
use crate::session::AgentStep;
use crate::tool::ResultStatus;

/// The keys every agent's response.log line has for its first action (UFO's).
fn action_keys(m: &mut Map<String, Value>, actions: &[ActionRecord]) {
    let first = actions.first();
    m.insert(
        "function_call".into(),
        json!(first.map(|a| a.function.clone()).unwrap_or_default()),
    );
    m.insert(
        "action_representation".into(),
        json!(first.map(|a| a.action_string.clone()).unwrap_or_default()),
    );
    m.insert(
        "action_type".into(),
        json!(
            actions
                .iter()
                .map(|a| a.result.namespace.clone())
                .collect::<Vec<_>>()
        ),
    );
}

/// UFO's HostAgent keys of response.log (ufo.md §4), with the ones UFO drops. The
/// `application` is the window selected (its title), `app_root` its application.
pub(super) fn host_keys(
    reply: &host::HostReply,
    step: &AgentStep,
    window: Option<&(String, String)>,
    assigned: u32,
) -> Map<String, Value> {
    let (title, app) = window.cloned().unwrap_or_default();
    let mut m = Map::new();
    m.insert("current_subtask".into(), json!(reply.current_subtask));
    m.insert("message".into(), json!(reply.message));
    m.insert("questions".into(), json!(reply.questions));
    action_keys(&mut m, &step.actions);
    m.insert(
        "arguments".into(),
        json!(
            step.actions
                .first()
                .map(|a| a.arguments.clone())
                .unwrap_or_default()
        ),
    );
    m.insert(
        "results".into(),
        json!(step.actions.first().map(|a| a.result.result.clone())),
    );
    m.insert(
        "last_error".into(),
        json!(step.actions.iter().find_map(|a| a.result.error.clone())),
    );
    m.insert("application".into(), json!(title));
    m.insert("app_root".into(), json!(app));
    m.insert("subtask_index".into(), json!(assigned));
    m
}

/// UFO's AppAgent keys of response.log (ufo.md §4): `app_root` its application,
/// `application_process_name` the window's title.
pub(super) fn app_keys(
    save_screenshot: &Option<Value>,
    actions: &[ActionRecord],
    application: &str,
    window: Option<&(String, String)>,
) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("app_root".into(), json!(application));
    m.insert(
        "application_process_name".into(),
        json!(window.map(|w| w.0.clone()).unwrap_or_default()),
    );
    action_keys(&mut m, actions);
    m.insert(
        "action_success".into(),
        json!(
            actions
                .iter()
                .filter(|a| a.result.status == ResultStatus::Success)
                .map(|a| json!({"function": a.function, "arguments": a.arguments}))
                .collect::<Vec<_>>()
        ),
    );
    m.insert(
        "save_screenshot".into(),
        save_screenshot
            .clone()
            .unwrap_or_else(|| json!({"save": false, "reason": ""})),
    );
    m
}
