//! Everything the TUI's one loop reacts to, from any thread: sent on an unbounded channel of
//! the loop's runtime, so the links' tasks on that runtime hand their events over without
//! waking another thread.

use super::layout::PaneId;
use lazaret_protocol::escalation::{Decision, EscalationPrompt};
use std::sync::mpsc;

pub enum AppEvent {
    /// Keyboard, mouse, paste, resize, focus of the host terminal.
    Input(crossterm::event::Event),
    /// A pane has new output to draw (sent once per render: see `Pane::dirty`).
    Output,
    /// A connection to a Domain's coordinator reports something.
    Link {
        domain: String,
        event: lazaret_client::link::LinkEvent,
    },
    /// The host terminal went away (SIGHUP) or the TUI was told to stop: detach, never kill.
    Detach,
    /// A Domain's coordinator could not be reached or started (opening its link failed).
    Unreachable { domain: String, reason: String },
    /// A pane's command ended (`Ok(status)`) or could not run (`Err(why)`).
    Ended {
        pane: PaneId,
        result: Result<i32, String>,
    },
    /// An escalation request of a pane's session waits for the developer.
    Prompt {
        pane: PaneId,
        prompt: EscalationPrompt,
        reply: mpsc::Sender<Decision>,
    },
    /// The prompt for this request is no longer wanted.
    Withdrawn { request_id: String, reason: String },
    /// A line Lazaret (or a program it ran) wrote to stderr while the TUI owned the terminal.
    Message(String),
}

pub type AppSender = tokio::sync::mpsc::UnboundedSender<AppEvent>;
pub type AppReceiver = tokio::sync::mpsc::UnboundedReceiver<AppEvent>;

/// The loop's channel.
pub fn channel() -> (AppSender, AppReceiver) {
    tokio::sync::mpsc::unbounded_channel()
}
