//! Host Escalation transitions of the coordinator core (spec §3.6; TLA+ `Submit` … `Deliver`).
//!
//! authenticate → correlate → auto-approve, or prompt → approve / edit / deny / timeout (in
//! [`super::prompt`]) →
//! execute at most once → Escalation Result delivered to the owning session only, or the
//! session disconnects first (OR-2). Nothing executes without developer approval or an exact
//! auto-approval rule match (SR-7, SR-8).

use super::core::{require, Reason};
use super::effect::Effect;
use super::prompt::release_terminal;
use super::state::{Approval, CliId, CliStatus, Outcome, Phase, Request, RequestId};
use super::state::{RequestState, State};

type Step = Result<Vec<Effect>, Reason>;

/// The request `id`, which must be in a state accepted by `ok`.
pub(super) fn request_in(
    s: &mut State,
    id: RequestId,
    ok: impl Fn(RequestState) -> bool,
) -> Result<&mut Request, Reason> {
    match s.requests.get_mut(&id) {
        Some(r) if ok(r.state) => Ok(r),
        other => Err(Reason::RequestState(id, other.map(|r| r.state))),
    }
}

pub(super) fn request_at(
    s: &mut State,
    id: RequestId,
    state: RequestState,
) -> Result<&mut Request, Reason> {
    request_in(s, id, |st| st == state)
}

/// Drops every accepted request whose owner satisfies `owned`: its session disconnected.
/// Running host processes are terminated (OR-3); prompts are withdrawn with their session.
pub(super) fn drop_owned_by(s: &mut State, owned: impl Fn(CliId) -> bool) -> Vec<Effect> {
    let mut effects = Vec::new();
    for (&id, r) in s.requests.iter_mut() {
        if r.state.is_active() && owned(r.owner) {
            match r.state {
                RequestState::Executing => {
                    effects.push(Effect::TerminateHostProcess { request: id })
                }
                RequestState::Prompting => effects.push(Effect::WithdrawPrompt { request: id }),
                _ => {}
            }
            r.state = RequestState::Dropped;
        }
    }
    effects
}

/// Rejects every request still waiting for authentication (TLA+ `RejectSubmitted`).
pub(super) fn reject_submitted(s: &mut State) -> Vec<Effect> {
    let mut effects = Vec::new();
    for (&id, r) in s.requests.iter_mut() {
        if r.state == RequestState::Submitted {
            r.state = RequestState::Rejected;
            effects.push(Effect::RejectRequest { request: id });
        }
    }
    effects
}

/// TLA+ `Submit(r, c, forged, m)`: a fresh Escalation Request ID appears in the mailbox.
pub(super) fn submit(
    s: &mut State,
    request: RequestId,
    cli: CliId,
    signature_valid: bool,
    rule_match: bool,
) -> Step {
    require(s.phase == Phase::Ready, Reason::Phase(s.phase))?;
    require(
        s.sandbox,
        Reason::Resource("the Agent Sandbox does not run"),
    )?;
    let known = s.requests.get(&request).map(|r| r.state);
    require(known.is_none(), Reason::RequestState(request, known))?;
    let had_anchor = s.cli_status(cli).is_some_and(CliStatus::had_anchor);
    require(!signature_valid || had_anchor, Reason::NoSessionAnchor(cli))?;
    s.requests.insert(
        request,
        Request {
            state: RequestState::Submitted,
            owner: cli,
            signature_valid,
            rule_match,
            approval: Approval::None,
            outcome: Outcome::None,
            execs: 0,
            delivered_to: None,
            decided_by: None,
            decisions: 0,
            decider_saw: false,
        },
    );
    Ok(Vec::new())
}

/// TLA+ `Authentic(r)`: a genuine signature by a currently registered session of a ready,
/// trusted Domain (SR-9, FR-10).
fn authentic(s: &State, r: &Request) -> bool {
    r.signature_valid
        && s.cli_status(r.owner) == Some(CliStatus::Registered)
        && s.trust
        && s.phase == Phase::Ready
}

fn check_submitted(s: &State, id: RequestId) -> Result<&Request, Reason> {
    match s.requests.get(&id) {
        Some(r) if r.state == RequestState::Submitted => Ok(r),
        other => Err(Reason::RequestState(id, other.map(|r| r.state))),
    }
}

/// TLA+ `Authenticate(r)`.
pub(super) fn authenticate(s: &mut State, id: RequestId) -> Step {
    let ok = authentic(s, check_submitted(s, id)?);
    require(ok, Reason::NotAuthentic(id))?;
    request_at(s, id, RequestState::Submitted)?.state = RequestState::Accepted;
    Ok(Vec::new())
}

/// TLA+ `Reject(r)`.
pub(super) fn reject(s: &mut State, id: RequestId) -> Step {
    let ok = authentic(s, check_submitted(s, id)?);
    require(!ok, Reason::Authentic(id))?;
    request_at(s, id, RequestState::Submitted)?.state = RequestState::Rejected;
    Ok(vec![Effect::RejectRequest { request: id }])
}

/// TLA+ `Correlate(r)` (FR-5).
pub(super) fn correlate(s: &mut State, id: RequestId) -> Step {
    let r = request_at(s, id, RequestState::Accepted)?;
    r.state = RequestState::Correlated;
    Ok(vec![Effect::RouteRequest {
        session: r.owner,
        request: id,
    }])
}

/// TLA+ `AutoApprove(r)`: only on an exact rule match (SR-8).
pub(super) fn auto_approve(s: &mut State, id: RequestId) -> Step {
    let r = request_at(s, id, RequestState::Correlated)?;
    require(r.rule_match, Reason::NoRuleMatch(id))?;
    r.state = RequestState::Approved;
    r.approval = Approval::Rule;
    Ok(Vec::new())
}

/// TLA+ `Execute(r)`: runs the approved argument vector, once.
pub(super) fn execute(s: &mut State, id: RequestId) -> Step {
    let r = request_at(s, id, RequestState::Approved)?;
    r.state = RequestState::Executing;
    r.execs = r.execs.saturating_add(1);
    Ok(vec![Effect::RunHostCommand {
        request: id,
        edited: r.approval == Approval::Edited,
    }])
}

/// TLA+ `Finish(r)`.
pub(super) fn finish(s: &mut State, id: RequestId) -> Step {
    let r = request_at(s, id, RequestState::Executing)?;
    r.state = RequestState::Resolved;
    r.outcome = Outcome::Completed;
    Ok(Vec::new())
}

/// TLA+ `Cancel(r)` (OR-3): a running host process is terminated, a prompt gives the terminal
/// back; the cancellation is still reported in the Escalation Result.
pub(super) fn cancel(s: &mut State, id: RequestId) -> Step {
    let r = request_in(s, id, RequestState::is_cancellable)?;
    let was = r.state;
    let owner = r.owner;
    r.state = RequestState::Resolved;
    r.outcome = Outcome::Cancelled;
    let mut effects = Vec::new();
    match was {
        RequestState::Prompting => {
            release_terminal(s, owner, id);
            effects.push(Effect::WithdrawPrompt { request: id });
            effects.push(Effect::ReturnTerminal { session: owner });
        }
        RequestState::Executing => effects.push(Effect::TerminateHostProcess { request: id }),
        _ => {}
    }
    Ok(effects)
}

/// TLA+ `Deliver(r, c)`: only to the owning, still registered session (FR-5, OR-2).
pub(super) fn deliver(s: &mut State, id: RequestId, cli: CliId) -> Step {
    let status = s.cli_status(cli);
    let r = request_at(s, id, RequestState::Resolved)?;
    let owner = r.owner;
    require(
        cli == owner,
        Reason::NotOwner {
            request: id,
            cli,
            owner,
        },
    )?;
    require(
        status == Some(CliStatus::Registered),
        Reason::CliState(cli, status),
    )?;
    r.state = RequestState::Delivered;
    r.delivered_to = Some(cli);
    Ok(vec![Effect::DeliverResult {
        session: cli,
        request: id,
        outcome: r.outcome,
    }])
}
