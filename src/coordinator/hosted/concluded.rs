//! How the prompt board's recent prompts ended (issue #15): a client that decides a prompt
//! no longer waiting (`lazaret approve` of a request decided already, or timed out) is told
//! what became of it and who decided. Bounded: the oldest records go first.

use super::super::driver_ports::Withdrawal;
use lazaret_protocol::escalation::DecideAnswer;
use std::collections::{HashMap, VecDeque};

/// Records kept; older requests are answered `unknown`.
pub const KEPT: usize = 1024;

#[derive(Default)]
pub struct Concluded {
    order: VecDeque<String>,
    ended: HashMap<String, DecideAnswer>,
}

impl Concluded {
    /// `request_id` ended as `answer` tells a late decider. The first record counts: a decision
    /// is recorded before its withdrawal.
    pub fn record(&mut self, request_id: &str, answer: DecideAnswer) {
        if self.ended.contains_key(request_id) {
            return;
        }
        if self.order.len() >= KEPT {
            if let Some(old) = self.order.pop_front() {
                self.ended.remove(&old);
            }
        }
        self.order.push_back(request_id.to_owned());
        self.ended.insert(request_id.to_owned(), answer);
    }

    /// A prompt withdrawn without a decision, for `reason` (the core's withdrawal text).
    pub fn withdrawn(&mut self, request_id: &str, reason: &str) {
        let answer = if reason == Withdrawal::TimedOut.reason() {
            DecideAnswer::TimedOut {}
        } else {
            DecideAnswer::Withdrawn {
                reason: reason.to_owned(),
            }
        };
        self.record(request_id, answer);
    }

    /// What became of `request_id`, if it is remembered.
    pub fn get(&self, request_id: &str) -> Option<&DecideAnswer> {
        self.ended.get(request_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_record_counts_and_the_oldest_are_forgotten() {
        let mut c = Concluded::default();
        let decided = DecideAnswer::AlreadyDecided {
            decision: "approved".into(),
            by: "in a control centre (lazaret tui, client 01234567)".into(),
        };
        c.record("a", decided.clone());
        c.withdrawn("a", Withdrawal::Decided.reason());
        assert_eq!(c.get("a"), Some(&decided));
        c.withdrawn("b", Withdrawal::TimedOut.reason());
        assert_eq!(c.get("b"), Some(&DecideAnswer::TimedOut {}));
        c.withdrawn("c", Withdrawal::SessionEnded.reason());
        assert!(
            matches!(c.get("c"), Some(DecideAnswer::Withdrawn { reason }) if reason.contains("session ended"))
        );
        for i in 0..KEPT {
            c.withdrawn(&format!("x{i}"), "r");
        }
        assert_eq!(c.get("a"), None);
        assert!(c.get(&format!("x{}", KEPT - 1)).is_some());
    }
}
