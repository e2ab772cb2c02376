//! Effects: what the coordinator core asks its IO layer to carry out, as data.
//!
//! The core never performs IO. An IO layer runs the effects of one step in order and reports
//! what happens next as further events; a failure to carry an effect out is reported as
//! [`Event::Fail`](super::event::Event::Fail), after which recovery stops whatever may have
//! been created (FR-7: resources are never assumed gone).

use serde::{Deserialize, Serialize};

use super::state::{CliId, Outcome, RequestId};
use super::viewers::ViewerId;

/// One instruction for the IO layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "effect")]
pub enum Effect {
    /// Create the Domain's ephemeral Trust Anchor and the Session Coordinator identity.
    CreateTrustAnchor,
    /// Mount the State Anchor overlay.
    MountStateAnchor,
    /// Start the Network Sidecar.
    StartSidecar,
    /// Install the Domain's network policy in the Network Sidecar (SR-5).
    InstallPolicy,
    /// Start the Agent Sandbox in the sidecar's network namespace.
    StartSandbox,
    /// Publish the coordinator endpoint so that Client CLIs can join.
    PublishEndpoint,
    /// Accept the Client Session: issue its Session ID and Session Anchor (FR-10).
    BindSession { cli: CliId },
    /// Tell a joining Client CLI why it was not registered.
    RefuseSession { cli: CliId },
    /// Withdraw the published endpoint: no new CLI may join.
    WithdrawPublication,
    /// Invalidate the Trust Anchor and every Session Anchor issued under it.
    InvalidateTrust,
    /// Close a Client Session's control channel.
    Disconnect { session: CliId },
    /// Kill an approved host process (and its process group).
    TerminateHostProcess { request: RequestId },
    /// Stop the Agent Sandbox.
    StopSandbox,
    /// Stop the Network Sidecar.
    StopSidecar,
    /// Unmount the State Anchor.
    UnmountStateAnchor,
    /// Release the lifecycle lock and exit the Session Coordinator: the Domain is absent.
    ReleaseLifecycleLock,
    /// Discard an unauthenticated request; nothing is routed or answered (SR-9).
    RejectRequest { request: RequestId },
    /// Route a verified request to its owning Client Session (FR-5).
    RouteRequest { session: CliId, request: RequestId },
    /// The owning CLI takes its terminal and shows the escalation prompt (DX-4).
    ShowPrompt { session: CliId, request: RequestId },
    /// The owning CLI gives its terminal back to the sandbox session.
    ReturnTerminal { session: CliId },
    /// Show a pending escalation prompt to a viewer that sees it (attached to the owning
    /// session, or a control centre).
    OfferPrompt {
        viewer: ViewerId,
        request: RequestId,
    },
    /// The prompt is decided, timed out, cancelled or gone: withdraw it from every viewer
    /// still showing it (first decision wins).
    WithdrawPrompt { request: RequestId },
    /// Start streaming a session's screen to a viewer that attached.
    AttachViewer { viewer: ViewerId, session: CliId },
    /// Stop streaming to a viewer (it detached, its session ended, or the Domain goes).
    DetachViewer { viewer: ViewerId },
    /// Run the approved argument vector (the edited one if `edited`) without a shell (SR-8).
    RunHostCommand { request: RequestId, edited: bool },
    /// Write the Escalation Result for the Escalation Client of the owning session (OR-2).
    DeliverResult {
        session: CliId,
        request: RequestId,
        outcome: Outcome,
    },
}
