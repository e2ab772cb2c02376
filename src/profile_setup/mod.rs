//! A profile's first-launch setup (e.g. Claude Code from the npm registry into a State
//! Anchor): run once per Domain, in the sandbox, with its progress shown (issue #32, DX-5) and
//! its whole output kept in a log file per Domain ([`log`]) that every failure names.
//!
//! `lazaret run` runs it before the session's command ([`ensure`]). A coordinator-owned session
//! (a `lazaret tui` pane) whose setup is still to run starts as `lazaret __setup` under the
//! session's own terminal: the pane shows the progress at once, and the failure with its last
//! lines stays on the pane's screen; once done, it becomes the session's command (exec).

pub mod display;
pub mod log;
pub mod progress;

use crate::domain::Domain;
use crate::profile::AgentProfile;
use crate::runtime::podman::Podman;
use crate::runtime::sandbox::{self, ExecRequest};
use anyhow::{bail, Context};
use display::Display;
use progress::Piece;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::io::Read;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

/// Lines of the setup's output a failure shows.
pub const TAIL_LINES: usize = 15;
/// How long the output of a setup that has exited is still read.
const OUTPUT_GRACE: Duration = Duration::from_secs(2);
/// Characters of one such line shown.
const TAIL_WIDTH: usize = 200;

/// What running a profile's setup in a Domain's sandbox takes (serialized for `__setup`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Plan {
    pub profile: String,
    pub sandbox: String,
    pub command: Vec<String>,
    pub creates: String,
    /// Sessions starting together wait on it: one runs the setup, the others find it done.
    pub lock: PathBuf,
    pub log: PathBuf,
}

impl Plan {
    /// The setup of `profile` in `sandbox`, if it has one.
    pub fn of(domain: &Domain, profile: &AgentProfile, sandbox: &str) -> Option<Plan> {
        let setup = profile.setup.as_ref()?;
        Some(Plan {
            profile: profile.name.clone(),
            sandbox: sandbox.to_owned(),
            command: setup.command.clone(),
            creates: setup.creates.display().to_string(),
            lock: domain.runtime_dir.join("setup.lock"),
            log: log::path(&domain.root),
        })
    }

    fn exec(&self, command: Vec<String>) -> Vec<String> {
        sandbox::exec_args(
            &self.sandbox,
            &ExecRequest {
                command,
                workdir: "/".to_owned(),
                tty: false,
                term: None,
                env: Vec::new(),
            },
        )
    }

    /// Whether the setup has run already (its `creates` exists in the sandbox).
    pub fn done(&self) -> anyhow::Result<bool> {
        // Not answered (podman failed) counts as not done: the setup's own run then says why.
        Ok(sandbox::path_exists(&self.sandbox, &self.creates) == Some(true))
    }

    /// Runs the setup unless it has run, its progress shown on stderr.
    pub fn run(&self) -> anyhow::Result<()> {
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&self.lock)
            .with_context(|| format!("opening {}", self.lock.display()))?;
        let mut display = display::on_stderr(&self.profile);
        if lock.try_lock().is_err() {
            display.line(&format!(
                "lazaret: waiting for another session's setup of profile {:?}…",
                self.profile
            ));
            lock.lock()
                .context("waiting for another session's profile setup")?;
        }
        if self.done()? {
            return Ok(());
        }
        let mut log = log::SetupLog::start(self.log.clone())?;
        display.line(&format!(
            "lazaret: first launch of profile {:?} in this Domain: running its setup (kept in \
             the State Anchor; later launches skip it; its output: {})",
            self.profile,
            self.log.display()
        ));
        let (status, tail) = self.watch(&mut display, &mut log)?;
        let secs = display.elapsed_secs();
        display.clear();
        if !status.success() {
            let how = status
                .code()
                .map_or_else(|| status.to_string(), |c| format!("exit status {c}"));
            let mut lines = String::new();
            for l in &tail {
                lines.push_str("\n    ");
                lines.push_str(l);
            }
            bail!(
                "the setup of profile {:?} failed ({how}) after {secs} s; its last lines:{lines}\n\
                 Its whole output is in {}. Fix the cause (network policy, a proxy's CA: \
                 docs/config.md, mirror reachability) and start again: the setup is retried \
                 until {} exists",
                self.profile,
                self.log.display(),
                self.creates
            );
        }
        if !self.done()? {
            bail!(
                "the setup of profile {:?} finished but {} does not exist: check the \
                 profile's `setup.creates` (its output is in {})",
                self.profile,
                self.creates,
                self.log.display()
            );
        }
        display.line(&format!(
            "lazaret: setup of profile {:?} done in {secs} s",
            self.profile
        ));
        Ok(())
    }

    /// Runs the setup's command, logging its output and showing its progress; returns its
    /// status and its last lines (escaped, bounded).
    fn watch(
        &self,
        display: &mut Display<std::io::Stderr>,
        log: &mut log::SetupLog,
    ) -> anyhow::Result<(std::process::ExitStatus, VecDeque<String>)> {
        let mut child = Podman::default()
            .command(self.exec(self.command.clone()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("running the profile's setup")?;
        let (tx, rx) = mpsc::channel::<(usize, Vec<u8>)>();
        let readers: Vec<_> = [
            child
                .stdout
                .take()
                .map(|o| Box::new(o) as Box<dyn Read + Send>),
            child
                .stderr
                .take()
                .map(|e| Box::new(e) as Box<dyn Read + Send>),
        ]
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(stream, mut from)| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 16 * 1024];
                while let Ok(n) = from.read(&mut buf) {
                    if n == 0 || tx.send((stream, buf[..n].to_vec())).is_err() {
                        break;
                    }
                }
            })
        })
        .collect();
        drop(tx);
        let mut pieces = [Pieces::default(), Pieces::default()];
        let mut tail = VecDeque::new();
        // A setup that exited while something it started still holds its output open is done
        // after OUTPUT_GRACE: the launch must not wait for that process.
        let mut exited: Option<std::time::Instant> = None;
        loop {
            match rx.recv_timeout(Duration::from_secs(1)) {
                Ok((stream, bytes)) => {
                    log.write(&bytes);
                    if let Some(p) = pieces.get_mut(stream) {
                        for piece in p.split(&bytes) {
                            show(display, &mut tail, &piece);
                        }
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    display.tick();
                    if exited.is_none() && matches!(child.try_wait(), Ok(Some(_))) {
                        exited = Some(std::time::Instant::now());
                    }
                    if exited.is_some_and(|at| at.elapsed() > OUTPUT_GRACE) {
                        break;
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        for p in &mut pieces {
            if let Some(piece) = p.rest() {
                show(display, &mut tail, &piece);
            }
        }
        if exited.is_none() {
            for r in readers {
                let _ = r.join();
            }
        }
        let status = child.wait().context("waiting for the profile's setup")?;
        Ok((status, tail))
    }
}

/// One piece of output: progress shown, other text kept for a failure's tail.
fn show(display: &mut Display<std::io::Stderr>, tail: &mut VecDeque<String>, piece: &[u8]) {
    match progress::parse(piece) {
        Piece::Phase { name, percent } => display.phase(&name, percent),
        Piece::Percent(p) => display.percent(p),
        Piece::Blank => {}
        Piece::Output => {
            let text = String::from_utf8_lossy(piece);
            let line: String = crate::terminal::escape::visible(&text)
                .chars()
                .take(TAIL_WIDTH)
                .collect();
            if tail.len() == TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    }
}

/// A stream cut into pieces at line feeds and carriage returns, each at most
/// [`progress::MAX_LINE`] bytes (a longer one is cut).
#[derive(Default)]
struct Pieces {
    carry: Vec<u8>,
}

impl Pieces {
    fn split(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for &b in bytes {
            if b == b'\n' || b == b'\r' {
                out.push(std::mem::take(&mut self.carry));
            } else if self.carry.len() <= progress::MAX_LINE {
                self.carry.push(b);
            }
        }
        out
    }

    fn rest(&mut self) -> Option<Vec<u8>> {
        (!self.carry.is_empty()).then(|| std::mem::take(&mut self.carry))
    }
}

/// Runs the profile's setup in `sandbox` unless its `creates` path already exists there
/// (`lazaret run`: before the session's command, progress on this terminal).
pub fn ensure(domain: &Domain, profile: &AgentProfile, sandbox: &str) -> anyhow::Result<()> {
    match Plan::of(domain, profile, sandbox) {
        Some(plan) => plan.run(),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_split_at_line_ends_and_stay_bounded() {
        let mut p = Pieces::default();
        assert_eq!(p.split(b"##  1.0%\r## 2"), vec![b"##  1.0%".to_vec()]);
        assert_eq!(p.split(b".0%\nnext"), vec![b"## 2.0%".to_vec()]);
        assert_eq!(p.rest(), Some(b"next".to_vec()));
        let long = vec![b'a'; 10 * progress::MAX_LINE];
        let cut = p.split(&[&long[..], b"\n"].concat());
        assert_eq!(cut[0].len(), progress::MAX_LINE + 1);
        assert_eq!(progress::parse(&cut[0]), Piece::Output);
    }
}
