//! What the control centres' panels show, gathered by the coordinator and sent to every
//! client that watches the Domain (issue #14: front ends read no Domain state themselves):
//! the denial ledger every 0.5 s, the Domain's state every 3 s (the State Anchors' sizes every
//! 30 s), each sent only when it changed
//! (and at once to a control centre that starts watching). Nothing is gathered while no
//! control centre watches.
//!
//! Under `default = "ask"` (issue #17) also what the sidecar holds (`held.json`, every 0.5 s),
//! sent when it changed to the control centres and to the Domain's `lazaret run` terminals —
//! the attached `run` and `attach` clients ([`super::SessionHost::terminals`]) and the
//! registered `lazaret run` sessions, which watch [`PanelFeed::watch_held`] — and at once to
//! one that starts watching. Nothing is read when the profile does not ask.

use super::viewer::{Outbound, OutboundSender};
use crate::coordinator::domain_state;
use crate::runtime::denial_ledger;
use lazaret_protocol::domain_state::DomainView;
use lazaret_protocol::held::{HeldEntry, MAX_HELD_ENTRIES};
use lazaret_protocol::messages::{CoordinatorMessage, MAX_DENIALS};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// How often the denial ledger is read while someone watches.
const DENIALS_EVERY: Duration = Duration::from_millis(500);
/// How often the feed looks whether someone watches while nobody does (a control centre or a
/// terminal that starts watching wakes it at once).
const UNWATCHED_EVERY: Duration = Duration::from_secs(10);
/// The Domain state is gathered every this many denial ticks (3 s).
const STATE_EVERY: u32 = 6;
/// The State Anchors' sizes are walked every this many denial ticks (30 s).
const SIZES_EVERY: u32 = 60;

/// What the sidecar held when last read (None: never read).
pub type HeldList = Option<Vec<HeldEntry>>;

/// The last state, denials and held list sent, for clients that start watching.
pub struct PanelFeed {
    state: Option<DomainView>,
    denials: Option<Vec<lazaret_protocol::denial::DenialEntry>>,
    /// The held list; its receivers are the registered `lazaret run` sessions.
    held: watch::Sender<HeldList>,
}

impl Default for PanelFeed {
    fn default() -> PanelFeed {
        PanelFeed {
            state: None,
            denials: None,
            held: watch::channel(None).0,
        }
    }
}

impl PanelFeed {
    /// The last state, denials and held list, for a control centre that starts watching now.
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
        self.greet_held(out);
    }

    /// The last held list, for a client that starts watching it now.
    pub fn greet_held(&self, out: &OutboundSender) {
        if let Some(entries) = self.held.borrow().clone() {
            let _ = out.send(Outbound::Message(CoordinatorMessage::Held { entries }));
        }
    }

    /// The held list as it changes, for a registered `lazaret run` session (its current value
    /// is the greeting).
    pub fn watch_held(&self) -> watch::Receiver<HeldList> {
        self.held.subscribe()
    }

    /// Whether a registered session watches the held list.
    fn held_watched(&self) -> bool {
        self.held.receiver_count() > 0
    }

    /// Nobody watches the held list: it is not kept (it would go stale).
    fn forget_held(&mut self) {
        self.held.send_replace(None);
    }

    /// Keeps what the sidecar holds now (at most [`MAX_HELD_ENTRIES`]); the message for the
    /// watchers when it changed (the registered sessions are told by the watch itself).
    pub fn update_held(&mut self, mut entries: Vec<HeldEntry>) -> Option<CoordinatorMessage> {
        entries.truncate(MAX_HELD_ENTRIES);
        if self.held.borrow().as_ref() == Some(&entries) {
            return None;
        }
        self.held.send_replace(Some(entries.clone()));
        Some(CoordinatorMessage::Held { entries })
    }
}

/// Runs the feed for the host's control centres (and, under `default = "ask"`, its
/// `lazaret run` terminals) until the coordinator's runtime ends.
pub fn spawn(host: Arc<super::SessionHost>, feed: Arc<Mutex<PanelFeed>>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(DENIALS_EVERY);
        let asks = host.asks();
        let mut n: u32 = 0;
        // Whether the held list was read since somebody last watched it.
        let mut held_read = false;
        let mut watched = true;
        loop {
            if watched {
                tick.tick().await;
            } else {
                tokio::select! {
                    _ = tokio::time::sleep(UNWATCHED_EVERY) => {}
                    _ = host.feed_wake.notified() => {}
                }
                tick.reset();
            }
            watched = true;
            let centres = host.centres();
            let terminals = if asks { host.terminals() } else { Vec::new() };
            let sessions = asks && feed.lock().is_ok_and(|f| f.held_watched());
            if centres.is_empty() {
                n = 0;
                if terminals.is_empty() && !sessions {
                    // Unwatched, the list would go stale: the next watcher waits for a read.
                    if std::mem::take(&mut held_read) {
                        if let Ok(mut f) = feed.lock() {
                            f.forget_held();
                        }
                    }
                    watched = false;
                    continue;
                }
            }
            held_read |= asks;
            let spawn = &host.spawn;
            let dir = crate::runtime::sidecar::status_dir(&spawn.domain);
            let want_denials = !centres.is_empty();
            let (denials, held) = tokio::task::spawn_blocking(move || {
                let denials = want_denials.then(|| {
                    let ledger = denial_ledger::path(&dir);
                    let text = std::fs::read_to_string(&ledger).unwrap_or_default();
                    let mut entries = denial_ledger::aggregate(&text);
                    entries.truncate(MAX_DENIALS);
                    entries
                });
                let held = asks.then(|| crate::network::ask::read_held(&dir).held);
                (denials, held)
            })
            .await
            .unwrap_or_default();
            let state = if want_denials && n.is_multiple_of(STATE_EVERY) {
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
            if want_denials {
                n = n.wrapping_add(1);
            }
            let mut msgs = Vec::new();
            let mut held_msg = None;
            if let Ok(mut f) = feed.lock() {
                if let Some(denials) = denials {
                    if f.denials.as_ref() != Some(&denials) {
                        f.denials = Some(denials.clone());
                        msgs.push(CoordinatorMessage::Denials { entries: denials });
                    }
                }
                if let Some(state) = state {
                    if f.state.as_ref() != Some(&state) {
                        f.state = Some(state.clone());
                        msgs.push(CoordinatorMessage::DomainState { state });
                    }
                }
                held_msg = held.and_then(|h| f.update_held(h));
            }
            for out in &centres {
                for m in msgs.iter().chain(held_msg.iter()) {
                    let _ = out.send(Outbound::Message(m.clone()));
                }
            }
            for out in &terminals {
                if let Some(m) = &held_msg {
                    let _ = out.send(Outbound::Message(m.clone()));
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(target: &str, count: u64) -> HeldEntry {
        HeldEntry {
            target: target.into(),
            protocol: "tcp".into(),
            since: 100,
            deadline: 160,
            count,
        }
    }

    fn entries(m: Option<CoordinatorMessage>) -> Option<Vec<HeldEntry>> {
        match m {
            Some(CoordinatorMessage::Held { entries }) => Some(entries),
            Some(other) => panic!("not a held message: {other:?}"),
            None => None,
        }
    }

    #[test]
    fn the_held_list_is_sent_when_it_changed_and_greets_who_starts_watching() {
        let mut feed = PanelFeed::default();
        let (out, mut queue) = tokio::sync::mpsc::unbounded_channel();
        feed.greet_held(&out);
        assert!(queue.try_recv().is_err(), "nothing read yet: no greeting");

        let mut run = feed.watch_held();
        assert!(feed.held_watched());
        assert_eq!(*run.borrow_and_update(), None);

        // The first read is news even when empty; the same list again is not.
        assert_eq!(entries(feed.update_held(Vec::new())), Some(Vec::new()));
        assert!(run.has_changed().unwrap_or(false));
        assert_eq!(*run.borrow_and_update(), Some(Vec::new()));
        assert_eq!(entries(feed.update_held(Vec::new())), None);
        assert!(!run.has_changed().unwrap_or(true));

        let one = vec![held("203.0.113.7:443", 1)];
        assert_eq!(entries(feed.update_held(one.clone())), Some(one.clone()));
        assert_eq!(entries(feed.update_held(one.clone())), None);
        // One more retransmission is a change (the count).
        let again = vec![held("203.0.113.7:443", 2)];
        assert_eq!(
            entries(feed.update_held(again.clone())),
            Some(again.clone())
        );
        assert_eq!(*run.borrow_and_update(), Some(again.clone()));

        // Who starts watching now gets the list at once.
        feed.greet_held(&out);
        match queue.try_recv() {
            Ok(Outbound::Message(CoordinatorMessage::Held { entries })) => {
                assert_eq!(entries, again)
            }
            _ => panic!("no held greeting"),
        }
        let mut late = feed.watch_held();
        assert_eq!(*late.borrow_and_update(), Some(again));

        drop((run, late));
        assert!(!feed.held_watched(), "nobody watches: nothing is read");
        feed.forget_held();
        feed.greet_held(&out);
        assert!(queue.try_recv().is_err(), "a stale list greets nobody");
        assert_eq!(
            entries(feed.update_held(Vec::new())),
            Some(Vec::new()),
            "read again: news"
        );
    }

    #[test]
    fn at_most_max_held_entries_are_sent() {
        let mut feed = PanelFeed::default();
        let many: Vec<HeldEntry> = (0..MAX_HELD_ENTRIES + 5)
            .map(|i| held(&format!("203.0.113.{i}:443"), 1))
            .collect();
        let sent = entries(feed.update_held(many.clone())).unwrap_or_default();
        assert_eq!(sent.len(), MAX_HELD_ENTRIES);
        assert_eq!(sent[..], many[..MAX_HELD_ENTRIES]);
        assert_eq!(
            entries(feed.update_held(many)),
            None,
            "the same after truncation"
        );
    }
}
