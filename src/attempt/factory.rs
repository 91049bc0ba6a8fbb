//! Building the session a task's shape calls for (UFO's SessionFactory): a recorded
//! plan becomes a FollowerSession replayed by the ReplayAgent; a UFO step plan a
//! FollowerSession with one LinuxAgent round per step; a UFO or seed-doc request a
//! FromFileSession with one LinuxAgent round. On a desktop task the HostAgent and its
//! AppAgents take the LinuxAgent's place, and a step plan's round 0 is the HostAgent's.
//! In UFO's `operator` mode an operator works alone on the whole desktop (UFO's
//! OpenAIOperatorSession; a step plan's rounds are its steps); in `normal_operator`
//! the HostAgent hands its subtasks to an operator instead of an AppAgent. An OSWorld
//! task whose apps are only `os` goes to the LinuxAgent, on its desktop's shell.

use super::settings::AttemptSettings;
use crate::agent::{DesktopAgents, LinuxAgent, OperatorAgent, ReplayAgent, Target};
use crate::executor::shell_tools;
use crate::record::SessionType;
use crate::session::{Agent, Context, Limits, Round, Session};
use crate::task::{SessionMode, Task, TaskShape};
use crate::tool::{Blame, Failure, ToolSpec};

/// UFO's MAX_STEP.
const DEFAULT_MAX_STEPS: u32 = 50;

/// The session for `task`, or why there is none. `offered` is the executor's own tool
/// set when it is not the built-in one (a remote device's).
pub(super) fn build(
    task: &Task,
    settings: &AttemptSettings,
    ctx: Context,
    offered: Option<Vec<ToolSpec>>,
) -> Result<Session, Failure> {
    let max_steps = |default| task.max_steps.or(settings.max_steps).unwrap_or(default);
    let one_round = || {
        vec![Round {
            request: task.request.clone(),
            subtask: None,
        }]
    };
    let (agent, rounds, limits): (Box<dyn Agent>, _, _) = match &task.shape {
        TaskShape::RecordedPlan { actions } => {
            let limits = Limits {
                max_steps: max_steps(actions.len().max(1) as u32),
                max_rounds: settings.max_rounds.unwrap_or(1).max(1),
            };
            let agent = ReplayAgent::new(
                actions.clone(),
                task.source.parent().map(std::path::Path::to_path_buf),
            )
            .saying_fail(task.says_fail);
            (Box::new(agent), one_round(), limits)
        }
        TaskShape::UfoStepPlan { steps } | TaskShape::UfoDataflow { steps } => {
            // One round per step, always: UFO's default MAX_ROUND of 1 ran no step at all.
            let limits = Limits {
                max_steps: max_steps(DEFAULT_MAX_STEPS),
                max_rounds: settings.max_rounds.unwrap_or(0).max(steps.len() as u32),
            };
            let what = if matches!(task.shape, TaskShape::UfoStepPlan { .. }) {
                "UFO step plan"
            } else {
                "UFO dataflow task"
            };
            let (rounds, limits) = step_rounds(task, steps, limits);
            let agent = llm_agent(task, settings, what, Some(steps.clone()), offered)?;
            (agent, rounds, limits)
        }
        TaskShape::UfoRequest | TaskShape::SeedRequest => {
            let what = if task.osworld.is_some() {
                "OSWorld task"
            } else if matches!(task.shape, TaskShape::UfoRequest) {
                "UFO request file"
            } else {
                "request"
            };
            let limits = Limits {
                max_steps: max_steps(DEFAULT_MAX_STEPS),
                max_rounds: settings.max_rounds.unwrap_or(1).max(1),
            };
            let agent = llm_agent(task, settings, what, None, offered)?;
            (agent, one_round(), limits)
        }
    };
    let session_type = match (mode_of(task), &task.shape) {
        (SessionMode::Operator, TaskShape::UfoRequest | TaskShape::SeedRequest) => {
            SessionType::OpenAIOperatorSession
        }
        _ => SessionType::of(&task.shape),
    };
    Ok(Session::new(session_type, rounds, agent, limits, ctx))
}

/// Why no agent can take `task` under `settings` (no LLM, no operator configured), said
/// before its means are made; `None` when one can (a recorded plan needs none).
pub(super) fn missing_agent(task: &Task, settings: &AttemptSettings) -> Option<Failure> {
    if matches!(task.shape, TaskShape::RecordedPlan { .. }) {
        return None;
    }
    let what = what_of(task);
    let llm = || settings.llm.is_none().then(|| needs_llm(what));
    match mode_of(task) {
        SessionMode::Operator => operator_of(settings, what).err(),
        SessionMode::NormalOperator => operator_of(settings, what).err().or_else(llm),
        SessionMode::Normal => llm(),
    }
}

/// The task's shape in words, for what the run lacks to run it.
fn what_of(task: &Task) -> &'static str {
    match task.shape {
        _ if task.osworld.is_some() => "OSWorld task",
        TaskShape::UfoRequest => "UFO request file",
        TaskShape::UfoStepPlan { .. } => "UFO step plan",
        TaskShape::UfoDataflow { .. } => "UFO dataflow task",
        _ => "request",
    }
}

/// The task's session mode (the run's is folded in when its attempt starts).
fn mode_of(task: &Task) -> SessionMode {
    task.mode.unwrap_or(SessionMode::Normal)
}

/// A round per step of a step plan; on a desktop, round 0 before them is the
/// HostAgent's (it selects the app).
fn step_rounds(task: &Task, steps: &[String], limits: Limits) -> (Vec<Round>, Limits) {
    let mut rounds: Vec<Round> = steps
        .iter()
        .map(|s| Round {
            request: s.clone(),
            subtask: Some(s.clone()),
        })
        .collect();
    // An operator alone has no HostAgent to select the app first.
    if !task.is_desktop() || mode_of(task) == SessionMode::Operator {
        return (rounds, limits);
    }
    rounds.insert(
        0,
        Round {
            request: task.request.clone(),
            subtask: None,
        },
    );
    let limits = Limits {
        max_rounds: limits.max_rounds.max(steps.len() as u32 + 1),
        ..limits
    };
    (rounds, limits)
}

/// The LLM agent of `task`: an operator alone (`operator` mode), the HostAgent and
/// its AppAgents (or operators) on a desktop, else a LinuxAgent.
fn llm_agent(
    task: &Task,
    settings: &AttemptSettings,
    what: &str,
    steps: Option<Vec<String>>,
    offered: Option<Vec<ToolSpec>>,
) -> Result<Box<dyn Agent>, Failure> {
    Ok(match mode_of(task) {
        SessionMode::Operator => {
            let run = operator_of(settings, what)?;
            Box::new(OperatorAgent::new(
                run,
                settings.agent.clone(),
                Target::Desktop,
            ))
        }
        SessionMode::NormalOperator => {
            let run = operator_of(settings, what)?;
            let mut agents = desktop_agents(task, settings, what, steps, offered)?;
            agents.with_operator(OperatorAgent::new(
                run,
                settings.agent.clone(),
                Target::Window,
            ));
            Box::new(agents)
        }
        // An OSWorld task about the OS alone goes to UFO's Linux session, on the same
        // desktop's files and commands.
        SessionMode::Normal if task.is_desktop() && !task.shell_agent() => {
            Box::new(desktop_agents(task, settings, what, steps, offered)?)
        }
        SessionMode::Normal => Box::new(linux_agent(task, settings, what, steps, offered)?),
    })
}

/// The run's operator, or why there is none: the run's configuration.
fn operator_of<'a>(
    settings: &'a AttemptSettings,
    what: &str,
) -> Result<&'a crate::agent::OperatorRun, Failure> {
    settings.operator.as_ref().ok_or_else(|| {
        Failure::new(
            Blame::Config,
            format!(
                "this {what} runs as an operator and no computer-use model is configured: add [operator] to \
                 ufo-batch.toml (provider, model), or give --model for an open model over chat completions"
            ),
        )
    })
}

/// A LinuxAgent for `task` (`what` names the task's shape in the error when no LLM is
/// configured).
fn linux_agent(
    task: &Task,
    settings: &AttemptSettings,
    what: &str,
    steps: Option<Vec<String>>,
    offered: Option<Vec<ToolSpec>>,
) -> Result<LinuxAgent, Failure> {
    let llm = settings.llm.clone().ok_or_else(|| needs_llm(what))?;
    let mut tools = offered.unwrap_or_else(|| shell_tools().to_vec());
    if let Some(hub) = &settings.mcp {
        tools.extend(hub.specs());
    }
    Ok(LinuxAgent::new(
        llm,
        tools,
        settings.agent.clone(),
        task.object.clone(),
        steps,
        recall(task, settings),
    ))
}

/// The HostAgent and its AppAgents for a desktop `task`.
fn desktop_agents(
    task: &Task,
    settings: &AttemptSettings,
    what: &str,
    steps: Option<Vec<String>>,
    offered: Option<Vec<ToolSpec>>,
) -> Result<DesktopAgents, Failure> {
    let llm = settings.llm.clone().ok_or_else(|| needs_llm(what))?;
    // A device's AppAgent tools are its own (the HostAgent's selection is not one).
    let mut tools = match offered {
        Some(offered) => offered
            .into_iter()
            .filter(|t| t.name != "select_application_window")
            .collect(),
        None => crate::desktop::tools::app_agent_tools().to_vec(),
    };
    if let Some(hub) = &settings.mcp {
        tools.extend(hub.specs());
    }
    let app_hint = crate::experience::from_actions::task_apps(task, None)
        .into_iter()
        .next()
        .unwrap_or_default();
    Ok(DesktopAgents::new(
        llm,
        tools,
        settings.agent.clone(),
        task.object.clone(),
        steps,
        recall(task, settings),
        app_hint,
    ))
}

/// The task's way into the run's experience, when its agents are given examples.
fn recall(task: &Task, settings: &AttemptSettings) -> Option<crate::experience::Recall> {
    let experience = settings.experience.as_ref()?;
    crate::experience::Recall::of(experience, task.id.base(task.repeat).as_str())
}

/// No LLM for a task that needs one: the run's configuration.
fn needs_llm(what: &str) -> Failure {
    Failure::new(
        Blame::Config,
        format!(
            "this {what} needs an LLM agent and none is configured: run with --model MODEL \
             (the key goes in $OPENAI_API_KEY; --llm-base-url for another server)"
        ),
    )
}
