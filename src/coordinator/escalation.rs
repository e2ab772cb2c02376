//! Host Escalation transitions of the coordinator core (spec §3.6; TLA+ `Submit` … `Deliver`).
//!
//! authenticate → correlate → auto-approve, or prompt → approve / edit / deny / timeout →
//! execute at most once → Escalation Result delivered to the owning session only, or the
//! session disconnects first (OR-2). Nothing executes without developer approval or an exact
//! auto-approval rule match (SR-7, SR-8).

use super::core::{require, Reason};
use super::effect::Effect;
use super::state::{Approval, CliId, CliStatus, Outcome, Phase, Request, RequestId};
use super::state::{RequestState, State};
use super::viewers::{sees, Decider};

type Step = Result<Vec<Effect>, Reason>;

/// The request `id`, which must be in a state accepted by `ok`.
fn request_in(
    s: &mut State,
    id: RequestId,
    ok: impl Fn(RequestState) -> bool,
) -> Result<&mut Request, Reason> {
    match s.requests.get_mut(&id) {
        Some(r) if ok(r.state) => Ok(r),
        other => Err(Reason::RequestState(id, other.map(|r| r.state))),
    }
}

fn request_at(s: &mut State, id: RequestId, state: RequestState) -> Result<&mut Request, Reason> {
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

fn release_terminal(s: &mut State, owner: CliId, id: RequestId) {
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
