//! What the control centres' panels show, gathered by the coordinator and sent to every
//! client that watches the Domain (issue #14: front ends read no Domain state themselves):
//! the denial ledger every 0.5 s, the Domain's state every 3 s (the State Anchors' sizes every
//! 30 s), each sent only when it changed
//! (and at once to a control centre that starts watching). Nothing is gathered while no
//! control centre watches.

use super::viewer::{Outbound, OutboundSender};
use crate::coordinator::domain_state;
use crate::runtime::denial_ledger;
use lazaret_protocol::domain_state::DomainView;
use lazaret_protocol::messages::{CoordinatorMessage, MAX_DENIALS};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the denial ledger is read while someone watches.
const DENIALS_EVERY: Duration = Duration::from_millis(500);
/// The Domain state is gathered every this many denial ticks (3 s).
const STATE_EVERY: u32 = 6;
/// The State Anchors' sizes are walked every this many denial ticks (30 s).
const SIZES_EVERY: u32 = 60;

/// The last state and denials sent, for control centres that start watching.
#[derive(Default)]
pub struct PanelFeed {
    state: Option<DomainView>,
    denials: Option<Vec<lazaret_protocol::denial::DenialEntry>>,
}

impl PanelFeed {
    /// The last state and denials, for a control centre that starts watching now.
    pub fn greet(&self, out: &OutboundSender) {
        if let Some(state) = &self.state {
            let _ = out.send(Outbound::Message(CoordinatorMessage::DomainState {
                state: state.clone(),
            }));
        }
        if let Some(entries) = &self.denials {
            let _ = out.send(Outbound::Message(CoordinatorMessage::Denials {
                entries: entries.clone(),
            }));
        }
    }
}

/// Runs the feed for the host's control centres until the coordinator's runtime ends.
pub fn spawn(host: Arc<super::SessionHost>, feed: Arc<Mutex<PanelFeed>>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(DENIALS_EVERY);
        let mut n: u32 = 0;
        loop {
            tick.tick().await;
            let centres = host.centres();
            if centres.is_empty() {
                n = 0;
                continue;
            }
            let spawn = &host.spawn;
            let ledger = denial_ledger::path(&crate::runtime::sidecar::status_dir(&spawn.domain));
            let denials = tokio::task::spawn_blocking(move || {
                let text = std::fs::read_to_string(&ledger).unwrap_or_default();
                let mut entries = denial_ledger::aggregate(&text);
                entries.truncate(MAX_DENIALS);
                entries
            })
            .await
            .unwrap_or_default();
            let state = if n.is_multiple_of(STATE_EVERY) {
                let (domain, profile) = (spawn.domain.clone(), spawn.profile.clone());
                let fingerprint = profile.fingerprint();
                let containers = spawn.containers;
                let sizes = match feed.lock() {
                    Ok(f) if !n.is_multiple_of(SIZES_EVERY) => {
                        f.state.as_ref().map(|s| s.anchors.clone())
                    }
                    _ => None,
                };
                let ports = host.ports();
                tokio::task::spawn_blocking(move || {
                    let mut state =
                        domain_state::gather(&domain, &profile, &fingerprint, containers, sizes);
                    state.ports = ports;
                    state
                })
                .await
                .ok()
            } else {
                None
            };
            n = n.wrapping_add(1);
            let mut msgs = Vec::new();
            if let Ok(mut f) = feed.lock() {
                if f.denials.as_ref() != Some(&denials) {
                    f.denials = Some(denials.clone());
                    msgs.push(CoordinatorMessage::Denials { entries: denials });
                }
                if let Some(state) = state {
                    if f.state.as_ref() != Some(&state) {
                        f.state = Some(state.clone());
                        msgs.push(CoordinatorMessage::DomainState { state });
                    }
                }
            }
            for out in centres {
                for m in &msgs {
                    let _ = out.send(Outbound::Message(m.clone()));
                }
            }
        }
    });
}
