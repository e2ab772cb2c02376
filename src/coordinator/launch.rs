//! Joining a Domain from the CLI: join its running coordinator, or become the startup leader —
//! the one CLI holding the lifecycle lock — recover what a dead owner left (FR-7), and start a
//! detached coordinator (FR-2, OR-1).

use super::client::{ClientSession, JoinError, Registration};
use super::daemon::{LOCK_FD, READY_FD};
use crate::domain::lock::LifecycleLock;
use crate::runtime::domain_runtime::DomainRuntime;
use crate::runtime::podman::Podman;
use anyhow::{bail, Context};
use std::io::{BufRead, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a CLI waits for a Domain to become joinable (another leader starting it, or a
/// previous coordinator tearing down).
pub const JOIN_TIMEOUT: Duration = Duration::from_secs(180);

/// A start slower than this gets a progress line on stderr.
const PROGRESS_AFTER: Duration = Duration::from_secs(2);

/// Joins the Domain, starting its coordinator first if none runs.
pub fn join_or_start(reg: &Registration<'_>) -> anyhow::Result<ClientSession> {
    join_or_start_with(reg, ClientSession::join)
}

/// As [`join_or_start`], joining with `join` (e.g. a client connection without a session of
/// its own, for coordinator-owned sessions).
pub fn join_or_start_with<T>(
    reg: &Registration<'_>,
    join: impl Fn(&Registration<'_>) -> Result<T, JoinError>,
) -> anyhow::Result<T> {
    let deadline = Instant::now() + JOIN_TIMEOUT;
    let mut last_wait = String::from("another lazaret process is starting or stopping the Domain");
    loop {
        match join(reg) {
            Ok(session) => return Ok(session),
            Err(JoinError::Failed(e)) => return Err(e),
            Err(JoinError::Unavailable(why)) => last_wait = why,
            Err(JoinError::NotRunning) => {
                if let Some(lock) = LifecycleLock::try_acquire(&reg.domain.runtime_dir)? {
                    // Leader. A coordinator may have become ready between our connect and the
                    // lock: if so, join it instead.
                    match join(reg) {
                        Ok(session) => return Ok(session),
                        Err(JoinError::Failed(e)) => return Err(e),
                        Err(_) => {}
                    }
                    recover(reg.domain)?;
                    start_coordinator(reg, lock)?;
                    continue;
                }
            }
        }
        if Instant::now() > deadline {
            bail!("timed out joining the Domain after {JOIN_TIMEOUT:?}: {last_wait}");
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Under the lifecycle lock with no coordinator: a previous owner died. Stop its sandbox, then
/// its sidecar (then, once it exists, unmount the State Anchor) before a new start (FR-7).
fn recover(domain: &crate::domain::Domain) -> anyhow::Result<()> {
    let mut runtime = DomainRuntime::new(Podman::default(), domain.clone());
    if runtime.recover_leftovers()? {
        crate::say!(
            "lazaret: recovered the Domain of {} after an interrupted run",
            domain.workspace.root.display()
        );
    }
    let _ = std::fs::remove_file(super::paths::status(domain));
    Ok(())
}

/// After the coordinator died: takes the Domain's lifecycle lock (waiting up to 30 s for a
/// coordinator still tearing down) and removes what it left. A Domain that is running again
/// (a new coordinator serves sessions) is left alone: its leader recovered it first.
pub fn recover_if_free(domain: &crate::domain::Domain) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(_lock) = LifecycleLock::try_acquire(&domain.runtime_dir)? {
            return recover(domain);
        }
        if super::paths::status(domain).exists() || Instant::now() > deadline {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Starts the detached coordinator with the lock and a ready pipe, and waits for its report.
fn start_coordinator(reg: &Registration<'_>, lock: LifecycleLock) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("finding the lazaret executable")?;
    let (ready_r, ready_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .context("creating the coordinator's ready pipe")?;
    // Move both descriptors above the target numbers, so that dup2 cannot clobber one with
    // the other in the child.
    let lock = lock.hand_over();
    let lock_fd = dup_above(lock.as_raw_fd())?;
    let ready_fd = dup_above(ready_w.as_raw_fd())?;
    let (lock_raw, ready_raw) = (lock_fd.as_raw_fd(), ready_fd.as_raw_fd());
    let mut cmd = Command::new(exe);
    cmd.arg("__coordinator")
        .arg("--profile")
        .arg(reg.profile)
        .arg("--workspace")
        .arg(&reg.domain.workspace.root)
        .args(reg.linger.map(|s| format!("--linger={s}")))
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: only async-signal-safe calls (setsid, dup2) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0
                || libc::dup2(lock_raw, LOCK_FD) < 0
                || libc::dup2(ready_raw, READY_FD) < 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().context("starting the Session Coordinator")?;
    drop((ready_w, ready_fd, lock_fd, lock));
    // Reap the coordinator whenever it ends, so it never lingers as a zombie of this CLI.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    let started = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = started.clone();
    std::thread::spawn(move || {
        std::thread::sleep(PROGRESS_AFTER);
        if !seen.load(std::sync::atomic::Ordering::SeqCst) {
            crate::say!(
                "lazaret: starting the Domain (a first run also builds the sidecar image)…"
            );
        }
    });
    let report = read_report(ready_r);
    started.store(true, std::sync::atomic::Ordering::SeqCst);
    let report = report?;
    match report.trim() {
        "ready" => Ok(()),
        other => {
            let msg = other.strip_prefix("error: ").unwrap_or(other);
            if msg.is_empty() {
                bail!("the Session Coordinator exited before it was ready (see the log: lazaret.log in $XDG_STATE_HOME/lazaret)");
            }
            bail!("{msg}");
        }
    }
}

fn dup_above(fd: i32) -> anyhow::Result<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor (or -1) that we then own.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10) };
    if new < 0 {
        return Err(std::io::Error::last_os_error()).context("duplicating a descriptor");
    }
    // SAFETY: `new` is a fresh descriptor owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

/// The coordinator's report: `note: …` lines for the developer (printed as they come), then
/// one final line; EOF without a final line means it died first.
fn read_report(ready: OwnedFd) -> anyhow::Result<String> {
    let mut reader = std::io::BufReader::new(std::fs::File::from(ready));
    loop {
        let mut line = String::new();
        reader
            .read_line(&mut line)
            .context("reading the Session Coordinator's report")?;
        match line.strip_prefix("note: ") {
            Some(note) => crate::say!("lazaret: {}", note.trim_end()),
            None if line.starts_with("error: ") => {
                // An error may span lines (a Git Sentry refusal lists files and commands); the
                // coordinator exits after it, so the rest ends at EOF.
                let mut rest = String::new();
                let _ = std::io::Read::take(&mut reader, 64 * 1024).read_to_string(&mut rest);
                return Ok(line + &rest);
            }
            None => return Ok(line),
        }
    }
}
