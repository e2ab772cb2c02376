//! Escalation prompts of a pane's session go to the TUI's escalation panel (FR-5): each carries
//! the pane it came from, and the panel's decision comes back on the request's own channel.

use super::event::{AppEvent, AppSender};
use super::layout::PaneId;
use crate::coordinator::session_api::Prompter;
use lazaret_protocol::escalation::{Decision, EscalationPrompt};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Mutex;
use std::time::Duration;

pub struct PanelPrompter {
    pub pane: PaneId,
    /// Behind a mutex only because `Prompter` must be `Sync`.
    pub events: Mutex<AppSender>,
}

impl Prompter for PanelPrompter {
    fn ask(&self, prompt: &EscalationPrompt, withdrawn: &AtomicBool) -> Option<Decision> {
        let (reply, answer) = std::sync::mpsc::channel();
        let sent = self
            .events
            .lock()
            .ok()?
            .send(AppEvent::Prompt {
                pane: self.pane,
                prompt: prompt.clone(),
                reply,
            })
            .is_ok();
        if !sent {
            return Some(Decision::Deny {});
        }
        loop {
            match answer.recv_timeout(Duration::from_millis(50)) {
                Ok(d) => return Some(d),
                Err(RecvTimeoutError::Disconnected) => return Some(Decision::Deny {}),
                Err(RecvTimeoutError::Timeout) if withdrawn.load(Ordering::SeqCst) => {
                    if let Ok(tx) = self.events.lock() {
                        let _ = tx.send(AppEvent::Withdrawn {
                            request_id: prompt.request_id.clone(),
                        });
                    }
                    return None;
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }
}
