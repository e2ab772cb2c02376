//! Alerts outside the TUI (issue #15): when a pane starts needing the developer (its program
//! rang the bell or sent a notification, or an escalation of its session waits), the TUI may
//! ring the host terminal's bell, send its own desktop notification (OSC 9 or OSC 777 with
//! Lazaret's words — never the sandbox's bytes) and run a configured host command with the
//! event as JSON on its stdin. Settings: `[alerts]` of `tui.toml`. Sans-IO: [`Alerter::due`]
//! says what is due; the loop writes the bytes and the launcher runs the command.

use super::layout::PaneId;
use lazaret_protocol::activity::Need;
use std::collections::HashMap;
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

/// One pane that starts needing the developer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alert {
    pub pane: PaneId,
    pub session: String,
    /// `attention` or `escalation`.
    pub kind: &'static str,
    /// What the program sent (escaped by its coordinator; empty for an escalation).
    pub reason: String,
}

impl Alert {
    /// Lazaret's own words for the host terminal: no byte the sandbox chose.
    pub fn text(&self) -> String {
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
                });
            }
            seen.insert(pane, (need, reason));
        }
        self.last = seen;
        out
    }
}

#[cfg(test)]
#[path = "alerts_tests.rs"]
mod tests;
