//! Escalation prompts on a client (FR-5, DX-4): the [`Prompter`] a front end provides to ask
//! the developer, and the prompts open on one terminal ([`OpenPrompts`]).

use lazaret_protocol::escalation::{Decision, EscalationPrompt};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Asks the developer about the Escalation Requests routed to this session (FR-5, DX-4).
pub trait Prompter: Send + Sync {
    /// Blocks until the developer decides; None once `withdrawn` is set (the prompt is no
    /// longer wanted: decided in another client, its time ran out, the session ended, or
    /// this terminal detached). [`Withdrawal::reason`] says which.
    fn ask(&self, prompt: &EscalationPrompt, withdrawn: &Withdrawal) -> Option<Decision>;
}

/// Why a prompt is no longer wanted, set once (the first reason counts).
#[derive(Default)]
pub struct Withdrawal {
    set: AtomicBool,
    reason: Mutex<Option<String>>,
}

impl Withdrawal {
    /// Withdraws the prompt for `reason`; a later reason is ignored.
    pub fn withdraw(&self, reason: &str) {
        let mut r = self.reason.lock().unwrap_or_else(|p| p.into_inner());
        if r.is_none() {
            *r = Some(reason.to_owned());
        }
        self.set.store(true, Ordering::SeqCst);
    }

    pub fn is_withdrawn(&self) -> bool {
        self.set.load(Ordering::SeqCst)
    }

    /// Why it was withdrawn (coordinator text for withdrawals the coordinator sent: show it
    /// escaped); None while it is not.
    pub fn reason(&self) -> Option<String> {
        self.reason
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// The reason given to prompts still open when their [`OpenPrompts`] goes away.
pub const SESSION_GONE: &str = "the session ended, or this terminal left it";

/// The prompts of one attached command that are open on its terminal.
#[derive(Default)]
pub struct OpenPrompts {
    withdrawn: HashMap<String, Arc<Withdrawal>>,
}

impl OpenPrompts {
    /// Starts asking `prompter` about `prompt` on a blocking thread; the answer — the
    /// developer's decision, or a denial when there is no prompter — goes to `answer`.
    pub fn open(
        &mut self,
        prompter: Option<&Arc<dyn Prompter>>,
        prompt: EscalationPrompt,
        answer: impl FnOnce(String, Option<Decision>) + Send + 'static,
    ) {
        let Some(prompter) = prompter.cloned() else {
            answer(prompt.request_id, Some(Decision::Deny {}));
            return;
        };
        let flag = Arc::new(Withdrawal::default());
        self.withdrawn
            .insert(prompt.request_id.clone(), flag.clone());
        tokio::task::spawn_blocking(move || {
            let decision = prompter.ask(&prompt, &flag);
            answer(prompt.request_id, decision);
        });
    }

    /// The prompt for `request_id` is not wanted any more, for `reason`.
    pub fn withdraw(&mut self, request_id: &str, reason: &str) {
        if let Some(flag) = self.withdrawn.remove(request_id) {
            flag.withdraw(reason);
        }
    }

    /// No prompt is wanted on this terminal any more (it detaches, or its session ended).
    pub fn withdraw_all(&mut self, reason: &str) {
        for (_, flag) in self.withdrawn.drain() {
            flag.withdraw(reason);
        }
    }

    /// The prompt for `request_id` was answered.
    pub fn answered(&mut self, request_id: &str) {
        self.withdrawn.remove(request_id);
    }
}

impl Drop for OpenPrompts {
    /// The command ended: no prompt stays open on its terminal.
    fn drop(&mut self) {
        self.withdraw_all(SESSION_GONE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_reason_counts() {
        let w = Withdrawal::default();
        assert!(!w.is_withdrawn());
        assert_eq!(w.reason(), None);
        w.withdraw("decided elsewhere");
        w.withdraw(SESSION_GONE);
        assert!(w.is_withdrawn());
        assert_eq!(w.reason().as_deref(), Some("decided elsewhere"));
    }
}
