//! Signals while a command runs: termination signals end the command (so that teardown and
//! terminal restore run on the normal path) and window-size changes are forwarded.

use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGWINCH};
use signal_hook::iterator::{Handle, Signals};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

/// Termination signals Lazaret intercepts while it owns Domain resources.
pub const TERMINATING: [i32; 4] = [SIGTERM, SIGINT, SIGHUP, SIGQUIT];

/// A background thread handling signals until dropped.
pub struct SignalForwarder {
    handle: Handle,
    thread: Option<std::thread::JoinHandle<()>>,
    received: Arc<AtomicI32>,
}

impl SignalForwarder {
    /// `on_terminate` runs on the first termination signal; `on_winch` on every SIGWINCH.
    /// Lazaret itself never dies of these signals while the handler is installed, so the
    /// session always leaves and the terminal is always restored on the normal path.
    pub fn start(
        on_terminate: impl Fn(i32) + Send + 'static,
        on_winch: impl Fn() + Send + 'static,
    ) -> anyhow::Result<SignalForwarder> {
        let mut list = TERMINATING.to_vec();
        list.push(SIGWINCH);
        let mut signals =
            Signals::new(&list).map_err(|e| anyhow::anyhow!("installing signal handlers: {e}"))?;
        let handle = signals.handle();
        let received = Arc::new(AtomicI32::new(0));
        let seen = received.clone();
        let thread = std::thread::spawn(move || {
            for sig in signals.forever() {
                if sig == SIGWINCH {
                    on_winch();
                } else {
                    if seen
                        .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
                        .is_ok()
                    {
                        tracing::info!(signal = sig, "terminating the command");
                    }
                    on_terminate(sig);
                }
            }
        });
        Ok(SignalForwarder {
            handle,
            thread: Some(thread),
            received,
        })
    }

    /// The first termination signal received, if any.
    pub fn received(&self) -> Option<i32> {
        match self.received.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }
}

impl Drop for SignalForwarder {
    fn drop(&mut self) {
        self.handle.close();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
