//! One Client Session (`lazaret run`, `lazaret exec`): join the Domain's Session Coordinator —
//! starting it when none runs — register, run the command in the shared Agent Sandbox, leave.

use crate::coordinator::client::Registration;
use crate::coordinator::launch;
use crate::coordinator::session_api::{Attached, DomainSession, Prompter};
use crate::domain::layout::Layout;
use crate::domain::Domain;
use crate::profile::AgentProfile;
use crate::runtime::runsc_exec::RunscExec;
use crate::runtime::sandbox::{self, ExecRequest};
use crate::runtime::sandbox_fate::{Fate, Target};
use crate::terminal::cancel::Cancel;
use crate::terminal::gate::TerminalGate;
use crate::terminal::prompt::TerminalPrompter;
use anyhow::{bail, Context};
use lazaret_protocol::held::HeldEntry;
use lazaret_ui::terminal::failure_card::FailureCards;
use lazaret_ui::terminal::held_card::{Choice, HeldCards};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What `lazaret run` was asked to do.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub profile: Option<String>,
    /// Empty: the profile's default command.
    pub command: Vec<String>,
    /// `--linger`: how long a Domain this run starts stays up after its last session (seconds).
    pub linger: Option<u64>,
}

/// How long the last session waits for the coordinator to finish tearing down.
pub const TEARDOWN_WAIT: Duration = Duration::from_secs(60);

/// Lazaret refuses to run as root (SR-1): rootless operation is part of the isolation.
pub fn refuse_root() -> anyhow::Result<()> {
    if nix::unistd::geteuid().is_root() {
        bail!(
            "refusing to run as root: Lazaret runs agents in a rootless sandbox (SR-1). Run it as \
             your normal user; to set up a machine as root, use scripts/setup, which creates an \
             unprivileged user (e.g. runuser -u lazaret -- lazaret run)"
        );
    }
    Ok(())
}

/// Runs `program args` for an embedding UI (a `lazaret tui` pane) and returns its status.
pub type Runner = Box<dyn FnOnce(&str, &[String], &Cancel) -> anyhow::Result<i32> + Send>;

/// How the command is attached.
pub enum Attach {
    /// A PTY on the developer's terminal.
    Terminal,
    /// Inherited stdin/stdout/stderr.
    Pipes,
    /// No stdin; stdout and stderr into these files (`lazaret exec`).
    Capture {
        stdout: std::fs::File,
        stderr: std::fs::File,
    },
    /// A terminal the caller emulates (a `lazaret tui` pane): its own PTY runner, its own
    /// escalation prompter, and `started` told the Session ID once registered.
    Embedded {
        run: Runner,
        prompter: Arc<dyn Prompter>,
        started: Box<dyn FnOnce(&str) + Send>,
    },
}

/// A command to run in the Domain of the current workspace.
pub struct SessionPlan {
    pub domain: Domain,
    pub profile: AgentProfile,
    pub fingerprint: String,
    pub command: Vec<String>,
    /// `lazaret run --linger` (seconds), for a Domain this run starts.
    pub linger: Option<u64>,
}

impl SessionPlan {
    pub fn new(layout: &Layout, opts: &RunOptions) -> anyhow::Result<SessionPlan> {
        let cwd = std::env::current_dir().context("reading the current directory")?;
        SessionPlan::in_dir(layout, opts, &cwd)
    }

    /// As [`Self::new`], for the workspace around `cwd` instead of the current directory.
    pub fn in_dir(
        layout: &Layout,
        opts: &RunOptions,
        cwd: &std::path::Path,
    ) -> anyhow::Result<SessionPlan> {
        refuse_root()?;
        let config = crate::config::HostConfig::load(layout)?;
        let profile = config.profile(opts.profile.as_deref())?;
        let cwd = cwd.to_path_buf();
        let domain = Domain::resolve(layout, &profile.name, &cwd)?;
        let mut mounted: Vec<&std::path::Path> = vec![&domain.workspace.root];
        mounted.extend(profile.volumes.iter().map(|v| v.host.as_path()));
        config.check_outside(&mounted)?;
        domain.prepare_dirs(layout)?;
        if std::fs::symlink_metadata(domain.workspace.root.join(".git")).is_err() {
            crate::say!(
                "lazaret: note: {} is not a Git repository: no Git Sentry protections or Ignored \
                 Workspace State apply; a repository created inside (git init) is renamed aside \
                 when the run ends (see docs/git-sentry.md)",
                domain.workspace.root.display()
            );
        }
        let command = if opts.command.is_empty() {
            profile.command.clone()
        } else {
            opts.command.clone()
        };
        Ok(SessionPlan {
            fingerprint: profile.fingerprint(),
            domain,
            profile,
            command,
            linger: opts.linger,
        })
    }

    /// Runs `program args` attached as asked; returns the command's status and the Session ID.
    pub fn run(&self, attach: Attach) -> anyhow::Result<(i32, String)> {
        let t0 = Instant::now();
        let reg = Registration {
            domain: &self.domain,
            profile: &self.profile.name,
            fingerprint: &self.fingerprint,
            linger: self.linger,
        };
        // Domain failures already known are not this run's news (see `new_failures`): read
        // before joining, so that what a Domain this run starts reports at once (a sign-in
        // port already taken, issue #32) is this run's news.
        let known_failures = self.domain_failures();
        let mut session: Box<dyn DomainSession> = Box::new(launch::join_or_start(&reg)?);
        let session_id = session.session_id().as_str().to_owned();
        tracing::info!(
            domain = %self.domain.id,
            session = %session_id,
            ms = t0.elapsed().as_millis() as u64,
            "session registered"
        );
        let tty = matches!(attach, Attach::Terminal | Attach::Embedded { .. });
        let embedded = matches!(attach, Attach::Embedded { .. });
        let workdir = self.domain.workspace.sandbox_cwd().display().to_string();
        let sandbox_name = session.attach(&self.command, &workdir, tty)?;
        crate::profile_setup::ensure(&self.domain, &self.profile, &sandbox_name)?;
        let req = ExecRequest {
            command: self.command.clone(),
            workdir,
            tty,
            // A pane of `lazaret tui` is an xterm-like emulator, whatever hosts the TUI.
            term: tty.then(|| match &attach {
                Attach::Embedded { .. } => "xterm-256color".into(),
                _ => std::env::var("TERM").unwrap_or_else(|_| "xterm-256color".into()),
            }),
            env: crate::escalation::mailbox::session_env(
                &self.domain.id,
                session.session_id(),
                session.session_anchor(),
            ),
        };
        let direct_ok = matches!(attach, Attach::Terminal | Attach::Pipes);
        let (program, args, direct) = self.exec_command(&sandbox_name, &req, direct_ok);
        // What became of the sandbox is asked after a failure status (issue #19): runsc's
        // state, whichever way the command went in.
        let fate_of = direct
            .as_ref()
            .map(Target::of)
            .or_else(|| Target::published(&self.domain.runtime_dir));
        let direct = direct.is_some();
        // On a terminal, escalation prompts take it over from the sandbox session for a while.
        let gate = Arc::new(TerminalGate::new(self.profile.terminal));
        let access = self.profile.terminal;
        // Under `default = "ask"`, so does the card of a destination the sidecar starts holding
        // (issue #17); it closes when the command ends (dropped).
        let held_cards = self.held_cards(&attach, &gate);
        if let Some(cards) = &held_cards {
            session.watch_held(Arc::new(cards.sink()));
        }
        // On a terminal, a failure the Domain reports while the command runs gets a card at
        // once (issue #19); the end of the run repeats it.
        let failure_cards = matches!(attach, Attach::Terminal)
            .then(|| FailureCards::start(gate.clone(), &known_failures));
        let (attach, prompter): (Attach, Option<Arc<dyn Prompter>>) = match attach {
            Attach::Terminal => (
                Attach::Terminal,
                Some(Arc::new(TerminalPrompter::new(gate.clone()))),
            ),
            Attach::Embedded {
                run,
                prompter,
                started,
            } => {
                started(&session_id);
                (
                    Attach::Embedded {
                        run,
                        prompter: prompter.clone(),
                        started: Box::new(|_| {}),
                    },
                    Some(prompter),
                )
            }
            other => (other, None),
        };
        let run = Box::new(move |cancel: Cancel| match attach {
            Attach::Terminal => {
                crate::terminal::passthrough::run_in_pty(&program, &args, &cancel, gate)
            }
            Attach::Pipes if direct => {
                crate::terminal::passthrough::run_relayed(&program, &args, &cancel, access)
            }
            Attach::Pipes => {
                crate::terminal::passthrough::run_with_pipes(&program, &args, &cancel, access)
            }
            Attach::Capture { stdout, stderr } => {
                crate::terminal::passthrough::run_captured(&program, &args, &cancel, stdout, stderr)
            }
            Attach::Embedded { run, .. } => run(&program, &args, &cancel),
        });
        // Git Sentry watches the workspace's git control files while the command runs.
        let watching = Arc::new(crate::wake::WakeFlag::new());
        let watcher = {
            let (ws, stop) = (self.domain.workspace.root.clone(), watching.clone());
            let store = crate::runtime::git_sentry::guard::store_of(&self.domain);
            std::thread::spawn(move || crate::runtime::git_sentry::guard::watch(&ws, &store, &stop))
        };
        let failure_watch = failure_cards.as_ref().map(|cards| {
            let status = crate::coordinator::paths::status(&self.domain);
            let (stop, sink) = (watching.clone(), cards.sink());
            std::thread::spawn(move || {
                crate::coordinator::status_watch::watch(&status, &stop, &sink);
            })
        });
        let boundary_log = crate::runtime::git_boundary::log_len(&self.domain);
        let outcome = session.run_attached(run, prompter);
        drop(held_cards);
        watching.set();
        if let Some(w) = failure_watch {
            let _ = w.join();
        }
        drop(failure_cards);
        let watched = watcher.join().unwrap_or_default();
        self.tell(&watched, embedded);
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                self.git_sentry_after_run(embedded);
                return Err(e);
            }
        };
        match outcome {
            Attached::Exited(code) => {
                tracing::info!(code, "command ended");
                self.tell(&self.new_failures(&known_failures), embedded);
                // Before leaving: the last session's leave removes the sandbox, and with it
                // what Podman recorded of its end.
                let stopped = fate_of.as_ref().and_then(|target| {
                    let memory = self.profile.limits.memory;
                    match crate::runtime::sandbox_fate::after_command(
                        target,
                        &sandbox_name,
                        memory,
                        code,
                    ) {
                        Fate::Running => None,
                        Fate::Stopped(why) => Some(why),
                    }
                });
                if let Some(why) = stopped {
                    tracing::warn!(code, "the Agent Sandbox stopped under the command: {why}");
                    let _ = session.leave();
                    self.git_sentry_after_run(embedded);
                    bail!(
                        "the Agent Sandbox stopped while the command ran: {why}; the command's \
                         status is unknown (the {code} came from the exec tool). The next `lazaret run` starts a \
                         new sandbox"
                    );
                }
                // The agent's commits cross to the host before the command's status returns.
                self.git_boundary_round(boundary_log, embedded);
                if session.leave()? {
                    self.wait_for_sandbox_stop();
                }
                self.git_sentry_after_run(embedded);
                Ok((code, session_id))
            }
            Attached::CoordinatorGone(reason) => {
                self.git_sentry_after_run(embedded);
                bail!(
                "the session ended because the Domain's Session Coordinator went away: {reason}; \
                 the command was stopped. The next `lazaret run` recovers the Domain"
                )
            }
        }
    }

    /// How the command enters the sandbox: runsc directly, as the coordinator's own sessions
    /// do (~50–120 ms less than `podman exec`, issue #18), where the coordinator published the
    /// sandbox for it — on a terminal with this CLI's PTY, on pipes with pipes of its own this
    /// CLI relays (see `run_relayed`); else, and for a non-interactive capture, `podman exec`
    /// (`LAZARET_SESSION_EXEC=podman` forces it). The last item is the direct way, if taken.
    fn exec_command(
        &self,
        sandbox_name: &str,
        req: &ExecRequest,
        direct_ok: bool,
    ) -> (String, Vec<String>, Option<RunscExec>) {
        let podman_forced = std::env::var_os("LAZARET_SESSION_EXEC").is_some_and(|v| v == "podman");
        if direct_ok && !podman_forced {
            match crate::runtime::runsc_exec::published(&self.domain.runtime_dir) {
                Ok(direct) => return (direct.program(), direct.args(req), Some(direct)),
                Err(why) => tracing::info!("the command runs through podman exec: {why}"),
            }
        }
        let program = std::env::var("LAZARET_PODMAN").unwrap_or_else(|_| "podman".to_owned());
        (program, sandbox::exec_args(sandbox_name, req), None)
    }

    /// The cards of held destinations on the developer's terminal, when the profile asks
    /// (`default = "ask"`) and the command runs on a terminal: the developer's `a` and `d` are
    /// carried out here, as `lazaret net allow` (without `--private`) and `lazaret net deny`
    /// would.
    fn held_cards(&self, attach: &Attach, gate: &Arc<TerminalGate>) -> Option<HeldCards> {
        let network = &self.profile.network;
        if !matches!(attach, Attach::Terminal) || !network.enabled || network.ask_timeout.is_none()
        {
            return None;
        }
        let dir = crate::runtime::sidecar::status_dir(&self.domain);
        let profile = self.profile.name.clone();
        let decide =
            move |entry: &HeldEntry, choice: Choice| decide_held(&dir, &profile, entry, choice);
        Some(HeldCards::start(gate.clone(), Box::new(decide)))
    }

    /// Git Sentry at the end of every run: git control files the sandbox planted during the
    /// run are renamed aside, nested repositories it created are reported — on stderr, except
    /// in an embedded pane (the log only; the TUI owns the screen).
    fn git_sentry_after_run(&self, embedded: bool) {
        let ws = &self.domain.workspace.root;
        let store = crate::runtime::git_sentry::guard::store_of(&self.domain);
        match crate::runtime::git_sentry::guard::after_run(ws, &store) {
            Ok(report) => {
                for m in &report.messages {
                    tracing::warn!("{m}");
                }
                self.tell(&report.messages, embedded);
            }
            Err(e) => {
                tracing::warn!("Git Sentry end-of-run check: {e:#}");
                if !embedded {
                    crate::say!("lazaret: warning: Git Sentry end-of-run check failed: {e:#}");
                }
            }
        }
    }

    /// A git boundary round now (the sandbox still runs), then what the boundary did since the
    /// command started (`from`: the boundary log's length then), once, on stderr.
    fn git_boundary_round(&self, from: u64, embedded: bool) {
        if let Some(b) = crate::runtime::git_boundary::Boundary::of(&self.domain) {
            if let Err(e) = b.round_if_changed() {
                tracing::warn!("git boundary: {e}");
                if !embedded {
                    crate::say!(
                        "lazaret: warning: git boundary: {}",
                        crate::runtime::git_boundary::printable(&e)
                    );
                }
            }
        }
        if !embedded {
            for m in crate::runtime::git_boundary::log_since(&self.domain, from) {
                crate::say!("lazaret: {m}");
            }
        }
    }

    /// Git Sentry's messages on stderr, except in an embedded pane (the TUI owns the screen).
    fn tell(&self, messages: &[String], embedded: bool) {
        if !embedded {
            for m in messages {
                crate::say!("lazaret: warning: {m}");
            }
        }
    }

    /// The failures the Domain's coordinator lists now (e.g. "the Network Sidecar exited"),
    /// from its status file, read before this session leaves (the last leave withdraws it).
    fn domain_failures(&self) -> Vec<String> {
        let path = crate::coordinator::paths::status(&self.domain);
        crate::coordinator::status::DomainStatus::read(&path)
            .map(|s| s.failures)
            .unwrap_or_default()
    }

    /// Failures the Domain reported while this command ran, for the developer's terminal
    /// (`lazaret ps` and the TUI list them too), escaped.
    fn new_failures(&self, known: &[String]) -> Vec<String> {
        self.domain_failures()
            .into_iter()
            .filter(|f| !known.contains(f))
            .map(|f| {
                format!(
                    "the Domain reported while the command ran: {}",
                    crate::terminal::escape::visible(&f)
                )
            })
            .collect()
    }

    /// The last session out waits until the coordinator has stopped the Agent Sandbox (it
    /// holds the sandbox lock until then), so that no sandbox process runs — and can write the
    /// workspace behind the Git Sentry's end-of-run check — once this CLI returns. The rest of
    /// the teardown (sidecar, State Anchors) goes on without the developer waiting (issue #18).
    fn wait_for_sandbox_stop(&self) {
        use crate::domain::sandbox_lock::{wait_released, Released};
        match wait_released(&self.domain.runtime_dir, TEARDOWN_WAIT) {
            Ok(Released::Yes) => {}
            Ok(Released::Abandoned) => {
                // The coordinator died before the sandbox stopped: stop it here (unless a new
                // start already took the Domain over, which recovers it first).
                crate::say!(
                    "lazaret: the Session Coordinator ended before it stopped the Agent Sandbox;                      stopping it"
                );
                if let Err(e) = crate::coordinator::launch::recover_if_free(&self.domain) {
                    crate::say!("lazaret: warning: {e:#}");
                }
            }
            Ok(Released::TimedOut) => crate::say!(
                "lazaret: warning: the Agent Sandbox is still stopping after {TEARDOWN_WAIT:?}"
            ),
            Err(e) => tracing::warn!("waiting for the sandbox to stop: {e:#}"),
        }
    }
}

/// The rule a choice on a held entry's card makes: `a` the narrow form (the destination's
/// port; a name's addresses on tcp/443 — a DNS query says no port), `w` the wide form (every
/// port), `d` refuses the entry as it is.
pub(crate) fn held_target(
    entry: &HeldEntry,
    choice: Choice,
) -> Result<crate::network::run_rules::Target, String> {
    use crate::network::run_rules::{Proto, Target};
    let target = Target::parse(&entry.target)
        .map_err(|e| crate::terminal::escape::visible(&e.to_string()))?;
    Ok(match (choice, target) {
        (Choice::Allow, Target::Name(n)) if entry.protocol == "dns" => {
            Target::NamePort(n, Proto::Tcp, 443)
        }
        (Choice::AllowAnyPort, Target::Port(a, _)) => Target::Address(a),
        (Choice::AllowAnyPort, t) => t.any_port(),
        (_, t) => t,
    })
}

/// Carries out the developer's choice on the card of a held destination, as `lazaret net allow
/// TARGET` (never `--private`) or `lazaret net deny TARGET` would; the card's last line.
fn decide_held(
    dir: &std::path::Path,
    profile: &str,
    entry: &HeldEntry,
    choice: Choice,
) -> Result<String, String> {
    use crate::network::run_rules::TargetError;
    use crate::runtime::run_rules_store;
    let target = held_target(entry, choice)?;
    let shown = target.to_string();
    let now = crate::runtime::denial_ledger::unix_now();
    match choice {
        Choice::Allow | Choice::AllowAnyPort => {
            match target.check(false) {
                Ok(()) => {}
                Err(TargetError::NeedsPrivate(..)) => {
                    return Err(format!(
                        "{shown} is a private address: not allowed from here; `lazaret net \
                         allow --private {shown}` allows it"
                    ))
                }
                Err(e) => return Err(e.to_string()),
            }
            match run_rules_store::change(dir, |r| r.allow(target.clone(), now)) {
                Ok(added) => {
                    tracing::info!(target = %shown, added, %profile, from = "run terminal", "network rule allowed for this run");
                    Ok(format!(
                        "allowed {shown} for this run: {}",
                        target.opens(&[])
                    ))
                }
                Err(e) => {
                    tracing::warn!(target = %shown, %profile, from = "run terminal", "allowing for this run: {e:#}");
                    Err(format!("allowing {shown} failed: {e:#}"))
                }
            }
        }
        Choice::Deny => match run_rules_store::change(dir, |r| r.deny(target.clone(), now)) {
            Ok(added) => {
                tracing::info!(target = %shown, added, %profile, from = "run terminal", "network destination refused for this run");
                Ok(format!("refused {shown} for this run"))
            }
            Err(e) => {
                tracing::warn!(target = %shown, %profile, from = "run terminal", "refusing for this run: {e:#}");
                Err(format!("refusing {shown} failed: {e:#}"))
            }
        },
    }
}

/// `lazaret run`: the command on the terminal (PTY) when stdin is one, else through pipes.
pub fn run(layout: &Layout, opts: &RunOptions) -> anyhow::Result<i32> {
    let plan = SessionPlan::new(layout, opts)?;
    let attach = if crate::terminal::stdin_is_terminal() {
        Attach::Terminal
    } else {
        Attach::Pipes
    };
    Ok(plan.run(attach)?.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(target: &str) -> HeldEntry {
        HeldEntry {
            target: target.into(),
            protocol: "tcp".into(),
            since: 1,
            deadline: 61,
            count: 1,
        }
    }

    #[test]
    fn a_card_never_allows_a_private_address_or_a_target_that_does_not_parse() {
        let dir = tempfile::tempdir().expect("tempdir");
        let private = decide_held(dir.path(), "p", &entry("10.1.2.3:443"), Choice::Allow);
        let why = private.expect_err("a private address is not allowed from a card");
        assert!(
            why.contains("`lazaret net allow --private 10.1.2.3:443`"),
            "{why}"
        );
        let bad = decide_held(dir.path(), "p", &entry("x\x1b[2J/8"), Choice::Deny);
        assert!(bad.is_err(), "{bad:?}");
        // Nothing was written: no rule changed.
        assert!(std::fs::read_dir(dir.path()).expect("dir").next().is_none());
    }

    #[test]
    fn a_on_a_card_allows_the_narrow_form_and_w_the_wide_one() {
        let shown = |target: &str, protocol: &str, choice| {
            let e = HeldEntry {
                protocol: protocol.into(),
                ..entry(target)
            };
            held_target(&e, choice).map(|t| t.to_string())
        };
        let name = "registry.example.org";
        assert_eq!(
            shown(name, "dns", Choice::Allow).as_deref(),
            Ok("registry.example.org:443")
        );
        assert_eq!(
            shown(name, "dns", Choice::AllowAnyPort).as_deref(),
            Ok(name)
        );
        assert_eq!(shown(name, "dns", Choice::Deny).as_deref(), Ok(name));
        let addr = "203.0.113.7:8443";
        assert_eq!(shown(addr, "tcp", Choice::Allow).as_deref(), Ok(addr));
        assert_eq!(
            shown(addr, "udp", Choice::AllowAnyPort).as_deref(),
            Ok("203.0.113.7")
        );
        assert_eq!(shown(addr, "tcp", Choice::Deny).as_deref(), Ok(addr));
    }
}
