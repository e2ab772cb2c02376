//! Replay protection of Escalation Request IDs (SR-8): an ID is remembered from its
//! acceptance for as long as its request is pending, and then for the freshness window, so a
//! copy of a record — made while it waits, or put back after the original was taken — is
//! refused as a replay; later copies are refused as stale by their signed creation time. The
//! memory is bounded: when full, new requests are refused (fail closed) until old IDs expire.
//! IDs are remembered per coordinator: after a restart every session, and with it every Session
//! Anchor, is new, so an old record no longer verifies.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Most request IDs remembered at once.
pub const MAX_REMEMBERED: usize = 65_536;

struct Entry {
    /// Set by whoever finishes the request (its result delivered or its session gone).
    done: Arc<AtomicBool>,
    /// When [`Seen::forget_expired`] first saw it done.
    done_since: Option<Instant>,
}

pub struct Seen {
    window: Duration,
    ids: HashMap<String, Entry>,
}

impl Seen {
    /// Remembers each ID while its request is pending and `window` longer.
    pub fn new(window: Duration) -> Seen {
        Seen {
            window,
            ids: HashMap::new(),
        }
    }

    /// Records `id` as accepted now; refuses an ID already remembered, or any when full.
    pub fn admit(&mut self, id: &str) -> Result<(), &'static str> {
        if self.ids.contains_key(id) {
            return Err("replayed (this request id was seen before)");
        }
        if self.ids.len() >= MAX_REMEMBERED {
            return Err(
                "too many recent requests in this Domain to tell replays apart; try again later",
            );
        }
        let entry = Entry {
            done: Arc::new(AtomicBool::new(false)),
            done_since: None,
        };
        self.ids.insert(id.to_owned(), entry);
        Ok(())
    }

    /// The flag to set when the request `id` is no longer pending. An ID without one (refused
    /// before it was pending) counts as done at once.
    pub fn pending_flag(&mut self, id: &str) -> Arc<AtomicBool> {
        match self.ids.get(id) {
            Some(e) => e.done.clone(),
            None => Arc::new(AtomicBool::new(true)),
        }
    }

    /// Marks `id` done now (a request answered without running, e.g. refused for load).
    pub fn finish(&mut self, id: &str) {
        if let Some(e) = self.ids.get(id) {
            e.done.store(true, Ordering::SeqCst);
        }
    }

    /// Forgets IDs done for longer than the window.
    pub fn forget_expired(&mut self) {
        let now = Instant::now();
        let window = self.window;
        self.ids.retain(|_, e| {
            if e.done_since.is_none() && e.done.load(Ordering::SeqCst) {
                e.done_since = Some(now);
            }
            e.done_since
                .is_none_or(|t| now.saturating_duration_since(t) <= window)
        });
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_refused_while_pending_and_for_the_window_after() {
        let mut seen = Seen::new(Duration::from_millis(50));
        assert_eq!(seen.admit("a"), Ok(()));
        assert!(seen.admit("a").is_err());
        let done = seen.pending_flag("a");
        std::thread::sleep(Duration::from_millis(80));
        seen.forget_expired();
        assert!(seen.admit("a").is_err(), "still pending: remembered");
        done.store(true, Ordering::SeqCst);
        seen.forget_expired();
        assert!(seen.admit("a").is_err(), "done, but within the window");
        std::thread::sleep(Duration::from_millis(80));
        seen.forget_expired();
        assert!(seen.is_empty());
    }

    #[test]
    fn a_full_memory_refuses_new_ids() {
        let mut seen = Seen::new(Duration::from_secs(60));
        for i in 0..MAX_REMEMBERED {
            assert_eq!(seen.admit(&i.to_string()), Ok(()));
        }
        assert!(seen.admit("new").is_err_and(|e| e.contains("too many")));
        assert_eq!(seen.len(), MAX_REMEMBERED);
    }
}
