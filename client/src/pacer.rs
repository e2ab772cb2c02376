//! When the next screen update may go out — the TUI's next frame, the coordinator's next screen
//! update to a pane: at once while updates are rare (a key's echo is shown as soon as it
//! arrives, whenever the last update was), at most one per [`FRAME`] under a flood.
//!
//! A token bucket: [`BURST`] frames may be drawn back to back, refilled at one per `FRAME`. A
//! fixed "one frame per FRAME" rule made an echo that came within 8 ms of an unrelated frame (a
//! panel update, the previous key's echo) wait for the rest of the 8 ms: that was the keystroke
//! tail measured in issue #14 (p99 +6.5–10.9 ms against a median of +1 ms). Sans-IO: the caller
//! passes the time.

use std::time::{Duration, Instant};

/// Shortest time between frames under a flood.
pub const FRAME: Duration = Duration::from_millis(8);
/// Frames that may be drawn back to back after a quiet spell.
pub const BURST: u32 = 3;

#[derive(Debug, Clone)]
pub struct Pacer {
    /// Tokens, in units of 1/1000 frame (integers: no float drift).
    credit: u64,
    at: Instant,
    /// Time between frames under a flood.
    frame: Duration,
}

const UNIT: u64 = 1000;

impl Pacer {
    pub fn new(now: Instant) -> Pacer {
        Pacer::with_frame(now, FRAME)
    }

    /// A pacer allowing one frame per `frame` under a flood (at least 1 ms).
    pub fn with_frame(now: Instant, frame: Duration) -> Pacer {
        Pacer {
            credit: u64::from(BURST) * UNIT,
            at: now,
            frame: frame.max(Duration::from_millis(1)),
        }
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at);
        let earned = elapsed.as_micros() * u128::from(UNIT) / self.frame.as_micros();
        let cap = u64::from(BURST) * UNIT;
        self.credit = u64::try_from(earned)
            .unwrap_or(cap)
            .saturating_add(self.credit)
            .min(cap);
        self.at = now;
    }

    /// How long to wait before the next frame may be drawn (zero: now).
    pub fn wait(&mut self, now: Instant) -> Duration {
        self.refill(now);
        if self.credit >= UNIT {
            return Duration::ZERO;
        }
        let missing = UNIT - self.credit;
        let micros = (u128::from(missing) * self.frame.as_micros()).div_ceil(u128::from(UNIT));
        Duration::from_micros(u64::try_from(micros).unwrap_or(u64::MAX))
    }

    /// A frame was drawn at `now`.
    pub fn drew(&mut self, now: Instant) {
        self.refill(now);
        self.credit = self.credit.saturating_sub(UNIT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_after_a_quiet_spell_is_drawn_at_once_even_right_after_another() {
        let t0 = Instant::now();
        let mut p = Pacer::new(t0);
        p.drew(t0);
        // An echo 1 ms after an unrelated frame: no wait.
        assert_eq!(p.wait(t0 + Duration::from_millis(1)), Duration::ZERO);
    }

    #[test]
    fn a_flood_is_paced_to_one_frame_per_frame_time_after_the_burst() {
        let t0 = Instant::now();
        let mut p = Pacer::new(t0);
        let mut now = t0;
        let mut drawn = 0;
        // 100 ms of output arriving continuously: frames as fast as allowed.
        while now < t0 + Duration::from_millis(100) {
            let w = p.wait(now);
            now += w;
            p.drew(now);
            drawn += 1;
            now += Duration::from_micros(100);
        }
        // BURST at once, then one per 8 ms: 3 + 100/8 ≈ 15.
        assert!((14..=16).contains(&drawn), "{drawn} frames");
    }

    #[test]
    fn the_wait_is_never_longer_than_one_frame() {
        let t0 = Instant::now();
        let mut p = Pacer::new(t0);
        for _ in 0..10 {
            p.drew(t0);
        }
        let w = p.wait(t0);
        assert!(w > Duration::ZERO && w <= FRAME, "{w:?}");
        // And the credit comes back with time.
        assert_eq!(p.wait(t0 + FRAME), Duration::ZERO);
    }

    #[test]
    fn a_longer_frame_paces_a_flood_slower() {
        let t0 = Instant::now();
        let frame = Duration::from_millis(33);
        let mut p = Pacer::with_frame(t0, frame);
        for _ in 0..BURST {
            p.drew(t0);
        }
        let w = p.wait(t0);
        assert!(w > FRAME && w <= frame, "{w:?}");
    }

    #[test]
    fn credit_is_capped_at_the_burst() {
        let t0 = Instant::now();
        let mut p = Pacer::new(t0);
        let later = t0 + Duration::from_secs(3600);
        for _ in 0..BURST {
            assert_eq!(p.wait(later), Duration::ZERO);
            p.drew(later);
        }
        assert!(p.wait(later) > Duration::ZERO);
    }
}
