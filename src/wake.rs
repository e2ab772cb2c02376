//! A flag that also wakes a thread waiting in `poll(2)`: an eventfd written when it is set.
//! (Issue #18: an idle Domain costs nothing — waiters sleep until something happens instead of
//! looking at a flag on a timer.)

use nix::sys::eventfd::EventFd;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, Ordering};

pub struct WakeFlag {
    flag: AtomicBool,
    wake: Option<EventFd>,
}

impl WakeFlag {
    pub fn new() -> WakeFlag {
        WakeFlag {
            flag: AtomicBool::new(false),
            wake: EventFd::new().ok(),
        }
    }

    /// Sets the flag and wakes whoever polls [`WakeFlag::fd`] (it stays readable).
    pub fn set(&self) {
        self.flag.store(true, Ordering::SeqCst);
        if let Some(wake) = &self.wake {
            let _ = wake.write(1);
        }
    }

    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// The descriptor to poll for readability (None: no eventfd; poll with a timeout).
    pub fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.wake.as_ref().map(AsFd::as_fd)
    }

    /// Sleeps until the flag is set, `other` (an inotify instance, say) is readable, or
    /// `timeout` has passed.
    pub fn wait_with(&self, other: Option<BorrowedFd<'_>>, timeout: std::time::Duration) {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        let mut fds: Vec<PollFd> = other
            .into_iter()
            .chain(self.fd())
            .map(|fd| PollFd::new(fd, PollFlags::POLLIN))
            .collect();
        let _ = poll(
            &mut fds,
            PollTimeout::try_from(timeout).unwrap_or(PollTimeout::MAX),
        );
    }
}

impl Default for WakeFlag {
    fn default() -> Self {
        WakeFlag::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setting_wakes_a_poll() {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        let w = WakeFlag::new();
        assert!(!w.is_set());
        let fd = w.fd().expect("an eventfd");
        let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
        assert_eq!(poll(&mut fds, PollTimeout::ZERO).ok(), Some(0));
        w.set();
        assert!(w.is_set());
        let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
        assert_eq!(poll(&mut fds, PollTimeout::ZERO).ok(), Some(1));
    }
}
