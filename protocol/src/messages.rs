//! Messages between a Client CLI and the Session Coordinator, one JSON object per frame.
//!
//! Each direction has its own enum, internally tagged by a stable `"type"` (snake_case); unknown
//! fields and unknown types are errors. A connection starts with the version handshake
//! ([`ClientMessage::Hello`] → [`CoordinatorMessage::Welcome`] or
//! [`CoordinatorMessage::Refused`]); only then do session messages flow:
//!
//! ```text
//! client                              coordinator
//! hello {versions, software}      →
//!                                 ←   welcome {version} | refused {code, reason}
//! register {client_cli_id, …}     →
//!                                 ←   registered {session_id, session_anchor} | refused
//! attach {session_id, argv, …}    →
//!                                 ←   attach_info {session_id, sandbox_container}
//!      (the client runs `podman exec` in that container itself)
//! leave {session_id}              →
//!                                 ←   left {session_id, domain_stopping}
//! cancel                          →   (abandon a pending registration, or leave)
//!                                 ←   cancelled
//!                                 ←   escalation_prompt {prompt}   (while attached, `tty`: ask
//!                                                                  the developer, FR-5)
//! escalation_decision {request_id, decision}  →
//!                                 ←   escalation_withdrawn {request_id, reason}   (no answer
//!                                                                  is wanted any more)
//!                                 ←   shutdown {reason}   (any time: the Domain is going away)
//!                                 ←   error {message}     (protocol violation; then close)
//! ```
//!
//! Version 2 adds client connections for coordinator-owned sessions (issue #14): after the
//! handshake, `connect` instead of `register` opens a connection without a session of its own;
//! terminal bytes travel as data frames (see [`crate::framing`]) on the channel `attached` names.
//!
//! ```text
//! connect {client_cli_id, profile, workspace, label}  →
//!                                 ←   connected {client_cli_id} | refused
//! start_session {token, argv, cwd, rows, cols, config_fingerprint}  →
//!                                 ←   session_started {token, session} | start_refused {token, …}
//! attach_session {session_id, rows, cols, history}  →
//!                                 ←   attached {session_id, channel, rows, cols}, then data
//!                                     frames on `channel`: the redraw, then live output
//! data frame on `channel`         →   input for the session
//! resize_session | detach_session | end_session | history | list_sessions |
//! watch_escalations | escalation_decision  →
//!                                 ←   session_resized, detached, session_exited, history_lines,
//!                                     sessions, escalation_prompt/withdrawn, domain_state,
//!                                     denials — and `error {message}` for a request that
//!                                     failed (the connection stays open)
//! list_escalations                →
//!                                 ←   escalations {pending}
//! decide_escalation {request_id, decision}  →
//!                                 ←   escalation_decided {request_id, answer}
//! ```

use crate::escalation::{Decision, EscalationPrompt};
use crate::framing::{recv, send, FrameError, FramedStream};
use crate::identity::{ComponentId, ProtocolIdentity, Role};
use crate::session::{SessionAnchor, SessionId};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use tokio::io::{AsyncRead, AsyncWrite};

/// The protocol version this build speaks best.
pub const PROTOCOL_VERSION: u32 = 2;

/// Most scrollback lines one `history` request gets.
pub const MAX_HISTORY_LINES: u32 = 500;

/// Longest layout hint a client may keep with a session ([`ClientMessage::SetLayoutHint`]).
pub const MAX_LAYOUT_HINT: usize = 64;

/// Whether `hint` may be kept as a session's layout hint: at most [`MAX_LAYOUT_HINT`] bytes of
/// printable ASCII (it is shown by `lazaret ps --json` and read back by another client).
pub fn layout_hint_ok(hint: &str) -> bool {
    hint.len() <= MAX_LAYOUT_HINT && hint.bytes().all(|b| b.is_ascii_graphic())
}

/// Most denial entries one `denials` message carries.
pub const MAX_DENIALS: usize = 500;

/// Every version this build speaks.
pub const SUPPORTED_VERSIONS: &[u32] = &[PROTOCOL_VERSION];

/// How an attached client receives a session's output after the first screen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Updates {
    /// The program's output bytes as they come: what a plain terminal needs (its own
    /// scrollback keeps them). `lazaret attach`.
    #[default]
    Bytes,
    /// The coordinator's screen, redrawn as bytes (the same sequence as the first screen) at
    /// once when the screen changes, at most one per frame under a flood — for front ends that
    /// draw the screen themselves and fetch the history separately (the TUI's panes). The
    /// client never parses the program's own bytes, and a flood costs it one screen per frame.
    Screen,
}

impl Updates {
    pub fn is_bytes(&self) -> bool {
        *self == Updates::Bytes
    }
}

/// Messages a Client CLI sends to the coordinator.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMessage {
    /// First message on every connection: the versions the client speaks, and its software
    /// version for diagnostics. Who the client is comes from its certificate, not from here.
    Hello {
        versions: Vec<u32>,
        software: String,
    },
    /// Asks for a Client Session. `client_cli_id` must be the authenticated component ID and
    /// `profile` the authenticated profile (see [`check_register_binding`]); the coordinator
    /// compares `config_fingerprint` and `workspace` with the Domain's.
    Register {
        client_cli_id: ComponentId,
        config_fingerprint: String,
        profile: String,
        workspace: PathBuf,
    },
    /// Asks where to run a command for this session. `argv`, `cwd` and `tty` describe what the
    /// client is about to run (for logs and prompts); the client runs it itself.
    Attach {
        session_id: SessionId,
        argv: Vec<String>,
        cwd: Option<String>,
        tty: bool,
    },
    /// Ends the Client Session.
    Leave { session_id: SessionId },
    /// Abandons a pending registration (or, once registered, leaves). A struct variant, so that
    /// unknown fields are refused as in every other message.
    Cancel {},
    /// The developer's answer to an [`CoordinatorMessage::EscalationPrompt`].
    EscalationDecision {
        request_id: String,
        decision: Decision,
    },
    /// Opens a client connection without a Client Session of its own (`lazaret attach`,
    /// `lazaret tui`, `lazaret ps`, `lazaret kill`): it may start, list, attach to and end the
    /// Domain's coordinator-owned sessions. Bound like [`ClientMessage::Register`]; `label`
    /// names the client in logs and `lazaret ps` (e.g. "tui", "attach").
    Connect {
        client_cli_id: ComponentId,
        profile: String,
        workspace: PathBuf,
        label: String,
    },
    /// Starts a coordinator-owned session running `argv` (empty: the profile's command) under a
    /// terminal of `rows`×`cols`; its process survives every client (FR-6 counts it until it
    /// exits or is ended). Answered by `session_started` or `start_refused` with the same
    /// `token`; other requests are served meanwhile. `config_fingerprint` is checked as at
    /// `register`.
    StartSession {
        token: u64,
        argv: Vec<String>,
        /// Working directory inside the Agent Sandbox (under `/workspace`).
        cwd: String,
        rows: u16,
        cols: u16,
        config_fingerprint: String,
    },
    /// Attaches to a running session: the coordinator answers `attached` and then sends the
    /// current screen and live output as data frames on the channel it names.
    AttachSession {
        session_id: SessionId,
        rows: u16,
        cols: u16,
        /// Up to this many scrollback lines are replayed before the screen.
        history: u32,
        /// How the output comes after the first screen ([`Updates`]; bytes when absent).
        #[serde(default, skip_serializing_if = "Updates::is_bytes")]
        updates: Updates,
    },
    /// Stops receiving a session's output; the session keeps running.
    DetachSession { session_id: SessionId },
    /// This client's terminal for the session changed size; the most recent active client's
    /// size is the session's.
    ResizeSession {
        session_id: SessionId,
        rows: u16,
        cols: u16,
    },
    /// Asks for `count` (at most [`MAX_HISTORY_LINES`]) scrollback lines of an attached
    /// session, ending `from_end` lines before the newest: a client scrolled back shows them
    /// (clients keep no scrollback of their own).
    History {
        session_id: SessionId,
        from_end: u32,
        count: u32,
    },
    /// Ends a coordinator-owned session: its process is hung up and then killed.
    EndSession { session_id: SessionId },
    /// Keeps an opaque hint with a running session (see [`layout_hint_ok`]), replacing the
    /// previous one: where a TUI showed it (tab, split), so that the next TUI can put it back.
    /// The coordinator only stores and publishes it ([`SessionInfo::layout_hint`]).
    SetLayoutHint { session_id: SessionId, hint: String },
    /// Asks for the Domain's sessions.
    ListSessions {},
    /// A control centre: this client is offered the escalation prompts of every session of the
    /// Domain, not only of those it is attached to, and told every session's activity
    /// ([`CoordinatorMessage::SessionActivity`]).
    WatchEscalations {},
    /// The developer looked at this session (a control centre focused its pane): its
    /// `attention` is cleared.
    Looked { session_id: SessionId },
    /// Asks for the escalation prompts of the Domain's coordinator-owned sessions that wait for
    /// a decision (`lazaret escalations`); answered by `escalations`.
    ListEscalations {},
    /// Decides a waiting prompt from a client that need not show it (`lazaret approve`,
    /// `lazaret deny`): the client becomes a control centre, so it sees every prompt, and its
    /// decision competes with the others' (the first one wins). Answered by
    /// `escalation_decided`.
    DecideEscalation {
        request_id: String,
        decision: Decision,
    },
    /// Allows a refused destination (`ADDR`, `ADDR:PORT`, `NAME`, as the denials show it) for
    /// the Domain's current run (a control centre's denials panel; issue #17). `private`: the
    /// developer confirmed a private address. `save`: also add it to the profile in the
    /// configuration file — `preview` answers the lines that would change without changing
    /// anything. Answered by `destination_allowed`.
    AllowDestination {
        target: String,
        private: bool,
        save: SaveStep,
    },
    /// Refuses `target` for the Domain's current run (`lazaret net deny`; under `default =
    /// "ask"`, the answer "no" to a held connection or name). Answered by
    /// `destination_denied`.
    DenyDestination { target: String },
    /// Publishes a port of the sandbox on the host (`lazaret port publish`): connections to
    /// `address:host_port` on the host reach `port` on the sandbox's loopback. Answered by
    /// `ports`.
    PublishPort {
        port: u16,
        host_port: u16,
        address: std::net::Ipv4Addr,
    },
    /// Ends the publication on `host_port` (`lazaret port unpublish`). Answered by `ports`.
    UnpublishPort { host_port: u16 },
    /// The Domain's published ports (`lazaret port list`). Answered by `ports`.
    ListPorts {},
}

/// A port of the sandbox published on the host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedPort {
    pub address: std::net::Ipv4Addr,
    pub host_port: u16,
    pub port: u16,
}

/// Whether an [`ClientMessage::AllowDestination`] also goes into the profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SaveStep {
    /// For this run only.
    No,
    /// Nothing changes; the answer shows the lines saving would change.
    Preview,
    /// For this run, and into the profile.
    Write,
}

/// What became of an [`ClientMessage::AllowDestination`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllowAnswer {
    /// Done (or, for a preview, possible).
    pub ok: bool,
    /// For the developer: what was done, or why not.
    pub message: String,
    /// The private address needs the developer's confirmation (`private`).
    pub needs_private: bool,
    /// The configuration file's lines changed (or, for a preview, to be changed): `- …`, `+ …`.
    pub lines: Vec<String>,
}

/// Messages the coordinator sends to a Client CLI.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum CoordinatorMessage {
    /// The version chosen: the highest both sides speak.
    Welcome { version: u32 },
    /// A request (handshake, registration, attach) is refused; `reason` is for the developer.
    Refused { code: RefusalCode, reason: String },
    /// Registration succeeded: the session's ID and its secret Session Anchor.
    Registered {
        session_id: SessionId,
        session_anchor: SessionAnchor,
    },
    /// Where the session runs its command: the Agent Sandbox container.
    AttachInfo {
        session_id: SessionId,
        sandbox_container: String,
    },
    /// The session has ended. `domain_stopping`: it was the last one, and the Domain's
    /// transient resources are being torn down (FR-6) — the client may wait for that to finish.
    Left {
        session_id: SessionId,
        domain_stopping: bool,
    },
    /// The pending registration (or session) is abandoned.
    Cancelled {},
    /// Ask the developer on this session's terminal whether to run a host command (FR-5,
    /// DX-4); answered by [`ClientMessage::EscalationDecision`].
    EscalationPrompt { prompt: EscalationPrompt },
    /// The prompt for `request_id` needs no answer any more (its time ran out); close it.
    EscalationWithdrawn { request_id: String, reason: String },
    /// The coordinator is going away; every session on it ends.
    Shutdown { reason: String },
    /// The connection is open (answer to [`ClientMessage::Connect`]).
    Connected { client_cli_id: ComponentId },
    /// A coordinator-owned session started (answer to the `start_session` with `token`).
    SessionStarted { token: u64, session: SessionInfo },
    /// The `start_session` with `token` is refused.
    StartRefused {
        token: u64,
        code: RefusalCode,
        reason: String,
    },
    /// Attached to a session: its output arrives as data frames on `channel`, beginning with a
    /// redraw of its current screen; input for it goes on the same channel.
    Attached {
        session_id: SessionId,
        channel: u32,
        rows: u16,
        cols: u16,
    },
    /// No longer attached to the session (asked for, or the session ended).
    Detached { session_id: SessionId },
    /// A session's process ended (`status`: its exit status when known). `sandbox_stopped`:
    /// the Agent Sandbox itself stopped under the command (`reason` says why), so `status` is
    /// runsc's, not the command's.
    SessionExited {
        session_id: SessionId,
        status: Option<i32>,
        reason: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        sandbox_stopped: bool,
    },
    /// The Domain's sessions (answer to [`ClientMessage::ListSessions`]).
    Sessions { sessions: Vec<SessionInfo> },
    /// Scrollback lines (answer to [`ClientMessage::History`]), oldest first; `total` lines are
    /// kept now.
    HistoryLines {
        session_id: SessionId,
        from_end: u32,
        total: u32,
        lines: Vec<crate::screen::ScreenLine>,
    },
    /// The Domain's state, sent to control centres when it changes.
    DomainState {
        state: crate::domain_state::DomainView,
    },
    /// The Domain's network denials (aggregated, newest first, at most [`MAX_DENIALS`]),
    /// sent to control centres when they change.
    Denials {
        entries: Vec<crate::denial::DenialEntry>,
    },
    /// What the host observed of a session's activity, sent to control centres when it
    /// changes (and for every session when one starts watching).
    SessionActivity {
        session_id: SessionId,
        activity: crate::activity::SessionActivity,
    },
    /// The prompts waiting for a decision (answer to [`ClientMessage::ListEscalations`]).
    Escalations {
        pending: Vec<crate::escalation::PendingEscalation>,
    },
    /// What became of a [`ClientMessage::DecideEscalation`].
    EscalationDecided {
        request_id: String,
        answer: crate::escalation::DecideAnswer,
    },
    /// The Domain's published ports after a [`ClientMessage::PublishPort`],
    /// [`ClientMessage::UnpublishPort`] or [`ClientMessage::ListPorts`]; `error` says why the
    /// change was not made.
    Ports {
        ports: Vec<PublishedPort>,
        error: Option<String>,
    },
    /// What became of a [`ClientMessage::DenyDestination`] (`lines` stays empty).
    DestinationDenied { target: String, answer: AllowAnswer },
    /// What the Domain's sidecar holds under `default = "ask"` (at most
    /// [`crate::held::MAX_HELD_ENTRIES`], oldest first), sent to control centres and to the
    /// Domain's `lazaret run` clients when it changes.
    Held {
        entries: Vec<crate::held::HeldEntry>,
    },
    /// What became of a [`ClientMessage::AllowDestination`].
    DestinationAllowed {
        target: String,
        private: bool,
        save: SaveStep,
        answer: AllowAnswer,
    },
    /// A session's size changed (another client resized it).
    SessionResized {
        session_id: SessionId,
        rows: u16,
        cols: u16,
    },
    /// On a Client Session's connection: the client broke the protocol, and the coordinator
    /// closes the connection after this. On a client connection (`connect`): a request failed
    /// (e.g. attaching to a session that has ended); the connection stays open, unless the
    /// request itself was not one a client connection may send.
    Error { message: String },
}

/// One session of a Domain, as `lazaret ps` and the session picker show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionInfo {
    pub session_id: SessionId,
    pub command: Vec<String>,
    pub started_unix_ms: u64,
    /// Owned by the coordinator (attachable) rather than by its `lazaret run` terminal.
    pub hosted: bool,
    /// Whether its process still runs.
    pub running: bool,
    pub exit_status: Option<i32>,
    /// Labels of the clients attached now (e.g. "tui", "attach").
    pub attached: Vec<String>,
    /// Label of the client that started it.
    pub started_by: String,
    /// The last [`ClientMessage::SetLayoutHint`] (empty: none).
    #[serde(default)]
    pub layout_hint: String,
    pub rows: u16,
    pub cols: u16,
}

/// Machine-readable kind of a refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalCode {
    /// No protocol version in common.
    Version,
    /// The Domain runs with another Configuration Fingerprint.
    ConfigMismatch,
    /// The request names another Client CLI, profile, workspace or session than its sender's.
    Binding,
    /// The Domain is starting, failing or tearing down and takes no new sessions now.
    Unavailable,
}

/// A refusal, ready to become [`CoordinatorMessage::Refused`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub code: RefusalCode,
    pub reason: String,
}

impl From<Refusal> for CoordinatorMessage {
    fn from(r: Refusal) -> CoordinatorMessage {
        CoordinatorMessage::Refused {
            code: r.code,
            reason: r.reason,
        }
    }
}

impl Refusal {
    /// The registration's Configuration Fingerprint differs from the running Domain's.
    pub fn config_mismatch(running: &str, offered: &str) -> Refusal {
        Refusal {
            code: RefusalCode::ConfigMismatch,
            reason: format!(
                "this Domain runs with another configuration (Configuration Fingerprint \
                 {running}, yours is {offered}); end the Domain's other sessions so it restarts \
                 with the current configuration, or undo the configuration change"
            ),
        }
    }
}

/// The highest version in both lists, or `None`.
pub fn negotiate(offered: &[u32], supported: &[u32]) -> Option<u32> {
    offered
        .iter()
        .filter(|v| supported.contains(v))
        .max()
        .copied()
}

/// The coordinator's answer to a `hello` offering `offered`.
pub fn answer_hello(offered: &[u32], supported: &[u32]) -> CoordinatorMessage {
    match negotiate(offered, supported) {
        Some(version) => CoordinatorMessage::Welcome { version },
        None => CoordinatorMessage::Refused {
            code: RefusalCode::Version,
            reason: format!(
                "no common protocol version: this coordinator speaks {}, the client offered {}; \
                 use the same Lazaret version for all sessions of a Domain",
                list(supported),
                list(offered)
            ),
        },
    }
}

fn list(versions: &[u32]) -> String {
    if versions.is_empty() {
        return "none".to_owned();
    }
    let v: Vec<String> = versions.iter().map(u32::to_string).collect();
    v.join(", ")
}

/// Checks that a `register` names its authenticated sender (FR-10): a Client CLI whose
/// certified component ID and profile are the ones in the message.
pub fn check_register_binding(
    peer: &ProtocolIdentity,
    client_cli_id: &ComponentId,
    profile: &str,
) -> Result<(), Refusal> {
    let reason = if peer.role() != Role::ClientCli {
        format!(
            "only a Client CLI registers sessions, not a {}",
            peer.role()
        )
    } else if peer.component_id() != client_cli_id {
        format!(
            "the registration names Client CLI {client_cli_id}, but the connection is \
             authenticated as {}",
            peer.component_id()
        )
    } else if peer.profile() != profile {
        format!(
            "the registration names Agent Profile {profile:?}, but the connection is \
             authenticated for {:?}",
            peer.profile()
        )
    } else {
        return Ok(());
    };
    Err(Refusal {
        code: RefusalCode::Binding,
        reason,
    })
}

/// Why the version handshake failed.
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error("refused by the coordinator: {reason}")]
    Refused { code: RefusalCode, reason: String },
    #[error("no common protocol version (the client offered {offered:?})")]
    NoCommonVersion { offered: Vec<u32> },
    #[error("protocol violation: {0}")]
    Unexpected(String),
}

/// Client side of the version handshake: sends `hello`, returns the version the coordinator
/// chose (checked to be one the client offered).
pub async fn client_handshake<T>(
    conn: &mut FramedStream<T>,
    versions: &[u32],
    software: &str,
) -> Result<u32, HandshakeError>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    let hello = ClientMessage::Hello {
        versions: versions.to_vec(),
        software: software.to_owned(),
    };
    send(conn, &hello).await?;
    match recv::<_, CoordinatorMessage>(conn).await? {
        CoordinatorMessage::Welcome { version } if versions.contains(&version) => Ok(version),
        CoordinatorMessage::Welcome { version } => Err(HandshakeError::Unexpected(format!(
            "the coordinator chose version {version}, which was not offered"
        ))),
        CoordinatorMessage::Refused { code, reason } => {
            Err(HandshakeError::Refused { code, reason })
        }
        other => Err(HandshakeError::Unexpected(format!(
            "expected welcome, got {}",
            kind(&other)
        ))),
    }
}

/// Coordinator side of the version handshake: reads `hello`, answers `welcome` with the highest
/// common version (returned with the client's software string), or `refused` / `error`.
pub async fn server_handshake<T>(
    conn: &mut FramedStream<T>,
    supported: &[u32],
) -> Result<(u32, String), HandshakeError>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    let message = match recv::<_, ClientMessage>(conn).await {
        Ok(ClientMessage::Hello { versions, software }) => {
            let answer = answer_hello(&versions, supported);
            send(conn, &answer).await?;
            return match answer {
                CoordinatorMessage::Welcome { version } => Ok((version, software)),
                _ => Err(HandshakeError::NoCommonVersion { offered: versions }),
            };
        }
        Ok(_) => "the first message must be hello".to_owned(),
        Err(FrameError::Malformed(e)) => format!("malformed message: {e}"),
        Err(e) => return Err(e.into()),
    };
    let error = CoordinatorMessage::Error {
        message: message.clone(),
    };
    let _ = send(conn, &error).await;
    Err(HandshakeError::Unexpected(message))
}

fn kind(msg: &CoordinatorMessage) -> &'static str {
    match msg {
        CoordinatorMessage::Welcome { .. } => "welcome",
        CoordinatorMessage::Refused { .. } => "refused",
        CoordinatorMessage::Registered { .. } => "registered",
        CoordinatorMessage::AttachInfo { .. } => "attach_info",
        CoordinatorMessage::Left { .. } => "left",
        CoordinatorMessage::Cancelled {} => "cancelled",
        CoordinatorMessage::EscalationPrompt { .. } => "escalation_prompt",
        CoordinatorMessage::EscalationWithdrawn { .. } => "escalation_withdrawn",
        CoordinatorMessage::Shutdown { .. } => "shutdown",
        CoordinatorMessage::Error { .. } => "error",
        CoordinatorMessage::Connected { .. } => "connected",
        CoordinatorMessage::SessionStarted { .. } => "session_started",
        CoordinatorMessage::StartRefused { .. } => "start_refused",
        CoordinatorMessage::Attached { .. } => "attached",
        CoordinatorMessage::Detached { .. } => "detached",
        CoordinatorMessage::SessionExited { .. } => "session_exited",
        CoordinatorMessage::Sessions { .. } => "sessions",
        CoordinatorMessage::SessionResized { .. } => "session_resized",
        CoordinatorMessage::DomainState { .. } => "domain_state",
        CoordinatorMessage::HistoryLines { .. } => "history_lines",
        CoordinatorMessage::Denials { .. } => "denials",
        CoordinatorMessage::SessionActivity { .. } => "session_activity",
        CoordinatorMessage::Escalations { .. } => "escalations",
        CoordinatorMessage::EscalationDecided { .. } => "escalation_decided",
        CoordinatorMessage::DestinationAllowed { .. } => "destination_allowed",
        CoordinatorMessage::DestinationDenied { .. } => "destination_denied",
        CoordinatorMessage::Held { .. } => "held",
        CoordinatorMessage::Ports { .. } => "ports",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DomainId;
    use serde_json::json;
    use std::path::Path;

    #[test]
    fn negotiation_picks_the_highest_common_version() {
        assert_eq!(negotiate(&[1, 2, 3], &[2, 3, 4]), Some(3));
        assert_eq!(negotiate(&[3, 1], &[1]), Some(1));
        assert_eq!(negotiate(&[5], &[1, 2]), None);
        assert_eq!(negotiate(&[], &[1]), None);
        match answer_hello(&[7, 9], &[1]) {
            CoordinatorMessage::Refused { code, reason } => {
                assert_eq!(code, RefusalCode::Version);
                assert!(reason.contains("speaks 1"), "{reason}");
                assert!(reason.contains("offered 7, 9"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tags_are_stable() {
        let sid = SessionId::generate().unwrap();
        let cases = [
            (
                serde_json::to_value(ClientMessage::Hello {
                    versions: vec![1],
                    software: "lazaret 0.1.0".into(),
                })
                .unwrap(),
                json!({"type": "hello", "versions": [1], "software": "lazaret 0.1.0"}),
            ),
            (
                serde_json::to_value(ClientMessage::Cancel {}).unwrap(),
                json!({"type": "cancel"}),
            ),
            (
                serde_json::to_value(ClientMessage::Leave {
                    session_id: sid.clone(),
                })
                .unwrap(),
                json!({"type": "leave", "session_id": sid.as_str()}),
            ),
            (
                serde_json::to_value(CoordinatorMessage::AttachInfo {
                    session_id: sid.clone(),
                    sandbox_container: "lazaret-x".into(),
                })
                .unwrap(),
                json!({"type": "attach_info", "session_id": sid.as_str(),
                       "sandbox_container": "lazaret-x"}),
            ),
            (
                serde_json::to_value(CoordinatorMessage::Refused {
                    code: RefusalCode::ConfigMismatch,
                    reason: "r".into(),
                })
                .unwrap(),
                json!({"type": "refused", "code": "config_mismatch", "reason": "r"}),
            ),
            (
                serde_json::to_value(CoordinatorMessage::Cancelled {}).unwrap(),
                json!({"type": "cancelled"}),
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn every_message_round_trips() {
        let sid = SessionId::generate().unwrap();
        let client = [
            ClientMessage::Hello {
                versions: vec![1, 2],
                software: "x".into(),
            },
            ClientMessage::Register {
                client_cli_id: ComponentId::generate().unwrap(),
                config_fingerprint: "ab".repeat(32),
                profile: "default".into(),
                workspace: "/home/dev/p".into(),
            },
            ClientMessage::Attach {
                session_id: sid.clone(),
                argv: vec!["bash".into(), "-l".into()],
                cwd: Some("/workspace".into()),
                tty: true,
            },
            ClientMessage::Leave {
                session_id: sid.clone(),
            },
            ClientMessage::Cancel {},
            ClientMessage::Connect {
                client_cli_id: ComponentId::generate().unwrap(),
                profile: "default".into(),
                workspace: "/home/dev/p".into(),
                label: "tui".into(),
            },
            ClientMessage::StartSession {
                token: 3,
                argv: vec!["bash".into()],
                cwd: "/workspace".into(),
                rows: 24,
                cols: 80,
                config_fingerprint: "ab".repeat(32),
            },
            ClientMessage::AttachSession {
                session_id: sid.clone(),
                rows: 50,
                cols: 190,
                history: 0,
                updates: Updates::Bytes,
            },
            ClientMessage::AttachSession {
                session_id: sid.clone(),
                rows: 50,
                cols: 190,
                history: 0,
                updates: Updates::Screen,
            },
            ClientMessage::DetachSession {
                session_id: sid.clone(),
            },
            ClientMessage::ResizeSession {
                session_id: sid.clone(),
                rows: 1,
                cols: 1,
            },
            ClientMessage::EndSession {
                session_id: sid.clone(),
            },
            ClientMessage::SetLayoutHint {
                session_id: sid.clone(),
                hint: "tui1:ab:0:r1".into(),
            },
            ClientMessage::ListSessions {},
            ClientMessage::WatchEscalations {},
            ClientMessage::ListEscalations {},
            ClientMessage::DecideEscalation {
                request_id: "ab".repeat(16),
                decision: Decision::Edit {
                    argv: vec!["true".into()],
                },
            },
            ClientMessage::AllowDestination {
                target: "198.51.100.7:443".into(),
                private: false,
                save: SaveStep::Preview,
            },
            ClientMessage::PublishPort {
                port: 8000,
                host_port: 18000,
                address: std::net::Ipv4Addr::LOCALHOST,
            },
            ClientMessage::UnpublishPort { host_port: 18000 },
            ClientMessage::ListPorts {},
        ];
        for m in client {
            let s = serde_json::to_string(&m).unwrap();
            assert_eq!(serde_json::from_str::<ClientMessage>(&s).unwrap(), m, "{s}");
        }
        // An attach that does not say how it wants the output gets bytes (clients before
        // screen updates); an unknown way is refused.
        let plain = format!(
            r#"{{"type":"attach_session","session_id":"{}","rows":1,"cols":1,"history":0}}"#,
            sid.as_str()
        );
        assert!(matches!(
            serde_json::from_str::<ClientMessage>(&plain).unwrap(),
            ClientMessage::AttachSession {
                updates: Updates::Bytes,
                ..
            }
        ));
        let odd = plain.replace(r#""history":0"#, r#""history":0,"updates":"damage""#);
        assert!(serde_json::from_str::<ClientMessage>(&odd).is_err());
        let info = SessionInfo {
            session_id: sid.clone(),
            command: vec!["bash".into()],
            started_unix_ms: 1,
            hosted: true,
            running: true,
            exit_status: None,
            attached: vec!["tui".into()],
            started_by: "tui".into(),
            layout_hint: "tui1:ab:0:r1".into(),
            rows: 24,
            cols: 80,
        };
        let coordinator = [
            CoordinatorMessage::Welcome { version: 1 },
            Refusal::config_mismatch("aa", "bb").into(),
            CoordinatorMessage::Registered {
                session_id: sid.clone(),
                session_anchor: SessionAnchor::generate().unwrap(),
            },
            CoordinatorMessage::AttachInfo {
                session_id: sid.clone(),
                sandbox_container: "c".into(),
            },
            CoordinatorMessage::Left {
                session_id: sid.clone(),
                domain_stopping: true,
            },
            CoordinatorMessage::Cancelled {},
            CoordinatorMessage::Shutdown {
                reason: "bye".into(),
            },
            CoordinatorMessage::Error {
                message: "no".into(),
            },
            CoordinatorMessage::Connected {
                client_cli_id: ComponentId::generate().unwrap(),
            },
            CoordinatorMessage::SessionStarted {
                token: 3,
                session: info.clone(),
            },
            CoordinatorMessage::StartRefused {
                token: 3,
                code: RefusalCode::Unavailable,
                reason: "tearing down".into(),
            },
            CoordinatorMessage::Attached {
                session_id: sid.clone(),
                channel: 7,
                rows: 24,
                cols: 80,
            },
            CoordinatorMessage::Detached {
                session_id: sid.clone(),
            },
            CoordinatorMessage::SessionExited {
                session_id: sid.clone(),
                status: Some(3),
                reason: "exited".into(),
                sandbox_stopped: false,
            },
            CoordinatorMessage::SessionExited {
                session_id: sid.clone(),
                status: Some(128),
                reason: "the Agent Sandbox stopped while the command ran: …".into(),
                sandbox_stopped: true,
            },
            CoordinatorMessage::Sessions {
                sessions: vec![info.clone()],
            },
            CoordinatorMessage::SessionResized {
                session_id: sid.clone(),
                rows: 10,
                cols: 20,
            },
            CoordinatorMessage::Escalations { pending: vec![] },
            CoordinatorMessage::EscalationDecided {
                request_id: "ab".repeat(16),
                answer: crate::escalation::DecideAnswer::TimedOut {},
            },
            CoordinatorMessage::Ports {
                ports: vec![PublishedPort {
                    address: std::net::Ipv4Addr::LOCALHOST,
                    host_port: 18000,
                    port: 8000,
                }],
                error: Some("in use".into()),
            },
            CoordinatorMessage::DestinationAllowed {
                target: "registry.example.org".into(),
                private: false,
                save: SaveStep::Write,
                answer: AllowAnswer {
                    ok: true,
                    message: "allowed".into(),
                    needs_private: false,
                    lines: vec!["+ allow_names = [\"registry.example.org\"]".into()],
                },
            },
        ];
        for m in coordinator {
            let s = serde_json::to_string(&m).unwrap();
            assert_eq!(
                serde_json::from_str::<CoordinatorMessage>(&s).unwrap(),
                m,
                "{s}"
            );
        }
    }

    #[test]
    fn strict_parsing() {
        let sid = SessionId::generate().unwrap();
        let bad = [
            json!({"type": "hello", "versions": [1], "software": "x", "extra": 1}),
            json!({"type": "Hello", "versions": [1], "software": "x"}),
            json!({"type": "sudo"}),
            json!({"versions": [1], "software": "x"}),
            json!({"type": "leave", "session_id": "short"}),
            json!({"type": "leave", "session_id": sid.as_str(), "session": 1}),
            json!({"type": "cancel", "now": true}),
            json!({"type": "register", "client_cli_id": "../etc", "config_fingerprint": "a",
                   "profile": "default", "workspace": "/w"}),
        ];
        for v in bad {
            assert!(
                serde_json::from_value::<ClientMessage>(v.clone()).is_err(),
                "accepted {v}"
            );
        }
        // Duplicate keys are an error too.
        let sid = sid.as_str();
        for dup in [
            format!(r#"{{"type":"leave","session_id":"{sid}","session_id":"{sid}"}}"#),
            r#"{"type":"cancel","type":"cancel"}"#.to_owned(),
            r#"{"type":"cancel","type":"hello","versions":[1],"software":"x"}"#.to_owned(),
        ] {
            assert!(
                serde_json::from_str::<ClientMessage>(&dup).is_err(),
                "accepted {dup}"
            );
        }
        // A client message is not a coordinator message.
        let hello = json!({"type": "hello", "versions": [1], "software": "x"});
        assert!(serde_json::from_value::<CoordinatorMessage>(hello).is_err());
    }

    #[test]
    fn register_binding() {
        let domain = DomainId::derive("default", Path::new("/w"));
        let me = ComponentId::generate().unwrap();
        let peer =
            ProtocolIdentity::new(Role::ClientCli, "default", domain.clone(), me.clone()).unwrap();
        assert_eq!(check_register_binding(&peer, &me, "default"), Ok(()));
        let other = ComponentId::generate().unwrap();
        let err = check_register_binding(&peer, &other, "default").unwrap_err();
        assert_eq!(err.code, RefusalCode::Binding);
        assert!(check_register_binding(&peer, &me, "other").is_err());
        let sidecar =
            ProtocolIdentity::new(Role::NetworkSidecar, "default", domain, me.clone()).unwrap();
        assert!(check_register_binding(&sidecar, &me, "default").is_err());
    }

    #[test]
    fn anchor_is_redacted_in_debug_of_messages() {
        let anchor = SessionAnchor::generate().unwrap();
        let m = CoordinatorMessage::Registered {
            session_id: SessionId::generate().unwrap(),
            session_anchor: anchor.clone(),
        };
        assert!(!format!("{m:?}").contains(anchor.expose_hex()));
    }

    #[test]
    fn layout_hints_are_short_printable_ascii_and_optional_in_session_info() {
        assert!(layout_hint_ok("tui1:0a1b2c3d:0:r1d0"));
        assert!(layout_hint_ok(""));
        assert!(!layout_hint_ok(&"x".repeat(MAX_LAYOUT_HINT + 1)));
        assert!(!layout_hint_ok("a b"));
        assert!(!layout_hint_ok("\u{1b}[2J"));
        assert!(!layout_hint_ok("é"));
        // A coordinator that sends no hint (an older one) still parses.
        let sid = SessionId::generate().unwrap();
        let json = format!(
            r#"{{"session_id":"{}","command":[],"started_unix_ms":1,"hosted":true,"running":true,"exit_status":null,"attached":[],"started_by":"tui","rows":1,"cols":1}}"#,
            sid.as_str()
        );
        let info: SessionInfo = serde_json::from_str(&json).unwrap();
        assert_eq!(info.layout_hint, "");
    }
}
