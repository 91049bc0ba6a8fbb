//! Starting a task's desktop: in its jail on Linux, on the one interactive desktop on
//! Windows.

use std::time::Duration;

use crate::desktop::backend::Backend;
use crate::desktop::error::DesktopError;
use crate::desktop::furniture::Furniture;
use crate::rundir::layout::TaskDir;

/// Starts the desktop of the task folder `dir`, out of sight of `hidden`, furnished
/// with `furniture`.
#[cfg(target_os = "linux")]
pub(super) async fn start(
    dir: TaskDir,
    hidden: Vec<std::path::PathBuf>,
    app_timeout: Duration,
    furniture: &Furniture,
) -> Result<Box<dyn Backend>, DesktopError> {
    use crate::desktop::linux::{LinuxDesktop, StartOptions};
    let jail = crate::jail::jail_binary().ok_or_else(|| DesktopError::desktop(
        "desktop tasks run in a jail, and ufo-batch-jail is not beside ufo-batch (cargo build --release builds both)",
    ))?;
    let tmp = dir.desktop();
    let workspace = dir.workspace();
    let log = dir.desktop_log();
    let options = StartOptions {
        jail: &jail,
        workspace: &workspace,
        tmp: &tmp,
        log: &log,
        hidden,
        app_timeout,
        furniture,
    };
    Ok(Box::new(LinuxDesktop::start(&options).await?))
}

/// Starts the task's desktop on Windows: its apps on the one interactive desktop.
#[cfg(windows)]
pub(super) async fn start(
    dir: TaskDir,
    _hidden: Vec<std::path::PathBuf>,
    app_timeout: Duration,
    _furniture: &Furniture,
) -> Result<Box<dyn Backend>, DesktopError> {
    let desktop =
        crate::desktop::windows::WindowsDesktop::start(&dir.workspace(), app_timeout).await?;
    Ok(Box::new(desktop))
}

#[cfg(not(any(target_os = "linux", windows)))]
pub(super) async fn start(
    _dir: TaskDir,
    _hidden: Vec<std::path::PathBuf>,
    _app_timeout: Duration,
    _furniture: &Furniture,
) -> Result<Box<dyn Backend>, DesktopError> {
    Err(DesktopError::desktop(
        "desktop tasks run on Linux and Windows only",
    ))
}
