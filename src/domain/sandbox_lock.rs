//! The Domain's sandbox lock: held by the Session Coordinator from before the Agent Sandbox
//! starts until it has stopped (issue #18).
//!
//! The last `lazaret run` out returns as soon as the sandbox can no longer write the workspace —
//! its Git Sentry end-of-run check must not race a running sandbox — while the coordinator goes
//! on removing the sidecar and unmounting the State Anchors off the developer's path. That CLI
//! waits for this lock, not for the lifecycle lock (which stays held until the Domain is
//! absent, OR-1). An `flock` on `<runtime dir>/sandbox.lock`: the kernel releases it when the
//! coordinator dies, exactly like the lifecycle lock. So the file says `running` while held and
//! `stopped` once the sandbox is: a waiter that finds it released but not `stopped` knows the
//! coordinator died first, and recovers the Domain itself before it returns (FR-7).

use anyhow::Context;
use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const FILE_NAME: &str = "sandbox.lock";

fn path(runtime_dir: &Path) -> PathBuf {
    runtime_dir.join(FILE_NAME)
}

/// Held while the Domain's Agent Sandbox may run.
pub struct SandboxLock {
    file: File,
}

impl SandboxLock {
    /// Takes the lock, waiting for waiters that hold it for a moment (a CLI looking whether it
    /// is free).
    pub fn hold(runtime_dir: &Path) -> anyhow::Result<SandboxLock> {
        let path = path(runtime_dir);
        let file = super::lock::open_lock_file(&path, "the sandbox lock")?;
        file.lock()
            .with_context(|| format!("locking {}", path.display()))?;
        write_state(&file, RUNNING)?;
        Ok(SandboxLock { file })
    }

    /// The sandbox has stopped: says so, then lets go.
    pub fn stopped(self) {
        if let Err(e) = write_state(&self.file, STOPPED) {
            tracing::warn!("marking the sandbox lock stopped: {e:#}");
        }
    }
}

const RUNNING: &[u8] = b"running\n";
const STOPPED: &[u8] = b"stopped\n";

fn write_state(file: &File, state: &[u8]) -> anyhow::Result<()> {
    use std::os::unix::fs::FileExt;
    file.set_len(0)?;
    file.write_all_at(state, 0)?;
    Ok(())
}

/// What [`wait_released`] saw.
#[derive(Debug, PartialEq, Eq)]
pub enum Released {
    /// Nobody holds it (or it never existed), and the coordinator said the sandbox stopped.
    Yes,
    /// Released without that word: its coordinator died before stopping the sandbox.
    Abandoned,
    /// Still held when the time was up.
    TimedOut,
}

/// Waits (at most `limit`) until no coordinator holds the sandbox lock. Never creates the
/// file; takes it shared for a moment only, so a starting coordinator is not held up.
pub fn wait_released(runtime_dir: &Path, limit: Duration) -> anyhow::Result<Released> {
    let path = path(runtime_dir);
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Released::Yes),
        Err(e) => return Err(e).with_context(|| format!("opening {}", path.display())),
    };
    let deadline = Instant::now() + limit;
    loop {
        match file.try_lock_shared() {
            Ok(()) => {
                let mut state = Vec::new();
                std::io::Read::read_to_end(&mut (&file), &mut state)?;
                return Ok(if state == RUNNING {
                    Released::Abandoned
                } else {
                    Released::Yes
                });
            }
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("locking {}", path.display()))
            }
        }
        if Instant::now() >= deadline {
            return Ok(Released::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiter_returns_once_the_holder_lets_go() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        assert_eq!(
            wait_released(t.path(), Duration::ZERO)?,
            Released::Yes,
            "no file: nothing runs"
        );
        let held = SandboxLock::hold(t.path())?;
        assert_eq!(
            wait_released(t.path(), Duration::from_millis(30))?,
            Released::TimedOut
        );
        let let_go = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            held.stopped();
        });
        let t0 = Instant::now();
        assert_eq!(
            wait_released(t.path(), Duration::from_secs(10))?,
            Released::Yes
        );
        assert!(t0.elapsed() >= Duration::from_millis(40));
        let_go.join().map_err(|_| anyhow::anyhow!("panicked"))?;
        // A waiter never keeps the coordinator from taking it again; a holder that dies
        // without saying the sandbox stopped is told apart.
        let again = SandboxLock::hold(t.path())?;
        drop(again);
        assert_eq!(
            wait_released(t.path(), Duration::ZERO)?,
            Released::Abandoned
        );
        Ok(())
    }
}
