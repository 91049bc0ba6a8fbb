//! Desktop tasks on Linux: each task's own desktop (a virtual X display, a session bus
//! and an accessibility bus, the app, all inside a desktop jail) driven from the runner
//! through AT-SPI (`atspi`) and XTEST (`x11`); the Office API tools through LibreOffice's
//! UNO API (`uno`); the computer-use actions and the hit test (`computer`).

mod atspi;
mod computer;
mod desktop;
mod idle;
mod processes;
mod start;
mod uno;
mod x11;

pub(crate) use desktop::LinuxDesktop;
pub(crate) use start::StartOptions;
