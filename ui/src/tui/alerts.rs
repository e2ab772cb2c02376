//! Alerts outside the TUI (issue #15): when a pane starts needing the developer (its program
//! rang the bell or sent a notification, or an escalation of its session waits), or a Domain's
//! sidecar starts holding a connection under `default = "ask"` (issue #17), the TUI may
//! ring the host terminal's bell, send its own desktop notification (OSC 9 or OSC 777 with
//! Lazaret's words — never the sandbox's bytes) and run a configured host command with the
//! event as JSON on its stdin. Settings: `[alerts]` of `tui.toml`. Sans-IO: [`Alerter::due`]
//! and [`HeldAlerter::due`] say what is due; the loop writes the bytes and the launcher runs
//! the command.

use super::layout::PaneId;
use lazaret_protocol::activity::Need;
use lazaret_protocol::held::HeldEntry;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// Lazaret's own desktop notification, if any.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Notify {
    #[default]
    None,
    /// `ESC ] 9 ; text BEL` (iTerm2, WezTerm, Windows Terminal, kitty, foot, …).
    Osc9,
    /// `ESC ] 777 ; notify ; title ; text BEL` (rxvt-unicode, VTE terminals, foot).
    Osc777,
}

impl Notify {
    pub fn parse(s: &str) -> Option<Notify> {
        match s {
            "none" => Some(Notify::None),
            "osc9" => Some(Notify::Osc9),
            "osc777" => Some(Notify::Osc777),
            _ => None,
        }
    }
}

/// `[alerts]` of `tui.toml`; all off by default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AlertSettings {
    pub bell: bool,
    pub notify: Notify,
    /// argv of a host command run per alert, the event as one JSON object on its stdin.
    pub command: Vec<String>,
}

/// One pane that starts needing the developer, or a connection a sidecar starts holding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alert {
    /// The pane (0 for a held connection: no pane's own).
    pub pane: PaneId,
    pub session: String,
    /// `attention`, `escalation` or `held`.
    pub kind: &'static str,
    /// What the program sent (escaped by its coordinator; empty for an escalation), or the held
    /// target (escaped here).
    pub reason: String,
    /// For `held`: how many more destinations started being held with it.
    pub more: usize,
}

/// A held target as the host terminal may be told it: an address and port, or a DNS name of
/// letters, digits, `.`, `-` and `_` (Lazaret formats the first; a name the sandbox chose is
/// shown only when it is that plain); None otherwise.
fn plain_target(target: &str) -> Option<&str> {
    let plain = !target.is_empty()
        && target.len() <= 255
        && target
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':'));
    plain.then_some(target)
}

impl Alert {
    /// Lazaret's own words for the host terminal: no byte the sandbox chose (a held name only
    /// when it is plain, see [`plain_target`]).
    pub fn text(&self) -> String {
        if self.kind == "held" {
            let what = plain_target(&self.reason).unwrap_or("a destination");
            let more = match self.more {
                0 => String::new(),
                n => format!(" (and {n} more)"),
            };
            return format!(
                "Lazaret: network: the sandbox waits for {what}{more} — a allow, d deny in the \
                 denials panel"
            );
        }
        let what = if self.kind == "escalation" {
            "an escalation waits"
        } else {
            "its program called"
        };
        format!("Lazaret: pane {} needs you ({what})", self.pane)
    }

    /// The event for the configured command (one JSON line).
    pub fn json(&self, workspace: &str) -> String {
        serde_json::json!({
            "event": self.kind,
            "pane": self.pane,
            "session_id": self.session,
            "reason": self.reason,
            "workspace": workspace,
            "text": self.text(),
        })
        .to_string()
    }

    /// The bytes for the host terminal under `settings` (bell and/or notification).
    pub fn bytes(&self, settings: &AlertSettings) -> Vec<u8> {
        let mut out = Vec::new();
        if settings.bell {
            out.push(0x07);
        }
        match settings.notify {
            Notify::None => {}
            Notify::Osc9 => out.extend(format!("\x1b]9;{}\x07", self.text()).into_bytes()),
            Notify::Osc777 => {
                out.extend(format!("\x1b]777;notify;Lazaret;{}\x07", self.text()).into_bytes())
            }
        }
        out
    }
}

/// Shortest time between two alerts of one pane: a program that calls again and again with
/// changing text (bell, notification, bell, …) gets one alert per this, not one per call —
/// the sandbox never makes the developer's alert command run in a loop.
pub const ALERT_GAP: Duration = Duration::from_secs(10);

/// What each pane needed when last checked (and why), so that an alert goes out once per
/// call, and when each pane was last alerted for.
#[derive(Default)]
pub struct Alerter {
    last: HashMap<PaneId, (Need, String)>,
    sent: HashMap<PaneId, Instant>,
}

impl Alerter {
    /// The panes' needs now (`pane`, `session`, need, reason); returns the alerts due: a pane
    /// starts needing the developer, an escalation arrives, or the program calls again with
    /// another reason. An escalation decided while the program's call stands is no new call.
    pub fn due(&mut self, at: Instant, now: Vec<(PaneId, String, Need, String)>) -> Vec<Alert> {
        let mut out = Vec::new();
        let mut seen = HashMap::new();
        self.sent
            .retain(|_, sent| at.saturating_duration_since(*sent) < ALERT_GAP);
        for (pane, session, need, reason) in now {
            let fresh = match self.last.get(&pane) {
                _ if need > Need::Attention => false,
                None => true,
                Some((before, _)) if *before > Need::Attention => true,
                Some((Need::Escalation, _)) => false,
                Some((_, why)) => need == Need::Escalation || *why != reason,
            };
            if fresh && !self.sent.contains_key(&pane) {
                self.sent.insert(pane, at);
                let kind = if need == Need::Escalation {
                    "escalation"
                } else {
                    "attention"
                };
                out.push(Alert {
                    pane,
                    session: session.clone(),
                    kind,
                    reason: reason.clone(),
                    more: 0,
                });
            }
            seen.insert(pane, (need, reason));
        }
        self.last = seen;
        out
    }
}

/// Which held connections each Domain's alerts told of, and when the last went out: one
/// alert when a Domain's sidecar starts holding something, at most one per [`ALERT_GAP`] for
/// all Domains (the sandbox chooses how many destinations it tries: it never makes the
/// developer's alert command run in a loop). What starts being held during the gap is told by
/// the next alert, while still held.
#[derive(Default)]
pub struct HeldAlerter {
    told: HashMap<String, HashSet<String>>,
    sent: Option<Instant>,
}

impl HeldAlerter {
    /// What each Domain holds now (by Domain ID); the alert due, if any (the Domain it is for).
    pub fn due(
        &mut self,
        at: Instant,
        held: &HashMap<String, Vec<HeldEntry>>,
    ) -> Option<(String, Alert)> {
        // A target no longer held is forgotten: held again later, it is news again.
        self.told.retain(|domain, told| {
            let now = held.get(domain).map(Vec::as_slice).unwrap_or_default();
            told.retain(|t| now.iter().any(|e| e.target == *t));
            !told.is_empty()
        });
        let mut fresh: Vec<(&String, &HeldEntry)> = Vec::new();
        for (domain, entries) in held {
            let told = self.told.get(domain);
            fresh.extend(
                entries
                    .iter()
                    .filter(|e| !told.is_some_and(|t| t.contains(&e.target)))
                    .map(|e| (domain, e)),
            );
        }
        if fresh.is_empty()
            || self
                .sent
                .is_some_and(|s| at.saturating_duration_since(s) < ALERT_GAP)
        {
            return None;
        }
        fresh.sort_by_key(|(d, e)| (e.since, (*d).clone(), e.target.clone()));
        self.sent = Some(at);
        for (domain, e) in &fresh {
            self.told
                .entry((*domain).clone())
                .or_default()
                .insert(e.target.clone());
        }
        let (domain, first) = fresh[0];
        Some((
            domain.clone(),
            Alert {
                pane: 0,
                session: String::new(),
                kind: "held",
                reason: crate::terminal::escape::visible(&first.target),
                more: fresh.len() - 1,
            },
        ))
    }
}

#[cfg(test)]
#[path = "alerts_tests.rs"]
mod tests;
