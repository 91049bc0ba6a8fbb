//! The applications a task may name or open its object in (UFO's `word`, `excel`,
//! `powerpoint`, `notepad`), told from a name, a window or a document's extension. How
//! each is started on a platform is the desktop's (`desktop::app`).

use std::path::Path;

/// An application a desktop task can open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Known {
    /// A word processor (Word; LibreOffice Writer).
    Word,
    /// A spreadsheet (Excel; LibreOffice Calc).
    Excel,
    /// Slides (PowerPoint; LibreOffice Impress).
    PowerPoint,
    /// A plain text editor (Notepad; Mousepad).
    Notepad,
}

impl Known {
    /// The app a name means (`word`, `WINWORD.EXE`, `excel`, `calc`, ...).
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        let name = name.trim().to_ascii_lowercase();
        let name = name.strip_suffix(".exe").unwrap_or(&name);
        match name {
            "word" | "winword" | "writer" | "swriter" => Some(Self::Word),
            "excel" | "calc" | "scalc" => Some(Self::Excel),
            "powerpoint" | "powerpnt" | "impress" | "simpress" => Some(Self::PowerPoint),
            "notepad" | "text editor" | "mousepad" | "gedit" => Some(Self::Notepad),
            _ => None,
        }
    }

    /// The app a desktop window belongs to, from its application's name and its title:
    /// LibreOffice is one program for every module, told apart by the title's end
    /// (`report.docx - LibreOffice Writer`); on Windows each is its own program.
    pub(crate) fn for_window(application: &str, title: &str) -> Option<Self> {
        let title = title.to_ascii_lowercase();
        if title.ends_with("libreoffice writer") {
            return Some(Self::Word);
        }
        if title.ends_with("libreoffice calc") {
            return Some(Self::Excel);
        }
        if title.ends_with("libreoffice impress") {
            return Some(Self::PowerPoint);
        }
        Self::from_name(application)
    }

    /// The app that opens a document of this name, by its extension.
    pub(crate) fn for_document(file: &str) -> Option<Self> {
        let ext = Path::new(file).extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "docx" | "doc" | "odt" | "rtf" => Some(Self::Word),
            "xlsx" | "xls" | "ods" | "csv" => Some(Self::Excel),
            "pptx" | "ppt" | "odp" => Some(Self::PowerPoint),
            "txt" | "md" | "log" => Some(Self::Notepad),
            _ => None,
        }
    }
}
