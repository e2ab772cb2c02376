//! A coordinator-owned session's activity as the host observed it (issue #15), pushed to
//! control centres when it changes: when the session last printed, why its program called for
//! the developer (bell, desktop notification) since a client last looked, how many of its
//! escalation requests wait. Never what the sandbox claims about itself.

use serde::{Deserialize, Serialize};

/// What a control centre shows of one session.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionActivity {
    /// When the session last printed (Unix ms; 0: never).
    pub last_output_unix_ms: u64,
    /// Why the session wants the developer (escaped by the coordinator, at most a few hundred
    /// bytes; empty: it does not), until a client looks at it.
    pub attention: String,
    /// Its Host Escalation requests waiting for a decision.
    pub pending_escalations: u32,
    /// Whether its process still runs.
    pub running: bool,
    /// The coordinator's threshold: output older than this is `idle`, newer `working`.
    pub idle_after_ms: u64,
}

/// The threshold between `working` and `idle` when a profile sets none (`[activity]
/// idle_after`).
pub const DEFAULT_IDLE_AFTER_MS: u64 = 5_000;

/// How a control centre ranks a session, the most pressing first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Need {
    Escalation,
    Attention,
    Working,
    Idle,
    Ended,
}

impl SessionActivity {
    /// A session's activity as its Domain's published status tells it (`lazaret ps`, the
    /// session picker, `lazaret events`).
    pub fn of_status(s: &crate::status::SessionStatus) -> SessionActivity {
        SessionActivity {
            last_output_unix_ms: s.last_output_unix_ms,
            attention: s.attention.clone(),
            pending_escalations: s.pending_escalations,
            running: s.running,
            idle_after_ms: if s.idle_after_ms > 0 {
                s.idle_after_ms
            } else {
                DEFAULT_IDLE_AFTER_MS
            },
        }
    }

    /// Its rank at `now_ms` (Unix ms).
    pub fn need(&self, now_ms: u64) -> Need {
        if !self.running {
            Need::Ended
        } else if self.pending_escalations > 0 {
            Need::Escalation
        } else if !self.attention.is_empty() {
            Need::Attention
        } else if self.last_output_unix_ms > 0
            && now_ms.saturating_sub(self.last_output_unix_ms) < self.idle_after_ms
        {
            Need::Working
        } else {
            Need::Idle
        }
    }

    /// Whether the developer is wanted (an escalation waits, or the program called).
    pub fn needs_you(&self) -> bool {
        self.running && (self.pending_escalations > 0 || !self.attention.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn act(last: u64, attention: &str, pending: u32, running: bool) -> SessionActivity {
        SessionActivity {
            last_output_unix_ms: last,
            attention: attention.into(),
            pending_escalations: pending,
            running,
            idle_after_ms: 5_000,
        }
    }

    #[test]
    fn the_need_follows_the_fields_in_order_of_urgency() {
        let now = 100_000;
        assert_eq!(act(now, "bell", 1, true).need(now), Need::Escalation);
        assert_eq!(act(now, "bell", 0, true).need(now), Need::Attention);
        assert_eq!(act(now - 4_999, "", 0, true).need(now), Need::Working);
        assert_eq!(act(now - 5_000, "", 0, true).need(now), Need::Idle);
        assert_eq!(act(0, "", 0, true).need(now), Need::Idle);
        assert_eq!(act(now, "bell", 2, false).need(now), Need::Ended);
        assert!(Need::Escalation < Need::Attention && Need::Attention < Need::Working);
        assert!(act(0, "bell", 0, true).needs_you());
        assert!(act(0, "", 1, true).needs_you());
        assert!(!act(now, "", 0, true).needs_you());
        assert!(!act(now, "bell", 0, false).needs_you());
    }

    #[test]
    fn unknown_fields_are_refused() {
        let bad = r#"{"last_output_unix_ms":1,"attention":"","pending_escalations":0,"running":true,"idle_after_ms":1,"x":1}"#;
        assert!(serde_json::from_str::<SessionActivity>(bad).is_err());
    }
}
