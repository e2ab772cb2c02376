//! The TUI as a client of coordinator-owned sessions (issue #14): what its Domain links report,
//! detaching (`ctrl-b d`, a lost terminal) versus ending its sessions on quit, showing again the
//! sessions it had, and opening any running session from the session picker.

use super::app::App;
use super::event::AppEvent;
use super::layout::PaneId;
use lazaret_client::link::LinkEvent;
use lazaret_client::target::Target;
use lazaret_protocol::escalation::Decision;
use lazaret_protocol::SessionId;
use std::time::{Duration, Instant};

/// No pane shows the session (a prompt offered to the control centre).
pub const NO_PANE: PaneId = 0;

impl App {
    /// The pane showing `session`.
    pub fn pane_of(&self, session: &str) -> Option<PaneId> {
        self.panes
            .values()
            .find(|p| p.session().is_some_and(|s| s.as_str() == session))
            .map(|p| p.id)
    }

    pub(super) fn link_event(&mut self, domain: &str, event: LinkEvent) {
        match event {
            LinkEvent::Started { token, session } => {
                let pane = PaneId::try_from(token).unwrap_or(NO_PANE);
                let link = self.links.get(domain);
                self.start_failures.remove(domain);
                match (self.panes.get_mut(&pane), link) {
                    (Some(p), Some(link)) => p.started(link, session.session_id),
                    // The pane was closed while its session started: end it again.
                    (None, Some(link)) => link.end(&session.session_id),
                    _ => {}
                }
            }
            LinkEvent::StartFailed { token, reason } => {
                self.start_failures
                    .insert(domain.to_owned(), reason.clone());
                let pane = PaneId::try_from(token).unwrap_or(NO_PANE);
                self.pane_ended_with(pane, Err(reason));
            }
            LinkEvent::Exited {
                session, status, ..
            } => {
                // Control centres are told of every session's end: its activity goes too.
                self.activity.remove(session.as_str());
                if let Some(pane) = self.pane_of(session.as_str()) {
                    self.pane_ended_with(pane, status.ok_or_else(|| "the session ended".into()));
                }
            }
            LinkEvent::Resized {
                session,
                rows,
                cols,
            } => {
                if let Some(p) = self
                    .pane_of(session.as_str())
                    .and_then(|id| self.panes.get(&id))
                {
                    p.follow_session_size(rows, cols);
                }
            }
            LinkEvent::Prompt(prompt) => {
                let pane = self.pane_of(&prompt.session_id).unwrap_or(NO_PANE);
                let Some(link) = self.links.get(domain) else {
                    return;
                };
                let (reply, answer) = std::sync::mpsc::channel::<Decision>();
                let request_id = prompt.request_id.clone();
                std::thread::spawn(move || {
                    if let Ok(decision) = answer.recv() {
                        link.decide(request_id, decision);
                    }
                });
                let whose = if pane == NO_PANE {
                    format!("session {}", short(&prompt.session_id))
                } else {
                    format!("pane {pane}")
                };
                self.request_arrived(pane, &whose, prompt, reply);
            }
            LinkEvent::Withdrawn { request_id, reason } => self.withdrawn(&request_id, &reason),
            LinkEvent::Sessions(_) | LinkEvent::Attached { .. } => {}
            LinkEvent::History {
                session,
                from_end,
                total,
                lines,
            } => {
                let pane = self.pane_of(session.as_str());
                if let Some(p) = pane.and_then(|id| self.panes.get_mut(&id)) {
                    p.history = Some(super::pane_history::RemoteHistory {
                        from_end,
                        total,
                        lines,
                    });
                    p.scroll = p.scroll.min(total as usize);
                }
            }
            LinkEvent::DomainState(state) => {
                // A coordinator sends it: the Domain runs (again).
                self.domain_ends.remove(domain);
                self.domain_states.insert(domain.to_owned(), state);
            }
            LinkEvent::Denials(entries) => {
                self.domain_denials.insert(domain.to_owned(), entries);
            }
            LinkEvent::DestinationAllowed {
                target,
                private,
                save,
                answer,
            } => self.destination_allowed(domain, target, save, answer, private),
            LinkEvent::DestinationDenied { answer, .. } => self.destination_denied(answer),
            LinkEvent::Held(entries) => {
                if entries.is_empty() {
                    self.domain_held.remove(domain);
                } else {
                    self.domain_held.insert(domain.to_owned(), entries);
                }
            }
            LinkEvent::Activity { session, activity } => {
                self.activity_event(session.as_str(), activity);
            }
            LinkEvent::Error(message) => self.message(message),
            LinkEvent::Gone(reason) => {
                self.links.forget(domain);
                self.coordinator_gone(domain, &reason);
                // Nothing is held for a Domain whose coordinator is gone (or not known to be).
                self.domain_held.remove(domain);
                let gone: Vec<PaneId> = self
                    .panes
                    .values()
                    .filter(|p| p.plan.as_ref().is_some_and(|pl| pl.domain_id() == domain))
                    .filter(|p| !p.has_ended())
                    .map(|p| p.id)
                    .collect();
                for pane in gone {
                    self.pane_ended_with(
                        pane,
                        Err(format!(
                            "the Domain's Session Coordinator went away: {reason}"
                        )),
                    );
                }
            }
        }
    }

    /// An escalation prompt is no longer wanted (decided in another client, timed out, its
    /// session ended): it leaves the panel, and the status line says why.
    pub(super) fn withdrawn(&mut self, request_id: &str, reason: &str) {
        if let Some((pane, argv)) = self.escalations.withdraw(request_id, Instant::now()) {
            self.message(super::escalation_panel::withdrawn_note(pane, &argv, reason));
        }
    }

    fn pane_ended_with(&mut self, pane: PaneId, result: Result<i32, String>) {
        let _ = self.events.send(AppEvent::Ended { pane, result });
    }

    /// `quit`: with sessions running, asks whether to end them or detach.
    pub(super) fn ask_quit(&mut self) {
        if self.panes.values().any(|p| p.session().is_some()) {
            self.confirm_quit = true;
        } else {
            self.quit = true;
        }
    }

    /// The answer to the quit question: `e` ends the sessions, `d` detaches, anything else
    /// cancels.
    pub(super) fn quit_key(&mut self, c: Option<char>) {
        self.confirm_quit = false;
        match c {
            Some('e') => self.quit = true,
            Some('d') => self.detach_all(),
            _ => self.message("still here".into()),
        }
    }

    /// Leaves the TUI; every session keeps running in its coordinator.
    pub(super) fn detach_all(&mut self) {
        self.detach_on_exit = true;
        self.quit = true;
    }

    /// `session-picker`: every running Domain's sessions.
    pub(super) fn open_picker(&mut self) {
        match self.launcher.runtime_root() {
            Ok(root) => self.picker = Some(super::picker::Picker::load(&root)),
            Err(e) => self.message(format!("listing the sessions: {e:#}")),
        }
    }

    /// Opens the picked session in a new tab.
    pub(super) fn open_picked(&mut self, i: usize) {
        let Some(picker) = self.picker.take() else {
            return;
        };
        let Some(e) = picker.entries.get(i) else {
            return;
        };
        if !e.session.hosted {
            self.message(format!(
                "session {} runs on the terminal of its `lazaret run` and cannot be shown here \
                 (start sessions with `lazaret run --detachable` to attach to them)",
                short(&e.session.session_id)
            ));
            return;
        }
        let opened = SessionId::parse(&e.session.session_id)
            .map_err(anyhow::Error::from)
            .and_then(|id| {
                let owned = e.session.started_by == "tui";
                self.open_session(&e.workspace, &e.profile, &e.session.command, id, owned)
            });
        if let Err(err) = opened {
            self.message(format!("opening the session: {err:#}"));
        }
    }

    /// Ends or detaches every pane's session, as the developer chose; after ending, waits
    /// (bounded) until each Domain left without sessions has been torn down. Runs on the event
    /// loop: the links' tasks carry the ends out meanwhile.
    pub async fn shut_down(&mut self, events: &mut super::event::AppReceiver) {
        let detach = self.detach_on_exit;
        if detach {
            // The next TUI puts the sessions back into these tabs and splits.
            let hints = super::layout_hint::encode(&self.instance, &self.tabs, self.tab);
            for (pane, hint) in hints {
                if let Some(p) = self.panes.get(&pane) {
                    p.set_layout_hint(hint);
                }
            }
        }
        let mut domains: Vec<(std::sync::Arc<Target>, Vec<String>)> = Vec::new();
        for p in self.panes.values() {
            // Sessions of others (opened from the picker) are only ever detached.
            if detach || !p.owned {
                p.detach();
            } else {
                let ended = p.session().map(|s| s.as_str().to_owned());
                p.close();
                if let Some(plan) = &p.plan {
                    match domains
                        .iter_mut()
                        .find(|(t, _)| t.domain_id() == plan.domain_id())
                    {
                        Some((_, ids)) => ids.extend(ended),
                        None => domains.push((plan.clone(), ended.into_iter().collect())),
                    }
                }
            }
        }
        if !detach {
            // The ends are sent; the sessions exit and leave their Domains.
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline
                && self
                    .panes
                    .values()
                    .any(|p| p.owned && p.session().is_some())
            {
                if let Ok(Some(ev)) =
                    tokio::time::timeout(Duration::from_millis(20), events.recv()).await
                {
                    if matches!(ev, AppEvent::Link { .. } | AppEvent::Ended { .. }) {
                        self.handle(ev);
                    }
                }
            }
        }
        self.links.close_all().await;
        for (target, ended) in domains {
            self.launcher.wait_if_last(&target, &ended);
        }
    }
}

fn short(s: &str) -> &str {
    s.get(..12).unwrap_or(s)
}
