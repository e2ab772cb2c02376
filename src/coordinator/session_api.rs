//! One client interface to a Domain's engine, whether it runs in this process (`lazaret tui`:
//! [`super::local::LocalSession`]) or in a detached coordinator over the socket (`lazaret run`,
//! `lazaret exec`: [`super::client::ClientSession`]).

use crate::terminal::cancel::Cancel;
use lazaret_protocol::escalation::{Decision, EscalationPrompt};
use lazaret_protocol::SessionId;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// Ends the session; returns whether it was the Domain's last (teardown has begun).
    fn leave(self: Box<Self>) -> anyhow::Result<bool>;
}

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
