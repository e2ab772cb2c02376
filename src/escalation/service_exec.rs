//! Running an approved host command for the escalation service (TLA+ `Execute`, `Finish`):
//! the core's `RunHostCommand` is carried out here, by the thread that waits for its output;
//! its `TerminateHostProcess` (the session left, the Domain failed, a cancel) sets the
//! request's kill switch, which `host_exec` watches.

use super::host_exec::{self, Ended};
use super::repository::Protected;
use super::service::Service;
use super::{git_env, workdir::WorkDir};
use crate::coordinator::effect::Effect;
use crate::coordinator::event::Event;
use crate::coordinator::state::RequestId;
use lazaret_protocol::escalation::{EscalationResult, Outcome};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

impl Service {
    /// Runs the approved `argv` (TLA+ `Execute`, `Finish`) and makes its result.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn execute(
        &self,
        model: RequestId,
        id: &str,
        exe: &Result<super::executable::Executable, String>,
        argv: Vec<String>,
        edited: bool,
        workdir: &WorkDir,
        protected: &Result<Protected, String>,
        deadline: Instant,
        kill: &Arc<AtomicBool>,
    ) -> EscalationResult {
        let step = |event| self.engine.escalation_step(event);
        // The core's `RunHostCommand` is this thread's to carry out (it waits for the output);
        // refused, nothing runs: the request went with its session.
        match self.engine.step(Event::Execute { request: model }) {
            Ok(handed)
                if handed
                    == [Effect::RunHostCommand {
                        request: model,
                        edited,
                    }] => {}
            Ok(handed) => {
                tracing::error!(
                    ?handed,
                    "Execute handed back other effects than RunHostCommand"
                )
            }
            Err(_) => {
                return EscalationResult::new(
                    id,
                    Outcome::Cancelled,
                    "the session ended before the host command ran",
                )
            }
        }
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_secs(1));
        let env = host_env(protected);
        let run = match exe {
            Err(why) => host_exec::HostRun {
                ended: Ended::Failed(format!("cannot run {}: {why}", argv[0])),
                stdout: Vec::new(),
                stderr: Vec::new(),
                truncated: false,
            },
            Ok(exe) => {
                use std::os::fd::AsFd;
                let launch = host_exec::Launch {
                    program: &exe.path,
                    argv: &argv,
                    cwd: workdir.fd.as_fd(),
                    env: &env,
                };
                host_exec::run(&launch, left, kill)
            }
        };
        // Cancelled: terminated by the core's `TerminateHostProcess` (its session left, or the
        // Domain failed), which took the request with it.
        if !matches!(run.ended, Ended::Cancelled) {
            step(Event::Finish { request: model });
        }
        tracing::debug!(request = %id, program = ?exe.as_ref().map(|e| &e.path), "host command ran");
        let mut res = match run.ended {
            Ended::Exited(c) => {
                EscalationResult::completed(id, c, &run.stdout, &run.stderr, run.truncated)
            }
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
        // `ran_argv` reports an edit by the developer.
        if edited {
            res.ran_argv = Some(argv);
        }
        res
    }
}

/// The environment of host commands (see `git_env`), pinned to `protected`.
pub(super) fn host_env(
    protected: &Result<Protected, String>,
) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let pinned = protected
        .as_ref()
        .ok()
        .map(|p| (p.git_dir.as_path(), p.work_tree.as_path()));
    git_env::environment(std::env::vars_os(), pinned)
}
