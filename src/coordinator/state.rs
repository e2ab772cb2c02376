//! The coordinator core's state for one Domain: the variables of `protocol/Lazaret.tla`.
//!
//! | TLA+ variable | Rust                                                   |
//! | :------------ | :----------------------------------------------------- |
//! | `domain`      | [`State::phase`]                                       |
//! | `leader[c]`   | [`Cli::leader`]                                        |
//! | `anchor`      | [`State::state_anchor`] (State Anchor mounted)         |
//! | `sidecar`     | [`State::sidecar`] (Network Sidecar running)           |
//! | `policy`      | [`State::policy`] (network policy installed, SR-5)     |
//! | `sandbox`     | [`State::sandbox`] (Agent Sandbox running)             |
//! | `published`   | [`State::published`]                                   |
//! | `trust`       | [`State::trust`] (Trust Anchor material valid)         |
//! | `cli[c]`      | [`Cli::status`]; a Client CLI ID absent from the map is `"idle"` |
//! | `term[c]`     | [`Cli::terminal`]; `None` is `NoReq` (no prompt shown)  |
//! | `req[r]`      | [`Request`]; an Escalation Request ID absent from the map is `"none"` |
//! | `view[v]`     | [`State::viewers`]; a viewer absent from the map is detached (`NoCli`) |
//!
//! A Client CLI stands for its Client Session: [`CliStatus::Registered`] is the registration
//! binding of the Client CLI ID to its Session ID and Session Anchor (FR-10).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::viewers::{Decider, View, ViewerId};

/// Client CLI ID: names one host Lazaret CLI process and its Client Session.
///
/// An identifier names a component; it never authenticates it (SR-9). The IO layer maps the
/// authenticated identity and the Session ID to this small id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CliId(pub u64);

/// Escalation Request ID: correlates one Host Escalation request with its Escalation Result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RequestId(pub u64);

impl fmt::Display for CliId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cli-{}", self.0)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "request-{}", self.0)
    }
}

/// Domain phase (TLA+ `domain`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// No Session Coordinator; nothing running, mounted or published.
    #[default]
    Absent,
    /// A startup leader holds the lifecycle lock and brings resources up.
    Starting,
    /// Published: Client CLIs may register.
    Ready,
    /// Teardown after the last leave (FR-6).
    Draining,
    /// Recovery after a Domain failure (FR-7).
    Failed,
}

impl Phase {
    /// Teardown or recovery: resources are stopped in order (sandbox, sidecar, State Anchor).
    pub fn is_stopping(self) -> bool {
        matches!(self, Phase::Draining | Phase::Failed)
    }
}

/// Client CLI state (TLA+ `cli[c]`); `"idle"` is represented by absence from [`State::clis`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CliStatus {
    /// Waiting to start or join the Domain.
    Joining,
    /// Registered: Client CLI ID bound to Session ID and Session Anchor (FR-10).
    Registered,
    /// Told why it may not join (refusal, or the Domain failed while it waited).
    Refused,
    /// The developer cancelled the CLI while it waited.
    Cancelled,
    /// The Client Session left.
    Left,
    /// The Client Session was disconnected by a Domain failure.
    Disconnected,
}

impl CliStatus {
    /// Once held a Session Anchor, so it can have signed a request (TLA+ `HadAnchor`).
    pub fn had_anchor(self) -> bool {
        matches!(
            self,
            CliStatus::Registered | CliStatus::Left | CliStatus::Disconnected
        )
    }

    /// Finished for good (TLA+ `CliDone`).
    pub fn is_done(self) -> bool {
        matches!(
            self,
            CliStatus::Refused | CliStatus::Cancelled | CliStatus::Left | CliStatus::Disconnected
        )
    }
}

/// One Client CLI (and its Client Session).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Cli {
    /// TLA+ `cli[c]`.
    pub status: CliStatus,
    /// TLA+ `leader[c]`: won the lifecycle lock and runs the Session Coordinator.
    pub leader: bool,
    /// TLA+ `term[c]`: the escalation prompt this session shows (on its own terminal, if it
    /// has one, and to its viewers), if any: one prompt per session at a time. `None`: the
    /// terminal belongs to the sandbox session.
    pub terminal: Option<RequestId>,
}

/// Escalation request state (TLA+ `req[r].state`); `"none"` is absence from
/// [`State::requests`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestState {
    /// In the Escalation Mailbox, not yet authenticated.
    Submitted,
    /// Failed authentication (SR-9): never routed, owes no result.
    Rejected,
    /// Authenticated: owes an Escalation Result (OR-2).
    Accepted,
    /// Correlated to its owning Client Session (FR-5).
    Correlated,
    /// The session shows the prompt (own terminal, viewers, control centres) and waits for the
    /// first decision or the deadline; no viewer is needed.
    Prompting,
    /// Authorized by the developer or an auto-approval rule (SR-7); not a result.
    Approved,
    /// The host process runs.
    Executing,
    /// The Escalation Result is ready for delivery.
    Resolved,
    /// The Escalation Result was delivered (terminal state).
    Delivered,
    /// The owning Client Session disconnected first (terminal state).
    Dropped,
}

impl RequestState {
    /// Accepted and not yet terminal: owes an Escalation Result (TLA+ `Active`).
    pub fn is_active(self) -> bool {
        matches!(
            self,
            RequestState::Accepted
                | RequestState::Correlated
                | RequestState::Prompting
                | RequestState::Approved
                | RequestState::Executing
                | RequestState::Resolved
        )
    }

    /// May be cancelled (TLA+ `Cancellable`).
    pub fn is_cancellable(self) -> bool {
        self.is_active() && self != RequestState::Resolved
    }
}

/// How a request was authorized (TLA+ `req[r].approval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    /// Not authorized.
    None,
    /// The developer approved the request as submitted.
    Developer,
    /// The developer edited the argument vector and approved the edited one.
    Edited,
    /// An exact match of a trusted auto-approval rule (SR-8).
    Rule,
}

/// Outcome carried by the Escalation Result (TLA+ `req[r].outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// No outcome yet.
    None,
    /// The host command ran; the result carries exit status and output.
    Completed,
    /// The developer denied the request.
    Denied,
    /// The prompt reached its deadline.
    Timeout,
    /// The Escalation Client or the developer cancelled it.
    Cancelled,
}

/// One Host Escalation request (TLA+ `req[r]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Request {
    /// Lifecycle state.
    pub state: RequestState,
    /// The Client Session the request names (its Session Anchor signed it, if genuine).
    pub owner: CliId,
    /// The Session Anchor signature verified (TLA+ `~forged`).
    pub signature_valid: bool,
    /// The argument vector exactly matches a trusted auto-approval rule (TLA+ `match`).
    pub rule_match: bool,
    /// How it was authorized.
    pub approval: Approval,
    /// The result's outcome.
    pub outcome: Outcome,
    /// How many times a host process was started for it (must stay ≤ 1).
    pub execs: u8,
    /// The session the Escalation Result was delivered to (TLA+ `to`).
    pub delivered_to: Option<CliId>,
    /// Who decided the prompt (TLA+ `by`; `None`: nobody, or the deadline). FR-5.
    #[serde(default)]
    pub decided_by: Option<Decider>,
    /// How many decisions took effect, the deadline included (TLA+ `decisions`; must stay
    /// ≤ 1: the first decision wins).
    #[serde(default)]
    pub decisions: u8,
    /// History (TLA+ `seen`): the decider could see the prompt when it decided.
    #[serde(default)]
    pub decider_saw: bool,
}

/// The Session Coordinator's view of one Domain (all TLA+ variables).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct State {
    /// Domain phase.
    pub phase: Phase,
    /// State Anchor mounted.
    pub state_anchor: bool,
    /// Network Sidecar running.
    pub sidecar: bool,
    /// Network policy installed in the Network Sidecar.
    pub policy: bool,
    /// Agent Sandbox running.
    pub sandbox: bool,
    /// Coordinator endpoint published.
    pub published: bool,
    /// Trust Anchor material valid.
    pub trust: bool,
    /// Client CLIs that have started, by Client CLI ID.
    pub clis: BTreeMap<CliId, Cli>,
    /// Escalation requests seen, by Escalation Request ID.
    pub requests: BTreeMap<RequestId, Request>,
    /// Attached viewers and control centres, by Viewer ID (absent: detached).
    #[serde(default)]
    pub viewers: BTreeMap<ViewerId, View>,
}

impl State {
    /// A fresh, absent Domain (TLA+ `Init`).
    pub fn new() -> Self {
        Self::default()
    }

    /// Status of a Client CLI; `None` is TLA+ `"idle"`.
    pub fn cli_status(&self, cli: CliId) -> Option<CliStatus> {
        self.clis.get(&cli).map(|c| c.status)
    }

    /// Registered Client Sessions (TLA+ `Sessions`).
    pub fn sessions(&self) -> impl Iterator<Item = CliId> + '_ {
        self.clis_in(CliStatus::Registered)
    }

    /// Client CLIs waiting to join (TLA+ `Joining`).
    pub fn joining(&self) -> impl Iterator<Item = CliId> + '_ {
        self.clis_in(CliStatus::Joining)
    }

    /// Client CLIs that are startup leaders.
    pub fn leaders(&self) -> impl Iterator<Item = CliId> + '_ {
        self.clis
            .iter()
            .filter(|(_, c)| c.leader)
            .map(|(id, _)| *id)
    }

    fn clis_in(&self, status: CliStatus) -> impl Iterator<Item = CliId> + '_ {
        self.clis
            .iter()
            .filter(move |(_, c)| c.status == status)
            .map(|(id, _)| *id)
    }
}
