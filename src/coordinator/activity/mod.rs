//! A coordinator-owned session's activity as the host observed it (issue #15), never as the
//! sandbox claims it: when the session last printed, and whether its program called for the
//! developer (bell, desktop notification) since a client last looked at it. Sans-IO: the
//! caller passes the time and the output; [`Tracker::scan`] says when the published status
//! should change.

pub mod notices;

use lazaret_protocol::status::SessionStatus;
use notices::{Notice, NoticeScanner};
use std::time::{Duration, Instant};

/// Output newer than this makes a session `working`; older, `idle`.
pub const IDLE_AFTER: Duration =
    Duration::from_millis(lazaret_protocol::activity::DEFAULT_IDLE_AFTER_MS);

/// How often the time of the last output is published at most while output flows (a status
/// write per read would cost more than the output).
pub const OUTPUT_EVERY: Duration = Duration::from_secs(1);

/// What the status shows of a session's activity, derived from its status fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Activity {
    /// A client ended it; its processes are being hung up.
    Ending,
    /// This many of its Host Escalation requests wait for the developer.
    Escalation(u32),
    /// The program rang the bell or sent a notification (its text, escaped) since a client
    /// last looked.
    Attention(String),
    /// Output within [`IDLE_AFTER`].
    Working,
    /// No output for [`IDLE_AFTER`] (or never).
    Idle,
}

impl Activity {
    /// The activity of a session from what its status says, at `now_ms` (Unix ms), the most
    /// pressing first: ending, escalation, attention, working, idle.
    pub fn of(s: &SessionStatus, now_ms: u64) -> Activity {
        let (running, attention, last_output_ms) =
            (s.running, s.attention.as_str(), s.last_output_unix_ms);
        if !running {
            Activity::Ending
        } else if s.pending_escalations > 0 {
            Activity::Escalation(s.pending_escalations)
        } else if !attention.is_empty() {
            Activity::Attention(attention.to_owned())
        } else if last_output_ms > 0 && now_ms.saturating_sub(last_output_ms) < idle_after(s) {
            Activity::Working
        } else {
            Activity::Idle
        }
    }

    /// One word for tables and JSON: `ending`, `escalation`, `attention`, `working`, `idle`.
    pub fn word(&self) -> &'static str {
        match self {
            Activity::Ending => "ending",
            Activity::Escalation(_) => "escalation",
            Activity::Attention(_) => "attention",
            Activity::Working => "working",
            Activity::Idle => "idle",
        }
    }
}

/// The session's threshold between `working` and `idle`, in ms.
fn idle_after(s: &SessionStatus) -> u64 {
    if s.idle_after_ms > 0 {
        s.idle_after_ms
    } else {
        u64::try_from(IDLE_AFTER.as_millis()).unwrap_or(u64::MAX)
    }
}

/// Follows one session's output.
#[derive(Debug, Default)]
pub struct Tracker {
    scanner: NoticeScanner,
    found: Vec<Notice>,
    /// Why the session wants attention (escaped), until a client looks.
    attention: Option<String>,
    /// When output was last published.
    published: Option<Instant>,
    /// When the last output came.
    last_output: Option<Instant>,
}

impl Tracker {
    /// Output arrived at `now`; true when the status should be published again (attention
    /// raised or changed, or the last-output time is due).
    pub fn scan(&mut self, bytes: &[u8], now: Instant) -> bool {
        self.last_output = Some(now);
        self.scanner.scan(bytes, &mut self.found);
        let mut changed = false;
        for notice in self.found.drain(..) {
            let reason = match notice {
                Notice::Bell => "bell".to_owned(),
                Notice::Notification(text) => {
                    format!("notification: {}", crate::terminal::escape::visible(&text))
                }
            };
            if self.attention.as_ref() != Some(&reason) {
                self.attention = Some(reason);
                changed = true;
            }
        }
        let due = self
            .published
            .is_none_or(|at| now.saturating_duration_since(at) >= OUTPUT_EVERY);
        if changed || due {
            self.published = Some(now);
            return true;
        }
        false
    }

    /// A client looked at the session (attached, or typed into it); true when that cleared
    /// an attention.
    pub fn looked(&mut self) -> bool {
        self.attention.take().is_some()
    }

    pub fn attention(&self) -> Option<&str> {
        self.attention.as_deref()
    }

    pub fn last_output(&self) -> Option<Instant> {
        self.last_output
    }
}

#[cfg(test)]
#[path = "activity_tests.rs"]
mod tests;
