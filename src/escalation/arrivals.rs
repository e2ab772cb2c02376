//! Waiting for request records (issue #18: an idle Domain costs nothing): the escalation loop
//! sleeps until the request dir changes, instead of looking at it every 3 ms.
//!
//! Records the sandbox writes arrive through runsc's gofer, which does real file operations on
//! the host's tmpfs, so the host's inotify sees them (created, renamed in, closed after
//! writing). Inotify is only a wake-up: what is in the dir is decided by the sweep that
//! follows, never by the events (the sandbox controls their names and order). A look at the
//! dir every [`SAFETY_LOOK`] still happens, in case an event is lost (queue overflow); a file
//! that grows wakes it too (a file filling the dir's tmpfs is removed as before), at most about
//! every [`MIN_PERIOD`]; without
//! inotify the loop falls back to the old 3 ms poll. Stopping wakes the loop at once
//! ([`Stop`]), so teardown does not wait for a timeout.

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::time::Duration;

/// The fallback poll without inotify (the request's client inside polls its result as often).
pub const FALLBACK_POLL: Duration = Duration::from_millis(3);
/// How often the dir is looked at even without an event.
pub const SAFETY_LOOK: Duration = Duration::from_secs(2);
/// Looks at the dir on a wake-up: a few at once (a request's own events — its temporary file
/// created, written, renamed — each get a look right away), then no more often than every
/// [`MIN_PERIOD`] while the sandbox keeps writing (a file growing to fill the dir, a flood of
/// junk): as often as the old poll, not once per event.
pub const MIN_PERIOD: Duration = FALLBACK_POLL;
/// The most reads of queued events per wake-up (each read takes up to a page of them).
const MAX_DRAIN: usize = 64;
/// How many looks may follow each other at once before [`MIN_PERIOD`] applies.
pub const BURST: u32 = 8;

/// A token bucket of looks ([`BURST`] at once, one more per [`MIN_PERIOD`]).
#[derive(Debug)]
pub struct Pace {
    tokens: f64,
    last: std::time::Instant,
}

impl Pace {
    pub fn new(now: std::time::Instant) -> Pace {
        Pace {
            tokens: f64::from(BURST),
            last: now,
        }
    }

    /// How long to wait before the next look at `now` (zero: at once); takes its token.
    pub fn next(&mut self, now: std::time::Instant) -> Duration {
        let period = MIN_PERIOD.as_secs_f64();
        let refill = now.saturating_duration_since(self.last).as_secs_f64() / period;
        self.tokens = (self.tokens + refill).min(f64::from(BURST));
        self.last = now;
        self.tokens -= 1.0;
        if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.tokens * period)
        }
    }
}

/// Why [`Arrivals::wait`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Woken {
    /// The dir changed (or may have: look).
    Changed,
    /// Nothing happened within the wait.
    TimedOut,
    /// [`Stop::set`] was called.
    Stopped,
}

/// The loop's stop flag, which also wakes a waiting [`Arrivals::wait`].
pub use crate::wake::WakeFlag as Stop;

/// Wake-ups for changes of one directory.
pub struct Arrivals {
    inotify: Option<Inotify>,
}

impl Arrivals {
    /// Watches the directory open at `dir` (through `/proc/self/fd`, so a dir reachable only
    /// by its descriptor — the mailbox's tmpfs in podman's namespace — works too). Without
    /// inotify, [`Arrivals::wait`] sleeps [`FALLBACK_POLL`] and says `Changed`.
    pub fn watch(dir: BorrowedFd<'_>) -> Arrivals {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).and_then(|i| {
            let path = format!("/proc/self/fd/{}", dir.as_raw_fd());
            let mask = AddWatchFlags::IN_CREATE
                | AddWatchFlags::IN_MOVED_TO
                | AddWatchFlags::IN_CLOSE_WRITE
                | AddWatchFlags::IN_MODIFY
                | AddWatchFlags::IN_ONLYDIR;
            i.add_watch(path.as_str(), mask).map(|_| i)
        });
        match inotify {
            Ok(i) => Arrivals { inotify: Some(i) },
            Err(e) => {
                tracing::warn!(
                    "watching the escalation request dir failed ({e}); looking every {} ms",
                    FALLBACK_POLL.as_millis()
                );
                Arrivals { inotify: None }
            }
        }
    }

    /// Whether changes are watched (else the loop polls).
    pub fn watching(&self) -> bool {
        self.inotify.is_some()
    }

    /// Sleeps until the dir changes, `stop` is set, or `max` passes.
    pub fn wait(&self, stop: &Stop, max: Duration) -> Woken {
        if stop.is_set() {
            return Woken::Stopped;
        }
        let Some(inotify) = &self.inotify else {
            std::thread::sleep(FALLBACK_POLL.min(max));
            return if stop.is_set() {
                Woken::Stopped
            } else {
                Woken::Changed
            };
        };
        let mut fds = vec![PollFd::new(inotify.as_fd(), PollFlags::POLLIN)];
        if let Some(wake) = stop.fd() {
            fds.push(PollFd::new(wake, PollFlags::POLLIN));
        }
        let timeout = PollTimeout::try_from(max).unwrap_or(PollTimeout::MAX);
        let ready = poll(&mut fds, timeout);
        if stop.is_set() {
            return Woken::Stopped;
        }
        match ready {
            Ok(0) => Woken::TimedOut,
            Ok(_) => {
                // Drain: the events only woke us. Bounded, so a sandbox writing faster than
                // events are read cannot keep the loop from its sweep.
                for _ in 0..MAX_DRAIN {
                    if !inotify.read_events().is_ok_and(|e| !e.is_empty()) {
                        break;
                    }
                }
                Woken::Changed
            }
            Err(_) => Woken::Changed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn a_burst_of_looks_is_at_once_then_paced() {
        let t0 = Instant::now();
        let mut pace = Pace::new(t0);
        for _ in 0..BURST {
            assert_eq!(pace.next(t0), Duration::ZERO);
        }
        let wait = pace.next(t0);
        assert!(wait > Duration::ZERO && wait <= MIN_PERIOD, "{wait:?}");
        // A quiet spell refills the bucket.
        let later = t0 + MIN_PERIOD * (BURST * 2);
        assert_eq!(pace.next(later), Duration::ZERO);
    }

    #[test]
    fn a_file_created_or_renamed_in_wakes_the_waiter_and_stop_wakes_it_at_once(
    ) -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let dir = std::fs::File::open(t.path())?;
        let arrivals = Arrivals::watch(dir.as_fd());
        assert!(arrivals.watching());
        let stop = Stop::new();
        assert_eq!(
            arrivals.wait(&stop, Duration::from_millis(50)),
            Woken::TimedOut
        );
        let path = t.path().to_path_buf();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            let _ = std::fs::write(path.join(".tmp"), b"{}");
            let _ = std::fs::rename(path.join(".tmp"), path.join("r.json"));
        });
        let started = Instant::now();
        assert_eq!(
            arrivals.wait(&stop, Duration::from_secs(10)),
            Woken::Changed
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        let _ = writer.join();
        // Drained: the next wait times out unless more arrives.
        std::thread::sleep(Duration::from_millis(20));
        while arrivals.wait(&stop, Duration::from_millis(20)) == Woken::Changed {}
        let stop = std::sync::Arc::new(stop);
        let setter = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                stop.set();
            })
        };
        let started = Instant::now();
        assert_eq!(
            arrivals.wait(&stop, Duration::from_secs(10)),
            Woken::Stopped
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        let _ = setter.join();
        Ok(())
    }
}
