//! Regular files the sweep removed from the request dir, kept open for [`KEEP_FOR`] and emptied
//! again at every sweep (issue #19). The sweep empties a file before it unlinks it, but a
//! sandbox process may still be writing it (a 2 MiB write goes through runsc's gofer in
//! pieces), and what lands after the unlink stays allocated for as long as anything holds the
//! file: runsc's dentry cache holds removed files until a lookup inside or eviction, however
//! long that is. Seen after a flood: the request dir's tmpfs full (0 blocks free) for 30 s and
//! more with every name gone, and the next escalation refused for space. Emptied again after
//! the writer stopped, such a file gives its space back within one sweep.
//!
//! Bounded: at most [`MAX_KEPT`] descriptors (the oldest are emptied once more and closed
//! first), each kept [`KEEP_FOR`]; they pin that many of the tmpfs's inodes meanwhile, well
//! below [`super::mailbox_fs::REQ_FS_INODES`] with runsc's own cache.

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

/// How long a removed file is emptied again at each sweep.
pub const KEEP_FOR: Duration = Duration::from_secs(10);
/// The most removed files kept open at once.
pub const MAX_KEPT: usize = 256;
/// How often the kept files are emptied again at most: during a flood the sweep runs every few
/// milliseconds, and 256 truncations each time would cost more than the flood.
pub const EMPTY_EVERY: Duration = Duration::from_millis(250);

#[derive(Debug, Default)]
pub struct RemovedFiles {
    kept: VecDeque<(OwnedFd, Instant)>,
    /// When the kept files were last emptied again.
    emptied: Option<Instant>,
}

impl RemovedFiles {
    /// Keeps `fd` (a regular file of the request dir, open for writing, just emptied).
    pub fn keep(&mut self, fd: OwnedFd, now: Instant) {
        while self.kept.len() >= MAX_KEPT {
            if let Some((oldest, _)) = self.kept.pop_front() {
                let _ = nix::unistd::ftruncate(&oldest, 0);
            }
        }
        self.kept.push_back((fd, now));
    }

    /// Empties every kept file again (at most every [`EMPTY_EVERY`]); closes those kept for
    /// [`KEEP_FOR`].
    pub fn empty_again(&mut self, now: Instant) {
        if self
            .emptied
            .is_some_and(|at| now.saturating_duration_since(at) < EMPTY_EVERY)
        {
            return;
        }
        self.emptied = Some(now);
        for (fd, _) in &self.kept {
            let _ = nix::unistd::ftruncate(fd, 0);
        }
        self.kept
            .retain(|(_, since)| now.saturating_duration_since(*since) < KEEP_FOR);
    }

    pub fn len(&self) -> usize {
        self.kept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn open_rw(path: &std::path::Path) -> anyhow::Result<std::fs::File> {
        Ok(std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)?)
    }

    #[test]
    fn what_a_writer_adds_after_the_removal_is_emptied_at_the_next_sweep() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let path = t.path().join("big");
        let mut writer = open_rw(&path)?;
        writer.write_all(&[1u8; 4096])?;
        let kept = OwnedFd::from(open_rw(&path)?);
        nix::unistd::ftruncate(&kept, 0)?;
        std::fs::remove_file(&path)?;
        let mut removed = RemovedFiles::default();
        let t0 = Instant::now();
        removed.keep(kept, t0);
        // The writer goes on after the removal.
        writer.write_all(&[2u8; 100_000])?;
        assert!(writer.metadata()?.len() > 100_000);
        removed.empty_again(t0 + Duration::from_secs(1));
        assert_eq!(writer.metadata()?.len(), 0, "not emptied again");
        assert_eq!(removed.len(), 1);
        // Not again within EMPTY_EVERY (a flood's sweeps come every few milliseconds).
        writer.write_all(&[4u8; 10])?;
        removed.empty_again(t0 + Duration::from_secs(1) + EMPTY_EVERY / 2);
        assert!(writer.metadata()?.len() > 0, "emptied again too soon");
        // After KEEP_FOR: emptied once more, then let go.
        writer.write_all(&[3u8; 10])?;
        removed.empty_again(t0 + KEEP_FOR);
        assert_eq!(writer.metadata()?.len(), 0);
        assert!(removed.is_empty());
        Ok(())
    }

    #[test]
    fn at_most_max_kept_the_oldest_let_go_first() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let mut removed = RemovedFiles::default();
        let t0 = Instant::now();
        for i in 0..MAX_KEPT + 10 {
            let f = open_rw(&t.path().join(format!("f{i}")))?;
            removed.keep(OwnedFd::from(f), t0);
        }
        assert_eq!(removed.len(), MAX_KEPT);
        Ok(())
    }
}
