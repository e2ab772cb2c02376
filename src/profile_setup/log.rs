//! The whole output of a profile setup, kept per Domain (issue #32): `logs/setup.log` in the
//! Domain Root (host-only, never mounted), named by every failure message. Bounded: at
//! [`MAX_BYTES`] the file becomes `setup.log.1` and a new one starts, so at most two files
//! of that size are kept, and the newest output (a failure's cause) is always there. A new run
//! starts a new file (the previous run's becomes `setup.log.1`).

use anyhow::Context;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Size at which the log is rotated.
pub const MAX_BYTES: u64 = 1024 * 1024;

/// Where a Domain's setup log is.
pub fn path(domain_root: &Path) -> PathBuf {
    domain_root.join("logs").join("setup.log")
}

pub struct SetupLog {
    path: PathBuf,
    file: Option<File>,
    written: u64,
    max: u64,
}

impl SetupLog {
    /// Starts a new log at `path` (its directory is created private).
    pub fn start(path: PathBuf) -> anyhow::Result<SetupLog> {
        Self::with_max(path, MAX_BYTES)
    }

    fn with_max(path: PathBuf, max: u64) -> anyhow::Result<SetupLog> {
        if let Some(dir) = path.parent() {
            crate::domain::layout::ensure_private_dir(dir)?;
        }
        let mut log = SetupLog {
            path,
            file: None,
            written: 0,
            max,
        };
        log.rotate()?;
        Ok(log)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The previous file becomes `.1`; a new, empty one is opened.
    fn rotate(&mut self) -> anyhow::Result<()> {
        self.file = None;
        let old = self.path.with_extension("log.1");
        if std::fs::symlink_metadata(&self.path).is_ok() {
            std::fs::rename(&self.path, &old)
                .with_context(|| format!("rotating {}", self.path.display()))?;
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&self.path)
            .with_context(|| format!("creating {}", self.path.display()))?;
        self.file = Some(file);
        self.written = 0;
        Ok(())
    }

    /// Appends output; a failing disk loses the log, never the setup.
    pub fn write(&mut self, bytes: &[u8]) {
        let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if self.written > 0 && self.written.saturating_add(len) > self.max && self.rotate().is_err()
        {
            return;
        }
        if let Some(f) = self.file.as_mut() {
            if f.write_all(bytes).is_ok() {
                self.written = self.written.saturating_add(len);
            } else {
                self.file = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_output_within_two_files() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("logs").join("setup.log");
        let mut log = SetupLog::with_max(path.clone(), 10)?;
        for chunk in [&b"aaaa\n"[..], b"bbbb\n", b"cccc\n", b"dddd\n", b"last\n"] {
            log.write(chunk);
        }
        assert_eq!(std::fs::read(&path)?, b"last\n");
        assert_eq!(
            std::fs::read(path.with_extension("log.1"))?,
            b"cccc\ndddd\n"
        );
        // A new run starts a new file; the previous run's is `.1`.
        let mut again = SetupLog::with_max(path.clone(), 10)?;
        again.write(b"new\n");
        assert_eq!(std::fs::read(&path)?, b"new\n");
        assert_eq!(std::fs::read(path.with_extension("log.1"))?, b"last\n");
        Ok(())
    }
}
