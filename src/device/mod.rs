//! Remote devices: UFO's own device clients (its AIP protocol over a WebSocket) as the
//! run's workers. The run listens (`hub`), each registered device is one slot of the
//! `fleet`, an attempt leases a free device of its task's platform, and its commands go
//! to the device (`executor`) as AIP `command` frames (`protocol`) over the device's
//! connection (`link`), with the tool set the device listed (`tools`); a Windows
//! device's screen is read for the desktop agents through UFO's data collection tools
//! (`observe`). How the run listens and what it injects is `config`; what can go wrong
//! on a device, and whose failure that is, `error`.

mod config;
#[cfg(test)]
mod conformance;
mod error;
mod executor;
mod fleet;
mod hub;
mod link;
mod observe;
mod protocol;
mod tools;

pub(crate) use crate::event::FleetLoad;
pub(crate) use config::{DeviceSettings, DevicesSection};
pub(crate) use executor::{DeviceExecutor, DeviceRun};
pub(crate) use fleet::{Lease, Platform};
pub(crate) use hub::{DeviceHub, DeviceNews};

/// The tool that runs shell commands on a Linux device (UFO's Linux MCP server's).
const SHELL: &str = "execute_command";
