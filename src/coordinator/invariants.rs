//! The safety invariants of `protocol/Lazaret.tla`, over the core's [`State`].
//!
//! Same names as the TLA+ operators. stateright checks them over every reachable state of the
//! core (`core_model`), and trace replay checks them after every recorded step.

use super::state::{Approval, CliStatus, Outcome, Phase, RequestState, State};
use super::viewers::View;

/// A named safety invariant.
pub type Invariant = (&'static str, fn(&State) -> bool);

/// Every safety invariant, by TLA+ name.
pub const INVARIANTS: &[Invariant] = &[
    ("AtMostOneLeader", at_most_one_leader),
    ("LeaderWhileActive", leader_while_active),
    ("SandboxNeedsSidecar", sandbox_needs_sidecar),
    ("PolicyNeedsSidecar", policy_needs_sidecar),
    ("AbsentIsClean", absent_is_clean),
    ("SessionsOnlyWhenReady", sessions_only_when_ready),
    ("ExecutesOnlyApproved", executes_only_approved),
    ("ExecutesAtMostOnce", executes_at_most_once),
    ("HostProcessesBound", host_processes_bound),
    ("BindingPreserved", binding_preserved),
    ("ResultsToOwner", results_to_owner),
    ("TerminalSingleOwner", terminal_single_owner),
    ("ViewsOnlyLiveSessions", views_only_live_sessions),
    ("DetachedSessionsKeepDomain", detached_sessions_keep_domain),
    ("DecidedOnce", decided_once),
    ("DecidedBySeer", decided_by_seer),
    ("DecisionAttributed", decision_attributed),
];

/// The name of the first invariant `state` violates, if any.
pub fn violated(state: &State) -> Option<&'static str> {
    INVARIANTS
        .iter()
        .find(|(_, holds)| !holds(state))
        .map(|(name, _)| *name)
}

/// OR-1: at most one Session Coordinator (startup leader) per Domain.
pub fn at_most_one_leader(s: &State) -> bool {
    s.leaders().count() <= 1
}

/// A leader exactly while the Domain is not absent.
pub fn leader_while_active(s: &State) -> bool {
    (s.phase == Phase::Absent) == (s.leaders().count() == 0)
}

/// SR-5: Agent Sandbox up ⇒ Network Sidecar up with policy, State Anchor mounted.
pub fn sandbox_needs_sidecar(s: &State) -> bool {
    !s.sandbox || (s.sidecar && s.policy && s.state_anchor)
}

/// Network policy only in a running Network Sidecar.
pub fn policy_needs_sidecar(s: &State) -> bool {
    !s.policy || s.sidecar
}

/// Absent ⇒ nothing running, mounted, published, trusted, registered or executing.
pub fn absent_is_clean(s: &State) -> bool {
    s.phase != Phase::Absent
        || (!s.sandbox
            && !s.sidecar
            && !s.policy
            && !s.state_anchor
            && !s.published
            && !s.trust
            && s.sessions().next().is_none()
            && s.requests
                .values()
                .all(|r| !r.state.is_active() && r.state != RequestState::Submitted))
}

/// Client Sessions exist only in a ready, published, trusted Domain with a sandbox.
pub fn sessions_only_when_ready(s: &State) -> bool {
    s.sessions().next().is_none()
        || (s.phase == Phase::Ready && s.published && s.trust && s.sandbox)
}

/// SR-7: nothing executes without developer approval or an exact rule match, and never for
/// an unauthenticated request.
pub fn executes_only_approved(s: &State) -> bool {
    s.requests.values().all(|r| {
        r.execs == 0
            || (r.signature_valid
                && match r.approval {
                    Approval::Developer | Approval::Edited => true,
                    Approval::Rule => r.rule_match,
                    Approval::None => false,
                })
    })
}

/// A request executes at most once.
pub fn executes_at_most_once(s: &State) -> bool {
    s.requests.values().all(|r| r.execs <= 1)
}

/// Host processes run only for a registered session of a ready Domain.
pub fn host_processes_bound(s: &State) -> bool {
    s.requests.values().all(|r| {
        r.state != RequestState::Executing
            || (s.phase == Phase::Ready && s.cli_status(r.owner) == Some(CliStatus::Registered))
    })
}

/// FR-10: every accepted request stays bound to its registered Client Session.
pub fn binding_preserved(s: &State) -> bool {
    s.requests.values().all(|r| {
        !r.state.is_active()
            || (r.signature_valid && s.cli_status(r.owner) == Some(CliStatus::Registered))
    })
}

/// FR-5: Escalation Results go only to the owning session.
pub fn results_to_owner(s: &State) -> bool {
    s.requests.values().all(|r| {
        r.delivered_to.is_none_or(|to| to == r.owner)
            && (r.state != RequestState::Delivered || r.delivered_to == Some(r.owner))
    })
}

/// A terminal is owned by at most one prompt, of its own session, and every prompt owns its
/// session's terminal.
pub fn terminal_single_owner(s: &State) -> bool {
    let terminals_ok = s.clis.iter().all(|(&id, c)| {
        c.terminal.is_none_or(|r| {
            s.requests
                .get(&r)
                .is_some_and(|q| q.state == RequestState::Prompting && q.owner == id)
        })
    });
    let prompts_ok = s.requests.iter().all(|(&id, r)| {
        r.state != RequestState::Prompting
            || s.clis.get(&r.owner).is_some_and(|c| c.terminal == Some(id))
    });
    terminals_ok && prompts_ok
}

/// Viewers view only registered sessions; control centres only a ready Domain.
pub fn views_only_live_sessions(s: &State) -> bool {
    s.viewers.values().all(|view| match *view {
        View::Session(c) => s.cli_status(c) == Some(CliStatus::Registered),
        View::Centre => s.phase == Phase::Ready,
    })
}

/// FR-6: a detached session (no viewer attached) still keeps its Domain ready.
pub fn detached_sessions_keep_domain(s: &State) -> bool {
    let detached = s
        .sessions()
        .any(|c| !s.viewers.values().any(|v| *v == View::Session(c)));
    !detached || (s.phase == Phase::Ready && s.published && s.sandbox)
}

/// First decision wins: a prompt is decided at most once (a viewer, the session's own
/// terminal or the deadline), and who decided stays.
pub fn decided_once(s: &State) -> bool {
    s.requests
        .values()
        .all(|r| r.decisions <= 1 && (r.decided_by.is_none() || r.decisions == 1))
}

/// The decider could see the prompt when it decided (history `decider_saw`).
pub fn decided_by_seer(s: &State) -> bool {
    s.requests
        .values()
        .all(|r| r.decided_by.is_none() || r.decider_saw)
}

/// FR-5: every developer decision names who made it.
pub fn decision_attributed(s: &State) -> bool {
    s.requests.values().all(|r| {
        let by_developer = matches!(r.approval, Approval::Developer | Approval::Edited)
            || r.outcome == Outcome::Denied;
        !by_developer || r.decided_by.is_some()
    })
}
