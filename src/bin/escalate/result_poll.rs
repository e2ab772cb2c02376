//! How often the Escalation Client looks for its result. The result directory is a read-only
//! mount of a host directory, and inotify inside the sandbox does not see the host's writes,
//! so the client polls — each look a lookup through runsc's gofer, a host operation.
//!
//! An auto-approved command's result comes within milliseconds: the first looks are 1 ms
//! apart (issue #18: the round trip < 0.1× `podman exec`). A decision by the developer takes
//! seconds or minutes: after [`FAST_FOR`] the looks are 5 ms apart, after [`SLOW_AFTER`]
//! 25 ms (a request waiting for a person costs the host next to nothing).

use std::time::Duration;

/// How long the first, fast looks go on.
pub const FAST_FOR: Duration = Duration::from_millis(100);
/// From when on the looks are slow.
pub const SLOW_AFTER: Duration = Duration::from_secs(2);

/// The pause before the next look, `waited` after the request was delivered.
pub fn pause(waited: Duration) -> Duration {
    if waited < FAST_FOR {
        Duration::from_millis(1)
    } else if waited < SLOW_AFTER {
        Duration::from_millis(5)
    } else {
        Duration::from_millis(25)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_are_fast_at_first_then_slower_and_never_stop() {
        assert_eq!(pause(Duration::ZERO), Duration::from_millis(1));
        assert_eq!(pause(FAST_FOR), Duration::from_millis(5));
        assert_eq!(pause(SLOW_AFTER), Duration::from_millis(25));
        assert_eq!(
            pause(Duration::from_secs(86_400)),
            Duration::from_millis(25)
        );
        // Over the first two seconds: at most 100 fast looks and 380 others.
        let (mut t, mut looks) = (Duration::ZERO, 0);
        while t < SLOW_AFTER {
            t += pause(t);
            looks += 1;
        }
        assert!(looks <= 480, "{looks}");
    }
}
