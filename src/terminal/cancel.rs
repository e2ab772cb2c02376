//! A way to end a running command from another thread (e.g. when the coordinator goes away).

use std::sync::{Arc, Mutex};

type Killer = Box<dyn FnMut() + Send>;

#[derive(Default)]
struct State {
    fired: bool,
    killer: Option<Killer>,
}

/// Cloneable handle: [`Cancel::fire`] kills the command now, or as soon as it is spawned.
#[derive(Clone, Default)]
pub struct Cancel(Arc<Mutex<State>>);

impl Cancel {
    /// Installs how to kill the command; kills at once if already fired.
    pub fn arm(&self, mut killer: Killer) {
        if let Ok(mut s) = self.0.lock() {
            if s.fired {
                killer();
            }
            s.killer = Some(killer);
        }
    }

    /// Forgets the killer once the command has been reaped (its pid may be reused).
    pub fn disarm(&self) {
        if let Ok(mut s) = self.0.lock() {
            s.killer = None;
        }
    }

    pub fn fire(&self) {
        if let Ok(mut s) = self.0.lock() {
            s.fired = true;
            if let Some(k) = s.killer.as_mut() {
                k();
            }
        }
    }

    pub fn fired(&self) -> bool {
        self.0.lock().map(|s| s.fired).unwrap_or(false)
    }
}
