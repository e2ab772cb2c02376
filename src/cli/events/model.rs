//! What `lazaret events` knows of one running Domain, and the events its changes make
//! (sans-IO): fed the Domain's status file and its coordinator's messages, it returns the
//! events to print, each once and in order.

use lazaret_protocol::activity::{Need, SessionActivity};
use lazaret_protocol::escalation::EscalationPrompt;
use lazaret_protocol::status::{DomainStatus, SessionStatus};
use serde::Serialize;
use std::collections::BTreeMap;

/// How long a coordinator-owned session may be missing from the status file before it is
/// reported ended without its exit status (its coordinator tells the status when it can).
pub const VANISHED_GRACE_MS: u64 = 2_000;

/// One event, as `--json` prints it after the Domain's fields (docs/coordinator.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Happened {
    DomainStarted {
        coordinator_pid: u32,
    },
    DomainStopped {},
    SessionStarted {
        session_id: String,
        command: Vec<String>,
        started_by: String,
        hosted: bool,
        started_unix_ms: u64,
    },
    SessionEnded {
        session_id: String,
        exit_status: Option<i32>,
        reason: String,
    },
    Activity {
        session_id: String,
        activity: &'static str,
        attention: String,
        pending_escalations: u32,
        last_output_unix_ms: u64,
    },
    EscalationWaiting {
        session_id: String,
        request_id: String,
        argv: Vec<String>,
        /// `argv` escaped for display, as `lazaret escalations --json` has it.
        command: String,
        /// The command digest (`lazaret approve --expect-argv-hash`).
        argv_hash: String,
        cwd: String,
        host_cwd: String,
        justification: String,
        warnings: Vec<String>,
        timeout_secs: u32,
    },
    EscalationWithdrawn {
        session_id: String,
        request_id: String,
        reason: String,
    },
}

/// The word of an activity, as `lazaret ps --json` prints it.
pub fn word(need: Need) -> &'static str {
    match need {
        Need::Escalation => "escalation",
        Need::Attention => "attention",
        Need::Working => "working",
        Need::Idle => "idle",
        Need::Ended => "ending",
    }
}

#[derive(Debug, Default)]
struct Session {
    hosted: bool,
    activity: Option<SessionActivity>,
    /// The activity last reported: its word and reason.
    shown: Option<(&'static str, String)>,
    /// When it was first missing from the status file (coordinator-owned sessions).
    vanished_at: Option<u64>,
}

/// One running Domain as `lazaret events` follows it.
#[derive(Debug, Default)]
pub struct DomainWatch {
    sessions: BTreeMap<String, Session>,
    /// Activity of sessions not in the status file yet.
    early: BTreeMap<String, SessionActivity>,
    /// Ended sessions (a status file written before the end may still list them).
    ended: Vec<String>,
    /// Waiting requests: their session.
    waiting: BTreeMap<String, String>,
    stopped: bool,
}

/// A session's activity as its status file entry tells it.
pub fn from_status(s: &SessionStatus) -> SessionActivity {
    SessionActivity::of_status(s)
}

impl DomainWatch {
    /// A Domain seen running for the first time.
    pub fn start(status: &DomainStatus, now_ms: u64) -> (DomainWatch, Vec<Happened>) {
        let mut watch = DomainWatch::default();
        let mut out = vec![Happened::DomainStarted {
            coordinator_pid: status.coordinator_pid,
        }];
        out.extend(watch.status(status, now_ms));
        (watch, out)
    }

    /// Whether an activity of a session not in the status file waits: read the status again.
    pub fn wants_status(&self) -> bool {
        !self.early.is_empty()
    }

    /// The Domain's status file as read now: sessions that appeared start, `lazaret run`
    /// sessions that are gone end.
    pub fn status(&mut self, status: &DomainStatus, now_ms: u64) -> Vec<Happened> {
        let mut out = Vec::new();
        if self.stopped {
            return out;
        }
        for s in &status.sessions {
            if self.ended.contains(&s.session_id) {
                continue;
            }
            if let Some(known) = self.sessions.get_mut(&s.session_id) {
                known.vanished_at = None;
                continue;
            }
            out.push(Happened::SessionStarted {
                session_id: s.session_id.clone(),
                command: s.command.clone(),
                started_by: s.started_by.clone(),
                hosted: s.hosted,
                started_unix_ms: s.started_unix_ms,
            });
            self.sessions.insert(
                s.session_id.clone(),
                Session {
                    hosted: s.hosted,
                    ..Session::default()
                },
            );
            let activity = match self.early.remove(&s.session_id) {
                Some(pushed) => Some(pushed),
                None => s.hosted.then(|| from_status(s)),
            };
            if let Some(a) = activity {
                out.extend(self.activity(&s.session_id, a, now_ms));
            }
        }
        let listed = |id: &str| status.sessions.iter().any(|s| s.session_id == id);
        let mut gone = Vec::new();
        for (id, s) in self.sessions.iter_mut().filter(|(id, _)| !listed(id)) {
            if !s.hosted {
                gone.push(id.clone());
            } else if s.vanished_at.is_none() {
                s.vanished_at = Some(now_ms);
            }
        }
        for id in gone {
            out.extend(self.exited(&id, None, "its `lazaret run` ended"));
        }
        out
    }

    /// The coordinator told a session's activity.
    pub fn activity(
        &mut self,
        session: &str,
        activity: SessionActivity,
        now_ms: u64,
    ) -> Vec<Happened> {
        if self.ended.iter().any(|e| e == session) || self.stopped {
            return Vec::new();
        }
        let Some(s) = self.sessions.get_mut(session) else {
            self.early.insert(session.to_owned(), activity);
            return Vec::new();
        };
        s.activity = Some(activity);
        self.changed(session, now_ms).into_iter().collect()
    }

    /// The activity event of `session` if what it shows changed.
    fn changed(&mut self, session: &str, now_ms: u64) -> Option<Happened> {
        let s = self.sessions.get_mut(session)?;
        let a = s.activity.as_ref()?;
        let w = word(a.need(now_ms));
        let reason = if w == "attention" {
            a.attention.clone()
        } else {
            String::new()
        };
        if s.shown.as_ref() == Some(&(w, reason.clone())) {
            return None;
        }
        s.shown = Some((w, reason.clone()));
        Some(Happened::Activity {
            session_id: session.to_owned(),
            activity: w,
            attention: reason,
            pending_escalations: a.pending_escalations,
            last_output_unix_ms: a.last_output_unix_ms,
        })
    }

    /// Time passed: sessions turn idle, sessions missing too long end.
    pub fn tick(&mut self, now_ms: u64) -> Vec<Happened> {
        let ids: Vec<String> = self.sessions.keys().cloned().collect();
        let mut out: Vec<Happened> = ids
            .iter()
            .filter_map(|id| self.changed(id, now_ms))
            .collect();
        let vanished: Vec<String> = self
            .sessions
            .iter()
            .filter(|(_, s)| {
                s.vanished_at
                    .is_some_and(|at| now_ms.saturating_sub(at) >= VANISHED_GRACE_MS)
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in vanished {
            out.extend(self.exited(&id, None, "the session left the Domain"));
        }
        out
    }

    /// A session's process ended.
    pub fn exited(&mut self, session: &str, status: Option<i32>, reason: &str) -> Vec<Happened> {
        if self.ended.iter().any(|e| e == session) || self.stopped {
            return Vec::new();
        }
        self.sessions.remove(session);
        self.early.remove(session);
        self.ended.push(session.to_owned());
        // Remember a bounded number of ended sessions.
        if self.ended.len() > 4096 {
            self.ended.remove(0);
        }
        vec![Happened::SessionEnded {
            session_id: session.to_owned(),
            exit_status: status,
            reason: reason.to_owned(),
        }]
    }

    /// A prompt is offered (again, for a centre that starts watching): reported once.
    pub fn prompt(&mut self, p: &EscalationPrompt) -> Vec<Happened> {
        if self.stopped || self.waiting.contains_key(&p.request_id) {
            return Vec::new();
        }
        self.waiting
            .insert(p.request_id.clone(), p.session_id.clone());
        vec![Happened::EscalationWaiting {
            session_id: p.session_id.clone(),
            request_id: p.request_id.clone(),
            argv: p.argv.clone(),
            command: crate::terminal::escape::argv(&p.argv),
            argv_hash: p.digest(),
            cwd: p.cwd.clone(),
            host_cwd: p.host_cwd.clone(),
            justification: p.justification.clone(),
            warnings: p.warnings.clone(),
            timeout_secs: p.timeout_secs,
        }]
    }

    /// A prompt was decided or timed out.
    pub fn withdrawn(&mut self, request_id: &str, reason: &str) -> Vec<Happened> {
        match self.waiting.remove(request_id) {
            Some(session_id) => vec![Happened::EscalationWithdrawn {
                session_id,
                request_id: request_id.to_owned(),
                reason: reason.to_owned(),
            }],
            None => Vec::new(),
        }
    }

    /// The Domain is no longer running: its sessions ended, then it stopped.
    pub fn stopped(&mut self) -> Vec<Happened> {
        if self.stopped {
            return Vec::new();
        }
        let ids: Vec<String> = self.sessions.keys().cloned().collect();
        let mut out = Vec::new();
        for id in ids {
            out.extend(self.exited(&id, None, "the Domain stopped"));
        }
        self.stopped = true;
        out.push(Happened::DomainStopped {});
        out
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
