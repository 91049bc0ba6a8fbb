//! The task's home as OSWorld's VM image has it before the first task: a LibreOffice
//! profile that saves in the document's own format without asking (OSWorld's
//! postconfig sends Ctrl+S and nothing else: with a fresh profile LibreOffice shows
//! "Keep current format?" and a "Tip of the Day", and never saves, which scored a solved
//! task 0.0 here), and the `.Xauthority` python-xlib insists on (an empty one: the
//! display has no authorisation).

use std::path::Path;

use crate::confined::Confined;
use crate::relpath::RelPath;

/// The profile's settings file, under the home.
const REGISTRY: &str = ".config/libreoffice/4/user/registrymodifications.xcu";

/// The settings: no format question on save, no tip of the day, no first-run bar.
const SETTINGS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Save/Document"><prop oor:name="WarnAlienFormat" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="ShowTipOfTheDay" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
"#;

/// Writes the home's profile into `home` (the task's folder), leaving what is there;
/// beneath it, no link is followed (the task's own setup commands ran there first).
pub(super) fn furnish(home: &Path) -> Result<(), crate::regular_file::FileAccessError> {
    let home = Confined::open(home)?;
    for (file, content) in [
        (REGISTRY, SETTINGS.as_bytes()),
        (".Xauthority", b"".as_slice()),
    ] {
        let rel = RelPath::parse(file, false).expect("a plain relative path");
        if home.kind(&rel)?.is_none() {
            home.write(&rel, content, false)?;
        }
    }
    Ok(())
}
