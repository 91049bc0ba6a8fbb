//! What the runner asks of a jail: the binary's arguments, read into [`Options`].

use crate::error::SetupError;

/// What the runner asked for: `--rw DIR` (a folder the task may write, any number),
/// `--tmp DIR` (a folder seen as `/tmp`), `--home DIR` (a folder seen as `/home/user`,
/// writable), `--ro DIR` (a folder kept in sight, read-only, even under a hidden one; any
/// number), `--hide DIR` (a folder seen empty, any number), `--desktop` (a desktop's
/// jail: Unix sockets allowed, the machine's socket folders hidden, a network namespace
/// of its own).
pub(crate) struct Options {
    /// The writable folders, resolved (the `--tmp` folder among them).
    pub(crate) dirs: Vec<String>,
    /// The folder seen as `/tmp`.
    pub(crate) tmp: Option<String>,
    /// The folder seen as `/home/user` (among the writable ones).
    pub(crate) home: Option<String>,
    /// Folders kept in sight, read-only, under a hidden folder.
    pub(crate) kept: Vec<String>,
    /// A desktop's jail.
    pub(crate) desktop: bool,
    /// Folders covered by empty ones (`--hide DIR`).
    pub(crate) hidden: Vec<String>,
}

impl Options {
    /// Reads the binary's arguments.
    pub(crate) fn parse(args: Vec<String>) -> Result<Self, SetupError> {
        let real = |dir: &str| {
            std::fs::canonicalize(dir)
                .map(|p| p.to_string_lossy().into_owned())
                .map_err(|source| SetupError::Folder {
                    dir: dir.to_string(),
                    source,
                })
        };
        let mut options = Options {
            dirs: Vec::new(),
            tmp: None,
            home: None,
            kept: Vec::new(),
            desktop: false,
            hidden: Vec::new(),
        };
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--desktop" => options.desktop = true,
                "--hide" => {
                    let Some(dir) = args.next() else {
                        return Err(SetupError::NeedsFolder(arg));
                    };
                    // A folder that is not there has nothing to hide; `/` and the
                    // folders that hold the system (a HOME of `/`) are never hidden.
                    if let Ok(dir) = real(&dir)
                        && !holds_the_system(&dir)
                    {
                        options.hidden.push(dir);
                    }
                }
                "--rw" | "--tmp" | "--home" | "--ro" => {
                    let Some(dir) = args.next() else {
                        return Err(SetupError::NeedsFolder(arg));
                    };
                    let dir = real(&dir)?;
                    match arg.as_str() {
                        "--tmp" => options.tmp = Some(dir.clone()),
                        "--home" => options.home = Some(dir.clone()),
                        "--ro" => {
                            options.kept.push(dir);
                            continue;
                        }
                        _ => {}
                    }
                    options.dirs.push(dir);
                }
                _ => return Err(SetupError::UnknownArgument(arg)),
            }
        }
        Ok(options)
    }
}

/// True for a folder that holds the system's (`/usr`, `/etc`, `/lib`, `/bin`): it or
/// one above it.
fn holds_the_system(dir: &str) -> bool {
    ["/usr", "/etc", "/lib", "/bin"]
        .iter()
        .any(|s| *s == dir || s.starts_with(&format!("{}/", dir.trim_end_matches('/'))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(args: &[&str]) -> String {
        match Options::parse(args.iter().map(|a| a.to_string()).collect()) {
            Ok(_) => panic!("{args:?} were taken"),
            Err(e) => e.to_string(),
        }
    }

    /// The runner shows these words (a `Fatal` event) as they are.
    #[test]
    fn wrong_arguments_are_said_as_before() {
        assert_eq!(refused(&["--rw"]), "--rw needs a folder");
        assert_eq!(refused(&["--hide"]), "--hide needs a folder");
        assert_eq!(
            refused(&["--net"]),
            "unknown argument \"--net\" (usage: ufo-batch-jail [--rw DIR]... [--tmp DIR] [--home DIR] [--ro DIR]... [--hide DIR]... [--desktop])"
        );
        let missing = "/nonexistent/ufo-batch-jail-test";
        let e = std::fs::canonicalize(missing).unwrap_err();
        assert_eq!(
            refused(&["--rw", missing]),
            format!("the folder {missing} cannot be used: {e}")
        );
        let options =
            Options::parse(vec!["--desktop".into(), "--hide".into(), "/".into()]).expect("taken");
        assert!(
            options.desktop && options.hidden.is_empty(),
            "/ is never hidden"
        );
    }
}
