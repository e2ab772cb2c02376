//! Coordinator core events: one per action of `protocol/Lazaret.tla`, same names (except
//! `Return`: a CLI process returning is the CLI's, never recorded by the coordinator).
//!
//! The TLA+ `Finished` action (stuttering once everything is over) has no event. Events are
//! serialized as one JSON object tagged by `action`, e.g. `{"action":"Register","cli":1}`,
//! which is the line format of a recorded [`Trace`](super::trace::Trace).

use serde::{Deserialize, Serialize};

use super::state::{CliId, RequestId};
use super::viewers::ViewerId;

/// An action of the Domain protocol, as observed or decided by the Session Coordinator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "action")]
pub enum Event {
    // --- Domain and Session Lifecycle (spec §3.2) ---
    /// A Client CLI process starts and tries to join or start the Domain.
    Start { cli: CliId },
    /// A joining Client CLI wins the lifecycle lock of an absent Domain and starts its
    /// Session Coordinator, which creates the Trust Anchor (OR-1).
    BecomeLeader { cli: CliId },
    /// Mount the State Anchor.
    MountStateAnchor,
    /// Start the Network Sidecar.
    StartSidecar,
    /// Install the network policy in the Network Sidecar (SR-5).
    InstallPolicy,
    /// Start the Agent Sandbox, only after the policy (SR-5).
    StartSandbox,
    /// Publish the coordinator endpoint: the Domain is ready.
    Publish,
    /// Register a Client Session: bind Client CLI ID, Session ID and Session Anchor (FR-10).
    Register { cli: CliId },
    /// Refuse a joining Client CLI and tell it why (e.g. another Configuration Fingerprint).
    Refuse { cli: CliId },
    /// The developer cancels a Client CLI still waiting to join.
    CancelJoin { cli: CliId },
    /// A Client Session leaves (or its CLI dies).
    Leave { cli: CliId },
    /// No session remains and none is joining: tear down (FR-6).
    BeginTeardown,
    /// A Domain failure: withdraw publication, invalidate trust, disconnect sessions, terminate
    /// host processes (FR-7).
    Fail,
    /// Teardown/recovery step 1: stop the Agent Sandbox.
    StopSandbox,
    /// Teardown/recovery step 2: stop the Network Sidecar.
    StopSidecar,
    /// Teardown/recovery step 3: unmount the State Anchor.
    UnmountStateAnchor,
    /// Everything is stopped: the coordinator exits, the Domain is absent.
    ReachAbsent,

    // --- Viewers of coordinator-owned sessions (issue #14) ---
    /// A detached viewer (a TUI pane, `lazaret attach`) attaches to a registered session.
    Attach { viewer: ViewerId, cli: CliId },
    /// A detached viewer becomes a control centre: it sees every session's prompts.
    Watch { viewer: ViewerId },
    /// A viewer detaches, or its connection or terminal is gone (SIGHUP); the session runs on.
    Detach { viewer: ViewerId },

    // --- Host Escalation (spec §3.6) ---
    /// A request appears in the Escalation Mailbox naming a Client Session. The IO layer has
    /// checked its Session Anchor signature and matched its argument vector against the
    /// trusted auto-approval rules (SR-8).
    Submit {
        request: RequestId,
        cli: CliId,
        signature_valid: bool,
        rule_match: bool,
    },
    /// The request authenticates against a current registration binding (SR-9, FR-10).
    Authenticate { request: RequestId },
    /// The request does not authenticate: rejected, never routed.
    Reject { request: RequestId },
    /// The Escalation Request ID is correlated to its owning Client Session (FR-5).
    Correlate { request: RequestId },
    /// An exact auto-approval rule match authorizes the request (SR-7, SR-8).
    AutoApprove { request: RequestId },
    /// The owning session shows the prompt: on its own terminal, if it has one, and to every
    /// viewer that sees it. A detached session's prompt waits (until its deadline).
    Prompt { request: RequestId },
    /// The developer approves the request as submitted. `by`: the viewer that decided, or
    /// `None` for the session's own terminal (a direct `lazaret run`). The first decision wins.
    Approve {
        request: RequestId,
        #[serde(default)]
        by: Option<ViewerId>,
    },
    /// The developer edits the argument vector and approves the edited one (`by` as in
    /// `Approve`).
    Edit {
        request: RequestId,
        #[serde(default)]
        by: Option<ViewerId>,
    },
    /// The developer denies the request (`by` as in `Approve`).
    Deny {
        request: RequestId,
        #[serde(default)]
        by: Option<ViewerId>,
    },
    /// The prompt reaches its deadline.
    Timeout { request: RequestId },
    /// Run the approved argument vector on the host, without a shell (SR-8).
    Execute { request: RequestId },
    /// The host process ended (or was killed at its deadline).
    Finish { request: RequestId },
    /// The Escalation Client or the developer cancels the request (OR-3).
    Cancel { request: RequestId },
    /// Deliver the Escalation Result to a session; only the owner is accepted (FR-5, OR-2).
    Deliver { request: RequestId, cli: CliId },
}

impl Event {
    /// The TLA+ action name.
    pub fn name(&self) -> &'static str {
        match self {
            Event::Start { .. } => "Start",
            Event::BecomeLeader { .. } => "BecomeLeader",
            Event::MountStateAnchor => "MountStateAnchor",
            Event::StartSidecar => "StartSidecar",
            Event::InstallPolicy => "InstallPolicy",
            Event::StartSandbox => "StartSandbox",
            Event::Publish => "Publish",
            Event::Register { .. } => "Register",
            Event::Refuse { .. } => "Refuse",
            Event::CancelJoin { .. } => "CancelJoin",
            Event::Leave { .. } => "Leave",
            Event::BeginTeardown => "BeginTeardown",
            Event::Fail => "Fail",
            Event::StopSandbox => "StopSandbox",
            Event::StopSidecar => "StopSidecar",
            Event::UnmountStateAnchor => "UnmountStateAnchor",
            Event::ReachAbsent => "ReachAbsent",
            Event::Attach { .. } => "Attach",
            Event::Watch { .. } => "Watch",
            Event::Detach { .. } => "Detach",
            Event::Submit { .. } => "Submit",
            Event::Authenticate { .. } => "Authenticate",
            Event::Reject { .. } => "Reject",
            Event::Correlate { .. } => "Correlate",
            Event::AutoApprove { .. } => "AutoApprove",
            Event::Prompt { .. } => "Prompt",
            Event::Approve { .. } => "Approve",
            Event::Edit { .. } => "Edit",
            Event::Deny { .. } => "Deny",
            Event::Timeout { .. } => "Timeout",
            Event::Execute { .. } => "Execute",
            Event::Finish { .. } => "Finish",
            Event::Cancel { .. } => "Cancel",
            Event::Deliver { .. } => "Deliver",
        }
    }
}
