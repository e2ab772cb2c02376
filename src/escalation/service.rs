//! The coordinator's escalation loop: take each request record from the mailbox, verify it
//! (strict parse, Session Anchor signature, this Domain, a registered session, fresh, not seen
//! before), decide, run approved commands on the host, and deliver one result per accepted
//! request. Unverifiable records get no result — nothing in them can be trusted, not even
//! where to answer — only a log line saying why they were rejected.

use super::admission::{self, Admission};
use super::approval::{self, Pending, Verdict};
use super::arrivals::{Arrivals, Pace, Stop, Woken, SAFETY_LOOK};
use super::assess::{self, Assessed};
use super::mailbox::Mailbox;
use super::replay::Seen;
use super::repository::{self, Protected};
use crate::coordinator::driver_edges::ResultWriter;
use crate::coordinator::effect::Effect;
use crate::coordinator::engine::{Engine, SessionKeys};
use crate::coordinator::event::Event;
use crate::coordinator::state::RequestId;
use crate::profile::{AutoApproveRule, RuleDecision};
use lazaret_protocol::escalation::{EscalationResult, Outcome, SignedRequest, MAX_REQUEST_BYTES};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How far a request's creation time may lie from the coordinator's clock.
const MAX_AGE: Duration = Duration::from_secs(60);
const MAX_AHEAD: Duration = Duration::from_secs(5);
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
    /// Whether the profile lets the clipboard shim read the host clipboard's image.
    pub image_paste: bool,
    /// The next request number in the protocol core.
    pub next_model_id: std::sync::atomic::AtomicU64,
    /// The IDs the developer decides by (never the sandbox's).
    pub ids: super::request_ids::RequestIds,
    /// The Domain's git boundary (a repository workspace).
    pub boundary: Option<crate::runtime::git_boundary::Boundary>,
}

/// A request's numbers: in the protocol core, and the ID the developer decides by.
#[derive(Clone, Copy)]
struct Ids<'a> {
    model: RequestId,
    shown: &'a str,
}

fn now_ms() -> u64 {
    crate::coordinator::status::now_unix_ms()
}

impl Service {
    /// Runs until `stop` is set: looks at the request dir whenever it changes (see
    /// [`super::arrivals`]).
    pub fn run(self, stop: &Stop) {
        let me = Arc::new(self);
        // The repository host git may run in, as the Git Sentry protected it at the start.
        let protected = Arc::new(repository::discover(&me.workspace));
        let mut seen = Seen::new(MAX_AGE + MAX_AHEAD);
        let mut last_cleanup = Instant::now();
        let arrivals = match me.mailbox.open_req() {
            Ok(dir) => Arrivals::watch(dir.as_fd()),
            Err(e) => {
                tracing::error!("opening the escalation request dir: {e:#}");
                return;
            }
        };
        let mut pace = Pace::new(Instant::now());
        while !stop.is_set() {
            // Junk first (bounded per poll), then the records that are left (SR-14).
            match me.mailbox.sweep() {
                Ok(sweep) => {
                    for (name, why) in &sweep.named {
                        tracing::warn!(record = %name, "rejected escalation record: {why}");
                    }
                    if sweep.removed > sweep.named.len() {
                        tracing::warn!(
                            removed = sweep.removed,
                            deferred = sweep.deferred,
                            reasons = ?sweep.reasons,
                            "removed entries from the escalation request dir that are not \
                             well-formed requests"
                        );
                    }
                    for name in sweep.records {
                        me.accept(&name, &mut seen, &protected);
                    }
                }
                Err(e) => tracing::error!("reading the escalation request dir: {e:#}"),
            }
            if last_cleanup.elapsed() > Duration::from_secs(30) {
                me.mailbox.forget_old_results(Duration::from_secs(300));
                seen.forget_expired();
                last_cleanup = Instant::now();
            }
            if arrivals.wait(stop, SAFETY_LOOK) == Woken::Stopped {
                break;
            }
            // A busy dir is looked at no more often than every MIN_PERIOD.
            let wait = pace.next(Instant::now());
            if !wait.is_zero() {
                std::thread::sleep(wait);
            }
        }
        // Closing an inotify instance waits for the kernel's SRCU grace period (10–20 ms
        // measured): not on the teardown's path, which joins this thread (issue #18).
        let _ = std::thread::Builder::new()
            .name("inotify-close".into())
            .spawn(move || drop(arrivals));
    }

    fn accept(
        self: &Arc<Self>,
        name: &str,
        seen: &mut Seen,
        protected: &Arc<Result<Protected, String>>,
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
        let cli = session.cli;
        let signature_valid = req.verify(&session.anchor);
        if let Err(e) = signature_valid {
            let request = self.model_id();
            let submitted = self.engine.escalation_step(Event::Submit {
                request,
                cli,
                signature_valid: false,
                rule_match: false,
            });
            if submitted {
                self.engine.escalation_step(Event::Reject { request });
            }
            return rejected(&format!("signature: {e}"));
        }
        let now = now_ms();
        let age = now.saturating_sub(body.created_unix_ms);
        let ahead = body.created_unix_ms.saturating_sub(now);
        if age > MAX_AGE.as_millis() as u64 || ahead > MAX_AHEAD.as_millis() as u64 {
            return rejected("stale (created too long ago, or in the future)");
        }
        if let Err(why) = seen.admit(&body.request_id) {
            return rejected(why);
        }
        if super::image_paste::is_paste_request(&body.argv) {
            // Not a Host Escalation: answered here, by the developer's paste key alone. It
            // counts against the same bound as escalations, so a flood of paste requests
            // cannot start a thread each.
            let done = seen.pending_flag(&body.request_id);
            if self.in_flight.fetch_add(1, Ordering::SeqCst) >= MAX_IN_FLIGHT {
                self.in_flight.fetch_sub(1, Ordering::SeqCst);
                seen.finish(&body.request_id);
                let res = EscalationResult::new(
                    &body.request_id,
                    Outcome::Denied,
                    "too many requests at once in this Domain; try again",
                );
                self.deliver_paste(&session, &req.sig, res);
                return;
            }
            let me = self.clone();
            let req = req.clone();
            std::thread::spawn(move || {
                me.answer_paste(&req, &session);
                me.in_flight.fetch_sub(1, Ordering::SeqCst);
                done.store(true, Ordering::SeqCst);
            });
            return;
        }
        let shown_id = match self.ids.mint() {
            Ok(id) => id,
            Err(e) => return rejected(&format!("minting its request ID: {e}")),
        };
        let model = self.model_id();
        let assessed = assess::assess(
            &self.workspace,
            &self.rules,
            protected,
            &body.argv,
            &body.cwd,
        );
        let rule_match = assessed.rule() == Some(RuleDecision::Approve);
        let admitted = [
            Event::Submit {
                request: model,
                cli,
                signature_valid: true,
                rule_match,
            },
            Event::Authenticate { request: model },
        ]
        .into_iter()
        .all(|ev| self.engine.escalation_step(ev))
            && self.correlate(model);
        if !admitted {
            return rejected(
                "the Domain is not ready for it (starting or stopping), or its session left",
            );
        }
        tracing::info!(
            session = %body.session_id,
            request = %shown_id,
            mailbox_name = %body.request_id,
            argv = ?body.argv,
            cwd = %body.cwd,
            justification = %body.justification,
            "escalation request accepted"
        );
        // Accepted: from here on the request gets a result (OR-2). Its edge carries out the
        // core's effects on it (prompts, its host process, its result) until then.
        let kill = self
            .engine
            .edges()
            .open(model, &shown_id, session.prompts.clone());
        let deadline = Instant::now() + Duration::from_secs(u64::from(body.timeout_secs));
        if self.in_flight.fetch_add(1, Ordering::SeqCst) >= MAX_IN_FLIGHT {
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            seen.finish(&body.request_id);
            self.engine
                .escalation_step(Event::Cancel { request: model });
            let res = EscalationResult::new(
                &body.request_id,
                Outcome::Denied,
                "too many escalation requests at once in this Domain; try again",
            );
            self.deliver(model, &session, &req.sig, res);
            return;
        }
        let me = self.clone();
        let req = req.clone();
        let protected = protected.clone();
        let done = seen.pending_flag(&body.request_id);
        std::thread::spawn(move || {
            let ids = Ids {
                model,
                shown: &shown_id,
            };
            me.decide_and_run(&req, ids, &session, assessed, &protected, deadline, &kill);
            me.in_flight.fetch_sub(1, Ordering::SeqCst);
            done.store(true, Ordering::SeqCst);
        });
    }

    /// Answers the clipboard shim's paste request: the host clipboard's image when the
    /// developer just pressed the paste key in the requesting session, else a refusal.
    fn answer_paste(&self, req: &SignedRequest, keys: &SessionKeys) {
        use super::image_paste::{answer, read_host_clipboard, Answer};
        let body = &req.body;
        let pressed = self
            .engine
            .paste_keys
            .take_read(&body.session_id, Instant::now());
        let res = match answer(self.image_paste, pressed, read_host_clipboard) {
            Answer::Image(bytes) => {
                tracing::info!(session = %body.session_id, bytes = bytes.len(), "image pasted into the sandbox");
                EscalationResult::completed(&body.request_id, 0, &bytes, b"", false)
            }
            Answer::Refused(why) => {
                tracing::info!(session = %body.session_id, "image paste refused: {why}");
                EscalationResult::new(&body.request_id, Outcome::Denied, &why)
            }
        };
        self.deliver_paste(keys, &req.sig, res);
    }

    /// Signs and writes a paste request's result (outside the protocol core: no escalation).
    fn deliver_paste(&self, keys: &SessionKeys, request_sig: &str, mut res: EscalationResult) {
        res.sign(&keys.anchor, request_sig);
        if let Err(e) = self.mailbox.deliver(&res.request_id, &res.to_bytes()) {
            tracing::error!(request = %res.request_id, "delivering the paste result: {e}");
        }
    }

    /// TLA+ `Correlate`: its `RouteRequest` is this service's to carry out — the request goes
    /// on to be decided for its owning session (FR-5). False when refused.
    fn correlate(&self, request: RequestId) -> bool {
        match self.engine.step(Event::Correlate { request }) {
            Ok(handed) => {
                let routed = handed
                    .iter()
                    .all(|e| matches!(e, Effect::RouteRequest { request: r, .. } if *r == request));
                if !routed {
                    tracing::error!(?handed, "Correlate handed back effects nobody carries out");
                }
                true
            }
            Err(_) => false,
        }
    }

    /// A fresh request number for the protocol core.
    fn model_id(&self) -> RequestId {
        RequestId(self.next_model_id.fetch_add(1, Ordering::SeqCst))
    }

    /// Writes the result (TLA+ `Deliver` to the owner). A request whose session has gone ended
    /// with it (OR-3); its result is still written, so that a client left behind in the sandbox
    /// stops waiting.
    /// The result is signed with the session's anchor over the request's signature, so the
    /// client can tell it came from here for that very request (SR-8).
    fn deliver(
        &self,
        model: RequestId,
        keys: &SessionKeys,
        request_sig: &str,
        mut res: EscalationResult,
    ) {
        res.sign(&keys.anchor, request_sig);
        tracing::info!(request = %res.request_id, outcome = ?res.outcome, ran = ?res.ran_argv, "escalation result");
        let mailbox = self.mailbox.clone();
        let write: ResultWriter = Box::new(move || {
            if let Err(e) = mailbox.deliver(&res.request_id, &res.to_bytes()) {
                tracing::error!(request = %res.request_id, "delivering the escalation result: {e}");
            }
        });
        let edges = self.engine.edges();
        edges.stage_result(model, write);
        // The core's `DeliverResult` writes it. Refused: the session left and the request went
        // with it (OR-3); the result is written all the same (not a delivery of the protocol),
        // so that a client left behind in the sandbox stops waiting.
        if !self.engine.escalation_step(Event::Deliver {
            request: model,
            cli: keys.cli,
        }) {
            if let Some(write) = edges.unstaged_result(model) {
                write();
            }
        }
        edges.close(model);
    }

    fn boundary_round(&self, is_git: bool) {
        if let (true, Some(b)) = (is_git, &self.boundary) {
            if let Err(e) = b.round() {
                tracing::warn!("git boundary, around an escalated git: {e}");
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn decide_and_run(
        &self,
        req: &SignedRequest,
        ids: Ids<'_>,
        keys: &SessionKeys,
        assessed: Assessed,
        protected: &Result<Protected, String>,
        deadline: Instant,
        kill: &Arc<AtomicBool>,
    ) {
        let body = &req.body;
        let id = body.request_id.as_str();
        let model = ids.model;
        let step = |event| self.engine.escalation_step(event);
        let refused = |why: &str| {
            step(Event::Cancel { request: model });
            EscalationResult::new(id, Outcome::Denied, why)
        };
        let res =
            match (assessed.workdir, assessed.admission) {
                (Err(why), _) | (_, Admission::Deny(why)) => refused(&why),
                (Ok(workdir), Admission::Decide { rule, mut warnings }) => {
                    // Where git would push or fetch, as the host's own configuration says.
                    let dest = |exe: &Result<super::executable::Executable, String>,
                                argv: &[String]| {
                        match exe {
                            Ok(e) if e.is_git => super::remote::destination(
                                &e.path,
                                &super::service_exec::host_env(protected),
                                argv,
                                &self.workspace,
                                &workdir.host_path,
                            ),
                            _ => None,
                        }
                    };
                    match dest(&assessed.exe, &body.argv) {
                        Some(Err(why)) => {
                            self.deliver(model, keys, &req.sig, refused(&why));
                            return;
                        }
                        Some(Ok(note)) => warnings.push(note),
                        None => {}
                    }
                    let program = match &assessed.exe {
                        Ok(e) => e.path.display().to_string(),
                        Err(_) => String::new(),
                    };
                    let pending = Pending {
                        req,
                        model,
                        shown_id: ids.shown,
                        program: &program,
                        keys,
                        rule,
                        host_cwd: &workdir.host_path,
                        warnings: &warnings,
                        deadline,
                    };
                    match approval::decide(&self.engine, &pending) {
                        Verdict::End(outcome, why) => EscalationResult::new(id, outcome, &why),
                        Verdict::Run { argv, edited } => {
                            // An edited command is resolved and checked again.
                            let exe = if edited {
                                assess::resolve(&argv[0], &self.workspace)
                            } else {
                                assessed.exe
                            };
                            let is_git = matches!(&exe, Ok(e) if e.is_git);
                            let may = admission::git_may_run(&exe, &argv, &assessed.place)
                                .and_then(|()| match dest(&exe, &argv) {
                                    Some(Err(why)) => Err(why),
                                    _ => Ok(()),
                                });
                            match may {
                                Err(why) => refused(&why),
                                Ok(()) => {
                                    // The agent's commits reach the host's references before
                                    // host git runs, what it fetched reaches the sandbox after.
                                    self.boundary_round(is_git);
                                    let res = self.execute(
                                        model, id, &exe, argv, edited, &workdir, protected,
                                        deadline, kill,
                                    );
                                    self.boundary_round(is_git);
                                    res
                                }
                            }
                        }
                    }
                }
            };
        self.deliver(model, keys, &req.sig, res);
    }
}
