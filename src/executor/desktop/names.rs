//! Control and window names made independent of where the task's workspace is: an app
//! that shows a document's path in a name (LibreOffice Calc names its sheet view after
//! the document's URL) gets the workspace written as `{workspace}`, so that the agent
//! sees a short name, and a recorded plan names the same control when it replays in
//! another run's folder.

use std::path::Path;

use crate::desktop::backend::{AppWindow, Snapshot};

/// What a workspace path is written as in names.
pub(super) const PLACEHOLDER: &str = "{workspace}";

/// The forms the workspace's path takes in names, longest first.
#[derive(Clone, Debug, Default)]
pub(super) struct WorkspaceNames {
    forms: Vec<String>,
}

impl WorkspaceNames {
    /// The forms of `workspace`: as given, its real path, and their URL forms.
    pub(super) fn new(workspace: &Path) -> Self {
        let mut forms = Vec::new();
        let real = workspace.canonicalize().ok();
        for path in [Some(workspace.to_path_buf()), real].into_iter().flatten() {
            let text = path.display().to_string();
            if text.len() < 2 {
                continue;
            }
            let encoded = percent_encoding::utf8_percent_encode(&text, URL_PATH).to_string();
            forms.push(encoded);
            forms.push(text);
        }
        forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
        forms.dedup();
        Self { forms }
    }

    /// `name` with the workspace written as `{workspace}`.
    pub(super) fn neutral(&self, name: &str) -> String {
        let mut out = name.to_string();
        for form in &self.forms {
            if out.contains(form.as_str()) {
                out = out.replace(form.as_str(), PLACEHOLDER);
            }
        }
        out
    }

    /// A snapshot's window and control names made neutral.
    pub(super) fn snapshot(&self, snapshot: &mut Snapshot) {
        if let Some(w) = &mut snapshot.window {
            w.name = self.neutral(&w.name);
        }
        for c in &mut snapshot.controls {
            c.name = self.neutral(&c.name);
        }
    }

    /// Window titles made neutral.
    pub(super) fn windows(&self, windows: &mut [AppWindow]) {
        for w in windows {
            w.name = self.neutral(&w.name);
        }
    }
}

/// What a URL path escapes (spaces and the like; `/` stays).
const URL_PATH: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}');

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_in_a_name_is_written_as_a_placeholder() {
        let names = WorkspaceNames {
            forms: vec![
                "/tmp/my%20run/t/workspace".into(),
                "/tmp/my run/t/workspace".into(),
            ],
        };
        assert_eq!(
            names
                .neutral("file:///tmp/my%20run/t/workspace/budget.xlsx - LibreOffice Spreadsheets"),
            "file://{workspace}/budget.xlsx - LibreOffice Spreadsheets"
        );
        assert_eq!(
            names.neutral("/tmp/my run/t/workspace/a.txt"),
            "{workspace}/a.txt"
        );
        assert_eq!(
            names.neutral("Use Excel 2007–365 Format"),
            "Use Excel 2007–365 Format"
        );
    }

    #[test]
    fn forms_come_from_the_path_and_its_real_path() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("a b");
        std::fs::create_dir(&ws).unwrap();
        let names = WorkspaceNames::new(&ws);
        let real = ws.canonicalize().unwrap().display().to_string();
        assert_eq!(names.neutral(&format!("{real}/x")), "{workspace}/x");
        assert_eq!(
            names.neutral(&format!("file://{}/x", real.replace(' ', "%20"))),
            "file://{workspace}/x"
        );
    }
}
