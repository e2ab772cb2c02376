//! The coordinator process's view of the protocol: every lifecycle and session transition is
//! an event of the sans-IO core (named after the TLA+ actions), applied in order and recorded
//! in a trace that tests replay against the model (trace conformance).

use super::core::Rejected;
use super::driver_ports::{carrier, Carrier};
use super::effect::Effect;
use super::event::Event;
use super::state::{CliId, State};
use super::viewers::ViewerId;
use std::fs::File;
use std::io::Write;
use std::path::Path;

pub struct Registry {
    state: State,
    trace: Option<File>,
    next_cli: u64,
    next_viewer: u64,
    /// The startup leader's Client CLI, not yet matched to a connection.
    leader: Option<CliId>,
}

impl Registry {
    /// A registry recording its trace (JSON lines, one event each) to `trace`.
    pub fn new(trace: Option<&Path>) -> Registry {
        let trace = trace.and_then(|p| {
            File::create(p)
                .map_err(|e| tracing::warn!("cannot record the trace in {}: {e}", p.display()))
                .ok()
        });
        Registry {
            state: State::new(),
            trace,
            next_cli: 1,
            next_viewer: 1,
            leader: None,
        }
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    /// Applies one event and returns the effects the core asks for; a rejected event leaves
    /// the state unchanged and is logged.
    pub fn record(&mut self, event: Event) -> Result<Vec<Effect>, Rejected> {
        self.record_quiet(event)
            .inspect_err(|e| tracing::warn!("protocol step refused: {e}"))
    }

    /// As [`Self::record`], for steps that are expected to be refused at times (an escalation
    /// request of a session that has just left): the refusal is logged at debug level only.
    pub fn record_quiet(&mut self, event: Event) -> Result<Vec<Effect>, Rejected> {
        match self.state.apply(&event) {
            Ok(effects) => {
                if let Some(f) = self.trace.as_mut() {
                    if let Ok(line) = serde_json::to_string(&event) {
                        let _ = writeln!(f, "{line}");
                    }
                }
                tracing::debug!(event = event.name(), "protocol step");
                Ok(effects)
            }
            Err(e) => {
                tracing::debug!("protocol step refused: {e}");
                Err(e)
            }
        }
    }

    /// Records a lifecycle step whose effects are all the lifecycle's (the daemon and the
    /// lifecycle driver carry them out: trust, publication, the runtime, the lock); any other
    /// effect is a bug of the table, logged as such.
    pub fn record_lifecycle(&mut self, event: Event) -> Result<(), Rejected> {
        for effect in self.record(event)? {
            if carrier(&effect) != Carrier::Lifecycle {
                tracing::error!(
                    cause = event.name(),
                    ?effect,
                    "an effect of the core has no carrier here"
                );
            }
        }
        Ok(())
    }

    fn fresh_cli(&mut self) -> CliId {
        let id = CliId(self.next_cli);
        self.next_cli += 1;
        id
    }

    /// A fresh Viewer ID for a client connection that will attach to sessions or watch the
    /// Domain (`Event::Attach`, `Event::Watch`). No event: a new viewer is detached.
    pub fn connect_viewer(&mut self) -> ViewerId {
        let id = ViewerId(self.next_viewer);
        self.next_viewer += 1;
        id
    }

    /// The startup leader: the CLI that took the lifecycle lock and started this coordinator.
    pub fn start_as_leader(&mut self) -> Result<CliId, Rejected> {
        let cli = self.fresh_cli();
        self.record_lifecycle(Event::Start { cli })?;
        self.record_lifecycle(Event::BecomeLeader { cli })?;
        self.leader = Some(cli);
        Ok(cli)
    }

    /// A connection that will register: the leader's own, if it has not registered yet,
    /// else a joining CLI.
    pub fn arrive(&mut self) -> Result<CliId, Rejected> {
        if let Some(cli) = self.leader.take() {
            return Ok(cli);
        }
        let cli = self.fresh_cli();
        self.record_lifecycle(Event::Start { cli })?;
        Ok(cli)
    }

    /// Withdraws a startup leader that never registered (before the teardown begins; see
    /// `Engine::begin_teardown`). `CancelJoin` has no effect.
    pub fn withdraw_leader(&mut self) {
        if let Some(cli) = self.leader.take() {
            let _refused_when_not_joining = self.record_lifecycle(Event::CancelJoin { cli });
        }
    }

    /// Number of registered Client Sessions.
    pub fn sessions(&self) -> usize {
        self.state.sessions().count()
    }
}
