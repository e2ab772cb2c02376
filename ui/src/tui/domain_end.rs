//! What the Domain panel says once a Domain's coordinator went away (issue #32, D2): its last
//! state would otherwise stay on screen ("coordinator running (pid …)") long after it stopped.
//! The link's end is the first observation: the coordinator closed its socket (with its reason:
//! "the Domain is shutting down", "the Session Coordinator failed: …") or the connection broke.
//! From then on its pid is checked (once a second while it still runs: a coordinator tears its
//! containers down after saying goodbye), so the panel says "stopped" only once it has.
//! Why it went matters most after a failed start: the last session start it refused in that
//! Domain (a profile setup that failed) is kept and shown with it.

use super::app::App;
use lazaret_protocol::domain_state::DomainView;

/// A Domain whose coordinator this TUI is no longer connected to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomainEnd {
    /// The coordinator's pid, when its state was ever received.
    pub pid: Option<u32>,
    /// Whether that pid still ran a coordinator when last checked.
    pub still_runs: bool,
    /// Why, as the coordinator said when it closed (or how the connection ended).
    pub reason: String,
    /// The last session start the coordinator refused in this Domain, if any.
    pub start_failure: Option<String>,
}

impl DomainEnd {
    /// The coordinator of `last` (its last state, if any) went away with `reason`;
    /// `runs(pid)` says whether a pid still runs a coordinator.
    pub fn observe(
        last: Option<&DomainView>,
        reason: &str,
        start_failure: Option<String>,
        runs: impl Fn(u32) -> bool,
    ) -> DomainEnd {
        let pid = last.and_then(|v| v.coordinator).map(|(pid, _)| pid);
        DomainEnd {
            pid,
            still_runs: pid.is_some_and(runs),
            reason: reason.to_owned(),
            start_failure,
        }
    }

    /// The panel's coordinator line: "stopped (pid 4242): the Domain is shutting down".
    pub fn coordinator_text(&self) -> String {
        let Some(pid) = self.pid else {
            // Never heard from: nothing ran that this TUI knows of.
            return format!("not running: {}", self.reason);
        };
        let pid = format!(" (pid {pid})");
        if self.still_runs {
            format!("disconnected{pid}, still running: {}", self.reason)
        } else {
            format!("stopped{pid}: {}", self.reason)
        }
    }
}

/// The state to show for a Domain whose coordinator went away: what was last known of it
/// (its failures, State Anchors), its coordinator as observed; no session runs without it.
pub fn ended_view(last: Option<&DomainView>, domain_id: &str, end: &DomainEnd) -> DomainView {
    let mut view = last.cloned().unwrap_or_else(|| DomainView {
        domain_id: domain_id.to_owned(),
        ..DomainView::default()
    });
    view.coordinator = end.pid.map(|pid| (pid, end.still_runs));
    if !end.still_runs {
        view.sessions.clear();
        view.ports.clear();
    }
    view
}

impl App {
    /// `domain`'s link ended with `reason`: the Domain panel stops claiming its coordinator
    /// runs, and says why it went.
    pub(super) fn coordinator_gone(&mut self, domain: &str, reason: &str) {
        let last = self.domain_states.get(domain);
        let end = DomainEnd::observe(
            last,
            reason,
            self.start_failures.remove(domain),
            lazaret_client::locate::coordinator_runs,
        );
        let view = ended_view(last, domain, &end);
        self.domain_states.insert(domain.to_owned(), view);
        self.domain_ends.insert(domain.to_owned(), end);
    }

    /// Opening `domain`'s link failed (its coordinator could not be started or reached):
    /// the panel says so and why, not just "coordinator none". A link another pane opened
    /// meanwhile wins.
    pub(super) fn coordinator_unreachable(&mut self, domain: &str, reason: &str) {
        if self.links.get(domain).is_some() {
            return;
        }
        self.coordinator_gone(domain, reason);
    }

    /// Checks again whether the coordinators gone from this TUI that still ran have stopped
    /// (each frame; only those, a signal-0 and a small read each). Returns whether one still
    /// runs (the loop then wakes once a second to look again).
    pub fn recheck_ended_coordinators(&mut self, runs: impl Fn(u32) -> bool) -> bool {
        let mut any = false;
        for (domain, end) in self.domain_ends.iter_mut().filter(|(_, e)| e.still_runs) {
            end.still_runs = end.pid.is_some_and(&runs);
            if !end.still_runs {
                let view = ended_view(self.domain_states.get(domain), domain, end);
                self.domain_states.insert(domain.clone(), view);
            }
            any |= end.still_runs;
        }
        any
    }
}

#[cfg(test)]
#[path = "domain_end_tests.rs"]
mod tests;
