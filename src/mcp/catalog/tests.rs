//! Tests of the catalog: a bounded text for thousands of tools, injected arguments
//! hidden, the allow-list, unfilled credentials, inlined references.

use std::time::Duration;

use serde_json::json;

use super::*;
use crate::mcp::config::{Injected, Transport};
use crate::tool::ParamKind;

fn server(tools: Option<Vec<String>>) -> McpServer {
    McpServer {
        name: "linux".into(),
        transport: Transport::Http {
            url: "http://127.0.0.1:1/mcp".into(),
            headers: vec![],
        },
        timeout: Duration::from_secs(5),
        tools,
        inject: vec![Injected {
            argument: "api_key".into(),
            value: "secret-value".into(),
        }],
    }
}

fn listed() -> Vec<rmcp::model::Tool> {
    let schema = json!({
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "the command"},
            "api_key": {"type": "string"},
            "timeout": {"type": "integer", "default": 30},
            "env": {"type": "object", "additionalProperties": {"type": "string"}}
        },
        "required": ["command", "api_key"]
    });
    let info = json!({"type": "object", "properties": {"api_key": {"type": "string"}}, "required": ["api_key"]});
    vec![
        rmcp::model::Tool::new(
            "execute_command",
            "Run a command.",
            schema.as_object().unwrap().clone(),
        ),
        rmcp::model::Tool::new(
            "get_system_info",
            "What the machine is.",
            info.as_object().unwrap().clone(),
        ),
    ]
}

#[test]
fn a_server_listing_thousands_of_tools_adds_a_bounded_text_and_names_what_it_left_out() {
    let schema = json!({"type": "object", "properties": {"q": {"type": "string", "description": "d".repeat(2000)}}});
    let many: Vec<rmcp::model::Tool> = (0..3000)
        .map(|i| {
            rmcp::model::Tool::new(
                format!("tool{i}"),
                "x".repeat(1024),
                schema.as_object().unwrap().clone(),
            )
        })
        .collect();
    let mut bare = server(None);
    bare.inject.clear();
    let c = catalog(&bare, &many).unwrap();
    let text: usize = c.tools.iter().map(|t| prompt_size(&t.spec)).sum();
    assert!(text <= SERVER_TEXT, "{text}");
    assert!(!c.tools.is_empty() && c.tools.len() <= SERVER_TOOLS);
    assert_eq!(c.tools.len() + c.left_out.len(), 3000);
    assert!(c.tools[0].spec.params[0].description.chars().count() <= PARAM_DESCRIPTION);
    let note = c.note("big").unwrap();
    assert!(
        note.contains(&format!(
            "{} of its tools offered to agents and {} left out",
            c.tools.len(),
            c.left_out.len()
        )),
        "{note}"
    );
    assert!(note.contains(&format!("tool{}, ", c.tools.len())), "{note}");
    assert!(note.len() < 1000, "{note}");
}

#[test]
fn injected_arguments_are_hidden_and_names_carry_the_server() {
    let tools = catalog(&server(None), &listed()).unwrap().tools;
    let exec = &tools[0];
    assert_eq!(exec.spec.name, "linux.execute_command");
    assert_eq!(exec.tool, "execute_command");
    let names: Vec<&str> = exec.spec.params.iter().map(|p| p.name.as_ref()).collect();
    assert_eq!(names, ["command", "timeout", "env"]);
    assert!(exec.spec.params[0].required && !exec.spec.params[1].required);
    assert_eq!(exec.spec.params[1].kind, ParamKind::Integer);
    assert!(matches!(exec.spec.params[2].kind, ParamKind::Schema(_)));
    assert_eq!(exec.schema["required"], json!(["command"]));
    assert!(!exec.schema.to_string().contains("api_key"));
    assert!(tools[1].spec.params.is_empty());
    // A call with the key is refused: the model cannot give it.
    let args = json!({"command": "ls", "api_key": "x"});
    assert!(
        exec.spec
            .check_arguments(args.as_object().unwrap())
            .is_err()
    );
}

#[test]
fn the_allow_list_keeps_only_what_it_names_and_names_what_is_missing() {
    let tools = catalog(&server(Some(vec!["get_system_info".into()])), &listed())
        .unwrap()
        .tools;
    assert_eq!(tools.len(), 1);
    let e = catalog(&server(Some(vec!["nope".into()])), &listed())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`tools` names `nope`, which it does not offer (it has: execute_command, get_system_info)"),
        "{e}"
    );
}

#[test]
fn a_required_credential_nothing_injects_is_the_configs_failure() {
    use crate::tool::{Blame, Blamed};
    let mut bare = server(None);
    bare.inject.clear();
    let e = catalog(&bare, &listed()).unwrap_err();
    assert_eq!(e.blame(), Blame::Config);
    assert_eq!(
        e.to_string(),
        "its tool `execute_command` requires `api_key`, a credential the runner fills in, and nothing does: add [[mcp.servers]] inject = { api_key = \"ENV_VAR\" } for `linux` (the variable holding it) to the config"
    );
}

#[test]
fn references_to_definitions_are_inlined_in_parameters() {
    let schema = json!({
        "type": "object",
        "$defs": {
            "Point": {"type": "object", "properties": {"x": {"type": "number"}, "next": {"$ref": "#/$defs/Point"}}}
        },
        "properties": {"at": {"$ref": "#/$defs/Point"}, "path": {"type": "array", "items": {"$ref": "#/$defs/Point"}}},
        "required": ["at"]
    });
    let go = [rmcp::model::Tool::new(
        "go",
        "Go.",
        schema.as_object().unwrap().clone(),
    )];
    let tools = catalog(&server(None), &go).unwrap().tools;
    let ParamKind::Schema(at) = &tools[0].spec.params[0].kind else {
        panic!("{:?}", tools[0].spec.params[0].kind);
    };
    assert_eq!(at["properties"]["x"], json!({"type": "number"}));
    assert_eq!(
        at["properties"]["next"]["properties"]["x"],
        json!({"type": "number"})
    );
    assert!(!at.to_string().contains("$ref"), "{at}");
    let ParamKind::Schema(path) = &tools[0].spec.params[1].kind else {
        panic!()
    };
    assert_eq!(path["items"]["type"], "object");
    assert!(
        tools[0].injected.is_empty(),
        "the tool takes no api_key: none is sent"
    );
    let exec = catalog(&server(None), &listed()).unwrap().tools;
    assert_eq!(exec[0].injected, ["api_key"]);
}
