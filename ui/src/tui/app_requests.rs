//! The status line follows the escalation requests it announces (issue #32, D4): "pane N asks
//! to run a command on the host" is shown while the request waits, and leaves the status line
//! once the request is no longer pending — decided in this TUI's panel, decided in another
//! client or with `lazaret approve` / `lazaret deny` from another terminal (the coordinator
//! withdraws it here), timed out, or gone with its session. Whatever the status line said
//! before comes back (another request still waiting says so again).

use super::app::App;
use super::layout::PaneId;
use lazaret_protocol::escalation::{Decision, EscalationPrompt};
use std::sync::mpsc::Sender;
use std::time::Instant;

/// The notes the status line shows for requests still pending: (request ID, note).
#[derive(Debug, Default)]
pub struct RequestNotes(Vec<(String, String)>);

impl App {
    /// A request of `whose` session waits: announced in the status line, added to the panel.
    pub(super) fn request_arrived(
        &mut self,
        pane: PaneId,
        whose: &str,
        prompt: EscalationPrompt,
        reply: Sender<Decision>,
    ) {
        let note = format!(
            "{whose} asks to run a command on the host: {} then a to review",
            self.settings.keymap.prefix()
        );
        self.message(note.clone());
        self.request_notes.0.push((prompt.request_id.clone(), note));
        self.escalations.push(pane, prompt, reply, Instant::now());
    }

    /// Takes the notes of requests no longer pending off the status line (after every event:
    /// whatever took the request away).
    pub(super) fn follow_requests(&mut self) {
        let pending = &self.escalations.pending;
        let (kept, gone): (Vec<_>, Vec<_>) = std::mem::take(&mut self.request_notes.0)
            .into_iter()
            .partition(|(id, _)| pending.iter().any(|p| p.prompt.request_id == *id));
        self.request_notes.0 = kept;
        for (_, note) in gone {
            // Notes of the same pane read alike: taking any one of them is the same.
            if let Some(i) = self.messages.iter().position(|m| *m == note) {
                self.messages.remove(i);
            }
        }
    }
}

#[cfg(test)]
#[path = "app_requests_tests.rs"]
mod tests;
