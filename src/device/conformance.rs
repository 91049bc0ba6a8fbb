//! Every call ufo-batch can make to a Windows device, checked against what UFO's own
//! Windows MCP servers declare (`ufo/client/mcp/local_servers/*.py`, read by
//! `tests/devices/ufo_declarations.py`: no Windows runs here): the screen observations
//! (`observe`), and each desktop tool a recorded plan or an agent calls, as the device
//! executor sends it. A call must name a tool UFO declares, send only parameters it
//! declares (FastMCP refuses others), every one it requires, each of its JSON type.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::executor::named_target;
use super::observe;
use crate::desktop::backend::AppWindow;
use crate::desktop::control::{Control, ControlType, Rect};
use crate::executor::Scope;
use crate::tool::ParamKind;

/// One tool as a UFO server declares it.
#[derive(Debug, Deserialize)]
struct Declared {
    namespace: String,
    file: String,
    line: u32,
    params: BTreeMap<String, DeclaredParam>,
}

#[derive(Debug, Deserialize)]
struct DeclaredParam {
    /// `string`, `integer`, `number`, `boolean`, `array`, `object` or `any`.
    #[serde(rename = "type")]
    kind: String,
    required: bool,
}

/// UFO's declarations, by tool name, read from the copy of UFO's code that
/// `scripts/setup-ufo.sh` set up (it names it in `target/ufo/source`: `UFO_SOURCE`,
/// `../shared/ufo`, or microsoft/UFO fetched at the pinned commit).
fn declarations() -> BTreeMap<String, Vec<Declared>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let named = std::fs::read_to_string(root.join("target/ufo/source")).unwrap_or_default();
    let ufo = Path::new(named.trim());
    assert!(
        !named.trim().is_empty()
            && ufo
                .join("ufo/client/mcp/local_servers/ui_mcp_server.py")
                .is_file(),
        "UFO's code is not set up: run `bash scripts/setup-ufo.sh` (it takes UFO_SOURCE, \
         ../shared/ufo, or fetches microsoft/UFO at the pinned commit), or set \
         UFO_BATCH_SKIP_TESTS=ufo to skip the tests that need it"
    );
    let out = std::process::Command::new("python3")
        .arg(root.join("tests/devices/ufo_declarations.py"))
        .arg(ufo)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the declarations are JSON")
}

/// The namespaces a Windows device's agents reach (UFO's `config/ufo/mcp.yaml`, default
/// tool sets), with whether they collect data (`data_collection`) or act.
const NAMESPACES: [(&str, bool); 4] = [
    ("UICollector", true),
    ("HostUIExecutor", false),
    ("AppUIExecutor", false),
    ("CommandLineExecutor", false),
];

/// What is wrong with calling `tool` with `arguments` as a data collection call or not,
/// in words; empty when UFO declares it so.
fn mismatches(
    all: &BTreeMap<String, Vec<Declared>>,
    tool: &str,
    data: bool,
    arguments: &Map<String, Value>,
) -> Vec<String> {
    let Some(declared) = all.get(tool).and_then(|d| {
        d.iter().find(|d| {
            NAMESPACES
                .iter()
                .any(|(ns, collects)| *ns == d.namespace && *collects == data)
        })
    }) else {
        return vec![format!(
            "`{tool}` ({}) is declared by no UFO Windows server an agent reaches",
            if data { "data_collection" } else { "action" }
        )];
    };
    let at = format!("{}:{}", declared.file, declared.line);
    let mut wrong = Vec::new();
    for (name, value) in arguments {
        match declared.params.get(name) {
            None => wrong.push(format!(
                "`{tool}` gets `{name}`, which {at} does not declare"
            )),
            Some(p) if !fits(&p.kind, value) => wrong.push(format!(
                "`{tool}` gets `{name}` = {value}, where {at} declares {}",
                p.kind
            )),
            Some(_) => {}
        }
    }
    for (name, p) in &declared.params {
        if p.required && !arguments.contains_key(name) {
            wrong.push(format!("`{tool}` lacks `{name}`, which {at} requires"));
        }
    }
    wrong
}

fn fits(kind: &str, value: &Value) -> bool {
    match kind {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

/// A value a plan would give for a parameter of `kind`.
fn sample(kind: &ParamKind) -> Value {
    match kind {
        ParamKind::String => json!("x"),
        ParamKind::Integer | ParamKind::Count => json!(3),
        ParamKind::Boolean => json!(true),
        ParamKind::Number => json!(0.5),
        ParamKind::Schema(s) => match s.get("type").and_then(Value::as_str) {
            Some("array") => json!([]),
            Some("integer") => json!(3),
            _ => json!("x"),
        },
    }
}

#[test]
#[cfg_attr(skip_ufo, ignore = "UFO_BATCH_SKIP_TESTS: needs UFO's code")]
fn every_call_to_a_windows_device_is_one_ufo_declares() {
    let all = declarations();
    let mut wrong = Vec::new();
    // The screen, observed through UFO's data collection tools.
    for scope in [Scope::Desktop, Scope::App] {
        for ask in observe::asks(scope) {
            wrong.extend(mismatches(&all, ask.tool, true, &ask.arguments));
        }
    }
    // Each desktop tool a plan or an agent calls, as the device executor sends it: the
    // control or window named by `name` (and `control_type`), as recordings do.
    let window = AppWindow {
        id: "1".into(),
        name: "x".into(),
        application: "notepad.exe".into(),
        rect: Rect::default(),
        handle: 0,
    };
    let control = Control {
        id: "1".into(),
        name: "x".into(),
        control_type: ControlType::Edit,
        rect: Rect::default(),
        editable: true,
        enabled: true,
        handle: 0,
    };
    // ufo-batch's own names, for its local desktops; a device offers none of them (a
    // plan that calls one fails there saying so).
    let local_only = ["click_element", "select_application"];
    for spec in crate::desktop::tools::desktop_tools() {
        if local_only.contains(&spec.name.as_ref()) {
            continue;
        }
        let declared = all
            .get(spec.name.as_ref())
            .and_then(|d| d.first())
            .map(|d| d.params.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default();
        let takes = |p: &str| declared.iter().any(|d| d == p);
        // Sent with the type the device lists it with (`DeviceExecutor::send`).
        let data = all
            .get(spec.name.as_ref())
            .is_some_and(|d| d.iter().any(|d| d.namespace == "UICollector"));
        // The least a plan gives (what ufo-batch requires, a control by its name), and
        // the most (every parameter ufo-batch takes).
        for every in [false, true] {
            let mut given: Map<String, Value> = spec
                .params
                .iter()
                .filter(|p| every || p.required || p.name == "name")
                .map(|p| (p.name.to_string(), sample(&p.kind)))
                .collect();
            given.remove("id");
            let sent = named_target(
                &spec.name,
                &takes,
                given,
                std::slice::from_ref(&window),
                std::slice::from_ref(&control),
            );
            wrong.extend(mismatches(&all, &spec.name, data, &sent));
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "calls UFO would refuse:\n{}",
        wrong.join("\n")
    );
}

/// The control or window a call means, as UFO's tools get it: the id given when it is
/// listed under the name given, the name's otherwise (a recording's stale id), never a
/// guess from an empty name or from a part of a title two windows share.
#[test]
fn the_target_is_the_one_meant() {
    let control = |id: &str, name: &str| Control {
        id: id.into(),
        name: name.into(),
        control_type: ControlType::Button,
        rect: Rect::default(),
        editable: false,
        enabled: true,
        handle: 0,
    };
    let controls = [
        control("1", "OK"),
        control("2", "OK"),
        control("3", ""),
        control("4", "Cancel"),
    ];
    let window = |id: &str, name: &str| AppWindow {
        id: id.into(),
        name: name.into(),
        application: String::new(),
        rect: Rect::default(),
        handle: 0,
    };
    let windows = [
        window("1", "report - Writer"),
        window("2", "notes - Writer"),
    ];
    let takes = |p: &str| p == "id" || p == "name";
    let sent = |tool: &str, given: Value| {
        let given = given.as_object().cloned().unwrap_or_default();
        let out = named_target(tool, &takes, given, &windows, &controls);
        (
            out["id"].as_str().unwrap().to_string(),
            out["name"].as_str().unwrap().to_string(),
        )
    };
    let pair = |id: &str, name: &str| (id.to_string(), name.to_string());
    // The second of two "OK" buttons, by its id.
    assert_eq!(
        sent("click_input", json!({"id": "2", "name": "OK"})),
        pair("2", "OK")
    );
    // A stale id: the name finds the control.
    assert_eq!(
        sent("click_input", json!({"id": "1", "name": "Cancel"})),
        pair("4", "Cancel")
    );
    // A name alone, and an id alone.
    assert_eq!(
        sent(
            "click_input",
            json!({"name": "Cancel", "control_type": "Button"})
        ),
        pair("4", "Cancel")
    );
    assert_eq!(sent("click_input", json!({"id": "3"})), pair("3", ""));
    // An unnamed control by its id, even named "" in the call.
    assert_eq!(
        sent("click_input", json!({"id": "3", "name": ""})),
        pair("3", "")
    );
    // Windows: an exact title, a part of one window's title, not a part two share.
    assert_eq!(
        sent(
            "select_application_window",
            json!({"name": "notes - Writer"})
        ),
        pair("2", "notes - Writer")
    );
    assert_eq!(
        sent("select_application_window", json!({"name": "report"})),
        pair("1", "report - Writer")
    );
    assert_eq!(
        sent(
            "select_application_window",
            json!({"id": "2", "name": "Writer"})
        ),
        pair("2", "notes - Writer")
    );
}
