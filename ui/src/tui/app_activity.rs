//! What the coordinators observed of each session's activity (issue #15), in the TUI: kept per
//! session as pushed, shown on pane borders, tabs and the tab bar's summary, a key that jumps
//! to the next pane that needs the developer, and looking at a pane clears its attention.

use super::alerts::Alert;
use super::app::{App, Focus};
use super::layout::PaneId;
use super::pane::PaneStatus;
use lazaret_protocol::activity::{Need, SessionActivity};

/// Unix ms now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl App {
    /// A coordinator sent a session's activity.
    pub(super) fn activity_event(&mut self, session: &str, activity: SessionActivity) {
        if activity.running {
            self.activity.insert(session.to_owned(), activity);
        } else {
            self.activity.remove(session);
        }
    }

    /// The session shown in `pane`, while it runs.
    fn session_of(&self, pane: PaneId) -> Option<&str> {
        match &self.panes.get(&pane)?.status {
            PaneStatus::Running { session } => Some(session.as_str()),
            _ => None,
        }
    }

    /// What the coordinator last said of the session in `pane`.
    pub fn activity_of(&self, pane: PaneId) -> Option<&SessionActivity> {
        self.activity.get(self.session_of(pane)?)
    }

    /// How much `pane` needs the developer at `now_ms`; escalations of this TUI's own
    /// panel count too.
    pub fn need_of(&self, pane: PaneId, now_ms: u64) -> Need {
        if self.escalations.pending.iter().any(|p| p.pane == pane) {
            return Need::Escalation;
        }
        match (self.session_of(pane), self.activity_of(pane)) {
            (Some(_), Some(a)) => a.need(now_ms),
            (Some(_), None) => Need::Idle,
            (None, _) => Need::Ended,
        }
    }

    /// Panes whose program called for the developer, and escalation requests waiting (in
    /// this TUI's panel, or as the coordinators count them, whichever is more), for the tab bar.
    pub fn needs_summary(&self, now_ms: u64) -> (usize, usize) {
        let attention = self
            .panes
            .keys()
            .filter(|&&p| self.need_of(p, now_ms) == Need::Attention)
            .count();
        let counted: usize = self
            .activity
            .values()
            .map(|a| a.pending_escalations as usize)
            .sum();
        (attention, counted.max(self.escalations.pending.len()))
    }

    /// Whether a pane of tab `tab` needs the developer.
    pub fn tab_needs_you(&self, tab: usize, now_ms: u64) -> bool {
        self.tabs.get(tab).is_some_and(|t| {
            t.panes()
                .into_iter()
                .any(|p| self.need_of(p, now_ms) <= Need::Attention)
        })
    }

    /// Focuses the next pane (in tab order, after the focused one) that needs the developer,
    /// escalations first; says so when none does.
    pub(super) fn jump_to_need(&mut self) {
        let now = now_ms();
        let order: Vec<(usize, PaneId)> = self
            .tabs
            .iter()
            .enumerate()
            .flat_map(|(i, t)| t.panes().into_iter().map(move |p| (i, p)))
            .collect();
        let start = order
            .iter()
            .position(|&(t, p)| t == self.tab && Some(p) == self.focused())
            .map_or(0, |i| i + 1);
        let rotated = order[start.min(order.len())..]
            .iter()
            .chain(order[..start.min(order.len())].iter());
        let best = rotated
            .filter(|&&(_, p)| self.need_of(p, now) <= Need::Attention)
            .min_by_key(|&&(_, p)| self.need_of(p, now));
        match best.copied() {
            Some((tab, pane)) => {
                self.tab = tab;
                if let Some(t) = self.tabs.get_mut(tab) {
                    t.focus = pane;
                }
                self.focus = Focus::Panes;
            }
            None => self.message("no pane needs you".into()),
        }
    }

    /// Alerts outside the TUI for panes that start needing the developer, and for connections
    /// a sidecar starts holding (`[alerts]` of `tui.toml`): the host terminal's bytes are kept
    /// for the next frame, the configured command is run by the launcher. A held connection is
    /// also told in the status line (the panels may be hidden). Returns the alerts sent.
    pub fn send_alerts(&mut self, now_ms: u64) -> Vec<Alert> {
        let needs: Vec<_> = self
            .panes
            .keys()
            .filter_map(|&pane| {
                let session = self.session_of(pane)?.to_owned();
                let reason = self
                    .activity
                    .get(&session)
                    .map(|a| a.attention.clone())
                    .unwrap_or_default();
                Some((pane, session, self.need_of(pane, now_ms), reason))
            })
            .collect();
        let at = std::time::Instant::now();
        let mut due: Vec<(Option<String>, Alert)> = self
            .alerter
            .due(at, needs)
            .into_iter()
            .map(|a| (None, a))
            .collect();
        if let Some((domain, alert)) = self.held_alerter.due(at, &self.domain_held) {
            let more = match alert.more {
                0 => String::new(),
                n => format!(" (and {n} more)"),
            };
            // Another Domain's: which one, by its workspace (the panel shows the focused pane's).
            let whose = match self.plan_of_domain(&domain) {
                Some(p) if domain != self.current_plan().domain_id() => format!(
                    " of {}",
                    crate::terminal::escape::visible(&p.address.workspace.display().to_string())
                ),
                _ => String::new(),
            };
            self.message(format!(
                "network: the sandbox{whose} waits for {}{more} — {}, then a allows · d denies",
                alert.reason,
                self.denials_key()
            ));
            due.push((Some(domain), alert));
        }
        let settings = self.settings.alerts.clone();
        for (domain, alert) in &due {
            self.host_bytes.extend(alert.bytes(&settings));
            if !settings.command.is_empty() {
                let plan = match domain {
                    Some(d) => self.plan_of_domain(d),
                    None => self.panes.get(&alert.pane).and_then(|p| p.plan.as_ref()),
                };
                let workspace = plan
                    .unwrap_or(&self.plan)
                    .address
                    .workspace
                    .display()
                    .to_string();
                self.launcher
                    .alert(&settings.command, &alert.json(&workspace));
            }
        }
        due.into_iter().map(|(_, a)| a).collect()
    }

    /// The plan of a pane of Domain `domain` (or the TUI's own, when it is that Domain's).
    fn plan_of_domain(
        &self,
        domain: &str,
    ) -> Option<&std::sync::Arc<lazaret_client::target::Target>> {
        self.panes
            .values()
            .filter_map(|p| p.plan.as_ref())
            .chain(std::iter::once(&self.plan))
            .find(|p| p.domain_id() == domain)
    }

    /// Whether a frame shows what changes with time alone: a session `working` (its marker
    /// turns `idle`), a held connection (its seconds left).
    pub fn ticking(&self, now_ms: u64) -> bool {
        !self.held.is_empty()
            || self
                .activity
                .values()
                .any(|a| a.need(now_ms) == Need::Working)
    }

    /// The developer looks at the focused pane (the TUI's terminal has focus, and the pane's
    /// keys go to it): its attention is cleared, here and at its coordinator.
    pub fn look_at_focused(&mut self) {
        if !self.host_focused || self.focus != Focus::Panes {
            return;
        }
        let Some(pane) = self.focused() else { return };
        let Some(session) = self.session_of(pane).map(str::to_owned) else {
            return;
        };
        let Some(a) = self.activity.get_mut(&session) else {
            return;
        };
        if a.attention.is_empty() {
            return;
        }
        a.attention.clear();
        let domain = self
            .panes
            .get(&pane)
            .and_then(|p| p.plan.as_ref())
            .unwrap_or(&self.plan)
            .domain_id();
        let link = self.links.get(&domain);
        if let (Some(link), Ok(id)) = (link, lazaret_protocol::SessionId::parse(&session)) {
            link.looked(&id);
        }
    }
}

#[cfg(test)]
#[path = "app_activity_tests.rs"]
mod tests;
