//! The decision guard of the approval surfaces (DX-4), sans-IO: a decision key counts only
//! when nothing else arrived in the [`GUARD`] before it — not since the request was shown
//! (the `lazaret run` card drawn, a TUI panel selection changed), and not since the previous
//! input. Keys typed for something else at the moment a request appears, a key held down
//! (auto-repeat arrives every 30–50 ms), a reply of the terminal split across reads, or an
//! unbracketed paste are never a decision: the developer looks, then presses a key.

use std::time::{Duration, Instant};

/// How long the input must have been quiet before a decision key.
pub const GUARD: Duration = Duration::from_millis(300);

#[derive(Debug, Clone, Copy)]
pub struct Guard {
    /// When the request was shown, or the last input arrived, whichever is later.
    last: Instant,
    time: Duration,
}

impl Guard {
    /// A guard for a request shown at `now`.
    pub fn new(now: Instant) -> Guard {
        Guard::with_time(now, GUARD)
    }

    pub fn with_time(now: Instant, time: Duration) -> Guard {
        Guard { last: now, time }
    }

    /// Input arrived at `now`: whether a decision key in it may decide. Every input restarts
    /// the quiet time, admitted or not.
    pub fn admit(&mut self, now: Instant) -> bool {
        let quiet = now.saturating_duration_since(self.last) >= self.time;
        self.last = self.last.max(now);
        quiet
    }

    /// The request shown changed at `now`: the guard starts again.
    pub fn rearm(&mut self, now: Instant) {
        self.last = self.last.max(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn keys_within_the_guard_are_dropped_and_restart_it() {
        let t0 = Instant::now();
        let mut g = Guard::new(t0);
        assert!(!g.admit(t0 + 10 * MS));
        assert!(!g.admit(t0 + 299 * MS));
        // 300 ms after the card but 1 ms after the last key: still dropped.
        assert!(!g.admit(t0 + 300 * MS));
        assert!(g.admit(t0 + 600 * MS));
    }

    #[test]
    fn a_held_key_never_decides() {
        let t0 = Instant::now();
        let mut g = Guard::new(t0);
        // Auto-repeat: a key every 33 ms for 3 s.
        for i in 1..=90 {
            assert!(!g.admit(t0 + i * 33 * MS), "repeat {i}");
        }
        // Released, looked, pressed again.
        assert!(g.admit(t0 + 90 * 33 * MS + GUARD));
    }

    #[test]
    fn rearming_starts_again() {
        let t0 = Instant::now();
        let mut g = Guard::new(t0);
        g.rearm(t0 + 1000 * MS);
        assert!(!g.admit(t0 + 1100 * MS));
        assert!(g.admit(t0 + 1500 * MS));
    }
}
