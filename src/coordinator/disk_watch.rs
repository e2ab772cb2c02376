//! The profile's `disk` bound watched while the Domain runs (issue #19): the Domain's state
//! (State Anchors and Ignored Workspace State, as `lazaret state list` adds them up) is measured
//! now and then, and going over the bound is reported as a Domain failure — listed by
//! `lazaret ps`, the TUI's Domain panel, and the `lazaret run` whose command ran meanwhile.
//! Nothing stops writes: this host has no unprivileged quota on the Domain's directories
//! (`docs/limits.md`).
//!
//! What is measured is written by the sandbox: the walk never follows a link and costs what the
//! tree's size costs, so the next look waits [`COST_FACTOR`] times as long as the last walk
//! took (at least [`MIN_LOOK`]): the watch takes at most ~0.5 % of a core however large the
//! agent makes the tree.

use std::path::PathBuf;
use std::sync::Weak;
use std::time::Duration;

/// The shortest wait between two looks.
pub const MIN_LOOK: Duration = Duration::from_secs(30);
/// The next look waits at least this many times as long as the last walk took.
pub const COST_FACTOR: u32 = 200;
/// Tests only: the wait between looks, in milliseconds (instead of [`MIN_LOOK`]).
pub const TEST_LOOK_ENV: &str = "LAZARET_TEST_DISK_LOOK_MS";

/// What the watch remembers between looks.
#[derive(Debug, Default)]
pub struct DiskWatch {
    over: bool,
}

impl DiskWatch {
    /// One look: `used` bytes (`partial`: some entries were unreadable) against `bound`.
    /// Returns the failure to report when the state has just gone over the bound (again).
    pub fn look(&mut self, used: u64, partial: bool, bound: u64) -> Option<String> {
        let over = crate::runtime::limits::disk_over(used, partial, bound);
        let crossed = over.is_some() && !self.over;
        self.over = over.is_some();
        over.filter(|_| crossed)
    }
}

/// The wait before the next look after a walk that took `walk`; `min` is the shortest.
pub fn next_look(walk: Duration, min: Duration) -> Duration {
    walk.saturating_mul(COST_FACTOR).max(min)
}

/// Watches the state under `domain_root` against `bound` until the engine is gone.
pub fn spawn(engine: Weak<super::engine::Engine>, domain_root: PathBuf, bound: u64) {
    let min = std::env::var(TEST_LOOK_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(MIN_LOOK, Duration::from_millis);
    let spawned = std::thread::Builder::new()
        .name("disk-watch".into())
        .spawn(move || {
            let mut watch = DiskWatch::default();
            let mut wait = min;
            loop {
                std::thread::sleep(wait);
                if engine.upgrade().is_none() {
                    return;
                }
                let started = std::time::Instant::now();
                let anchors = crate::state::listing::tree_size(&domain_root.join("anchors"));
                let ignored = crate::state::listing::tree_size(&domain_root.join("ignored"));
                let used = anchors.bytes.saturating_add(ignored.bytes);
                wait = next_look(started.elapsed(), min);
                tracing::debug!(used, ms = started.elapsed().as_millis() as u64, "disk look");
                if let Some(failure) = watch.look(used, anchors.partial || ignored.partial, bound) {
                    match engine.upgrade() {
                        Some(engine) => engine.report_failure(failure),
                        None => return,
                    }
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot watch the Domain's disk use: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn going_over_is_reported_once_until_it_comes_back_under() {
        let mut w = DiskWatch::default();
        assert_eq!(w.look(10, false, 100), None);
        let first = w.look(200, false, 100);
        assert!(
            first
                .as_deref()
                .unwrap_or("")
                .contains("over the profile's disk"),
            "{first:?}"
        );
        assert_eq!(
            w.look(300, false, 100),
            None,
            "reported again while still over"
        );
        assert_eq!(w.look(50, false, 100), None);
        assert!(
            w.look(150, true, 100).is_some(),
            "a second crossing is news again"
        );
    }

    #[test]
    fn a_costly_walk_spaces_the_looks_out() {
        assert_eq!(next_look(Duration::from_millis(1), MIN_LOOK), MIN_LOOK);
        assert_eq!(
            next_look(Duration::from_secs(1), MIN_LOOK),
            Duration::from_secs(200)
        );
    }
}
