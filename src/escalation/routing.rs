//! Routing an Escalation Request to the developer (FR-5): each registered session has its own
//! prompt channel, held by whatever shows that session's terminal — the socket connection of
//! its `lazaret run`, or (issue #7) a TUI pane. A prompt therefore reaches only the session
//! that asked, and the decision comes back on a channel of that one request.

use lazaret_protocol::escalation::{Decision, EscalationPrompt};
use tokio::sync::mpsc;

/// What the coordinator tells a session's terminal.
#[derive(Debug)]
pub enum PromptEvent {
    /// Ask the developer; the answer goes to `reply` (dropped unanswered: the session is gone).
    Ask {
        prompt: EscalationPrompt,
        reply: std::sync::mpsc::Sender<Decision>,
    },
    /// The prompt for `request_id` needs no answer any more.
    Withdraw { request_id: String, reason: String },
}

pub type PromptSender = mpsc::UnboundedSender<PromptEvent>;
pub type PromptReceiver = mpsc::UnboundedReceiver<PromptEvent>;

/// A new session's prompt channel.
pub fn channel() -> (PromptSender, PromptReceiver) {
    mpsc::unbounded_channel()
}
