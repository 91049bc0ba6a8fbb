//! The desktop half: what a desktop task needs that a shell task does not. This layer
//! holds what every platform shares, tested on Linux: the control list and its
//! control types (`control`), finding the control an action names (`select`), and
//! pywinauto's key syntax (`keys`), the computer-use tools and their coordinates
//! (`computer`), the element under a point (`element`), what a desktop is furnished with
//! (`furniture`). The platform backends (AT-SPI under a private
//! virtual display on Linux, UI Automation on Windows) build on it.

pub(crate) mod action;
pub(crate) mod app;
pub(crate) mod backend;
pub(crate) mod computer;
pub(crate) mod control;
pub(crate) mod element;
pub(crate) mod error;
pub(crate) mod furniture;
pub(crate) mod info;
pub(crate) mod json_lines;
pub(crate) mod keys;
#[cfg(target_os = "linux")]
pub(crate) mod linux;
pub(crate) mod office;
pub(crate) mod office_helper;
pub(crate) mod screenshot;
pub(crate) mod select;
pub(crate) mod tools;
#[cfg(windows)]
pub(crate) mod windows;
