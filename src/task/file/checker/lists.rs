//! The checks of a task file's lists: recorded actions against the tools and their
//! parameters, the files it writes into the workspace (safe relative paths), and its
//! checks (paths, patterns, cell values).

use super::Checker;
use crate::task::{Action, Check};
use crate::tool::ToolSpec;

impl Checker<'_> {
    pub(super) fn actions(&mut self, list: &str, actions: &[Action], tools: &[ToolSpec]) {
        for (i, action) in actions.iter().enumerate() {
            let at = format!("{list}[{i}]");
            let Some(spec) = tools.iter().find(|t| t.name == action.action) else {
                if tools.iter().any(ToolSpec::is_any) {
                    // A device's tool: the device says at run time.
                    self.warnings.push(format!(
                        "{at}: `{}` is no built-in or MCP tool: it must come from the device the task runs on (--devices)",
                        action.action
                    ));
                    continue;
                }
                let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
                let message = format!("unknown tool `{}`", action.action);
                let fix = match crate::text::closest(&action.action, names.iter().copied()) {
                    Some(near) => format!("did you mean `{near}`? (tools: {})", names.join(", ")),
                    None => format!("use one of: {}", names.join(", ")),
                };
                self.problem(&format!("{at}.action"), message, fix);
                continue;
            };
            if list == "setup" && crate::tool::is_desktop_tool(&spec.name) {
                self.problem(
                    &format!("{at}.action"),
                    format!(
                        "`{}` is an app tool: setup runs before the app opens, so it can only run shell tools",
                        action.action
                    ),
                    "move it to the plan's actions",
                );
                continue;
            }
            if let Err(e) = spec.check_arguments(&action.parameters) {
                self.problem(
                    &format!("{at}.parameters"),
                    e.to_string(),
                    "`ufo-batch tools` lists every tool with its parameters (arguments the config injects, such as an MCP server's api_key, are not among them: the runner fills them in)",
                );
            }
        }
    }

    /// The `files` keys: each a path inside the workspace, no two the same file, and no
    /// file where another needs a folder (`a` beside `a/b`).
    pub(super) fn files(&mut self, files: &std::collections::BTreeMap<String, String>) {
        let mut seen: std::collections::BTreeMap<std::path::PathBuf, &str> =
            std::collections::BTreeMap::new();
        for key in files.keys() {
            let shown = crate::text::shorten(key, 80).escape_debug().to_string();
            match crate::relpath::normalize_relative(key, false) {
                Err(e) => self.problem(
                    &format!("files.{shown}"),
                    e.to_string(),
                    "use a path inside the workspace, such as data/input.csv",
                ),
                Ok(path) => {
                    if let Some(other) = seen.insert(path, key) {
                        self.problem(
                            &format!("files.{shown}"),
                            format!(
                                "`{}` and `{}` name the same file",
                                crate::text::shorten(key, 80),
                                crate::text::shorten(other, 80)
                            ),
                            "keep one of them",
                        );
                    }
                }
            }
        }
        for (path, key) in &seen {
            if let Some((folder, other)) = path
                .ancestors()
                .skip(1)
                .find_map(|a| seen.get(a).map(|other| (a, other)))
            {
                self.problem(
                    &format!("files.{}", crate::text::shorten(key, 80).escape_debug()),
                    format!(
                        "`{}` is a file, but `{}` needs `{}` to be a folder",
                        crate::text::shorten(other, 80),
                        crate::text::shorten(key, 80),
                        crate::text::shorten(&folder.display().to_string(), 80)
                    ),
                    "rename one of them",
                );
            }
        }
    }

    pub(super) fn checks(&mut self, checks: &[Check]) {
        for (i, check) in checks.iter().enumerate() {
            let at = format!("evaluate[{i}]");
            if let Some(path) = check.path()
                && let Err(e) = crate::relpath::normalize_relative(path, false)
            {
                self.problem(
                    &format!("{at}.path"),
                    e.to_string(),
                    "use a path inside the workspace",
                );
            }
            for (key, pattern) in check.patterns() {
                if let Err(e) = Check::regex(pattern) {
                    let first = e
                        .to_string()
                        .lines()
                        .last()
                        .unwrap_or_default()
                        .trim()
                        .to_string();
                    self.problem(&format!("{at}.{key}"), format!("invalid regular expression: {first}"), "correct the pattern (Rust regex syntax; escape literal characters such as . ( [ with \\)");
                }
            }
            if let Check::CellEquals { cell, value, .. } = check {
                if let Err(e) = crate::document::CellRef::parse(cell) {
                    self.problem(
                        &format!("{at}.cell"),
                        e.to_string(),
                        "name one cell, as \"B3\"",
                    );
                }
                if value.is_null() || value.is_array() || value.is_object() {
                    self.problem(
                        &format!("{at}.value"),
                        format!("the value {value} is not a number, text or true/false"),
                        "give the value the cell shows, as a number or a string",
                    );
                }
            }
        }
    }
}
