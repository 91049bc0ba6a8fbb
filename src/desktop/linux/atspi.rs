//! The app's accessibility tree over AT-SPI, from the runner's side: what an object on
//! the bus is (`ObjectId`) and what a walk saw of one (`Node`), the proxies every call
//! goes through, and whose failure a call's is (`BusError`). The walk of the app's
//! showing windows and the control list made from it are `walk`'s; the actions AT-SPI
//! offers on one node (its named actions, its text, its editable text, the keyboard
//! focus) are `actions`'. Every call goes to the desktop's own accessibility bus, opened
//! from its address: never the runner's session bus.

mod actions;
mod hit;
mod walk;

use atspi::proxy::accessible::AccessibleProxy;
use atspi::proxy::action::ActionProxy;
use atspi::proxy::component::ComponentProxy;
use atspi::proxy::editable_text::EditableTextProxy;
use atspi::proxy::text::TextProxy;
use atspi::{InterfaceSet, State, StateSet};
use zbus::proxy::CacheProperties;
use zbus::{Connection, DBusError as _};

pub(crate) use actions::{do_click, grab_focus, set_text, texts};
pub(crate) use hit::{element_at, find as find_element, in_front};
pub(crate) use walk::{Application, applications, focused, snapshot, walk};

use crate::desktop::control::{ControlType, Rect};
use crate::desktop::error::DesktopError;
use crate::tool::{Blame, Blamed};

/// The most nodes a walk visits (LibreOffice's Writer shows about 900), and `texts`
/// reads.
const MAX_NODES: usize = 5000;
/// A node with more children than this is not walked into (Calc's grid reports two
/// billion cells; asking for them all would exhaust the app).
const MAX_CHILDREN: i32 = 500;

/// An object on the bus: the app's bus name and the object's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ObjectId {
    /// The app's unique bus name.
    pub(crate) bus: String,
    /// The object path.
    pub(crate) path: String,
}

/// One node of a walk.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    /// Where it lives.
    pub(crate) id: ObjectId,
    /// AT-SPI's role name (`push button`).
    pub(crate) role: String,
    /// Its accessible name.
    pub(crate) name: String,
    /// Its states.
    pub(crate) states: StateSet,
    /// Its interfaces.
    pub(crate) interfaces: InterfaceSet,
    /// Its place on the screen (empty without a Component).
    pub(crate) rect: Rect,
    /// Its children's indices in the walk.
    pub(crate) children: Vec<usize>,
    /// How deep it is (the windows are at 0).
    pub(crate) depth: usize,
}

impl Node {
    fn control_type(&self) -> ControlType {
        ControlType::from_atspi_role(&self.role)
    }

    fn showing(&self) -> bool {
        self.states.contains(State::Showing)
    }
}

/// Why a call over the accessibility bus failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BusError {
    /// A call failed: `what` was being asked.
    #[error("the accessibility bus failed ({what}): {source}")]
    Call {
        /// What was asked (`a state`, `the focus`).
        what: &'static str,
        /// The bus's error.
        #[source]
        source: zbus::Error,
    },
    /// A task of the walk panicked.
    #[error("a tree walk task failed: {0}")]
    Walk(#[source] tokio::task::JoinError),
}

/// Errors the bus itself answers with when it, not the object, failed.
const BUS_FAILURES: [&str; 6] = [
    "org.freedesktop.DBus.Error.NoMemory",
    "org.freedesktop.DBus.Error.LimitsExceeded",
    "org.freedesktop.DBus.Error.Timeout",
    "org.freedesktop.DBus.Error.TimedOut",
    "org.freedesktop.DBus.Error.Disconnected",
    "org.freedesktop.DBus.Error.IOError",
];

/// Whether the bus carried the call and the other side refused it: the object is gone
/// (the control vanished, its app ended) or does not do what was asked. Everything else
/// (the connection lost, a call that timed out, a reply that cannot be read) is the
/// bus's or the app's failure.
fn refused_by_the_object(e: &zbus::Error) -> bool {
    match e {
        zbus::Error::MethodError(name, _, _) => !BUS_FAILURES.contains(&name.as_str()),
        zbus::Error::FDO(fdo) => match fdo.as_ref() {
            zbus::fdo::Error::ZBus(e) => refused_by_the_object(e),
            fdo => !BUS_FAILURES.contains(&fdo.name().as_str()),
        },
        zbus::Error::InterfaceNotFound => true,
        _ => false,
    }
}

/// A control that vanished or refuses the call is the agent's (it acted on what is no
/// longer there); a bus that failed is the machine's.
impl Blamed for BusError {
    fn blame(&self) -> Blame {
        match self {
            Self::Call { source, .. } if refused_by_the_object(source) => Blame::Agent,
            Self::Call { .. } | Self::Walk(_) => Blame::Environment,
        }
    }
}

impl From<BusError> for DesktopError {
    fn from(e: BusError) -> Self {
        DesktopError::classified(e)
    }
}

/// `what` failed on the bus.
fn failed(what: &'static str) -> impl FnOnce(zbus::Error) -> BusError {
    move |source| BusError::Call { what, source }
}

async fn accessible<'a>(
    conn: &'a Connection,
    id: &ObjectId,
) -> Result<AccessibleProxy<'a>, BusError> {
    AccessibleProxy::builder(conn)
        .destination(id.bus.clone())
        .and_then(|b| b.path(id.path.clone()))
        .map_err(failed("an object's address"))?
        .cache_properties(CacheProperties::No)
        .build()
        .await
        .map_err(failed("an object"))
}

macro_rules! interface_proxy {
    ($fn:ident, $proxy:ident) => {
        async fn $fn<'a>(conn: &'a Connection, id: &ObjectId) -> Result<$proxy<'a>, BusError> {
            $proxy::builder(conn)
                .destination(id.bus.clone())
                .and_then(|b| b.path(id.path.clone()))
                .map_err(failed("an object's address"))?
                .cache_properties(CacheProperties::No)
                .build()
                .await
                .map_err(failed("an object"))
        }
    };
}
interface_proxy!(component, ComponentProxy);
interface_proxy!(action, ActionProxy);
interface_proxy!(text, TextProxy);
interface_proxy!(editable, EditableTextProxy);

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn call(source: zbus::Error) -> BusError {
        BusError::Call {
            what: "a state",
            source,
        }
    }

    #[test]
    fn an_object_that_vanished_or_refuses_is_the_agents() {
        for gone in [
            zbus::fdo::Error::UnknownObject("no such object /org/a11y/atspi/accessible/42".into()),
            zbus::fdo::Error::ServiceUnknown("the name :1.7 was not provided".into()),
            zbus::fdo::Error::UnknownMethod("no DoAction here".into()),
        ] {
            let e = call(zbus::Error::FDO(Box::new(gone)));
            assert_eq!(e.blame(), Blame::Agent, "{e}");
            let failure = DesktopError::from(e).failure();
            assert_eq!(failure.blame, Blame::Agent);
            assert!(
                failure
                    .message
                    .starts_with("the accessibility bus failed (a state): "),
                "{}",
                failure.message
            );
        }
        assert_eq!(call(zbus::Error::InterfaceNotFound).blame(), Blame::Agent);
    }

    #[test]
    fn a_bus_that_failed_is_the_machines() {
        let timed_out = std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out");
        let e = call(zbus::Error::InputOutput(Arc::new(timed_out)));
        assert_eq!(e.blame(), Blame::Environment);
        let e = DesktopError::from(e);
        assert!(matches!(e, DesktopError::Desktop { .. }));
        // Its words, with the io error's said once.
        assert_eq!(
            e.failure().message,
            "the accessibility bus failed (a state): I/O error: timed out"
        );
        let no_memory = zbus::fdo::Error::NoMemory("out of memory".into());
        assert_eq!(
            call(zbus::Error::FDO(Box::new(no_memory))).blame(),
            Blame::Environment
        );
        assert_eq!(call(zbus::Error::InvalidReply).blame(), Blame::Environment);
    }
}
