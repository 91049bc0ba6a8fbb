//! `[devices]` of the config file and `--devices ADDR` / `--devices-wait N`: where the
//! run listens for UFO's device clients, the token they must present, how long a
//! command and a wait for a free device may take, and the tool arguments the runner
//! fills in from the environment.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

/// The most devices a run may wait for before it starts.
const MAX_WAIT: usize = 65_536;

use serde::Deserialize;

use crate::mcp::Injected;
use crate::units::parse_duration;

/// The environment variable the token is read from unless `token_env` names another.
pub(crate) const DEFAULT_TOKEN_ENV: &str = "UFO_BATCH_DEVICE_TOKEN";

/// `[devices]` of the config file; every key is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DevicesSection {
    /// Where to listen (`0.0.0.0:5000`); `--devices` wins.
    listen: Option<String>,
    /// The environment variable holding the token devices must present.
    token_env: Option<String>,
    /// One command's limit.
    command_timeout: Option<String>,
    /// How long a task waits for a free device of its platform.
    wait_for: Option<String>,
    /// Devices to wait for before the first task starts; `--devices-wait` wins.
    wait: Option<usize>,
    /// Tool arguments filled in from the environment: `{ api_key = "UFO_MCP_API_KEY" }`.
    #[serde(default)]
    inject: BTreeMap<String, String>,
    /// The largest frame a device may send, in MiB (UFO's clients allow 100).
    max_message_mib: Option<usize>,
}

impl DevicesSection {
    /// Whether the config file says anything about devices (then plans may call tools
    /// only a device offers).
    pub(crate) fn is_configured(&self) -> bool {
        self.listen.is_some()
            || self.token_env.is_some()
            || self.command_timeout.is_some()
            || self.wait_for.is_some()
            || self.wait.is_some()
            || !self.inject.is_empty()
            || self.max_message_mib.is_some()
    }
}

/// How the run serves devices.
#[derive(Clone, Debug)]
pub(crate) struct DeviceSettings {
    /// Where it listens.
    pub(crate) listen: SocketAddr,
    /// The token a device must present (`?token=` in its URL).
    pub(crate) token: String,
    /// Where the token came from, for messages.
    pub(crate) token_env: String,
    /// One command's limit.
    pub(crate) command_timeout: Duration,
    /// How long a task waits for a free device.
    pub(crate) wait_for: Duration,
    /// Devices to wait for before the first task starts.
    pub(crate) wait: usize,
    /// Tool arguments the runner fills in.
    pub(crate) inject: Vec<Injected>,
    /// The largest message a device may send, in bytes.
    pub(crate) max_message: usize,
}

/// `[devices]` or `--devices` given as they cannot be used: told before the run
/// starts, with the configuration's other mistakes.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DeviceConfigError {
    /// `--devices-wait` without an address.
    #[error("--devices-wait needs --devices ADDR (where to listen for devices)")]
    WaitWithoutListen,
    /// An address that is not one (the parser's words say no more).
    #[error("--devices {0:?}: give an address and port to listen on, such as 0.0.0.0:5000")]
    Listen(String),
    /// The token's variable is not set.
    #[error(
        "devices must present a token, and ${0} is not set (or empty): export {0}=<a long random text> and give it to each device client (ws://HOST:PORT/ws?token=...)"
    )]
    NoToken(String),
    /// The token is too short.
    #[error("${0} is too short for a token: use 8 characters or more")]
    ShortToken(String),
    /// A limit that is not a duration.
    #[error("[devices] {key}: {source}")]
    Duration {
        /// The key.
        key: &'static str,
        /// What is wrong with it.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A limit of 0.
    #[error("[devices] {0} must be more than 0")]
    ZeroDuration(&'static str),
    /// `inject` from a variable that is not set.
    #[error("[devices] inject.{argument} comes from ${var}, which is not set in the environment")]
    UnsetInject {
        /// The argument.
        argument: String,
        /// The variable.
        var: String,
    },
    /// `max_message_mib` out of range.
    #[error("[devices] max_message_mib must be from 1 to 1024")]
    MaxMessage,
    /// More devices to wait for than a run may.
    #[error(
        "--devices-wait / [devices] wait {0} is too large: it may be at most {MAX_WAIT} devices"
    )]
    WaitTooLarge(usize),
}

impl DeviceSettings {
    /// The settings from the flags and `section`, or `None` when devices are not used;
    /// `env` reads the environment.
    pub(crate) fn resolve(
        listen: Option<String>,
        wait: Option<usize>,
        section: DevicesSection,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, DeviceConfigError> {
        let Some(listen) = listen.or(section.listen) else {
            if wait.is_some() {
                return Err(DeviceConfigError::WaitWithoutListen);
            }
            return Ok(None);
        };
        let listen: SocketAddr = listen
            .parse()
            .map_err(|_| DeviceConfigError::Listen(listen))?;
        let token_env = section
            .token_env
            .unwrap_or_else(|| DEFAULT_TOKEN_ENV.to_string());
        let token = token(env, &token_env)?;
        let inject = injected(section.inject, env)?;
        let max_mib = section.max_message_mib.unwrap_or(100);
        if !(1..=1024).contains(&max_mib) {
            return Err(DeviceConfigError::MaxMessage);
        }
        Ok(Some(Self {
            listen,
            token,
            token_env,
            command_timeout: duration(section.command_timeout, "command_timeout", 60)?,
            wait_for: duration(section.wait_for, "wait_for", 600)?,
            wait: match wait.or(section.wait).unwrap_or(0) {
                n if n > MAX_WAIT => return Err(DeviceConfigError::WaitTooLarge(n)),
                n => n,
            },
            inject,
            max_message: max_mib << 20,
        }))
    }
}

/// The token devices must present, from `$token_env` (registered as a secret).
fn token(
    env: &dyn Fn(&str) -> Option<String>,
    token_env: &str,
) -> Result<String, DeviceConfigError> {
    let token = env(token_env)
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| DeviceConfigError::NoToken(token_env.to_string()))?;
    if token.trim().len() < 8 {
        return Err(DeviceConfigError::ShortToken(token_env.to_string()));
    }
    crate::secrets::register(&token);
    Ok(token)
}

/// The limit `key` given as `text`, `default` seconds when not given.
fn duration(
    text: Option<String>,
    key: &'static str,
    default: u64,
) -> Result<Duration, DeviceConfigError> {
    let d = match text {
        Some(t) => parse_duration(&t).map_err(|e| DeviceConfigError::Duration {
            key,
            source: e.into(),
        })?,
        None => Duration::from_secs(default),
    };
    if d.is_zero() {
        return Err(DeviceConfigError::ZeroDuration(key));
    }
    Ok(d)
}

/// The arguments the runner fills in, from the environment (registered as secrets).
fn injected(
    inject: BTreeMap<String, String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Injected>, DeviceConfigError> {
    let mut out = Vec::new();
    for (argument, var) in inject {
        let Some(value) = env(&var).filter(|v| !v.is_empty()) else {
            return Err(DeviceConfigError::UnsetInject { argument, var });
        };
        crate::secrets::register(&value);
        out.push(Injected { argument, value });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "UFO_BATCH_DEVICE_TOKEN" => Some("a-good-long-token".into()),
            "KEY" => Some("the-injected-key-0123".into()),
            _ => None,
        }
    }

    #[test]
    fn devices_need_an_address_and_a_token() {
        let none = DeviceSettings::resolve(None, None, DevicesSection::default(), &env).unwrap();
        assert!(none.is_none());
        let e = DeviceSettings::resolve(None, Some(2), DevicesSection::default(), &env)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--devices-wait needs --devices"), "{e}");
        let e = DeviceSettings::resolve(Some("5000".into()), None, DevicesSection::default(), &env)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            r#"--devices "5000": give an address and port to listen on, such as 0.0.0.0:5000"#
        );
        assert!(e.contains("such as 0.0.0.0:5000"), "{e}");
        let section = DevicesSection {
            token_env: Some("MISSING".into()),
            ..DevicesSection::default()
        };
        let e = DeviceSettings::resolve(Some("127.0.0.1:0".into()), None, section, &env)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "devices must present a token, and $MISSING is not set (or empty): export MISSING=<a long random text> and give it to each device client (ws://HOST:PORT/ws?token=...)"
        );
        let section = DevicesSection {
            command_timeout: Some("0".into()),
            ..DevicesSection::default()
        };
        let e = DeviceSettings::resolve(Some("127.0.0.1:0".into()), None, section, &env)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("[devices] command_timeout: "), "{e}");
        let section = DevicesSection {
            inject: BTreeMap::from([("api_key".into(), "NOPE".into())]),
            ..DevicesSection::default()
        };
        let e = DeviceSettings::resolve(Some("127.0.0.1:0".into()), None, section, &env)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "[devices] inject.api_key comes from $NOPE, which is not set in the environment"
        );
        let section = DevicesSection {
            inject: BTreeMap::from([("api_key".into(), "KEY".into())]),
            command_timeout: Some("5s".into()),
            ..DevicesSection::default()
        };
        let s = DeviceSettings::resolve(Some("127.0.0.1:5000".into()), Some(3), section, &env)
            .unwrap()
            .unwrap();
        assert_eq!((s.wait, s.command_timeout), (3, Duration::from_secs(5)));
        assert_eq!(s.inject[0].argument, "api_key");
        assert_eq!(s.max_message, 100 << 20);
    }
}
