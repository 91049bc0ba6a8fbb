//! The shell executor's tools and their parameters: what recorded plans may call and what
//! the LLM is told it can use.

use std::sync::LazyLock;

use crate::tool::{Bound, ParamKind, ParamSpec, ToolSpec};

/// The tools of the shell executor, for validation and for LLM prompts.
pub(crate) fn shell_tools() -> &'static [ToolSpec] {
    static TOOLS: LazyLock<Vec<ToolSpec>> = LazyLock::new(specs);
    &TOOLS
}

fn specs() -> Vec<ToolSpec> {
    let p = ParamSpec::new;
    vec![
        ToolSpec {
            limit: None,
            name: "execute_command".into(),
            description: "Run a shell command (sh -c) in the workspace. Returns exit_code, stdout and stderr.".into(),
            params: vec![
                p("command", ParamKind::String, true, "the command line"),
                p(
                    "timeout",
                    ParamKind::Count,
                    false,
                    "seconds before the command and everything it started are killed",
                ),
                p(
                    "cwd",
                    ParamKind::String,
                    false,
                    "working directory, relative to the workspace",
                )
                .within(Bound::Path(true)),
            ],
        },
        ToolSpec {
            limit: None,
            name: "write_file".into(),
            description: "Write text to a file in the workspace, creating folders as needed.".into(),
            params: vec![
                p(
                    "path",
                    ParamKind::String,
                    true,
                    "file path, relative to the workspace",
                )
                .within(Bound::Path(false)),
                p("content", ParamKind::String, true, "the text to write"),
                p(
                    "append",
                    ParamKind::Boolean,
                    false,
                    "append instead of replacing",
                ),
            ],
        },
        ToolSpec {
            limit: None,
            name: "read_file".into(),
            description: "Read a text file from the workspace.".into(),
            params: vec![
                p(
                    "path",
                    ParamKind::String,
                    true,
                    "file path, relative to the workspace",
                )
                .within(Bound::Path(false)),
            ],
        },
        ToolSpec {
            limit: None,
            name: "list_dir".into(),
            description: "List a folder of the workspace (names, types, sizes).".into(),
            params: vec![
                p(
                    "path",
                    ParamKind::String,
                    false,
                    "folder path, relative to the workspace (default: the workspace)",
                )
                .within(Bound::Path(true)),
            ],
        },
    ]
}
