//! Escalation prompts of the coordinator core (spec §3.6, issue #14; TLA+ `Prompt`, `Decide`,
//! `Approve`, `Edit`, `Deny`, `Timeout`).
//!
//! A prompt is shown by its owning session: on the session's own terminal (a direct `lazaret
//! run`) and to every viewer that sees it (attached to the session, or a control centre). It
//! needs no viewer: the prompt of a detached session waits until someone decides or its
//! deadline passes. The first decision wins and records who made it (FR-5); a later decision
//! finds the request no longer prompting and is rejected.

use super::core::{require, Reason};
use super::effect::Effect;
use super::escalation::request_at;
use super::state::{Approval, CliId, CliStatus, Outcome, RequestId, RequestState, State};
use super::viewers::{sees, Decider};

type Step = Result<Vec<Effect>, Reason>;

/// TLA+ `Prompt(r)`: the owning session shows the prompt: its own terminal (if any) is taken
/// from the sandbox session, and every viewer that sees it is offered the prompt. No viewer
/// is needed: the prompt of a detached session waits for one, or for its deadline.
pub(super) fn prompt(s: &mut State, id: RequestId) -> Step {
    let r = *request_at(s, id, RequestState::Correlated)?;
    require(!r.rule_match, Reason::RuleMatches(id))?;
    let owner_status = s.cli_status(r.owner);
    let cli = match s.clis.get_mut(&r.owner) {
        Some(c) if c.status == CliStatus::Registered => c,
        _ => return Err(Reason::CliState(r.owner, owner_status)),
    };
    if let Some(busy) = cli.terminal {
        return Err(Reason::TerminalBusy(r.owner, busy));
    }
    cli.terminal = Some(id);
    request_at(s, id, RequestState::Correlated)?.state = RequestState::Prompting;
    let mut effects = vec![Effect::ShowPrompt {
        session: r.owner,
        request: id,
    }];
    effects.extend(
        s.viewers
            .keys()
            .filter(|&&v| sees(s, Decider::Viewer(v), r.owner))
            .map(|&viewer| Effect::OfferPrompt {
                viewer,
                request: id,
            }),
    );
    Ok(effects)
}

/// TLA+ `Decide(r, d, st, appr, out)`: the first decision, by `decider` (`None`: the
/// deadline), which must see the prompt. It withdraws the prompt from everyone and returns the
/// terminal to the sandbox session. A later decision finds the request no longer prompting
/// and is rejected: the IO layer tells that viewer who decided first.
fn decide(
    s: &mut State,
    id: RequestId,
    decider: Option<Decider>,
    state: RequestState,
    approval: Approval,
    outcome: Outcome,
) -> Step {
    let owner = request_at(s, id, RequestState::Prompting)?.owner;
    let saw = decider.is_some_and(|d| sees(s, d, owner));
    if let Some(decider) = decider {
        require(
            saw,
            Reason::NotSeen {
                request: id,
                decider,
            },
        )?;
    }
    let r = request_at(s, id, RequestState::Prompting)?;
    r.state = state;
    r.approval = approval;
    r.outcome = outcome;
    r.decided_by = decider;
    r.decisions = r.decisions.saturating_add(1);
    r.decider_saw = saw;
    release_terminal(s, owner, id);
    Ok(vec![
        Effect::WithdrawPrompt { request: id },
        Effect::ReturnTerminal { session: owner },
    ])
}

pub(super) fn release_terminal(s: &mut State, owner: CliId, id: RequestId) {
    if let Some(c) = s.clis.get_mut(&owner) {
        if c.terminal == Some(id) {
            c.terminal = None;
        }
    }
}

/// TLA+ `Approve(r, d)`.
pub(super) fn approve(s: &mut State, id: RequestId, by: Decider) -> Step {
    decide(
        s,
        id,
        Some(by),
        RequestState::Approved,
        Approval::Developer,
        Outcome::None,
    )
}

/// TLA+ `Edit(r, d)`: the developer's edited argument vector is what is approved.
pub(super) fn edit(s: &mut State, id: RequestId, by: Decider) -> Step {
    decide(
        s,
        id,
        Some(by),
        RequestState::Approved,
        Approval::Edited,
        Outcome::None,
    )
}

/// TLA+ `Deny(r, d)`.
pub(super) fn deny(s: &mut State, id: RequestId, by: Decider) -> Step {
    decide(
        s,
        id,
        Some(by),
        RequestState::Resolved,
        Approval::None,
        Outcome::Denied,
    )
}

/// TLA+ `Timeout(r)`.
pub(super) fn timeout(s: &mut State, id: RequestId) -> Step {
    decide(
        s,
        id,
        None,
        RequestState::Resolved,
        Approval::None,
        Outcome::Timeout,
    )
}
