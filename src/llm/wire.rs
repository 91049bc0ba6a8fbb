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
    /// What is said: text, or text and images.
    pub(crate) content: Content,
}

/// A message's content: plain text, or OpenAI's content parts (text and images).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum Content {
    /// Text only.
    Text(String),
    /// Text and images, in order.
    Parts(Vec<Part>),
}

/// One content part.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Part {
    /// A text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, as a `data:` URL.
    ImageUrl {
        /// The image.
        image_url: ImageUrl,
    },
}

/// An image part's address.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct ImageUrl {
    /// `data:image/png;base64,...`.
    pub(crate) url: String,
}

impl Part {
    /// A PNG image as a part (base64 in a `data:` URL).
    pub(crate) fn png(bytes: &[u8]) -> Self {
        use base64::Engine;
        let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
        Self::ImageUrl {
            image_url: ImageUrl {
                url: format!("data:image/png;base64,{encoded}"),
            },
        }
    }

    /// A text part.
    pub(crate) fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }
}

impl Message {
    /// A system message.
    pub(crate) fn system(content: impl Into<String>) -> Self {
        Self {
            role: Role::System,
            content: Content::Text(content.into()),
        }
    }

    /// A user message.
    pub(crate) fn user(content: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: Content::Text(content.into()),
        }
    }

    /// A user message of text and images.
    pub(crate) fn user_parts(parts: Vec<Part>) -> Self {
        Self {
            role: Role::User,
            content: Content::Parts(parts),
        }
    }

    /// An assistant message.
    pub(crate) fn assistant(content: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: Content::Text(content.into()),
        }
    }

    /// The message's text (its text parts, one after another).
    #[cfg(test)]
    pub(crate) fn text(&self) -> String {
        match &self.content {
            Content::Text(t) => t.clone(),
            Content::Parts(parts) => parts
                .iter()
                .filter_map(|p| match p {
                    Part::Text { text } => Some(text.as_str()),
                    Part::ImageUrl { .. } => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// Adds `text` at the end of the message.
    pub(crate) fn append_text(&mut self, text: &str) {
        match &mut self.content {
            Content::Text(t) => t.push_str(text),
            Content::Parts(parts) => parts.push(Part::text(text.trim_start())),
        }
    }

    /// How many images the message carries.
    pub(crate) fn images(&self) -> usize {
        match &self.content {
            Content::Text(_) => 0,
            Content::Parts(parts) => parts
                .iter()
                .filter(|p| matches!(p, Part::ImageUrl { .. }))
                .count(),
        }
    }

    /// The message with its images replaced by `placeholder` (an older step's
    /// screenshots are not sent again).
    pub(crate) fn without_images(&self, placeholder: &str) -> Self {
        match &self.content {
            Content::Text(_) => self.clone(),
            Content::Parts(parts) => {
                let mut texts: Vec<String> = Vec::new();
                let mut dropped = false;
                for p in parts {
                    match p {
                        Part::Text { text } => texts.push(text.clone()),
                        Part::ImageUrl { .. } if !dropped => {
                            texts.push(placeholder.to_string());
                            dropped = true;
                        }
                        Part::ImageUrl { .. } => {}
                    }
                }
                Self {
                    role: self.role,
                    content: Content::Text(texts.join("\n")),
                }
            }
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
        let msgs = [Message::user("hi")];
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

    #[test]
    fn images_go_as_content_parts_and_can_be_dropped() {
        let m = Message::user_parts(vec![Part::text("look"), Part::png(b"\x89PNG")]);
        let body = request_body(&LlmConfig::new("m"), std::slice::from_ref(&m), None);
        assert_eq!(
            body["messages"][0]["content"],
            json!([{"type": "text", "text": "look"},
                   {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}}])
        );
        assert_eq!(m.images(), 1);
        let old = m.without_images("(screenshot not sent again)");
        assert_eq!(old.images(), 0);
        assert_eq!(old.text(), "look\n(screenshot not sent again)");
    }
}
