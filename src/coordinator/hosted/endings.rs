//! Sessions whose process ended but whose attached clients have not been told yet.
//!
//! A session leaves the Domain before its clients hear that it ended (a client waiting for the
//! teardown then never sees it listed). When it was the last session, the Domain's teardown
//! begins at that moment — and tells every connection the Domain is shutting down. The
//! coordinator waits here first, so an attached `lazaret run --detachable` hears its
//! command's exit status, not that the coordinator went away (CI of b49da90 saw the latter).

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

#[derive(Default)]
pub struct Endings {
    untold: Mutex<usize>,
    told: Condvar,
}

/// One session's ending, counted until it is dropped (after its clients were told).
pub struct Ending<'a>(&'a Endings);

impl Endings {
    /// A session's process ended: counted from before it leaves the Domain.
    pub fn begin(&self) -> Ending<'_> {
        *self.lock() += 1;
        Ending(self)
    }

    /// Waits until every ended session's clients were told, at most `limit`; false when the
    /// limit passed first.
    pub fn wait_told(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut untold = self.lock();
        while *untold > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            untold = self
                .told
                .wait_timeout(untold, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }

    fn lock(&self) -> MutexGuard<'_, usize> {
        self.untold.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Ending<'_> {
    fn drop(&mut self) {
        let mut untold = self.0.lock();
        *untold = untold.saturating_sub(1);
        self.0.told.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn waits_for_the_endings_being_told_and_no_longer_than_the_limit() {
        let endings = Arc::new(Endings::default());
        assert!(endings.wait_told(Duration::ZERO), "nothing ending");

        let ending = endings.begin();
        let t = Instant::now();
        assert!(!endings.wait_told(Duration::from_millis(50)));
        assert!(t.elapsed() >= Duration::from_millis(50));

        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = {
            let endings = endings.clone();
            std::thread::spawn(move || {
                let told = endings.wait_told(Duration::from_secs(10));
                let _ = tx.send(());
                told
            })
        };
        std::thread::sleep(Duration::from_millis(30));
        assert!(
            rx.try_recv().is_err(),
            "returned before the ending was told"
        );
        drop(ending);
        assert_eq!(waiter.join().ok(), Some(true));
    }
}
