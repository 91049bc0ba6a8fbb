//! Tests of the Anthropic conversation: toolset members and the older tool, results in
//! order, old images folded.

use super::read::chord_names;
use super::*;
use crate::llm::computer::{ModelAction, Outcome};

fn png() -> Png {
    Png {
        bytes: std::sync::Arc::new(vec![1, 2, 3]),
        width: 1280,
        height: 800,
    }
}

#[test]
fn toolset_members_and_the_older_tool_read_alike() {
    let content = vec![
        json!({"type": "text", "text": "I will save."}),
        json!({"type": "tool_use", "id": "t1", "name": "left_click", "toolset_name": "computer",
               "caller": {"type": "direct"}, "input": {"coordinate": [10, 20], "text": "shift"}}),
        json!({"type": "tool_use", "id": "t2", "name": "key", "toolset_name": "computer",
               "input": {"text": "ctrl+a Delete"}}),
        json!({"type": "tool_use", "id": "t3", "name": "computer",
               "input": {"action": "scroll", "coordinate": [5, 5], "scroll_direction": "up", "scroll_amount": 2}}),
        json!({"type": "tool_use", "id": "t4", "name": "computer", "input": {"action": "warp"}}),
        // The older tool as the SDK dumps it: a null toolset.
        json!({"type": "tool_use", "id": "t5", "name": "computer", "toolset_name": null,
               "input": {"action": "left_click", "coordinate": [3, 4]}}),
        json!({"type": "tool_use", "id": "t6", "name": "left_click", "toolset_name": "computer",
               "input": {"coordinate": ["100", "abc"]}}),
    ];
    let turn = read(&content);
    assert_eq!(turn.thought.as_deref(), Some("I will save."));
    let ids: Vec<&str> = turn.calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["t1", "t2", "t2", "t3", "t4", "t5", "t6"]);
    assert!(matches!(
        turn.calls[5].action,
        Ok(ModelAction::Click {
            at: Some((3.0, 4.0)),
            ..
        })
    ));
    assert!(
        turn.calls[6]
            .action
            .as_ref()
            .unwrap_err()
            .contains("has a `coordinate` that is not [x, y]")
    );
    assert_eq!(
        turn.calls[0].action,
        Ok(ModelAction::Click {
            at: Some((10.0, 20.0)),
            button: "left".into(),
            count: 1,
            keys: vec!["shift".into()]
        })
    );
    assert_eq!(
        turn.calls[1].action,
        Ok(ModelAction::Keypress {
            keys: vec!["ctrl".into(), "a".into()],
            repeat: 1
        })
    );
    assert!(matches!(turn.calls[3].action, Ok(ModelAction::Scroll { dy, .. }) if dy == -2.0));
    assert!(
        turn.calls[4]
            .action
            .as_ref()
            .unwrap_err()
            .starts_with("unknown action `warp`")
    );
    assert_eq!(chord_names("ctrl++"), vec!["ctrl", "+"]);
}

#[test]
fn every_tool_use_gets_its_result_in_order_and_old_images_fold() {
    let mut model = AnthropicModel::new("claude", AnthropicTool::Toolset, 1024, "sys".into(), 2);
    model.pending = vec!["t1".into(), "t2".into(), "t3".into()];
    let outcomes = vec![
        Outcome {
            id: "t1".into(),
            result: Ok("clicked".into()),
            skipped: false,
            picture: None,
        },
        Outcome {
            id: "t2".into(),
            result: Err("no key is named \"warp\"".into()),
            skipped: false,
            picture: None,
        },
    ];
    let message = model.user_message(&Ask {
        instruction: None,
        outcomes: &outcomes,
        screen: &png(),
        acknowledged: &[],
        correction: None,
    });
    let content = message["content"].as_array().unwrap();
    assert_eq!(content[0]["tool_use_id"], "t1");
    assert_eq!(content[0]["toolset_name"], "computer");
    assert!(content[0].get("is_error").is_none());
    assert_eq!(content[1]["is_error"], true);
    assert!(
        content[1]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("failed: no key is named")
    );
    assert_eq!(content[2]["tool_use_id"], "t3");
    assert_eq!(content[2]["is_error"], true);
    assert_eq!(content[3]["type"], "image");
    let mut messages = vec![
        json!({"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "a"}]}),
        json!({"role": "user", "content": [{"type": "tool_result", "content": [{"type": "image"}]}]}),
        json!({"role": "user", "content": [{"type": "image"}]}),
    ];
    fold_images(&mut messages, 2);
    assert_eq!(messages[0]["content"][0]["text"], OMITTED);
    assert_eq!(messages[1]["content"][0]["content"][0]["type"], "image");
    assert_eq!(messages[2]["content"][0]["type"], "image");
}
