//! Raw mode behind a guard, restored on drop and from the panic hook.

use std::sync::atomic::{AtomicBool, Ordering};

static RAW: AtomicBool = AtomicBool::new(false);

/// The host terminal in raw mode; dropping it restores the saved mode.
pub struct RawModeGuard(());

impl RawModeGuard {
    pub fn enable() -> anyhow::Result<RawModeGuard> {
        install_panic_hook();
        crossterm::terminal::enable_raw_mode()
            .map_err(|e| anyhow::anyhow!("putting the terminal in raw mode: {e}"))?;
        RAW.store(true, Ordering::SeqCst);
        Ok(RawModeGuard(()))
    }
}

impl Drop for RawModeGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Restores the terminal if raw mode is on; safe to call more than once. Input still
/// arriving (a terminal's late reply to a query of the sandbox's) is drained first, so the
/// shell never reads it as typed ([`super::drain`]).
pub fn restore() {
    if RAW.swap(false, Ordering::SeqCst) {
        super::drain::drain_stdin();
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| chain_panic_hook(restore));
}

/// Puts `restore` in front of the current panic hook, so that a panic message lands on a
/// usable terminal (the caller makes sure this happens once).
pub fn chain_panic_hook(restore: fn()) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}
