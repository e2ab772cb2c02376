//! `idle_stop` (issue #18): a Domain whose sessions are all coordinator-owned, detached (no
//! client attached, no control centre showing them), without a pending escalation and without
//! input from the developer for this long (whatever the sandbox prints) is stopped: its sessions are ended as `lazaret kill` ends them and
//! the Domain is torn down. Written `"8h"`, `"2d"`, … or seconds; unset or `0` (the default):
//! never — ending a developer's agent is theirs to decide unless they asked for it.

use super::duration::RawDuration;

/// The longest `idle_stop` accepted.
pub const MAX_IDLE_STOP_SECS: u64 = 30 * 86_400;

const WHY_MAX: &str = "use 0 for a Domain that is never stopped for being idle";

/// Seconds of an `idle_stop` as written.
pub fn secs(raw: &RawDuration) -> Result<u64, String> {
    raw.secs("idle_stop", MAX_IDLE_STOP_SECS, WHY_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_stop_takes_days_and_says_how_to_turn_it_off() {
        assert_eq!(secs(&RawDuration::Text("8h".into())), Ok(28_800));
        assert_eq!(secs(&RawDuration::Text("2d".into())), Ok(172_800));
        assert_eq!(secs(&RawDuration::Secs(0)), Ok(0));
        let e = secs(&RawDuration::Text("31d".into())).unwrap_err();
        assert!(e.contains("use 0"), "{e}");
    }
}
