//! When rounds run while the sandbox does (the coordinator's thread): soon after either side's
//! references may have changed, as inotify says — events only; no file or directory of the
//! private directory is opened — and at least every [`SAFETY_ROUND`] for changes no watch
//! sees (a branch in a namespaced directory made after the watch was set).

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
/// A round at least this often.
pub const SAFETY_ROUND: Duration = Duration::from_secs(30);

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

/// Runs rounds until `stop`, each time either side may have changed; `private` is the
/// private directory's host path, `host_dirs` the host's git directories.
pub fn run(boundary: &Boundary, private: &Path, stop: &WakeFlag) {
    let Ok(inotify) = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC) else {
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
        watch_tree(i, private);
        for d in &host_dirs {
            watch_tree(i, d);
        }
    };
    rewatch(&inotify);
    let mut last = Instant::now();
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
            let since = last.elapsed();
            if since < MIN_GAP {
                std::thread::sleep(MIN_GAP - since);
            }
            round(boundary);
            while inotify.read_events().is_ok_and(|e| !e.is_empty()) {}
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
