//! The devices connected to the run: each registered device is one slot. An attempt
//! leases a free device of the platform its task needs (waiting a bounded time for one)
//! and gives it back when it ends; a device that reconnects with the same id replaces
//! its old entry (an attempt on the old connection fails as disconnected and is retried).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use super::error::DeviceError;
use super::link::Link;
use super::tools::DeviceTool;
use crate::event::FleetLoad;

/// A platform a device runs on and a task needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Platform {
    /// Shell tasks.
    Linux,
    /// Desktop tasks.
    Windows,
    /// Anything else a client says it is.
    Other(String),
}

impl Platform {
    /// The platform a registration names.
    pub(crate) fn named(name: &str) -> Self {
        match name.trim().to_ascii_lowercase().as_str() {
            "linux" => Self::Linux,
            "windows" | "win32" => Self::Windows,
            other => Self::Other(other.to_string()),
        }
    }
}

impl std::fmt::Display for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Linux => f.write_str("linux"),
            Self::Windows => f.write_str("windows"),
            Self::Other(o) => f.write_str(o),
        }
    }
}

/// A device as the fleet knows it.
#[derive(Clone)]
pub(crate) struct Device {
    /// Its client id.
    pub(crate) id: String,
    /// What it runs on.
    pub(crate) platform: Platform,
    /// Its connection.
    pub(crate) link: Link,
    /// Its tools.
    pub(crate) tools: Arc<Vec<DeviceTool>>,
    /// Which connection of this id it is (a reconnect is a new one).
    generation: u64,
    /// Leased to an attempt.
    busy: bool,
}

/// The devices of the run.
#[derive(Default)]
pub(crate) struct Fleet {
    devices: Mutex<Vec<Device>>,
    /// Told when a device comes, goes or is given back.
    changed: Notify,
    /// Connections registered so far (each one's generation).
    connections: std::sync::atomic::AtomicU64,
    /// Devices refused for the rest of the run (by id), with why.
    refused: Mutex<std::collections::HashMap<String, String>>,
}

impl Fleet {
    /// Refuses the device `id` for the rest of the run.
    pub(crate) fn refuse(&self, id: &str, why: &str) {
        let mut refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        // A bound on what many ids could make it hold.
        if refused.len() < 4096 {
            refused.insert(id.to_string(), why.to_string());
        }
    }

    /// Why the device `id` was refused for the rest of the run, if it was.
    pub(crate) fn refused(&self, id: &str) -> Option<String> {
        self.refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
    }

    /// Adds a device; one with the same id is replaced (its connection is over).
    /// Returns the new entry's generation, and whether it replaced one.
    pub(crate) fn register(
        &self,
        id: &str,
        platform: Platform,
        link: Link,
        tools: Vec<DeviceTool>,
    ) -> (u64, bool) {
        let generation = self
            .connections
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        let mut devices = self.lock();
        let replaced = devices.iter().position(|d| d.id == id);
        if let Some(i) = replaced {
            let old = devices.remove(i);
            old.link
                .close("a new connection of the same device replaced it");
        }
        devices.push(Device {
            id: id.to_string(),
            platform,
            link,
            tools: Arc::new(tools),
            generation,
            busy: false,
        });
        drop(devices);
        self.changed.notify_waiters();
        (generation, replaced.is_some())
    }

    /// Removes connection `generation` of device `id`, if it is still the current one.
    pub(crate) fn gone(&self, id: &str, generation: u64) {
        self.lock()
            .retain(|d| !(d.id == id && d.generation == generation));
        self.changed.notify_waiters();
    }

    /// Devices connected and busy now.
    pub(crate) fn load(&self) -> FleetLoad {
        let devices = self.lock();
        FleetLoad {
            connected: devices.len(),
            busy: devices.iter().filter(|d| d.busy).count(),
        }
    }

    /// Waits until `count` devices are connected, at most `within`.
    pub(crate) async fn wait_for(&self, count: usize, within: Duration) -> Result<(), usize> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let notified = self.changed.notified();
            let connected = self.lock().len();
            if connected >= count {
                return Ok(());
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Err(self.lock().len());
            }
        }
    }

    /// Devices of `platform` connected now.
    pub(crate) fn count(&self, platform: &Platform) -> usize {
        self.lock()
            .iter()
            .filter(|d| &d.platform == platform)
            .count()
    }

    /// Ends every device's connection (the run is over).
    pub(crate) fn close_all(&self, why: &str) {
        for d in self.lock().iter() {
            d.link.close(why);
        }
    }

    /// Leases a free device of `platform`, waiting at most `within` for one; a device
    /// other than `avoid` (where the last attempt failed) when one is free.
    pub(crate) async fn lease(
        self: &Arc<Self>,
        platform: &Platform,
        within: Duration,
        avoid: Option<&str>,
    ) -> Result<Lease, DeviceError> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let notified = self.changed.notified();
            {
                let mut devices = self.lock();
                let free = |d: &Device| !d.busy && &d.platform == platform;
                let pick = devices
                    .iter()
                    .position(|d| free(d) && Some(d.id.as_str()) != avoid)
                    .or_else(|| devices.iter().position(free));
                if let Some(d) = pick.map(|i| &mut devices[i]) {
                    d.busy = true;
                    let device = d.clone();
                    drop(devices);
                    self.changed.notify_waiters();
                    return Ok(Lease {
                        fleet: Arc::clone(self),
                        device,
                    });
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                let devices = self.lock();
                let same = devices.iter().filter(|d| &d.platform == platform).count();
                return Err(DeviceError::NoFreeDevice {
                    platform: platform.to_string(),
                    within,
                    same,
                    connected: devices.len(),
                });
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Device>> {
        self.devices.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A device leased to one attempt; given back when dropped.
pub(crate) struct Lease {
    fleet: Arc<Fleet>,
    /// The device.
    pub(crate) device: Device,
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut devices = self.fleet.lock();
        if let Some(d) = devices
            .iter_mut()
            .find(|d| d.id == self.device.id && d.generation == self.device.generation)
        {
            d.busy = false;
        }
        drop(devices);
        self.fleet.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn devices_are_leased_one_task_at_a_time_and_given_back() {
        let fleet = Arc::new(Fleet::default());
        fleet.register("a", Platform::Linux, Link::detached(), Vec::new());
        fleet.register("w", Platform::Windows, Link::detached(), Vec::new());
        let first = fleet
            .lease(&Platform::Linux, Duration::from_millis(50), None)
            .await
            .unwrap();
        assert_eq!(first.device.id, "a");
        let e = fleet
            .lease(&Platform::Linux, Duration::from_millis(50), None)
            .await
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("no linux device was free within 0s (1 linux of 2 connected)"),
            "{e}"
        );
        assert_eq!(
            fleet.load(),
            FleetLoad {
                connected: 2,
                busy: 1
            }
        );
        let waiting = {
            let fleet = Arc::clone(&fleet);
            tokio::spawn(async move {
                fleet
                    .lease(&Platform::Linux, Duration::from_secs(5), None)
                    .await
            })
        };
        drop(first);
        assert_eq!(waiting.await.unwrap().unwrap().device.id, "a");
    }

    #[tokio::test]
    async fn a_retry_goes_to_another_device_when_one_is_free() {
        let fleet = Arc::new(Fleet::default());
        fleet.register("a", Platform::Linux, Link::detached(), Vec::new());
        fleet.register("b", Platform::Linux, Link::detached(), Vec::new());
        let lease = fleet
            .lease(&Platform::Linux, Duration::from_millis(50), Some("a"))
            .await
            .unwrap();
        assert_eq!(lease.device.id, "b");
        let only = fleet
            .lease(&Platform::Linux, Duration::from_millis(50), Some("a"))
            .await
            .unwrap();
        assert_eq!(only.device.id, "a", "the one avoided when no other is free");
        assert_eq!(fleet.count(&Platform::Linux), 2);
        assert_eq!(fleet.count(&Platform::Windows), 0);
    }

    #[tokio::test]
    async fn a_reconnect_replaces_the_old_entry() {
        let fleet = Arc::new(Fleet::default());
        let (old, _) = fleet.register("a", Platform::Linux, Link::detached(), Vec::new());
        let lease = fleet
            .lease(&Platform::Linux, Duration::from_millis(50), None)
            .await
            .unwrap();
        let (new, replaced) = fleet.register("a", Platform::Linux, Link::detached(), Vec::new());
        assert!(replaced && new > old);
        // The old connection's end and lease change nothing of the new entry.
        fleet.gone("a", old);
        drop(lease);
        assert_eq!(
            fleet.load(),
            FleetLoad {
                connected: 1,
                busy: 0
            }
        );
        fleet.gone("a", new);
        assert_eq!(fleet.load().connected, 0);
        assert_eq!(fleet.wait_for(1, Duration::from_millis(20)).await, Err(0));
    }
}
