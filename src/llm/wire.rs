//! The JSON of an OpenAI-style chat completion: the messages and request body we send
//! and the parts of the response we read.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::config::{LlmConfig, MaxTokensField, ResponseFormat};

/// Who says a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    /// Instructions.
    System,
    /// The runner, speaking for the user and the environment.
    User,
    /// The model.
    Assistant,
}

/// One chat message.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Message {
    /// Who says it.
    pub(crate) role: Role,
    /// What is said.
    pub(crate) content: String,
}

impl Message {
    /// A system message.
    pub(crate) fn system(content: impl Into<String>) -> Self {
        Self {
            role: Role::System,
            content: content.into(),
        }
    }

    /// A user message.
    pub(crate) fn user(content: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }

    /// An assistant message.
    pub(crate) fn assistant(content: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// The request body for `messages`; `schema` is the JSON schema replies must follow
/// when the config asks for constrained output.
pub(super) fn request_body(
    config: &LlmConfig,
    messages: &[Message],
    schema: Option<&Value>,
) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(config.model));
    body.insert("messages".into(), json!(messages));
    body.insert("temperature".into(), json!(config.temperature));
    match config.max_tokens_field {
        MaxTokensField::MaxTokens => {
            body.insert("max_tokens".into(), json!(config.max_tokens));
        }
        MaxTokensField::MaxCompletionTokens => {
            body.insert("max_completion_tokens".into(), json!(config.max_tokens));
        }
        MaxTokensField::None => {}
    }
    match (config.response_format, schema) {
        (ResponseFormat::None, _) => {}
        (ResponseFormat::JsonObject, Some(schema)) => {
            body.insert(
                "response_format".into(),
                json!({"type": "json_object", "schema": schema}),
            );
        }
        (ResponseFormat::JsonObject, None) => {
            body.insert("response_format".into(), json!({"type": "json_object"}));
        }
        (ResponseFormat::JsonSchema, Some(schema)) => {
            body.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": "reply", "strict": false, "schema": schema}}),
            );
        }
        (ResponseFormat::JsonSchema, None) => {
            body.insert("response_format".into(), json!({"type": "json_object"}));
        }
    }
    Value::Object(body)
}

/// The parts of a chat completion we use.
#[derive(Debug, Deserialize)]
pub(super) struct Completion {
    pub(super) choices: Vec<Choice>,
    #[serde(default)]
    pub(super) usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Choice {
    pub(super) message: ChoiceMessage,
}

#[derive(Debug, Deserialize)]
pub(super) struct ChoiceMessage {
    #[serde(default)]
    pub(super) content: Option<String>,
    #[serde(default)]
    pub(super) refusal: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    pub(super) prompt_tokens: u64,
    #[serde(default)]
    pub(super) completion_tokens: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_tokens_field_is_configurable() {
        let mut c = LlmConfig::new("m");
        let msgs = [Message {
            role: Role::User,
            content: "hi".into(),
        }];
        assert_eq!(request_body(&c, &msgs, None)["max_tokens"], 2000);
        c.max_tokens_field = MaxTokensField::MaxCompletionTokens;
        let body = request_body(&c, &msgs, None);
        assert_eq!(body["max_completion_tokens"], 2000);
        assert!(body.get("max_tokens").is_none());
        c.max_tokens_field = MaxTokensField::None;
        c.response_format = ResponseFormat::JsonObject;
        let body = request_body(&c, &msgs, Some(&json!({"type": "object"})));
        assert!(body.get("max_completion_tokens").is_none());
        assert_eq!(
            body["response_format"],
            json!({"type": "json_object", "schema": {"type": "object"}})
        );
        assert_eq!(
            body["messages"][0],
            json!({"role": "user", "content": "hi"})
        );
    }
}
