//! A [`Screen`] for the card tests (held connections, Domain failures): what the cards wrote,
//! kept as text.

use super::held_card::Screen;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The rows the recorded screen says it has.
pub const ROWS: u16 = 24;

#[derive(Clone, Default)]
pub struct Recorded(Arc<Mutex<String>>);

impl Recorded {
    pub fn text(&self) -> String {
        self.0.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Waits (5 s at most) until what was written satisfies `pred`.
    pub fn wait(&self, what: &str, pred: impl Fn(&str) -> bool) {
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if pred(&self.text()) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("waiting for {what}: {:?}", self.text());
    }
}

impl Screen for Recorded {
    fn put(&mut self, text: &str) {
        if let Ok(mut s) = self.0.lock() {
            s.push_str(text);
        }
    }

    fn settle(&mut self) {}

    fn rows(&self) -> u16 {
        ROWS
    }
}
