//! The sans-IO coordinator core: `step(state, event) -> (state, effects)` for one Domain.
//!
//! It follows `protocol/Lazaret.tla` action by action: each [`Event`] is the TLA+ action of
//! the same name, its guard is the action's enabling condition and its update the action's
//! primed variables; [`Effect`]s tell the IO layer what to do. An event that is not enabled
//! is [`Rejected`] with a reason; the state is then unchanged. Nothing here panics.
//!
//! [`enabled`] lets a recorded trace be replayed and checked step by step (trace
//! conformance, see [`super::trace`]); `core_model` checks the safety invariants of
//! [`super::invariants`] over every reachable state with stateright.

use std::fmt;

use super::effect::Effect;
use super::escalation;
use super::event::Event;
use super::lifecycle;
use super::prompt;
use super::state::{CliId, CliStatus, Phase, RequestId, RequestState, State};
use super::viewers::{self, Decider, View, ViewerId};

/// Why an event is not enabled in the current state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The Domain is in the wrong phase.
    Phase(Phase),
    /// The Client CLI is not in the required state (`None`: never started).
    CliState(CliId, Option<CliStatus>),
    /// A resource the action needs is not there (or is already there): startup and teardown
    /// order (SR-5, §3.2).
    Resource(&'static str),
    /// Client Sessions remain or Client CLIs are joining.
    DomainInUse,
    /// The Escalation Request is not in the required state (`None`: unknown ID).
    RequestState(RequestId, Option<RequestState>),
    /// A valid Session Anchor signature for a CLI that never had a Session Anchor.
    NoSessionAnchor(CliId),
    /// The request does not authenticate against a current registration binding (SR-9).
    NotAuthentic(RequestId),
    /// The request authenticates, so it cannot be rejected.
    Authentic(RequestId),
    /// No exact auto-approval rule match (SR-8).
    NoRuleMatch(RequestId),
    /// An auto-approval rule matches: the request is auto-approved, not prompted.
    RuleMatches(RequestId),
    /// The session's terminal already shows another prompt.
    TerminalBusy(CliId, RequestId),
    /// The viewer is not in the required state (`None`: detached).
    ViewerState(ViewerId, Option<View>),
    /// The decider does not see the prompt: a viewer attached to another session or to none,
    /// or the own terminal of a session that has ended (FR-5).
    NotSeen {
        request: RequestId,
        decider: Decider,
    },
    /// The Escalation Result may go only to the owning session (FR-5).
    NotOwner {
        request: RequestId,
        cli: CliId,
        owner: CliId,
    },
}

/// An event rejected by [`step`]: the action name and why it is not enabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejected {
    /// TLA+ action name of the rejected event.
    pub action: &'static str,
    /// Why it is not enabled.
    pub reason: Reason,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Phase(p) => write!(f, "the Domain is {p:?}"),
            Reason::CliState(c, None) => write!(f, "{c} has not started"),
            Reason::CliState(c, Some(s)) => write!(f, "{c} is {s:?}"),
            Reason::Resource(what) => write!(f, "{what}"),
            Reason::DomainInUse => write!(f, "Client Sessions remain or are joining"),
            Reason::RequestState(r, None) => write!(f, "{r} is unknown"),
            Reason::RequestState(r, Some(s)) => write!(f, "{r} is {s:?}"),
            Reason::NoSessionAnchor(c) => write!(f, "{c} never held a Session Anchor"),
            Reason::NotAuthentic(r) => {
                write!(f, "{r} does not match a current registration binding")
            }
            Reason::Authentic(r) => write!(f, "{r} authenticates"),
            Reason::NoRuleMatch(r) => write!(f, "{r} matches no auto-approval rule exactly"),
            Reason::RuleMatches(r) => write!(f, "{r} matches an auto-approval rule"),
            Reason::TerminalBusy(c, r) => write!(f, "the terminal of {c} shows {r}"),
            Reason::ViewerState(v, None) => write!(f, "{v} is detached"),
            Reason::ViewerState(v, Some(View::Centre)) => write!(f, "{v} is a control centre"),
            Reason::ViewerState(v, Some(View::Session(c))) => write!(f, "{v} is attached to {c}"),
            Reason::NotSeen { request, decider } => {
                write!(f, "{decider} does not see the prompt of {request}")
            }
            Reason::NotOwner {
                request,
                cli,
                owner,
            } => write!(f, "{request} belongs to {owner}, not {cli}"),
        }
    }
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is not enabled: {}", self.action, self.reason)
    }
}

impl std::error::Error for Rejected {}

/// Takes one protocol step: the next state and the effects for the IO layer, or why `event`
/// is not enabled in `state`.
pub fn step(state: &State, event: &Event) -> Result<(State, Vec<Effect>), Rejected> {
    let mut next = state.clone();
    let effects = transition(&mut next, event).map_err(|reason| Rejected {
        action: event.name(),
        reason,
    })?;
    Ok((next, effects))
}

/// Whether `event` is an enabled action in `state` (trace conformance).
pub fn enabled(state: &State, event: &Event) -> bool {
    step(state, event).is_ok()
}

/// The next teardown or recovery step, in the required order (sandbox, sidecar, State
/// Anchor, then absent), or `None` when the Domain is not stopping. Steps for resources that
/// do not exist are skipped (they are not enabled).
pub fn next_stop(state: &State) -> Option<Event> {
    if !state.phase.is_stopping() {
        return None;
    }
    Some(if state.sandbox {
        Event::StopSandbox
    } else if state.sidecar {
        Event::StopSidecar
    } else if state.state_anchor {
        Event::UnmountStateAnchor
    } else {
        Event::ReachAbsent
    })
}

impl State {
    /// [`step`] in place: on rejection the state is left unchanged.
    pub fn apply(&mut self, event: &Event) -> Result<Vec<Effect>, Rejected> {
        let (next, effects) = step(self, event)?;
        *self = next;
        Ok(effects)
    }
}

/// `Ok(())` if `condition` holds, else the reason the action is not enabled.
pub(super) fn require(condition: bool, reason: Reason) -> Result<(), Reason> {
    if condition {
        Ok(())
    } else {
        Err(reason)
    }
}

/// Applies `event` to `s`. Guards are checked before any update; callers discard `s` on error.
fn transition(s: &mut State, event: &Event) -> Result<Vec<Effect>, Reason> {
    match *event {
        Event::Start { cli } => lifecycle::start(s, cli),
        Event::BecomeLeader { cli } => lifecycle::become_leader(s, cli),
        Event::MountStateAnchor => lifecycle::mount_state_anchor(s),
        Event::StartSidecar => lifecycle::start_sidecar(s),
        Event::InstallPolicy => lifecycle::install_policy(s),
        Event::StartSandbox => lifecycle::start_sandbox(s),
        Event::Publish => lifecycle::publish(s),
        Event::Register { cli } => lifecycle::register(s, cli),
        Event::Refuse { cli } => lifecycle::refuse(s, cli),
        Event::CancelJoin { cli } => lifecycle::cancel_join(s, cli),
        Event::Leave { cli } => lifecycle::leave(s, cli),
        Event::BeginTeardown => lifecycle::begin_teardown(s),
        Event::Fail => lifecycle::fail(s),
        Event::StopSandbox => lifecycle::stop_sandbox(s),
        Event::StopSidecar => lifecycle::stop_sidecar(s),
        Event::UnmountStateAnchor => lifecycle::unmount_state_anchor(s),
        Event::ReachAbsent => lifecycle::reach_absent(s),
        Event::Attach { viewer, cli } => viewers::attach(s, viewer, cli),
        Event::Watch { viewer } => viewers::watch(s, viewer),
        Event::Detach { viewer } => viewers::detach(s, viewer),
        Event::Submit {
            request,
            cli,
            signature_valid,
            rule_match,
        } => escalation::submit(s, request, cli, signature_valid, rule_match),
        Event::Authenticate { request } => escalation::authenticate(s, request),
        Event::Reject { request } => escalation::reject(s, request),
        Event::Correlate { request } => escalation::correlate(s, request),
        Event::AutoApprove { request } => escalation::auto_approve(s, request),
        Event::Prompt { request } => prompt::prompt(s, request),
        Event::Approve { request, by } => prompt::approve(s, request, Decider::from_by(by)),
        Event::Edit { request, by } => prompt::edit(s, request, Decider::from_by(by)),
        Event::Deny { request, by } => prompt::deny(s, request, Decider::from_by(by)),
        Event::Timeout { request } => prompt::timeout(s, request),
        Event::Execute { request } => escalation::execute(s, request),
        Event::Finish { request } => escalation::finish(s, request),
        Event::Cancel { request } => escalation::cancel(s, request),
        Event::Deliver { request, cli } => escalation::deliver(s, request, cli),
    }
}
