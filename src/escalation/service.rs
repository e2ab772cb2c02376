//! The coordinator's escalation loop: take each request record from the mailbox, verify it
//! (strict parse, Session Anchor signature, this Domain, a registered session, fresh, not seen
//! before), decide, run approved commands on the host, and deliver one result per accepted
//! request. Unverifiable records get no result — nothing in them can be trusted, not even
//! where to answer — only a log line saying why they were rejected.

use super::host_exec::{self, Ended};
use super::mailbox::Mailbox;
use super::rules;
use crate::coordinator::engine::Engine;
use crate::profile::AutoApproveRule;
use lazaret_protocol::escalation::{EscalationResult, Outcome, SignedRequest, MAX_REQUEST_BYTES};
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How far a request's creation time may lie from the coordinator's clock.
const MAX_AGE: Duration = Duration::from_secs(60);
const MAX_AHEAD: Duration = Duration::from_secs(5);
/// How often the request dir is looked at (the client polls its result just as often).
const POLL: Duration = Duration::from_millis(3);
/// Requests of a Domain being decided or run at once; more are denied, not queued.
const MAX_IN_FLIGHT: usize = 32;

/// What the service needs of its Domain.
pub struct Service {
    pub engine: Arc<Engine>,
    /// Requests being decided or run now.
    pub in_flight: std::sync::atomic::AtomicUsize,
    pub mailbox: Mailbox,
    pub workspace: PathBuf,
    pub rules: Vec<AutoApproveRule>,
}

fn now_ms() -> u64 {
    crate::coordinator::status::now_unix_ms()
}

impl Service {
    /// Runs until `stop` is set.
    pub fn run(self, stop: &AtomicBool) {
        let me = Arc::new(self);
        let mut seen: HashMap<String, Instant> = HashMap::new();
        let mut order: VecDeque<String> = VecDeque::new();
        let mut last_cleanup = Instant::now();
        while !stop.load(Ordering::SeqCst) {
            for name in me.mailbox.pending() {
                me.accept(&name, &mut seen, &mut order);
            }
            if last_cleanup.elapsed() > Duration::from_secs(30) {
                me.mailbox.forget_old_results(Duration::from_secs(300));
                // Replays older than MAX_AGE are refused as stale anyway.
                while let Some(id) = order.front() {
                    if seen.get(id).is_some_and(|t| t.elapsed() > 2 * MAX_AGE) {
                        seen.remove(id);
                        order.pop_front();
                    } else {
                        break;
                    }
                }
                last_cleanup = Instant::now();
            }
            std::thread::sleep(POLL);
        }
    }

    fn accept(
        self: &Arc<Self>,
        name: &str,
        seen: &mut HashMap<String, Instant>,
        order: &mut VecDeque<String>,
    ) {
        let rejected =
            |why: &str| tracing::warn!(record = name, "rejected escalation record: {why}");
        let bytes = match self.mailbox.take(name, MAX_REQUEST_BYTES) {
            Ok(b) => b,
            Err(why) => return rejected(&why),
        };
        let req = match SignedRequest::parse(&bytes) {
            Ok(r) => r,
            Err(e) => return rejected(&e.to_string()),
        };
        let body = &req.body;
        if name != format!("{}.json", body.request_id) {
            return rejected("its file name is not its request id");
        }
        if body.domain_id != self.engine.domain_id().as_str() {
            return rejected("it is for another Domain");
        }
        let Some(session) = self.engine.session_keys(&body.session_id) else {
            return rejected("its session is not registered here (ended, or another Domain's)");
        };
        if let Err(e) = req.verify(&session.anchor) {
            return rejected(&format!("signature: {e}"));
        }
        let now = now_ms();
        let age = now.saturating_sub(body.created_unix_ms);
        let ahead = body.created_unix_ms.saturating_sub(now);
        if age > MAX_AGE.as_millis() as u64 || ahead > MAX_AHEAD.as_millis() as u64 {
            return rejected("stale (created too long ago, or in the future)");
        }
        if seen.contains_key(&body.request_id) {
            return rejected("replayed (this request id was seen before)");
        }
        seen.insert(body.request_id.clone(), Instant::now());
        order.push_back(body.request_id.clone());
        tracing::info!(
            session = %body.session_id,
            request = %body.request_id,
            argv = ?body.argv,
            cwd = %body.cwd,
            "escalation request accepted"
        );
        // Accepted: from here on the request gets a result (OR-2).
        if self.in_flight.fetch_add(1, Ordering::SeqCst) >= MAX_IN_FLIGHT {
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            let res = EscalationResult::new(
                &body.request_id,
                Outcome::Denied,
                "too many escalation requests at once in this Domain; try again",
            );
            let _ = self.mailbox.deliver(&body.request_id, &res.to_bytes());
            return;
        }
        let me = self.clone();
        let req = req.clone();
        std::thread::spawn(move || {
            me.decide_and_run(&req, &session.cancel, session.tty);
            me.in_flight.fetch_sub(1, Ordering::SeqCst);
        });
    }

    fn decide_and_run(&self, req: &SignedRequest, cancel: &Arc<AtomicBool>, tty: bool) {
        let body = &req.body;
        let id = body.request_id.as_str();
        let res = if rules::matching(&self.rules, &body.argv).is_none() {
            let why = if tty {
                "no auto-approval rule matches, and interactive approval is not available yet"
            } else {
                "no auto-approval rule matches and the session has no terminal to ask on (lazaret exec)"
            };
            EscalationResult::new(id, Outcome::Denied, why)
        } else {
            match host_exec::host_cwd(&self.workspace, &body.cwd) {
                Err(why) => EscalationResult::new(id, Outcome::Denied, &why),
                Ok(cwd) => {
                    let timeout = Duration::from_secs(u64::from(body.timeout_secs));
                    let run = host_exec::run(&body.argv, &cwd, timeout, cancel);
                    let res = match run.ended {
                        Ended::Exited(c) => EscalationResult::completed(
                            id,
                            c,
                            &run.stdout,
                            &run.stderr,
                            run.truncated,
                        ),
                        Ended::TimedOut => EscalationResult::new(
                            id,
                            Outcome::TimedOut,
                            "the host command timed out and was killed",
                        ),
                        Ended::Cancelled => EscalationResult::new(
                            id,
                            Outcome::Cancelled,
                            "the session ended; the host command was killed",
                        ),
                        Ended::Failed(why) => EscalationResult::new(id, Outcome::Failed, &why),
                    };
                    // `ran_argv` reports an edit by the developer; git's hardening options are
                    // not one (documented), so what the rule approved is what is reported.
                    tracing::debug!(request = %id, ran = ?run.ran_argv, "host command ran");
                    res
                }
            }
        };
        tracing::info!(request = %id, outcome = ?res.outcome, "escalation result");
        // A request whose session has gone ended with it (OR-3); the `cancelled` result is still
        // written, so that a client left behind in the sandbox stops waiting.
        if let Err(e) = self.mailbox.deliver(id, &res.to_bytes()) {
            tracing::error!(request = %id, "delivering the escalation result: {e}");
        }
    }
}
