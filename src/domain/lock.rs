//! The Domain's exclusive lifecycle lock (OR-1): whoever holds it owns the Domain's runtime.
//!
//! An `flock` on `<runtime dir>/lifecycle.lock`. It belongs to the open file, so a CLI can hand
//! it to the coordinator it starts (the descriptor is inherited), and the kernel releases it when
//! the last holder dies — a crashed owner never leaves it held.

use anyhow::Context;
use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Opens (creating, 0600, never through a symlink) the lock file `path`, `what` for errors.
pub(super) fn open_lock_file(path: &Path, what: &str) -> anyhow::Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .with_context(|| format!("opening {what} {}", path.display()))
}

/// Held for as long as this process (or the child it was handed to) owns the Domain's runtime.
pub struct LifecycleLock {
    file: File,
}

impl std::os::fd::AsRawFd for LifecycleLock {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.file.as_raw_fd()
    }
}

impl LifecycleLock {
    /// Takes the lock without waiting; `Ok(None)` when another process holds it.
    pub fn try_acquire(runtime_dir: &Path) -> anyhow::Result<Option<LifecycleLock>> {
        let path = runtime_dir.join("lifecycle.lock");
        let file = open_lock_file(&path, "the lifecycle lock")?;
        match file.try_lock() {
            Ok(()) => Ok(Some(LifecycleLock { file })),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => {
                Err(e).with_context(|| format!("locking {}", path.display()))
            }
        }
    }

    /// The locked file, still locked: for handing the lock to a child process that inherits
    /// the descriptor. Closing every descriptor of it releases the lock.
    pub fn hand_over(self) -> File {
        self.file
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

    #[test]
    fn a_handed_over_lock_stays_held_while_a_copy_lives() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let lock = LifecycleLock::try_acquire(t.path())?.map(LifecycleLock::hand_over);
        let copy = lock.as_ref().map(File::try_clone).transpose()?;
        drop(lock);
        assert!(
            LifecycleLock::try_acquire(t.path())?.is_none(),
            "the copy holds it"
        );
        drop(copy);
        assert!(LifecycleLock::try_acquire(t.path())?.is_some());
        Ok(())
    }
}
