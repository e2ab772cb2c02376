//! A Client Session whose command its own CLI runs (`lazaret run`, `lazaret exec`:
//! [`super::client::ClientSession`], over the coordinator's socket). There is no in-process
//! engine: every front end is a client of the detached coordinator (issue #14).

use crate::terminal::cancel::Cancel;
use lazaret_protocol::SessionId;
use std::sync::Arc;

/// A command run by a Client Session: blocking, cancellable from another thread.
pub type SessionCommand = Box<dyn FnOnce(Cancel) -> anyhow::Result<i32> + Send>;

/// How an attached command ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Attached {
    /// The command ended with this status.
    Exited(i32),
    /// The coordinator went away (shut down or died) while the command ran; it was stopped.
    CoordinatorGone(String),
}

/// Where a `lazaret run` shows what the Network Sidecar holds under `default = "ask"` (issue
/// #17): called with the whole list each time it changes (at once when the session starts
/// watching, then from the connection's event loop: it must not block). The targets were
/// chosen by the sandbox: show them escaped.
pub type HeldSink = Arc<dyn Fn(Vec<lazaret_protocol::held::HeldEntry>) + Send + Sync>;

/// A registered Client Session of a Domain.
pub trait DomainSession {
    fn session_id(&self) -> &SessionId;
    /// The session's secret for signing Host Escalation requests (given only to the
    /// session's own processes in the sandbox).
    fn session_anchor(&self) -> &lazaret_protocol::SessionAnchor;
    /// Tells the engine what this session runs; returns the sandbox container to run it in.
    fn attach(&mut self, argv: &[String], cwd: &str, tty: bool) -> anyhow::Result<String>;
    /// Runs `command` while watching the engine: if the Domain goes away, `command` is
    /// cancelled and the reason returned. Escalation prompts routed to this session go to
    /// `prompter`; without one they are denied.
    fn run_attached(
        &mut self,
        command: SessionCommand,
        prompter: Option<Arc<dyn Prompter>>,
    ) -> anyhow::Result<Attached>;
    /// Shows what the sidecar holds (under `default = "ask"`) through `sink` while
    /// [`DomainSession::run_attached`] runs; without a sink it is not shown.
    fn watch_held(&mut self, sink: HeldSink) {
        let _ = sink;
    }
    /// Ends the session; returns whether it was the Domain's last (teardown has begun).
    fn leave(self: Box<Self>) -> anyhow::Result<bool>;
}

pub use lazaret_client::prompts::{OpenPrompts, Prompter};
