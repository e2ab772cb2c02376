//! Escalation prompts of coordinator-owned sessions (issue #14, FR-5): a request of a session
//! is offered to every client attached to that session and to every control centre
//! (`lazaret tui`) of the Domain — also to those that attach while it waits. The first
//! decision wins; the prompt is withdrawn from every other client, and who decided is logged.
//!
//! The board keeps what the clients were shown; what happens to a prompt is the protocol
//! core's: its `ShowPrompt`, `OfferPrompt` and `WithdrawPrompt` reach the board through the
//! session's prompt route ([`crate::escalation::routing`]). A decision is taken here (first
//! one wins, and its answer goes to the waiting request); the withdrawal from the others
//! follows the core's step that records it.

use super::concluded::Concluded;
use super::viewer::{Outbound, OutboundSender, ViewerKey};
use crate::escalation::routing::Decided;
use lazaret_protocol::escalation::{DecideAnswer, Decision, EscalationPrompt, PendingEscalation};
use lazaret_protocol::messages::CoordinatorMessage;
use std::collections::HashMap;

/// A prompt waiting for its first decision.
struct Pending {
    session: String,
    prompt: EscalationPrompt,
    reply: std::sync::mpsc::Sender<Decided>,
    /// Clients it was offered to (to withdraw it from them).
    offered: HashMap<ViewerKey, OutboundSender>,
    /// When it was shown.
    asked: std::time::Instant,
}

/// Why a decision was not taken.
#[derive(Debug, PartialEq, Eq)]
pub enum NotTaken {
    /// Decided already, withdrawn, or never asked.
    Unknown,
    /// The client does not see this prompt (not attached to its session, not a control centre).
    NotOffered,
}

/// A prompt whose first decision was taken, until the core withdraws it.
struct Taken {
    prompt: Pending,
    /// The client that decided (it closes its own prompt).
    by: ViewerKey,
    /// What the others are told.
    reason: String,
}

#[derive(Default)]
pub struct PromptBoard {
    pending: HashMap<String, Pending>,
    decided: HashMap<String, Taken>,
    /// How recent prompts ended, for late deciders.
    concluded: Concluded,
}

impl PromptBoard {
    /// A new prompt of `session`, offered at once to `to` (the core's offers follow).
    pub fn ask(
        &mut self,
        session: &str,
        prompt: EscalationPrompt,
        reply: std::sync::mpsc::Sender<Decided>,
        to: Vec<(ViewerKey, OutboundSender)>,
    ) {
        let mut pending = Pending {
            session: session.to_owned(),
            prompt,
            reply,
            offered: HashMap::new(),
            asked: std::time::Instant::now(),
        };
        for (key, out) in to {
            offer(&mut pending, key, out);
        }
        self.pending
            .insert(pending.prompt.request_id.clone(), pending);
    }

    /// Offers the waiting prompt `request_id` to a client (the core's `OfferPrompt`).
    pub fn offer(&mut self, request_id: &str, key: ViewerKey, out: &OutboundSender) {
        if let Some(p) = self.pending.get_mut(request_id) {
            offer(p, key, out.clone());
        }
    }

    /// The prompt is withdrawn (the core's `WithdrawPrompt`): every client still showing it
    /// is told why — after a decision, all but the decider, and they are told who decided.
    /// Returns how many clients were told.
    pub fn withdraw(&mut self, request_id: &str, reason: &str, decided: bool) -> usize {
        let mut told = 0;
        if let Some(d) = self.decided.remove(request_id) {
            let reason = if decided { &d.reason } else { reason };
            told += withdraw_from(&d.prompt, Some(d.by), reason);
        }
        if let Some(p) = self.pending.remove(request_id) {
            told += withdraw_from(&p, None, reason);
        }
        if !decided {
            self.concluded.withdrawn(request_id, reason);
        }
        told
    }

    /// The session a waiting prompt belongs to.
    pub fn session_of(&self, request_id: &str) -> Option<String> {
        self.pending.get(request_id).map(|p| p.session.clone())
    }

    /// `key`'s decision: taken when it is the first and the client was offered the prompt;
    /// the others are told what was decided and by whom (`by`).
    pub fn decide(
        &mut self,
        request_id: &str,
        key: ViewerKey,
        by: &Decider<'_>,
        decided: Decided,
    ) -> Result<(), NotTaken> {
        let Some(p) = self.pending.get(request_id) else {
            return Err(NotTaken::Unknown);
        };
        if !p.offered.contains_key(&key) {
            return Err(NotTaken::NotOffered);
        }
        let Some(p) = self.pending.remove(request_id) else {
            return Err(NotTaken::Unknown);
        };
        let reason = decided_elsewhere(&decided.decision, by);
        self.concluded.record(
            request_id,
            DecideAnswer::AlreadyDecided {
                decision: what(&decided.decision).to_owned(),
                by: attribution(&decided.decision, by),
            },
        );
        let _ = p.reply.send(decided);
        self.decided.insert(
            request_id.to_owned(),
            Taken {
                prompt: p,
                by: key,
                reason,
            },
        );
        Ok(())
    }

    /// A client went away or detached from `session` (None: from everything).
    pub fn forget(&mut self, key: ViewerKey, session: Option<&str>) {
        for p in self.pending.values_mut() {
            if session.is_none_or(|s| s == p.session) {
                p.offered.remove(&key);
            }
        }
    }

    /// How many prompts of `session` wait for a decision.
    pub fn pending_of(&self, session: &str) -> u32 {
        let n = self
            .pending
            .values()
            .filter(|p| p.session == session)
            .count();
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// Request IDs waiting for a decision.
    pub fn waiting(&self) -> Vec<String> {
        self.pending.keys().cloned().collect()
    }

    /// The prompts waiting for a decision, oldest first.
    pub fn list(&self) -> Vec<PendingEscalation> {
        let mut waiting: Vec<&Pending> = self.pending.values().collect();
        waiting.sort_by_key(|p| p.asked);
        waiting
            .into_iter()
            .map(|p| {
                let age = u32::try_from(p.asked.elapsed().as_secs()).unwrap_or(u32::MAX);
                PendingEscalation {
                    prompt: p.prompt.clone(),
                    age_secs: age,
                    seconds_left: p.prompt.timeout_secs.saturating_sub(age),
                }
            })
            .collect()
    }

    /// Whether `request_id` waits for a decision.
    pub fn is_pending(&self, request_id: &str) -> bool {
        self.pending.contains_key(request_id)
    }

    /// What became of a request that no longer waits: decided (by whom), timed out,
    /// withdrawn — or unknown.
    pub fn concluded(&self, request_id: &str) -> DecideAnswer {
        self.concluded
            .get(request_id)
            .cloned()
            .unwrap_or(DecideAnswer::Unknown {})
    }
}

/// The client that decided a prompt: its label ("tui", "attach", "run", "cli") and Client
/// CLI ID.
pub struct Decider<'a> {
    pub label: &'a str,
    pub client: &'a str,
}

/// What the other clients are told when `by` decided (FR-5: who decided is attributable), e.g.
/// "decided elsewhere: approved in a control centre (lazaret tui, client 3fa9c1d2)".
pub fn decided_elsewhere(decision: &Decision, by: &Decider<'_>) -> String {
    format!(
        "decided elsewhere: {} {}",
        what(decision),
        attribution(decision, by)
    )
}

/// What a decision did, in words: "approved", "approved with an edited command", "denied".
pub fn what(decision: &Decision) -> &'static str {
    match decision {
        Decision::Approve {} => "approved",
        Decision::Edit { .. } => "approved with an edited command",
        Decision::Deny {} => "denied",
    }
}

/// Where and by which client a decision was taken, e.g. "in a control centre (lazaret tui,
/// client 3fa9c1d2)" or "from the command line (lazaret approve, client 3fa9c1d2)".
pub fn attribution(decision: &Decision, by: &Decider<'_>) -> String {
    let kind = match (by.label, decision) {
        ("tui", _) => "in a control centre (lazaret tui",
        ("attach", _) => "in an attached terminal (lazaret attach",
        ("run", _) => "in the terminal that started the session (lazaret run --detachable",
        (CLI_LABEL, Decision::Deny {}) => "from the command line (lazaret deny",
        (CLI_LABEL, _) => "from the command line (lazaret approve",
        _ => "in another client (",
    };
    let client: String = by.client.chars().take(8).collect();
    let sep = if kind.ends_with('(') { "" } else { ", " };
    format!("{kind}{sep}client {client})")
}

/// The label of a client that decides from the command line (`lazaret approve`, `lazaret
/// deny`, `lazaret escalations`).
pub const CLI_LABEL: &str = "cli";

fn offer(p: &mut Pending, key: ViewerKey, out: OutboundSender) {
    if p.offered.contains_key(&key) {
        return;
    }
    let msg = CoordinatorMessage::EscalationPrompt {
        prompt: p.prompt.clone(),
    };
    if out.send(Outbound::Message(msg)).is_ok() {
        p.offered.insert(key, out);
    }
}

/// Tells every client offered `p` but `except` that it is withdrawn; returns how many.
fn withdraw_from(p: &Pending, except: Option<ViewerKey>, reason: &str) -> usize {
    let mut told = 0;
    for (key, out) in &p.offered {
        if Some(*key) != except {
            let msg = CoordinatorMessage::EscalationWithdrawn {
                request_id: p.prompt.request_id.clone(),
                reason: reason.to_owned(),
            };
            told += usize::from(out.send(Outbound::Message(msg)).is_ok());
        }
    }
    told
}
