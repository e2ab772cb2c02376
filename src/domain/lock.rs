//! The Domain's exclusive lifecycle lock (OR-1): whoever holds it owns the Domain's runtime.

use anyhow::Context;
use nix::fcntl::{Flock, FlockArg};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Held for as long as this process owns the Domain's runtime resources; released on drop,
/// and by the kernel if the process dies.
pub struct LifecycleLock {
    _lock: Flock<File>,
}

impl LifecycleLock {
    /// Takes the lock without waiting; `Ok(None)` when another process holds it.
    pub fn try_acquire(runtime_dir: &Path) -> anyhow::Result<Option<LifecycleLock>> {
        let path = runtime_dir.join("lifecycle.lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .with_context(|| format!("opening the lifecycle lock {}", path.display()))?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => Ok(Some(LifecycleLock { _lock: lock })),
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
            Err((_, e)) => Err(e).with_context(|| format!("locking {}", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_is_refused_until_release() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let first = LifecycleLock::try_acquire(t.path())?;
        assert!(first.is_some());
        assert!(LifecycleLock::try_acquire(t.path())?.is_none());
        drop(first);
        assert!(LifecycleLock::try_acquire(t.path())?.is_some());
        Ok(())
    }
}
