//! The Git Sentry's watch while sessions run (issue #13), woken by inotify (issue #18: an idle
//! session costs nothing). Planted control files are renamed aside at once, because host git
//! run meanwhile — another terminal, a shell prompt — would follow them.
//!
//! What the sandbox writes through runsc's gofer are host file operations, so inotify on the
//! directories that hold control files (the workspace, its `.git`, the common dir, worktree
//! dirs) wakes the look at once. The events are only a wake-up: the look itself decides, as
//! before. The watches are renewed *before* each look, so a directory created since the last
//! look is watched from then on, and what was planted in it before is seen by the look itself:
//! no gap between a look and its watches. Looks are at most every [`MIN_PERIOD`] (a busy `git`
//! inside writes `.git` all the time). One happens every [`SAFETY_LOOK`] anyway (a write that
//! makes no event — through a shared memory mapping — or one the kernel's queue dropped), every
//! [`MIN_PERIOD`] while some directories are beyond [`MAX_DIRS`] and unwatched, and every
//! [`MIN_PERIOD`] without inotify, as before.

use super::control;
use crate::wake::WakeFlag;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use std::collections::BTreeSet;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Looks are at least this far apart (the old fixed interval).
pub const MIN_PERIOD: Duration = Duration::from_millis(200);
/// A look happens at least this often, events or not (while every directory is watched).
pub const SAFETY_LOOK: Duration = Duration::from_secs(5);
/// Event reads drained per wake-up (a flood cannot hold the loop).
const MAX_DRAIN: usize = 64;
/// Directories watched at most: the sandbox chooses how many worktree dirs there are, and
/// inotify watches are a per-user budget the developer's own tools (editors) draw on too.
pub const MAX_DIRS: usize = 64;

fn real_dir(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

/// The directories whose entries can be control files of the workspace at `ws` (never through
/// a symlink; at most [`MAX_DIRS`]: beyond them, the safety look covers).
pub fn dirs(ws: &Path) -> BTreeSet<PathBuf> {
    // The control files' own directories first, then worktree admin dirs while the budget lasts.
    let mut out = BTreeSet::from([ws.to_path_buf()]);
    let mut worktrees = Vec::new();
    for o in control::observe(ws) {
        let p = &o.file.path;
        if let Some(parent) = p.parent() {
            out.insert(parent.to_path_buf());
        }
        if real_dir(p) {
            out.insert(p.clone());
            // Worktree admin dirs live one level down (`worktrees/<name>`).
            let w = p.join("worktrees");
            if real_dir(&w) {
                worktrees.push(w);
            }
        }
    }
    for w in worktrees {
        if out.len() >= MAX_DIRS {
            break;
        }
        out.insert(w.clone());
        let entries = std::fs::read_dir(&w).into_iter().flatten().flatten();
        let room = MAX_DIRS.saturating_sub(out.len());
        out.extend(entries.map(|e| e.path()).filter(|d| real_dir(d)).take(room));
    }
    out
}

/// Watches the directories of [`dirs`]; true when all of them could be (none beyond the bound).
fn watch_all(inotify: &Inotify, ws: &Path) -> bool {
    let mask = AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_MODIFY
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_ONLYDIR
        | AddWatchFlags::IN_DONT_FOLLOW;
    let dirs = dirs(ws);
    let mut all = dirs.len() < MAX_DIRS;
    for d in dirs {
        // Adding a watched directory again only renews its mask.
        all &= inotify.add_watch(d.as_path(), mask).is_ok() || !real_dir(&d);
    }
    all
}

/// Runs `look` (the watch's check) whenever the control files may have changed, until `stop`;
/// returns what `look` returned, in order.
pub fn run(ws: &Path, stop: &WakeFlag, mut look: impl FnMut() -> Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok();
    let mut all_watched = inotify.as_ref().is_some_and(|i| watch_all(i, ws));
    let mut last = Instant::now();
    while !stop.is_set() {
        let timeout = if all_watched { SAFETY_LOOK } else { MIN_PERIOD };
        stop.wait_with(inotify.as_ref().map(AsFd::as_fd), timeout);
        if stop.is_set() {
            break;
        }
        if let Some(i) = &inotify {
            for _ in 0..MAX_DRAIN {
                if !i.read_events().is_ok_and(|e| !e.is_empty()) {
                    break;
                }
            }
        }
        let since = last.elapsed();
        if since < MIN_PERIOD {
            std::thread::sleep(MIN_PERIOD - since);
        }
        last = Instant::now();
        all_watched = inotify.as_ref().is_some_and(|i| watch_all(i, ws));
        out.extend(look());
    }
    // Closing an inotify instance waits for an SRCU grace period (10–20 ms): not on the
    // session's way out.
    if let Some(i) = inotify {
        let _ = std::thread::Builder::new()
            .name("inotify-close".into())
            .spawn(move || drop(i));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worktree_dirs_are_watched_but_never_through_a_symlink_nor_without_a_bound() {
        let t = tempfile::tempdir().expect("a temp dir");
        let ws = t.path().join("ws");
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir_all(ws.join(".git/worktrees/a")).expect("mkdir");
        std::fs::create_dir_all(elsewhere.join("secret")).expect("mkdir");
        std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
        std::fs::create_dir_all(ws.join(".git/objects")).expect("objects");
        std::os::unix::fs::symlink(&elsewhere, ws.join(".git/worktrees/b")).expect("symlink");
        let d = dirs(&ws);
        assert!(d.contains(&ws), "{d:?}");
        assert!(d.contains(&ws.join(".git/worktrees/a")), "{d:?}");
        assert!(!d.iter().any(|p| p.starts_with(&elsewhere)), "{d:?}");
        assert!(!d.contains(&ws.join(".git/worktrees/b")), "{d:?}");
        // A sandbox that makes thousands of worktree dirs gets a bounded number of watches.
        for i in 0..200 {
            std::fs::create_dir(ws.join(format!(".git/worktrees/w{i}"))).expect("mkdir");
        }
        assert!(dirs(&ws).len() <= MAX_DIRS);
    }

    /// A worktree dir created while the watch runs is watched from the next look on: what is
    /// planted in it later wakes a look at once, not only at the safety look.
    #[test]
    fn a_file_planted_in_a_new_worktree_dir_wakes_a_look_long_before_the_safety_look() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let t = tempfile::tempdir().expect("a temp dir");
        let ws = t.path().to_path_buf();
        std::fs::create_dir_all(ws.join(".git/worktrees")).expect("mkdir");
        std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
        let stop = Arc::new(WakeFlag::new());
        let seen = Arc::new(AtomicBool::new(false));
        let planted = ws.join(".git/worktrees/x/commondir");
        let watcher = {
            let (ws, stop, seen, planted) =
                (ws.clone(), stop.clone(), seen.clone(), planted.clone());
            std::thread::spawn(move || {
                run(&ws, &stop, || {
                    seen.fetch_or(planted.exists(), Ordering::SeqCst);
                    Vec::new()
                })
            })
        };
        std::thread::sleep(Duration::from_millis(300));
        std::fs::create_dir(ws.join(".git/worktrees/x")).expect("mkdir x");
        // The look the new dir woke has renewed the watches by now.
        std::thread::sleep(MIN_PERIOD * 3);
        let at = Instant::now();
        std::fs::write(&planted, "../../..\n").expect("plant");
        while at.elapsed() < SAFETY_LOOK && !seen.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let looked_after = at.elapsed();
        stop.set();
        let _ = watcher.join();
        assert!(seen.load(Ordering::SeqCst), "never looked at the plant");
        assert!(
            looked_after < SAFETY_LOOK / 2,
            "the plant was looked at only after {looked_after:?}"
        );
    }
}
