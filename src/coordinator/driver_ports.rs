//! The ports through which the driver carries out the core's session-level effects (issue
//! #14): one small trait implemented at the edges, and the one executor that hands each
//! effect of a step to its port, in order. Which effect goes where is [`carrier`]'s table
//! (and the module doc of [`super::driver`]).

use super::effect::Effect;
use super::event::Event;
use super::state::{CliId, Outcome, RequestId};
use super::viewers::ViewerId;

/// Why a prompt is withdrawn: the step whose [`Effect::WithdrawPrompt`] it carries out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Withdrawal {
    /// Approved, edited or denied: the first decision won (its viewers are told by whom).
    Decided,
    /// The prompt reached its deadline.
    TimedOut,
    /// The request was cancelled (OR-3).
    Cancelled,
    /// The owning session left: its requests went with it.
    SessionEnded,
    /// The Domain failed.
    DomainFailed,
}

impl Withdrawal {
    /// The withdrawal that `cause` makes.
    pub fn of(cause: &Event) -> Withdrawal {
        match cause {
            Event::Approve { .. } | Event::Edit { .. } | Event::Deny { .. } => Withdrawal::Decided,
            Event::Timeout { .. } => Withdrawal::TimedOut,
            Event::Leave { .. } => Withdrawal::SessionEnded,
            Event::Fail => Withdrawal::DomainFailed,
            _ => Withdrawal::Cancelled,
        }
    }

    /// What the viewers still showing the prompt are told.
    pub fn reason(self) -> &'static str {
        match self {
            Withdrawal::Decided => "decided elsewhere",
            Withdrawal::TimedOut => "no decision in time",
            Withdrawal::Cancelled => "the request was cancelled",
            Withdrawal::SessionEnded => "the session ended; its request was cancelled",
            Withdrawal::DomainFailed => "the Domain failed; the request was cancelled",
        }
    }
}

/// The edges that carry out the core's escalation and prompt effects. Each method carries
/// out one effect kind; none may block for long or call back into the core (the driver calls
/// them in the order of the core's steps).
pub trait Ports {
    /// [`Effect::ShowPrompt`]: the owning session shows the prompt (its own terminal).
    fn show_prompt(&self, session: CliId, request: RequestId);
    /// [`Effect::OfferPrompt`]: a viewer that sees the prompt is offered it.
    fn offer_prompt(&self, viewer: ViewerId, request: RequestId);
    /// [`Effect::WithdrawPrompt`]: the prompt is withdrawn from every viewer showing it.
    fn withdraw_prompt(&self, request: RequestId, why: Withdrawal);
    /// [`Effect::ReturnTerminal`]: the session's terminal goes back to its sandbox session.
    fn return_terminal(&self, session: CliId);
    /// [`Effect::DeliverResult`]: the Escalation Result is written for the owning session.
    fn deliver_result(&self, session: CliId, request: RequestId, outcome: Outcome);
    /// [`Effect::TerminateHostProcess`]: the approved host process (and its group) is killed.
    fn terminate_host_process(&self, request: RequestId);
    /// [`Effect::RejectRequest`]: the unauthenticated request is discarded (SR-9).
    fn reject_request(&self, request: RequestId);
}

/// Who carries out an effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    /// A [`Ports`] method, called by [`carry_out`].
    Port,
    /// The Domain's runtime, through the lifecycle driver (bring-up, teardown, recovery).
    Lifecycle,
    /// The caller of the step, synchronously: the step hands the effect back to it.
    Caller,
}

/// The table: which carrier carries out `effect`.
pub fn carrier(effect: &Effect) -> Carrier {
    match effect {
        Effect::ShowPrompt { .. }
        | Effect::OfferPrompt { .. }
        | Effect::WithdrawPrompt { .. }
        | Effect::ReturnTerminal { .. }
        | Effect::DeliverResult { .. }
        | Effect::TerminateHostProcess { .. }
        | Effect::RejectRequest { .. } => Carrier::Port,
        Effect::CreateTrustAnchor
        | Effect::MountStateAnchor
        | Effect::StartSidecar
        | Effect::InstallPolicy
        | Effect::StartSandbox
        | Effect::PublishEndpoint
        | Effect::WithdrawPublication
        | Effect::InvalidateTrust
        | Effect::StopSandbox
        | Effect::StopSidecar
        | Effect::UnmountStateAnchor
        | Effect::ReleaseLifecycleLock => Carrier::Lifecycle,
        Effect::BindSession { .. }
        | Effect::RefuseSession { .. }
        | Effect::Disconnect { .. }
        | Effect::RouteRequest { .. }
        | Effect::RunHostCommand { .. }
        | Effect::AttachViewer { .. }
        | Effect::DetachViewer { .. } => Carrier::Caller,
    }
}

/// Carries out the effects of one step (`cause`) in order: port effects through `ports`; the
/// others are handed back, in order, to the caller of the step.
#[must_use = "effects handed back are the caller's to carry out"]
pub fn carry_out(ports: &dyn Ports, cause: &Event, effects: Vec<Effect>) -> Vec<Effect> {
    let mut handed = Vec::new();
    for effect in effects {
        match effect {
            Effect::ShowPrompt { session, request } => ports.show_prompt(session, request),
            Effect::OfferPrompt { viewer, request } => ports.offer_prompt(viewer, request),
            Effect::WithdrawPrompt { request } => {
                ports.withdraw_prompt(request, Withdrawal::of(cause))
            }
            Effect::ReturnTerminal { session } => ports.return_terminal(session),
            Effect::DeliverResult {
                session,
                request,
                outcome,
            } => ports.deliver_result(session, request, outcome),
            Effect::TerminateHostProcess { request } => ports.terminate_host_process(request),
            Effect::RejectRequest { request } => ports.reject_request(request),
            other => handed.push(other),
        }
    }
    handed
}
