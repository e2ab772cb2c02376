//! A profile's first-launch setup (e.g. Claude Code from the npm registry into a State
//! Anchor): run once per Domain, in the sandbox, with its output shown as progress.

use crate::domain::Domain;
use crate::profile::AgentProfile;
use crate::runtime::podman::Podman;
use crate::runtime::sandbox::{self, ExecRequest};
use anyhow::{bail, Context};
use std::os::fd::AsFd;
use std::process::Stdio;

/// Runs the profile's setup in `sandbox` unless its `creates` path already exists there.
/// Sessions starting together wait for each other: one runs the setup, the others find it done.
pub fn ensure(domain: &Domain, profile: &AgentProfile, sandbox: &str) -> anyhow::Result<()> {
    let Some(setup) = &profile.setup else {
        return Ok(());
    };
    let lock_path = domain.runtime_dir.join("setup.lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| format!("opening {}", lock_path.display()))?;
    lock.lock()
        .context("waiting for another session's profile setup")?;
    let creates = setup.creates.display().to_string();
    let podman = Podman::default();
    let exec = |command: Vec<String>| {
        sandbox::exec_args(
            sandbox,
            &ExecRequest {
                command,
                workdir: "/".to_owned(),
                tty: false,
                term: None,
                env: Vec::new(),
            },
        )
    };
    let done = |podman: &Podman| -> anyhow::Result<bool> {
        let check = exec(vec!["test".into(), "-e".into(), creates.clone()]);
        Ok(podman
            .command(check)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .context("checking the profile's setup")?
            .success())
    };
    if done(&podman)? {
        return Ok(());
    }
    eprintln!(
        "lazaret: first launch of profile {:?} in this Domain: running its setup (kept in the \
         State Anchor; later launches skip it)",
        profile.name
    );
    let mut command = podman.command(exec(setup.command.clone()));
    command.stdin(Stdio::null());
    let status = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        // The setup's output is the sandbox's: on a terminal, through the passthrough's filter.
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("running the profile's setup")?;
        let copies: Vec<_> = [
            child
                .stdout
                .take()
                .map(|o| Box::new(o) as Box<dyn std::io::Read + Send>),
            child
                .stderr
                .take()
                .map(|e| Box::new(e) as Box<dyn std::io::Read + Send>),
        ]
        .into_iter()
        .flatten()
        .map(|from| {
            crate::terminal::passthrough::copy_filtered(from, std::io::stderr(), profile.terminal)
        })
        .collect();
        let status = child.wait().context("waiting for the profile's setup")?;
        for c in copies {
            let _ = c.join();
        }
        status
    } else {
        let to_stderr = std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .context("duplicating stderr")?;
        command
            .stdout(Stdio::from(to_stderr))
            .status()
            .context("running the profile's setup")?
    };
    if !status.success() {
        bail!(
            "the setup of profile {:?} failed ({status}); its output is above. Fix the cause \
             (network policy, mirror reachability) and run again: it is retried until {creates} exists",
            profile.name
        );
    }
    if !done(&podman)? {
        bail!(
            "the setup of profile {:?} finished but {creates} does not exist: check the \
             profile's `setup.creates`",
            profile.name
        );
    }
    eprintln!("lazaret: setup of profile {:?} done", profile.name);
    Ok(())
}
