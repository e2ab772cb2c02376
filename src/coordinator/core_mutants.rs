//! Mutants of the coordinator core's `step` for the stateright model (`core_model`): each
//! drops one guard, and the model check must catch it (a check that cannot fail proves
//! nothing).

use super::effect::Effect;
use super::event::Event;
use super::state::{Approval, CliStatus, Outcome, Phase, RequestState, State};
use super::viewers::{sees, Decider};

/// A guard deliberately dropped from `step`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mutant {
    /// `StartSandbox` without the policy guard (SR-5).
    SandboxBeforePolicy,
    /// `BecomeLeader` without the lifecycle lock: also while the Domain is starting (OR-1).
    LeaderWithoutLock,
    /// `Deliver` to any registered session, not only the owner (FR-5).
    DeliverToAnySession,
    /// `Deny` by a second viewer accepted after the first viewer's approval: the first
    /// decision does not win.
    SecondDecisionAccepted,
    /// `Approve` by any viewer, also one that does not see the prompt (FR-5).
    DecisionByNonSeer,
}

/// One guard dropped: `Some` where the mutant enables a step the core rejects.
pub(super) fn mutant_step(m: Mutant, s: &State, event: &Event) -> Option<(State, Vec<Effect>)> {
    let mut n = s.clone();
    match (m, *event) {
        (Mutant::SandboxBeforePolicy, Event::StartSandbox)
            if s.phase == Phase::Starting && s.state_anchor && s.sidecar && !s.sandbox =>
        {
            n.sandbox = true;
            Some((n, vec![Effect::StartSandbox]))
        }
        (Mutant::LeaderWithoutLock, Event::BecomeLeader { cli }) if s.phase == Phase::Starting => {
            let c = n.clis.get_mut(&cli)?;
            (c.status == CliStatus::Joining).then_some(())?;
            c.leader = true;
            Some((n, vec![Effect::CreateTrustAnchor]))
        }
        (Mutant::DeliverToAnySession, Event::Deliver { request, cli }) => {
            (s.cli_status(cli) == Some(CliStatus::Registered)).then_some(())?;
            let r = n.requests.get_mut(&request)?;
            (r.state == RequestState::Resolved).then_some(())?;
            r.state = RequestState::Delivered;
            r.delivered_to = Some(cli);
            let outcome = r.outcome;
            Some((
                n,
                vec![Effect::DeliverResult {
                    session: cli,
                    request,
                    outcome,
                }],
            ))
        }
        (Mutant::SecondDecisionAccepted, Event::Deny { request, by }) => {
            let r = n.requests.get_mut(&request)?;
            let first = r.decided_by?;
            let by = Decider::from_by(by);
            (r.state == RequestState::Approved && first != by).then_some(())?;
            (sees(s, by, r.owner)).then_some(())?;
            r.state = RequestState::Resolved;
            r.approval = Approval::None;
            r.outcome = Outcome::Denied;
            r.decided_by = Some(by);
            r.decisions = r.decisions.saturating_add(1);
            r.decider_saw = true;
            Some((n, vec![Effect::WithdrawPrompt { request }]))
        }
        (
            Mutant::DecisionByNonSeer,
            Event::Approve {
                request,
                by: Some(v),
            },
        ) => {
            let r = n.requests.get_mut(&request)?;
            (r.state == RequestState::Prompting).then_some(())?;
            let owner = r.owner;
            r.state = RequestState::Approved;
            r.approval = Approval::Developer;
            r.decided_by = Some(Decider::Viewer(v));
            r.decisions = r.decisions.saturating_add(1);
            r.decider_saw = sees(s, Decider::Viewer(v), owner);
            n.clis.get_mut(&owner)?.terminal = None;
            Some((
                n,
                vec![
                    Effect::WithdrawPrompt { request },
                    Effect::ReturnTerminal { session: owner },
                ],
            ))
        }
        _ => None,
    }
}
