//! Deciding an accepted Escalation Request (SR-7, SR-8, FR-5, DX-4): an exact auto-approval
//! rule match, or the developer asked on the owning session's terminal — approve, edit, deny —
//! within the request's deadline. Every step is a step of the protocol core (TLA+ `AutoApprove`,
//! `Prompt`, `Approve`, `Edit`, `Deny`, `Timeout`, `Cancel`), so the trace shows it.

use super::routing::Decided;
use crate::coordinator::engine::{Engine, SessionKeys};
use crate::coordinator::event::Event;
use crate::coordinator::state::RequestId;
use crate::profile::RuleDecision;
use lazaret_protocol::escalation::{Decision, EscalationPrompt, Outcome, SignedRequest};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

/// How often a waiting decision looks at the session's cancellation.
const TICK: Duration = Duration::from_millis(50);

/// An accepted request on its way to a decision.
pub struct Pending<'a> {
    pub req: &'a SignedRequest,
    /// The request in the protocol core.
    pub model: RequestId,
    /// Its ID as minted by the coordinator (`request_ids`): what the developer decides by.
    pub shown_id: &'a str,
    /// The host program `argv[0]` resolved to (empty: none).
    pub program: &'a str,
    pub keys: &'a SessionKeys,
    /// What the escalation rules decided.
    pub rule: RuleDecision,
    /// The host directory the command would run in, as resolved when the request came.
    pub host_cwd: &'a Path,
    /// What the developer must know before approving (see `admission`); never auto-approved.
    pub warnings: &'a [String],
    pub deadline: Instant,
}

/// What was decided.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Run this argv; `edited` when the developer changed it.
    Run { argv: Vec<String>, edited: bool },
    /// Not run; the result says why.
    End(Outcome, String),
}

/// Decides `p`: auto-approval, else a prompt on the session's terminal.
pub fn decide(engine: &Engine, p: &Pending<'_>) -> Verdict {
    let step = |event| engine.escalation_step(event);
    let request = p.model;
    let asked = &p.req.body.argv;
    match p.rule {
        RuleDecision::Approve => {
            step(Event::AutoApprove { request });
            return Verdict::Run {
                argv: asked.clone(),
                edited: false,
            };
        }
        RuleDecision::Deny => {
            step(Event::Cancel { request });
            return Verdict::End(
                Outcome::Denied,
                "a rule of the host configuration denies this command".into(),
            );
        }
        RuleDecision::Ask => {}
    }
    if !p.keys.tty {
        step(Event::Cancel { request });
        let why = if p.warnings.is_empty() {
            "no auto-approval rule matches".to_owned()
        } else {
            format!("not auto-approved: {}", p.warnings.join("; "))
        };
        return Verdict::End(
            Outcome::Denied,
            format!("{why}; and the session has no terminal to ask on (lazaret exec)"),
        );
    }
    // One prompt at a time per terminal; later requests wait their turn within their deadline.
    let terminal = p.keys.terminal.clone();
    let Some(_owned) = wait_for_terminal(&terminal, p) else {
        return ended_waiting(engine, p);
    };
    let (reply, answer) = std::sync::mpsc::channel();
    let body = &p.req.body;
    let prompt = EscalationPrompt {
        request_id: p.shown_id.to_owned(),
        profile: engine.config.profile.clone(),
        session_id: body.session_id.clone(),
        argv: asked.clone(),
        program: p.program.to_owned(),
        cwd: body.cwd.clone(),
        host_cwd: p.host_cwd.display().to_string(),
        justification: body.justification.clone(),
        timeout_secs: secs_left(p.deadline),
        warnings: p.warnings.to_vec(),
    };
    // The core's `ShowPrompt` shows it, its `OfferPrompt`s offer it to the viewers that see
    // it, and every way out below withdraws it through the core's `WithdrawPrompt`.
    engine.edges().stage_prompt(request, prompt, reply);
    if !step(Event::Prompt { request }) {
        return Verdict::End(Outcome::Cancelled, "the session ended".into());
    }
    let ended = || {
        Verdict::End(
            Outcome::Cancelled,
            "the session ended before a decision".into(),
        )
    };
    loop {
        let left = p.deadline.saturating_duration_since(Instant::now());
        match answer.recv_timeout(left.min(TICK)) {
            Ok(d) => return decided(engine, p, d),
            // Nobody can answer any more (the session's prompt route is gone).
            Err(RecvTimeoutError::Disconnected) => {
                step(Event::Cancel { request });
                return ended();
            }
            // The session ended: its `Leave` dropped the request and withdrew the prompt; a
            // `Cancel` is still taken, should the session be ending but not gone yet.
            Err(RecvTimeoutError::Timeout) if p.keys.cancel.load(Ordering::SeqCst) => {
                step(Event::Cancel { request });
                return ended();
            }
            Err(RecvTimeoutError::Timeout) if left.is_zero() => {
                step(Event::Timeout { request });
                return Verdict::End(
                    Outcome::TimedOut,
                    "no decision in time (see --timeout)".into(),
                );
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}

fn decided(engine: &Engine, p: &Pending<'_>, decided: Decided) -> Verdict {
    let request = p.model;
    let Decided {
        decision,
        by,
        recorded,
    } = decided;
    let asked = &p.req.body.argv;
    let (event, verdict) = match (decision.validate(), decision) {
        (Err(e), _) => (
            Event::Deny { request, by },
            Verdict::End(
                Outcome::Denied,
                format!("the edited command is invalid: {e}"),
            ),
        ),
        (Ok(()), Decision::Approve {}) => (
            Event::Approve { request, by },
            Verdict::Run {
                argv: asked.clone(),
                edited: false,
            },
        ),
        (Ok(()), Decision::Edit { argv }) => {
            let edited = argv != *asked;
            let event = if edited {
                Event::Edit { request, by }
            } else {
                Event::Approve { request, by }
            };
            (event, Verdict::Run { argv, edited })
        }
        (Ok(()), Decision::Deny {}) => (
            Event::Deny { request, by },
            Verdict::End(Outcome::Denied, "the developer denied it".into()),
        ),
    };
    let taken = engine.escalation_step(event);
    if let Some(recorded) = recorded {
        let _ = recorded.send(taken);
    }
    if taken {
        return verdict;
    }
    // The core refused the decision (its decider no longer sees the prompt, or the session
    // left): nothing the core did not record runs. The request ends; its prompt is withdrawn.
    engine.escalation_step(Event::Cancel { request });
    Verdict::End(
        Outcome::Cancelled,
        "the decision could not be recorded (the client that decided, or the session, went \
         away first); nothing ran"
            .into(),
    )
}

/// Whole seconds until `deadline`, at least 1.
fn secs_left(deadline: Instant) -> u32 {
    let left = deadline.saturating_duration_since(Instant::now()).as_secs();
    u32::try_from(left).unwrap_or(u32::MAX).max(1)
}

/// Takes the session's terminal for a prompt, waiting while another prompt holds it.
fn wait_for_terminal<'t>(terminal: &'t Mutex<()>, p: &Pending<'_>) -> Option<MutexGuard<'t, ()>> {
    loop {
        match terminal.try_lock() {
            Ok(g) => return Some(g),
            Err(TryLockError::Poisoned(g)) => return Some(g.into_inner()),
            Err(TryLockError::WouldBlock) => {}
        }
        if Instant::now() >= p.deadline || p.keys.cancel.load(Ordering::SeqCst) {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The request ended while waiting for the terminal: timed out, or its session left.
fn ended_waiting(engine: &Engine, p: &Pending<'_>) -> Verdict {
    engine.escalation_step(Event::Cancel { request: p.model });
    if p.keys.cancel.load(Ordering::SeqCst) {
        Verdict::End(
            Outcome::Cancelled,
            "the session ended before a decision".into(),
        )
    } else {
        Verdict::End(
            Outcome::TimedOut,
            "no decision in time: another request of this session held the prompt".into(),
        )
    }
}

#[cfg(test)]
#[path = "approval_tests.rs"]
mod tests;
