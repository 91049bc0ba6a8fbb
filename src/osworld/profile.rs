//! The task's home as OSWorld's VM image has it before the first task: a LibreOffice
//! profile that saves in the document's own format without asking (OSWorld's
//! postconfig sends Ctrl+S and nothing else: with a fresh profile LibreOffice shows
//! "Keep current format?" and a "Tip of the Day", and never saves, which scored a solved
//! task 0.0 here), and the `.Xauthority` python-xlib insists on (an empty one: the
//! display has no authorisation).

use std::path::Path;

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

/// Writes the home's profile into `home` (the task's folder), leaving what is there.
pub(super) fn furnish(home: &Path) -> std::io::Result<()> {
    let registry = home.join(REGISTRY);
    if !registry.exists() {
        if let Some(dir) = registry.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&registry, SETTINGS)?;
    }
    let xauthority = home.join(".Xauthority");
    if !xauthority.exists() {
        std::fs::write(xauthority, b"")?;
    }
    Ok(())
}
