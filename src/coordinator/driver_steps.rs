//! The engine's one entry for steps of the core (issue #14): [`Engine::step`] records the
//! event and hands every effect it returns to the driver's executor
//! ([`super::driver_ports::carry_out`]) — port effects are carried out through the engine's
//! [`EdgePorts`](super::driver_edges::EdgePorts) under the registry's lock, so in the order of
//! the steps; the others are handed back to the caller, which carries them out (see the
//! table in [`super::driver`]). The helpers here name what a caller does with them, so that
//! no effect is dropped unseen.

use super::core::Rejected;
use super::driver_edges::EdgePorts;
use super::driver_ports::carry_out;
use super::effect::Effect;
use super::engine::Engine;
use super::event::Event;
use super::state::CliId;

impl Engine {
    /// Takes one step of the core: records `event` (in the trace) and carries out its
    /// effects. Returns the effects that are the caller's to carry out (see
    /// [`super::driver_ports::carrier`]), or why the model does not allow the step now (the
    /// refusal is logged at debug level: e.g. a request of a session that has just left).
    #[must_use = "effects handed back are the caller's to carry out"]
    pub fn step(&self, event: Event) -> Result<Vec<Effect>, Rejected> {
        let mut reg = self.registry();
        let effects = reg.record_quiet(event)?;
        Ok(carry_out(&self.edges, &event, effects))
    }

    /// The edges of the requests in flight (Host Escalation opens and stages them).
    pub fn edges(&self) -> &EdgePorts {
        &self.edges
    }

    /// A viewer step (attach, watch, detach); false when the model does not allow it now (e.g.
    /// the session already left). Offers of waiting prompts go through the ports; the
    /// streaming (`AttachViewer`, `DetachViewer`) is the caller's: the session host starts or
    /// stops the stream around this call.
    pub fn viewer_step(&self, event: Event) -> bool {
        self.step(event)
            .map(|handed| {
                caller_carries(&event, handed, |e| {
                    matches!(e, Effect::AttachViewer { .. } | Effect::DetachViewer { .. })
                })
            })
            .is_ok()
    }

    /// A Host Escalation step whose effects all go through the ports (prompts, results,
    /// terminations). A step the model does not allow returns false — e.g. when the session
    /// has left and its requests were dropped with it.
    pub fn escalation_step(&self, event: Event) -> bool {
        self.step(event)
            .map(|handed| caller_carries(&event, handed, |_| false))
            .is_ok()
    }

    /// `Leave`, then (when `tear_down`: no linger) the teardown if it was the last session.
    /// Returns whether the Domain is now stopping.
    pub(super) fn leave_step(&self, cli: CliId, tear_down: bool) -> bool {
        if let Err(e) = self.step(Event::Leave { cli }).map(|handed| {
            caller_carries(&Event::Leave { cli }, handed, |e| {
                matches!(e, Effect::Disconnect { .. } | Effect::DetachViewer { .. })
            })
        }) {
            tracing::warn!("protocol step refused: {e}");
        }
        tear_down && self.begin_teardown()
    }

    /// With no session left: withdraws a startup leader that never registered, then begins
    /// the teardown (`BeginTeardown`). Its lifecycle effects (publication, trust) and the
    /// control centres' detachment are the daemon's teardown; returns whether the Domain is
    /// now stopping.
    pub fn begin_teardown(&self) -> bool {
        let handed = {
            let mut reg = self.registry();
            if reg.sessions() != 0 {
                return false;
            }
            reg.withdraw_leader();
            match reg.record_quiet(Event::BeginTeardown) {
                Ok(effects) => carry_out(&self.edges, &Event::BeginTeardown, effects),
                Err(_) => return false,
            }
        };
        caller_carries(&Event::BeginTeardown, handed, |e| {
            matches!(
                e,
                Effect::WithdrawPublication | Effect::InvalidateTrust | Effect::DetachViewer { .. }
            )
        });
        true
    }

    /// A failure of the running Domain (`Fail`): host processes are terminated and prompts
    /// withdrawn through the ports; the rest is the daemon's recovery. False when the model
    /// does not allow it (already stopping).
    pub fn fail(&self) -> bool {
        match self.step(Event::Fail) {
            Ok(handed) => {
                caller_carries(&Event::Fail, handed, |e| {
                    matches!(
                        e,
                        Effect::WithdrawPublication
                            | Effect::InvalidateTrust
                            | Effect::Disconnect { .. }
                            | Effect::DetachViewer { .. }
                            | Effect::RefuseSession { .. }
                    )
                });
                true
            }
            Err(_) => false,
        }
    }
}

/// The caller of `cause` carries out `handed` itself, by contract, when each is `expected`;
/// anything else is a bug of the table, logged as such.
fn caller_carries(cause: &Event, handed: Vec<Effect>, expected: impl Fn(&Effect) -> bool) {
    for effect in handed.iter().filter(|e| !expected(e)) {
        tracing::error!(
            cause = cause.name(),
            ?effect,
            "an effect of the core has no carrier here"
        );
    }
}

/// `Register`: its `BindSession` is the registration's answer to the CLI.
pub(super) fn bound(handed: Vec<Effect>) {
    caller_carries(&Event::Register { cli: CliId(0) }, handed, |e| {
        matches!(e, Effect::BindSession { .. })
    });
}

/// `Refuse`: its `RefuseSession` is the refusal returned to the CLI.
pub(super) fn refused(handed: Vec<Effect>) {
    caller_carries(&Event::Refuse { cli: CliId(0) }, handed, |e| {
        matches!(e, Effect::RefuseSession { .. })
    });
}
