//! Escalation prompts on a client (FR-5, DX-4): the [`Prompter`] a front end provides to ask
//! the developer, and the prompts open on one terminal ([`OpenPrompts`]).

use lazaret_protocol::escalation::{Decision, EscalationPrompt};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Asks the developer about the Escalation Requests routed to this session (FR-5, DX-4).
pub trait Prompter: Send + Sync {
    /// Blocks until the developer decides; None once `withdrawn` is set (the prompt is no
    /// longer wanted: its time ran out, or the session is ending).
    fn ask(&self, prompt: &EscalationPrompt, withdrawn: &AtomicBool) -> Option<Decision>;
}

/// The prompts of one attached command that are open on its terminal.
#[derive(Default)]
pub struct OpenPrompts {
    withdrawn: HashMap<String, Arc<AtomicBool>>,
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
        let flag = Arc::new(AtomicBool::new(false));
        self.withdrawn
            .insert(prompt.request_id.clone(), flag.clone());
        tokio::task::spawn_blocking(move || {
            let decision = prompter.ask(&prompt, &flag);
            answer(prompt.request_id, decision);
        });
    }

    /// The prompt for `request_id` is not wanted any more.
    pub fn withdraw(&mut self, request_id: &str) {
        if let Some(flag) = self.withdrawn.remove(request_id) {
            flag.store(true, Ordering::SeqCst);
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
        for flag in self.withdrawn.values() {
            flag.store(true, Ordering::SeqCst);
        }
    }
}
