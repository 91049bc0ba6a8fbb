//! Which application a desktop task opens, and the command line that opens it: the
//! task's `app` (a name UFO and its `dataflow/` use, such as `word`, or a command line),
//! or else the type of its `object` document. Names map per platform: on Linux `word`
//! is LibreOffice Writer and `notepad` a GTK text editor; on Windows they are the apps
//! themselves.

use crate::task::App;
pub(crate) use crate::task::Known;

impl Known {
    /// The program and arguments that start it on this platform, opening `document`
    /// (a path relative to the workspace) when there is one.
    pub(crate) fn command(self, document: Option<&str>) -> Vec<String> {
        let mut argv: Vec<String> = if cfg!(windows) {
            let exe = match self {
                Self::Word => "winword.exe",
                Self::Excel => "excel.exe",
                Self::PowerPoint => "powerpnt.exe",
                Self::Notepad => "notepad.exe",
            };
            vec![exe.to_string()]
        } else {
            match self {
                Self::Notepad => vec!["mousepad".to_string()],
                office => {
                    let module = match office {
                        Self::Word => "--writer",
                        Self::Excel => "--calc",
                        _ => "--impress",
                    };
                    // A profile of its own (in the desktop's private /tmp) is what lets
                    // several LibreOffice sessions run side by side; the automation pipe
                    // (also in that /tmp) is what the Office API tools reach it by.
                    [
                        "soffice",
                        "-env:UserInstallation=file:///tmp/libreoffice-profile",
                        "--norestore",
                        "--nologo",
                        "--nolockcheck",
                        OFFICE_PIPE,
                        module,
                    ]
                    .map(String::from)
                    .to_vec()
                }
            }
        };
        argv.extend(document.map(String::from));
        argv
    }
}

/// LibreOffice's automation pipe, by which the Office API tools reach it (see
/// `desktop::linux::uno`).
const OFFICE_PIPE: &str = "--accept=pipe,name=ufo-batch;urp;StarOffice.ComponentContext";

/// What a desktop task starts: the command line, and what it is for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Launch {
    /// Program and arguments.
    pub(crate) argv: Vec<String>,
    /// The known app it is, if it is one.
    pub(crate) known: Option<Known>,
}

/// An app that cannot be opened as named: whose failure it is depends on who named it
/// (a task file, or an agent selecting an application).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum UnknownApp {
    /// `{"command": []}`.
    #[error("`app.command` is empty: give the program and its arguments")]
    EmptyCommand,
    /// A name that is none of the known apps.
    #[error("unknown app `{0}`: use word, excel, powerpoint or notepad, or {{\"command\": [..]}}")]
    Unknown(String),
}

/// The app a task opens: its `app` if it names one, else the app for its `object`'s
/// document type; `None` for a task that opens none. `document` is the object's file
/// name in the workspace.
pub(crate) fn launch_for(
    app: Option<&App>,
    document: Option<&str>,
) -> Result<Option<Launch>, UnknownApp> {
    match app {
        Some(App::Command { command }) => match command.first() {
            Some(program) if !program.trim().is_empty() => Ok(Some(Launch {
                argv: command.clone(),
                known: Known::from_name(program),
            })),
            _ => Err(UnknownApp::EmptyCommand),
        },
        Some(App::Named(name)) => {
            let known = Known::from_name(name).ok_or_else(|| UnknownApp::Unknown(name.clone()))?;
            Ok(Some(Launch {
                argv: known.command(document),
                known: Some(known),
            }))
        }
        None => Ok(document.and_then(Known::for_document).map(|known| Launch {
            argv: known.command(document),
            known: Some(known),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_open_in_the_app_for_their_type() {
        for (file, known) in [
            ("draft.docx", Known::Word),
            ("Book.XLSX", Known::Excel),
            ("data.csv", Known::Excel),
            ("deck.pptx", Known::PowerPoint),
            ("notes.txt", Known::Notepad),
        ] {
            let launch = launch_for(None, Some(file)).unwrap().unwrap();
            assert_eq!(launch.known, Some(known), "{file}");
            assert_eq!(launch.argv.last().unwrap(), file);
        }
        assert_eq!(launch_for(None, Some("picture.png")).unwrap(), None);
        assert_eq!(launch_for(None, None).unwrap(), None);
    }

    #[test]
    fn windows_tell_their_app() {
        assert_eq!(
            Known::for_window("soffice", "report.docx - LibreOffice Writer"),
            Some(Known::Word)
        );
        assert_eq!(
            Known::for_window("soffice", "Untitled 1 - LibreOffice Calc"),
            Some(Known::Excel)
        );
        assert_eq!(
            Known::for_window("POWERPNT.EXE", "deck - PowerPoint"),
            Some(Known::PowerPoint)
        );
        assert_eq!(
            Known::for_window("mousepad", "notes.txt - Mousepad"),
            Some(Known::Notepad)
        );
        assert_eq!(Known::for_window("soffice", "Start Center"), None);
    }

    #[test]
    fn app_names_as_ufo_writes_them() {
        let word = launch_for(Some(&App::Named("WINWORD.EXE".into())), Some("a.docx"))
            .unwrap()
            .unwrap();
        assert_eq!(word.known, Some(Known::Word));
        if cfg!(target_os = "linux") {
            assert_eq!(word.argv[0], "soffice");
            assert!(word.argv.contains(&"--writer".to_string()));
        }
        let err = launch_for(Some(&App::Named("photoshop".into())), None).unwrap_err();
        assert!(err.to_string().contains("unknown app `photoshop`"), "{err}");
        let cmd = App::Command {
            command: vec!["mousepad".into(), "x.txt".into()],
        };
        let launch = launch_for(Some(&cmd), None).unwrap().unwrap();
        assert_eq!(launch.argv, ["mousepad", "x.txt"]);
        assert_eq!(launch.known, Some(Known::Notepad));
    }
}
