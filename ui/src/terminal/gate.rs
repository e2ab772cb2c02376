//! Who owns the developer's terminal during `lazaret run`: the sandbox session, or — while the
//! developer is asked about a host command — the escalation prompt (DX-4, TLA+ `Prompt` and
//! `Decide`). While a prompt owns it, the sandbox's output waits (the PTY fills, and the
//! program in the sandbox blocks on its writes) and keystrokes go to the prompt, never to the
//! sandbox; when the prompt ends, both return to the sandbox session.

use super::output_filter::OutputFilter;
use lazaret_protocol::access::TerminalAccess;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Mutex, MutexGuard};

type Redraw = Box<dyn Fn() + Send>;

pub struct TerminalGate {
    /// Held by the passthrough while it filters and writes a chunk of sandbox output, and by
    /// a prompt for its whole life (it reads and resets the sandbox's modes through it).
    output: Mutex<OutputFilter>,
    /// Where keystrokes go while a prompt owns the terminal.
    input: Mutex<Option<Sender<Vec<u8>>>>,
    /// Asks the program in the sandbox to redraw its screen (after a prompt covered it).
    redraw: Mutex<Option<Redraw>>,
    /// Held by an escalation prompt or a held-connection card for its whole turn: one on the
    /// terminal at a time, each checking whether it is still wanted once its turn comes.
    turn: Mutex<()>,
}

/// The terminal, taken from the sandbox session until dropped.
pub struct Owned<'a> {
    gate: &'a TerminalGate,
    /// The sandbox output's filter, with the modes the sandbox set.
    pub output: MutexGuard<'a, OutputFilter>,
    /// Keystrokes typed while the prompt owns the terminal.
    pub keys: Receiver<Vec<u8>>,
}

impl Default for TerminalGate {
    fn default() -> Self {
        TerminalGate::new(TerminalAccess::default())
    }
}

impl TerminalGate {
    /// A gate whose output filter allows what the profile's `access` says.
    pub fn new(access: TerminalAccess) -> TerminalGate {
        TerminalGate {
            output: Mutex::new(OutputFilter::new(access)),
            input: Mutex::new(None),
            redraw: Mutex::new(None),
            turn: Mutex::new(()),
        }
    }

    /// Waits for the turn to show something on the terminal (an escalation prompt, a
    /// held-connection card): one at a time. Take it before [`Self::take`].
    pub fn turn(&self) -> MutexGuard<'_, ()> {
        self.turn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// For the passthrough: hold this while filtering and writing sandbox output.
    pub fn output(&self) -> MutexGuard<'_, OutputFilter> {
        self.output.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// For the passthrough: offers keystrokes to a prompt; true when a prompt took them (they
    /// must not reach the sandbox).
    pub fn route_input(&self, bytes: &[u8]) -> bool {
        let input = self.input.lock().unwrap_or_else(|p| p.into_inner());
        match input.as_ref() {
            Some(tx) => {
                let _ = tx.send(bytes.to_vec());
                true
            }
            None => false,
        }
    }

    /// For the passthrough: how to make the sandbox's program redraw.
    pub fn set_redraw(&self, redraw: Redraw) {
        *self.redraw.lock().unwrap_or_else(|p| p.into_inner()) = Some(redraw);
    }

    /// Takes the terminal: waits until sandbox output is between writes.
    pub fn take(&self) -> Owned<'_> {
        let output = self.output();
        let (tx, keys) = channel();
        *self.input.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
        Owned {
            gate: self,
            output,
            keys,
        }
    }
}

impl Drop for Owned<'_> {
    fn drop(&mut self) {
        *self.gate.input.lock().unwrap_or_else(|p| p.into_inner()) = None;
        if let Some(redraw) = self
            .gate
            .redraw
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            redraw();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn keys_go_to_the_prompt_only_while_it_owns_the_terminal() {
        let gate = TerminalGate::default();
        assert!(!gate.route_input(b"before"));
        let owned = gate.take();
        assert!(gate.route_input(b"a"));
        assert_eq!(owned.keys.try_recv().ok(), Some(b"a".to_vec()));
        drop(owned);
        assert!(!gate.route_input(b"after"));
    }

    #[test]
    fn sandbox_output_waits_for_the_prompt_and_a_redraw_follows() {
        let gate = Arc::new(TerminalGate::default());
        let redraws = Arc::new(AtomicUsize::new(0));
        let r = redraws.clone();
        gate.set_redraw(Box::new(move || {
            r.fetch_add(1, Ordering::SeqCst);
        }));
        let owned = gate.take();
        let writer_gate = gate.clone();
        let wrote = Arc::new(AtomicUsize::new(0));
        let w = wrote.clone();
        let writer = std::thread::spawn(move || {
            let _out = writer_gate.output();
            w.store(1, Ordering::SeqCst);
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(
            wrote.load(Ordering::SeqCst),
            0,
            "output went past the prompt"
        );
        drop(owned);
        let _ = writer.join();
        assert_eq!(wrote.load(Ordering::SeqCst), 1);
        assert_eq!(redraws.load(Ordering::SeqCst), 1);
    }
}
