//! Sessions, rounds, context and agent states (design.md §3, ufo.md §2, §6): the state
//! machine that drives an agent until a task is finished. It does no I/O of its own:
//! agents act through the executor they are handed, and steps leave as events.

mod agent;
mod context;
mod round;
#[expect(
    clippy::module_inception,
    reason = "the Session type is this module's subject"
)]
mod session;
mod state;

pub(crate) use agent::{Agent, AgentStep, Words};
pub(crate) use context::Context;
pub(crate) use round::{Round, RoundEnd};
pub(crate) use session::{Limits, Session, SessionEnd};
pub(crate) use state::{ErrorKind, Transition, transition};
