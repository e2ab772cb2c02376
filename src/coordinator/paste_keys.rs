//! When the developer last pressed the paste key in each coordinator-owned session (issue #16
//! item 4): the coordinator sees every client's input, so the moment comes from the
//! developer's own terminal, never from the sandbox. The escalation service asks
//! [`PasteKeys::take_read`] before it reads the host clipboard's image for a paste request.

use lazaret_protocol::clipboard::{PASTE_WINDOW, READS_PER_PASTE};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

#[derive(Default)]
pub struct PasteKeys {
    /// Session ID → when its paste key was pressed and the reads left.
    pressed: Mutex<HashMap<String, (Instant, u32)>>,
}

impl PasteKeys {
    /// The paste key reached session `session` at `at`.
    pub fn pressed(&self, session: &str, at: Instant) {
        let mut map = self.pressed.lock().unwrap_or_else(|e| e.into_inner());
        map.retain(|_, (when, _)| at.saturating_duration_since(*when) <= PASTE_WINDOW);
        map.insert(session.to_owned(), (at, READS_PER_PASTE));
    }

    /// Whether `session` may read the clipboard's image now (and one read fewer is left).
    pub fn take_read(&self, session: &str, now: Instant) -> bool {
        let mut map = self.pressed.lock().unwrap_or_else(|e| e.into_inner());
        match map.get_mut(session) {
            Some((when, left))
                if *left > 0 && now.saturating_duration_since(*when) <= PASTE_WINDOW =>
            {
                *left -= 1;
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_read_needs_a_recent_paste_key_of_the_same_session_and_reads_are_counted() {
        let keys = PasteKeys::default();
        let t0 = Instant::now();
        assert!(!keys.take_read("a", t0), "no key pressed yet");
        keys.pressed("a", t0);
        assert!(!keys.take_read("b", t0), "another session's key");
        for _ in 0..READS_PER_PASTE {
            assert!(keys.take_read("a", t0 + Duration::from_secs(1)));
        }
        assert!(
            !keys.take_read("a", t0 + Duration::from_secs(1)),
            "reads used up"
        );
        keys.pressed("a", t0 + Duration::from_secs(2));
        assert!(
            !keys.take_read(
                "a",
                t0 + Duration::from_secs(2) + PASTE_WINDOW + Duration::from_millis(1)
            ),
            "window over"
        );
    }
}
