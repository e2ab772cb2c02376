//! Escalation prompts of coordinator-owned sessions (issue #14, FR-5): a request of a session
//! is offered to every client attached to that session and to every control centre
//! (`lazaret tui`) of the Domain — also to those that attach while it waits. The first
//! decision wins; the prompt is withdrawn from every other client, and who decided is logged.

use super::viewer::{Outbound, OutboundSender, ViewerKey};
use crate::escalation::routing::Decided;
use lazaret_protocol::escalation::{Decision, EscalationPrompt};
use lazaret_protocol::messages::CoordinatorMessage;
use std::collections::HashMap;

/// A prompt waiting for its first decision.
struct Pending {
    session: String,
    prompt: EscalationPrompt,
    reply: std::sync::mpsc::Sender<Decided>,
    /// Clients it was offered to (to withdraw it from them).
    offered: HashMap<ViewerKey, OutboundSender>,
}

/// Why a decision was not taken.
#[derive(Debug, PartialEq, Eq)]
pub enum NotTaken {
    /// Decided already, withdrawn, or never asked.
    Unknown,
    /// The client does not see this prompt (not attached to its session, not a control centre).
    NotOffered,
}

#[derive(Default)]
pub struct PromptBoard {
    pending: HashMap<String, Pending>,
}

impl PromptBoard {
    /// A new prompt of `session`, offered at once to `to`.
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
        };
        for (key, out) in to {
            offer(&mut pending, key, out);
        }
        self.pending
            .insert(pending.prompt.request_id.clone(), pending);
    }

    /// Offers the waiting prompts of `session` (every session's with None) to a client.
    pub fn offer_waiting(&mut self, session: Option<&str>, key: ViewerKey, out: &OutboundSender) {
        for p in self.pending.values_mut() {
            if session.is_none_or(|s| s == p.session) {
                offer(p, key, out.clone());
            }
        }
    }

    /// The prompt is not wanted any more (its time ran out, or its session ended).
    pub fn withdraw(&mut self, request_id: &str, reason: &str) {
        if let Some(p) = self.pending.remove(request_id) {
            withdraw_from(&p, None, reason);
        }
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
        let _ = p.reply.send(decided);
        withdraw_from(&p, Some(key), &reason);
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

    /// Request IDs waiting for a decision.
    pub fn waiting(&self) -> Vec<String> {
        self.pending.keys().cloned().collect()
    }
}

/// The client that decided a prompt: its label ("tui", "attach", "run") and Client CLI ID.
pub struct Decider<'a> {
    pub label: &'a str,
    pub client: &'a str,
}

/// What the other clients are told when `by` decided (FR-5: who decided is attributable), e.g.
/// "decided elsewhere: approved in a control centre (lazaret tui, client 3fa9c1d2)".
pub fn decided_elsewhere(decision: &Decision, by: &Decider<'_>) -> String {
    let what = match decision {
        Decision::Approve {} => "approved",
        Decision::Edit { .. } => "approved with an edited command",
        Decision::Deny {} => "denied",
    };
    let kind = match by.label {
        "tui" => "in a control centre (lazaret tui",
        "attach" => "in an attached terminal (lazaret attach",
        "run" => "in the terminal that started the session (lazaret run --detachable",
        _ => "in another client (",
    };
    let client: String = by.client.chars().take(8).collect();
    let sep = if kind.ends_with('(') { "" } else { ", " };
    format!("decided elsewhere: {what} {kind}{sep}client {client})")
}

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

fn withdraw_from(p: &Pending, except: Option<ViewerKey>, reason: &str) {
    for (key, out) in &p.offered {
        if Some(*key) != except {
            let _ = out.send(Outbound::Message(CoordinatorMessage::EscalationWithdrawn {
                request_id: p.prompt.request_id.clone(),
                reason: reason.to_owned(),
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lazaret_protocol::escalation::Decision;
    use tokio::sync::mpsc;

    fn d(decision: Decision) -> Decided {
        Decided { decision, by: None }
    }

    fn by<'a>(label: &'a str, client: &'a str) -> Decider<'a> {
        Decider { label, client }
    }

    #[test]
    fn the_withdrawal_says_what_was_decided_and_by_which_kind_of_client() {
        let id = "0123456789abcdef0123456789abcdef";
        let cases = [
            (
                Decision::Approve {},
                "tui",
                "decided elsewhere: approved in a control centre (lazaret tui, client 01234567)",
            ),
            (
                Decision::Deny {},
                "attach",
                "decided elsewhere: denied in an attached terminal (lazaret attach, client 01234567)",
            ),
            (
                Decision::Edit {
                    argv: vec!["ls".into()],
                },
                "run",
                "decided elsewhere: approved with an edited command in the terminal that started \
                 the session (lazaret run --detachable, client 01234567)",
            ),
            (
                Decision::Approve {},
                "\x1b]0;odd",
                "decided elsewhere: approved in another client (client 01234567)",
            ),
        ];
        for (decision, label, want) in cases {
            assert_eq!(decided_elsewhere(&decision, &by(label, id)), want);
        }
    }

    fn prompt(id: &str, session: &str) -> EscalationPrompt {
        EscalationPrompt {
            request_id: id.into(),
            profile: "p".into(),
            session_id: session.into(),
            argv: vec!["true".into()],
            cwd: "/workspace".into(),
            host_cwd: "/w".into(),
            justification: String::new(),
            timeout_secs: 60,
            warnings: vec![],
        }
    }

    fn kinds(rx: &mut mpsc::UnboundedReceiver<Outbound>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(Outbound::Message(m)) = rx.try_recv() {
            out.push(match m {
                CoordinatorMessage::EscalationPrompt { prompt } => {
                    format!("ask {}", prompt.request_id)
                }
                CoordinatorMessage::EscalationWithdrawn { request_id, reason } => {
                    format!("withdrawn {request_id}: {reason}")
                }
                other => format!("{other:?}"),
            });
        }
        out
    }

    #[test]
    fn the_first_decision_wins_and_the_prompt_is_withdrawn_from_the_others() {
        let mut board = PromptBoard::default();
        let (a, mut ra) = mpsc::unbounded_channel();
        let (b, mut rb) = mpsc::unbounded_channel();
        let (reply, answer) = std::sync::mpsc::channel();
        board.ask("s1", prompt("r1", "s1"), reply, vec![(1, a), (2, b)]);
        assert_eq!(kinds(&mut ra), ["ask r1"]);
        assert_eq!(kinds(&mut rb), ["ask r1"]);
        assert_eq!(
            board.decide("r1", 2, &by("tui", "c2"), d(Decision::Deny {})),
            Ok(())
        );
        assert_eq!(
            board.decide("r1", 1, &by("attach", "c1"), d(Decision::Approve {})),
            Err(NotTaken::Unknown),
            "a second decision is not taken"
        );
        assert_eq!(answer.try_recv(), Ok(d(Decision::Deny {})));
        assert!(
            answer.try_recv().is_err(),
            "exactly one decision reaches the request"
        );
        assert_eq!(
            kinds(&mut ra),
            ["withdrawn r1: decided elsewhere: denied in a control centre (lazaret tui, client c2)"]
        );
        assert!(
            kinds(&mut rb).is_empty(),
            "the decider closes its own prompt"
        );
    }

    #[test]
    fn a_client_that_was_not_offered_the_prompt_cannot_decide_it() {
        let mut board = PromptBoard::default();
        let (a, _ra) = mpsc::unbounded_channel();
        let (reply, answer) = std::sync::mpsc::channel();
        board.ask("s1", prompt("r1", "s1"), reply, vec![(1, a)]);
        assert_eq!(
            board.decide("r1", 9, &by("x", "c9"), d(Decision::Approve {})),
            Err(NotTaken::NotOffered)
        );
        assert!(answer.try_recv().is_err());
        assert_eq!(board.waiting(), ["r1"]);
    }

    #[test]
    fn a_prompt_of_a_detached_session_waits_for_a_client_that_attaches_later() {
        let mut board = PromptBoard::default();
        let (reply, answer) = std::sync::mpsc::channel();
        board.ask("s1", prompt("r1", "s1"), reply, vec![]);
        let (other, mut ro) = mpsc::unbounded_channel();
        board.offer_waiting(Some("s2"), 3, &other);
        assert!(
            kinds(&mut ro).is_empty(),
            "not offered to a client of another session"
        );
        let (late, mut rl) = mpsc::unbounded_channel();
        board.offer_waiting(Some("s1"), 4, &late);
        assert_eq!(kinds(&mut rl), ["ask r1"]);
        assert_eq!(
            board.decide("r1", 4, &by("tui", "c4"), d(Decision::Approve {})),
            Ok(())
        );
        assert_eq!(answer.try_recv(), Ok(d(Decision::Approve {})));
    }

    #[test]
    fn withdrawing_tells_every_client_and_forgetting_a_client_removes_its_right_to_decide() {
        let mut board = PromptBoard::default();
        let (a, mut ra) = mpsc::unbounded_channel();
        let (reply, _answer) = std::sync::mpsc::channel();
        board.ask(
            "s1",
            prompt("r1", "s1"),
            reply.clone(),
            vec![(1, a.clone())],
        );
        board.forget(1, Some("s1"));
        assert_eq!(
            board.decide("r1", 1, &by("x", "c1"), d(Decision::Approve {})),
            Err(NotTaken::NotOffered)
        );
        board.ask("s1", prompt("r2", "s1"), reply, vec![(1, a)]);
        board.withdraw("r2", "no decision in time");
        let got = kinds(&mut ra);
        assert_eq!(
            got.last().map(String::as_str),
            Some("withdrawn r2: no decision in time")
        );
    }
}
