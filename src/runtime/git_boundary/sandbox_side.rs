//! The sandbox's side of the git boundary: every read and write of the Domain-private git
//! directory is a git command run *inside* the Agent Sandbox (runsc exec, or podman exec where
//! runsc cannot be entered directly). The host never opens a file of that directory: what the
//! sandbox answers is bounded, timed and parsed as hostile input.

use crate::domain::Domain;
use crate::runtime::runsc_exec::RunscExec;
use crate::runtime::sandbox::ExecRequest;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Most bytes read from one command inside.
const MAX_OUTPUT: usize = super::refs::MAX_LISTING + 4096;

/// How commands enter the sandbox.
#[derive(Clone, Debug)]
pub enum Entry {
    Direct(RunscExec),
    Podman { program: String, container: String },
}

impl Entry {
    /// The way into `domain`'s running sandbox: the coordinator's published direct exec when it
    /// still holds, else `podman exec`.
    pub fn of(domain: &Domain) -> Entry {
        match crate::runtime::runsc_exec::published(&domain.runtime_dir) {
            Ok(d) => Entry::Direct(d),
            Err(_) => Entry::Podman {
                program: std::env::var("LAZARET_PODMAN").unwrap_or_else(|_| "podman".into()),
                container: domain.container_name("sandbox"),
            },
        }
    }

    /// Program and arguments running `argv` inside, in `/workspace`, with pipes.
    pub fn argv(&self, argv: &[String]) -> (String, Vec<String>) {
        let req = ExecRequest {
            command: argv.to_vec(),
            workdir: crate::domain::workspace::SANDBOX_WORKSPACE.to_owned(),
            tty: false,
            term: None,
            env: vec![("GIT_TERMINAL_PROMPT".into(), "0".into())],
        };
        match self {
            Entry::Direct(d) => (d.program(), d.args(&req)),
            Entry::Podman { program, container } => (
                program.clone(),
                crate::runtime::sandbox::exec_args(container, &req),
            ),
        }
    }

    /// Runs `argv` inside with `stdin`, waiting at most `limit`. Returns stdout when it exits 0;
    /// otherwise what it said on stderr (bounded), for the log.
    pub fn run(&self, argv: &[String], stdin: &[u8], limit: Duration) -> Result<Vec<u8>, String> {
        let (program, args) = self.argv(argv);
        let mut child = Command::new(&program)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot enter the sandbox ({program}): {e}"))?;
        let input = stdin.to_vec();
        let feeder = child.stdin.take().map(|mut w| {
            std::thread::spawn(move || {
                let _ = w.write_all(&input);
            })
        });
        let out = child
            .stdout
            .take()
            .map(|r| std::thread::spawn(move || bounded(r)));
        let err = child
            .stderr
            .take()
            .map(|r| std::thread::spawn(move || bounded(r)));
        let deadline = Instant::now() + limit;
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break Ok(s),
                Ok(None) if Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break Err(format!(
                        "{} inside the sandbox did not finish within {} s",
                        argv.first().map(String::as_str).unwrap_or("?"),
                        limit.as_secs()
                    ));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                Err(e) => break Err(format!("waiting for the sandbox command: {e}")),
            }
        };
        if let Some(f) = feeder {
            let _ = f.join();
        }
        let stdout = out.and_then(|t| t.join().ok()).unwrap_or_default();
        let stderr = err.and_then(|t| t.join().ok()).unwrap_or_default();
        let status = status?;
        if status.success() && stdout.len() <= MAX_OUTPUT {
            return Ok(stdout);
        }
        let said = String::from_utf8_lossy(&stderr[..stderr.len().min(4096)]);
        let last = said.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
        Err(format!(
            "git inside the sandbox failed ({status}): {}",
            super::printable(last.trim())
        ))
    }
}

/// Reads `r` to its end, keeping at most [`MAX_OUTPUT`] + 1 bytes (more means refused).
fn bounded(mut r: impl Read) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => return out,
            Ok(n) if out.len() <= MAX_OUTPUT => {
                let take = n.min(MAX_OUTPUT + 1 - out.len());
                out.extend_from_slice(&buf[..take]);
            }
            Ok(_) => {}
        }
    }
}

/// `sh -c SCRIPT` inside.
pub fn sh(script: &str) -> Vec<String> {
    vec![
        "/bin/sh".into(),
        "-c".into(),
        script.into(),
        "lazaret-git".into(),
    ]
}

/// Git's options for every command the boundary runs inside: no hooks (the sandbox's own could
/// stall the boundary), no pager, no automatic maintenance.
pub const GIT: &str = "git -c core.hooksPath=/dev/null -c core.pager=cat -c gc.auto=0 \
                       -c maintenance.auto=false";

/// Lists the sandbox's references (see [`super::refs::parse_listing`]).
pub fn listing_script() -> String {
    format!(
        "{GIT} for-each-ref --format='%(objectname) %(refname)' refs/heads refs/tags \
         refs/remotes && h=$({GIT} symbolic-ref -q HEAD || {GIT} rev-parse -q --verify HEAD \
         || true) && echo \"HEAD $h\""
    )
}
