//! Tests of the OpenAI conversation: a batch of actions read in order, every call
//! answered with the screen, a message alone as the end.

use super::*;
use crate::llm::computer::{ModelAction, Outcome, Png, SafetyCheck};

fn png() -> Png {
    Png {
        bytes: std::sync::Arc::new(vec![0x89, b'P', b'N', b'G']),
        width: 1280,
        height: 800,
    }
}

#[test]
fn a_batch_of_actions_is_read_in_order_with_its_checks() {
    let answer = json!({
        "id": "resp_1",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Open the file menu."}]},
            {"type": "computer_call", "id": "cu_1", "call_id": "call_1", "status": "completed",
             "pending_safety_checks": [{"id": "sc_1", "code": "sensitive_domain", "message": "careful"}],
             "actions": [
                {"type": "click", "button": "left", "x": 10, "y": 20, "keys": ["CTRL"]},
                {"type": "type", "text": "naïve"},
                {"type": "teleport"},
                {"type": "click", "button": "left"}
             ]}
        ]
    });
    let turn = read(&answer).unwrap();
    assert_eq!(turn.thought.as_deref(), Some("Open the file menu."));
    assert_eq!(turn.calls.len(), 4);
    assert!(turn.calls.iter().all(|c| c.id == "call_1"));
    assert_eq!(
        turn.calls[0].action,
        Ok(ModelAction::Click {
            at: Some((10.0, 20.0)),
            button: "left".into(),
            count: 1,
            keys: vec!["CTRL".into()]
        })
    );
    assert!(
        turn.calls[2]
            .action
            .as_ref()
            .unwrap_err()
            .starts_with("unknown action type `teleport`")
    );
    assert_eq!(
        turn.calls[3].action,
        Err("the `click` action needs `x` and `y`".to_string())
    );
    assert_eq!(
        turn.safety_checks[0].code.as_deref(),
        Some("sensitive_domain")
    );
    assert!(turn.message.is_none());
}

#[test]
fn the_next_request_answers_every_call_with_the_screen() {
    let mut model = OpenAiModel::new("gpt-5.4", OpenAiTool::Computer, 4096);
    let first = model.body(&Ask {
        instruction: Some("do it"),
        outcomes: &[],
        screen: &png(),
        acknowledged: &[],
        correction: None,
    });
    assert_eq!(first["tools"], json!([{"type": "computer"}]));
    assert_eq!(first["truncation"], "auto");
    assert_eq!(first["input"][0]["content"][1]["detail"], "original");
    assert!(first.get("previous_response_id").is_none());
    model.previous = Some("resp_1".into());
    model.pending = vec!["call_1".into()];
    let check = SafetyCheck {
        id: "sc_1".into(),
        code: Some("sensitive_domain".into()),
        message: None,
        call_id: Some("call_1".into()),
    };
    let failed = Outcome {
        id: "call_1".into(),
        result: Err("(5000, 10) is off the screen".into()),
        skipped: false,
        picture: None,
    };
    let next = model.body(&Ask {
        instruction: None,
        outcomes: &[failed],
        screen: &png(),
        acknowledged: &[check],
        correction: None,
    });
    assert_eq!(next["previous_response_id"], "resp_1");
    let output = &next["input"][0];
    assert_eq!(output["type"], "computer_call_output");
    assert_eq!(output["call_id"], "call_1");
    assert_eq!(output["output"]["type"], "computer_screenshot");
    assert!(output["output"].get("detail").is_none());
    assert_eq!(output["acknowledged_safety_checks"][0]["id"], "sc_1");
    let note = next["input"][1]["content"][0]["text"].as_str().unwrap();
    assert!(
        note.contains("failed: (5000, 10) is off the screen"),
        "{note}"
    );
    let preview = OpenAiModel::new(
        "cu",
        OpenAiTool::Preview {
            environment: "linux".into(),
        },
        10,
    );
    assert_eq!(
        preview.tool_json(1280, 800),
        json!({"type": "computer_use_preview", "display_width": 1280, "display_height": 800, "environment": "linux"})
    );
}

#[test]
fn a_message_alone_is_the_end_and_an_error_is_unusable() {
    let end = read(&json!({"id": "r", "output": [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "All saved."}]}
    ]}))
    .unwrap();
    assert_eq!(end.message.as_deref(), Some("All saved."));
    assert!(end.calls.is_empty());
    let Err(ModelError::Unusable(why)) =
        read(&json!({"id": "r", "error": {"code": "x", "message": "boom"}, "output": []}))
    else {
        panic!()
    };
    assert_eq!(why, "the response failed: boom");
}
