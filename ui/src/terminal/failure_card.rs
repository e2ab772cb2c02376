//! The Domain-failure card of `lazaret run` (issue #19): a failure the Domain reports while the
//! command runs (the Network Sidecar exited, its state went over the profile's `disk`) is said
//! on the run's terminal when it happens, not only when the command ends. The card takes the
//! terminal as a held-connection card does (one card at a time, never while an escalation
//! prompt shows: the gate's turn), shows the failure escaped (its words may carry podman's or
//! the sandbox's bytes), and gives the terminal back after a key or [`SHOWN_FOR`]. Nothing to
//! decide: the command goes on; `lazaret ps` and `lazaret tui` list the failure, and the run
//! repeats it at its end. Keys pressed while the card shows close it and never reach the
//! sandbox; one pressed within the [`super::guard::GUARD`] after the card appeared (typed for
//! the session) is dropped.

use super::escape;
use super::gate::TerminalGate;
use super::guard::Guard;
use super::held_card::{Screen, Tty};
use super::prompt::{clean_screen, TICK};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a card stays without a key.
pub const SHOWN_FOR: Duration = Duration::from_secs(8);

/// The most failures remembered as shown in one run (the coordinator lists a few at most).
const MAX_SHOWN: usize = 64;

/// The card for `failure`, closing by itself in `left`; `None`: closed (the card stays on the
/// screen until the session's program draws over it).
pub fn card_text(failure: &str, left: Option<Duration>) -> String {
    let last = match left {
        Some(left) => {
            let secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
            format!("any key goes back to the session (by itself in {secs} s)")
        }
        None => "back to the session".to_owned(),
    };
    format!(
        "\x1b[1;31m┌─ lazaret: the Domain reports a failure while your command runs\x1b[0m\r\n\
         │ {}\r\n\
         │ the command goes on; `lazaret ps` lists the failure, and this run repeats it at its end\r\n\
         └─ {last}\r\n",
        escape::visible(failure)
    )
}

/// Shows a card on the run's terminal for each failure first listed during the run, one at a
/// time; ends (closing the card shown) when dropped.
pub struct FailureCards {
    tx: Sender<Vec<String>>,
    closed: Arc<AtomicBool>,
    worker: Option<std::thread::JoinHandle<()>>,
}

impl FailureCards {
    /// Cards on the developer's terminal behind `gate`; the failures in `known` (listed before
    /// the command started) get none.
    pub fn start(gate: Arc<TerminalGate>, known: &[String]) -> FailureCards {
        FailureCards::start_on(gate, known, Box::new(Tty), SHOWN_FOR)
    }

    /// As [`Self::start`], drawn on `screen`, each card shown for `shown_for` without a key.
    pub fn start_on(
        gate: Arc<TerminalGate>,
        known: &[String],
        screen: Box<dyn Screen>,
        shown_for: Duration,
    ) -> FailureCards {
        let (tx, rx) = channel();
        let closed = Arc::new(AtomicBool::new(false));
        let worker = Worker {
            gate,
            screen,
            shown_for,
            closed: closed.clone(),
            rx,
            shown: known.iter().cloned().collect(),
        };
        FailureCards {
            tx,
            closed,
            worker: Some(std::thread::spawn(move || worker.run())),
        }
    }

    /// Where the Domain's failure lists go: the whole list each time it changes. Never blocks.
    pub fn sink(&self) -> impl Fn(Vec<String>) + Send + Sync + 'static {
        let tx = self.tx.clone();
        move |failures| {
            let _ = tx.send(failures);
        }
    }
}

impl Drop for FailureCards {
    /// The run is over: the card shown closes (the terminal goes back first), no other comes.
    fn drop(&mut self) {
        self.closed.store(true, Ordering::SeqCst);
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

struct Worker {
    gate: Arc<TerminalGate>,
    screen: Box<dyn Screen>,
    shown_for: Duration,
    closed: Arc<AtomicBool>,
    rx: Receiver<Vec<String>>,
    /// The failures known before the run or shown during it: never shown again.
    shown: HashSet<String>,
}

impl Worker {
    fn closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    fn run(mut self) {
        while !self.closed() {
            let list = match self.rx.recv_timeout(TICK) {
                Ok(list) => list,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return,
            };
            for failure in list {
                if self.closed() || self.shown.len() >= MAX_SHOWN {
                    break;
                }
                if self.shown.insert(failure.clone()) {
                    self.show(&failure);
                }
            }
        }
    }

    fn redraw(&mut self, text: String, drawn: &mut String) {
        if text != *drawn {
            self.screen.put(&format!("\x1b[H\x1b[J{text}"));
            *drawn = text;
        }
    }

    /// One card, once it is the card's turn.
    fn show(&mut self, failure: &str) {
        let gate = self.gate.clone();
        let _turn = gate.turn();
        if self.closed() {
            return;
        }
        tracing::info!(failure = %escape::visible(failure), "Domain failure shown on the run terminal");
        let mut owned = gate.take();
        // The terminal abandons any unfinished sequence (CLEAN starts with CAN): so does the
        // filter's view of it.
        owned.output.abort();
        let rows = self.screen.rows();
        self.screen.put(&clean_screen(rows));
        let mut drawn = card_text(failure, Some(self.shown_for));
        self.screen.put(&drawn);
        self.screen.settle();
        // Typed before the card was on the screen: meant for the session, not a dismissal.
        while owned.keys.try_recv().is_ok() {}
        let since = Instant::now();
        let mut guard = Guard::new(since);
        let restore = owned.output.modes.restore();
        while !self.closed() {
            let left = self.shown_for.saturating_sub(since.elapsed());
            if left.is_zero() {
                break;
            }
            match owned.keys.recv_timeout(TICK.min(left)) {
                Ok(bytes) if !bytes.is_empty() && guard.admit(Instant::now()) => break,
                Ok(_) | Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            self.redraw(card_text(failure, Some(left)), &mut drawn);
        }
        self.redraw(card_text(failure, None), &mut drawn);
        self.screen.put(&restore);
        drop(owned);
    }
}

#[cfg(test)]
#[path = "failure_card_tests.rs"]
mod tests;
