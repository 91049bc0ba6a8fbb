//! Retrieved records as the agents' prompts show them: UFO's AppAgent layout
//! (`AppAgentPrompter.examples_prompt_helper` with `retrieved_documents_prompt_helper`
//! in `ufo/prompter/`): a `<## Response Examples:>` header, then `[Example N:]` with
//! `[User Request]`, `[Sub-Task]`, `[Tips]` and `[Response]` (the example as JSON).
//! Each part is bounded, so records cannot crowd out the task.

use std::fmt::Write;

use super::record::ExperienceRecord;
use crate::record::ExampleSource;

/// Characters of one example's response shown.
const MAX_RESPONSE: usize = 3000;
/// Characters of one example's tips shown.
const MAX_TIPS: usize = 1500;
/// Characters of a request or subtask shown.
const MAX_REQUEST: usize = 1000;

/// The examples block of a prompt for `records` (none: empty).
pub(crate) fn prompt_block(records: &[(ExampleSource, &ExperienceRecord)]) -> String {
    if records.is_empty() {
        return String::new();
    }
    let mut p = String::from(
        "\n<## Response Examples:>\n\
         Records of similar tasks done before (experience saved from earlier sessions, and \
         recorded demonstrations). Learn from their steps and tips, but act on this task's own \
         request, files and results: names, paths and values differ.\n",
    );
    for (i, (source, r)) in records.iter().enumerate() {
        let response = serde_json::to_string(&r.example).unwrap_or_default();
        let _ = write!(
            p,
            "[Example {}:] ({})\n[User Request]:\n    {}\n[Sub-Task]:\n    {}\n[Tips]:\n    {}\n[Response]:\n    {}\n\n",
            i + 1,
            source.as_str(),
            crate::text::shorten(r.request.trim(), MAX_REQUEST),
            crate::text::shorten(r.subtask.trim(), MAX_REQUEST),
            crate::text::shorten(r.tips.trim(), MAX_TIPS).replace('\n', "\n    "),
            crate::text::shorten(&response, MAX_RESPONSE),
        );
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lays_out_examples_as_ufo_does() {
        let r = ExperienceRecord {
            example: ExperienceRecord::example_from(
                json!({"Function": "execute_command", "Args": {"command": "wc -l a"}})
                    .as_object()
                    .unwrap(),
            ),
            tips: "- one\n- two".into(),
            request: "Count lines".into(),
            subtask: "Count lines".into(),
            app_list: vec!["shell".into()],
            origin: None,
            verdict: None,
        };
        let block = prompt_block(&[(ExampleSource::Experience, &r)]);
        assert!(block.starts_with("\n<## Response Examples:>\n"), "{block}");
        assert!(block.contains("[Example 1:] (experience)\n[User Request]:\n    Count lines\n[Sub-Task]:\n    Count lines\n[Tips]:\n    - one\n    - two\n[Response]:\n    {\"Observation\":\"\",\"Thought\":\"\",\"ControlLabel\":\"\",\"ControlText\":\"\",\"Function\":\"execute_command\",\"Args\":{\"command\":\"wc -l a\"}"), "{block}");
        assert_eq!(prompt_block(&[]), "");
    }
}
