//! When rounds run while the sandbox does (the coordinator's thread): soon after either side's
//! references may have changed, as inotify says — events only; no file or directory of the
//! private directory is opened. What is watched: each git directory's top (`HEAD`,
//! `packed-refs`, `index`), `refs/heads`, `refs/tags`, `refs/remotes`, and the directories of
//! the references the last round listed (`refs/heads/feature` for `refs/heads/feature/x`;
//! at most [`MAX_DIRS`]). A round runs at least every [`SAFETY_ROUND`] for what no watch sees
//! (a reference in a directory made since the last round).

use super::Boundary;
use crate::wake::WakeFlag;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use std::os::fd::AsFd;
use std::path::Path;
use std::time::{Duration, Instant};

/// Quiet time after an event before a round (a commit writes several files).
const SETTLE: Duration = Duration::from_millis(40);
/// Least time between two rounds.
const MIN_GAP: Duration = Duration::from_millis(150);
/// Least time between two rounds while events keep causing rounds that move nothing (more
/// than [`BUSY_ROUNDS`] in [`BUSY_WINDOW`]): a flood of events from inside costs the host a
/// round a second, not six.
const BUSY_GAP: Duration = Duration::from_secs(1);
const BUSY_ROUNDS: usize = 12;
const BUSY_WINDOW: Duration = Duration::from_secs(4);
/// A round at least this often.
pub const SAFETY_ROUND: Duration = Duration::from_secs(120);
/// Most reference directories watched besides the fixed ones.
pub const MAX_DIRS: usize = 512;

fn mask() -> AddWatchFlags {
    AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_ONLYDIR
        | AddWatchFlags::IN_DONT_FOLLOW
}

/// Watches `root` and its `refs`, `refs/heads`, `refs/tags`, `refs/remotes` by path: inotify
/// opens nothing (a directory the sandbox swapped for a symlink at most brings events from
/// elsewhere, and the last component is never followed).
fn watch_tree(inotify: &Inotify, root: &Path) {
    for d in ["", "refs", "refs/heads", "refs/tags", "refs/remotes"] {
        let _ = inotify.add_watch(&root.join(d), mask());
    }
}

/// Runs `first` once the watches are set, then rounds until `stop`, each time either side may
/// have changed; `private` is the private directory's host path.
pub fn run(boundary: &Boundary, private: &Path, stop: &WakeFlag, first: impl FnOnce()) {
    let Ok(inotify) = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC) else {
        first();
        tracing::warn!(
            "git boundary: no inotify; rounds every {} s only",
            SAFETY_ROUND.as_secs()
        );
        while !stop.is_set() {
            stop.wait_with(None, SAFETY_ROUND);
            if !stop.is_set() {
                round(boundary);
            }
        }
        return;
    };
    let host_dirs = [
        boundary.layout.repo.git_dir.clone(),
        boundary.layout.common_dir.clone(),
    ];
    let rewatch = |i: &Inotify| {
        let dirs: Vec<String> = boundary
            .seen_dirs
            .lock()
            .map(|d| d.iter().cloned().collect())
            .unwrap_or_default();
        for root in std::iter::once(private).chain(host_dirs.iter().map(|d| d.as_path())) {
            watch_tree(i, root);
            for d in &dirs {
                let _ = i.add_watch(&root.join(d), mask());
            }
        }
    };
    rewatch(&inotify);
    // Watched first: what changes while `first` runs (a round) is seen after it.
    first();
    let mut last = Instant::now();
    let mut recent: std::collections::VecDeque<Instant> = Default::default();
    while !stop.is_set() {
        stop.wait_with(Some(inotify.as_fd()), SAFETY_ROUND);
        if stop.is_set() {
            break;
        }
        // Drain, then let the writer finish.
        let mut any = false;
        while inotify.read_events().is_ok_and(|e| !e.is_empty()) {
            any = true;
            std::thread::sleep(SETTLE);
        }
        if any || last.elapsed() >= SAFETY_ROUND {
            while recent.front().is_some_and(|t| t.elapsed() > BUSY_WINDOW) {
                recent.pop_front();
            }
            let gap = if recent.len() >= BUSY_ROUNDS {
                BUSY_GAP
            } else {
                MIN_GAP
            };
            let since = last.elapsed();
            if since < gap {
                std::thread::sleep(gap - since);
            }
            let started = Instant::now();
            // Events that arrive while the round runs are kept: a change made meanwhile (the
            // developer's next commit) needs a round of its own. The round's own writes cost one
            // more round that finds nothing to do.
            round(boundary);
            if !boundary.moved.load(std::sync::atomic::Ordering::Relaxed) {
                recent.push_back(started);
            }
            last = Instant::now();
            rewatch(&inotify);
        }
    }
    let _ = std::thread::Builder::new()
        .name("inotify-close".into())
        .spawn(move || drop(inotify));
}

fn round(boundary: &Boundary) {
    if let Err(e) = boundary.round() {
        tracing::warn!("git boundary: {e}");
    }
}
