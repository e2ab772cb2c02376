//! A pane whose program ended (issue #15 "exited 3", issue #16 "the TUI must not vanish
//! silently"): it keeps its final screen and shows the exit status in its border until the
//! developer closes it (Enter in the pane, or the close-pane key). Closing a pane whose session
//! still runs ends the session and the pane leaves at once; the TUI quits when its last pane is
//! closed.

use super::app::App;
use super::keymap::Action;
use super::layout::{Dir, PaneId};
use super::pane::PaneStatus;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::time::Instant;

impl App {
    /// `close-pane`: a running pane's session is ended (the pane leaves when it has); a pane
    /// with no session (ended, or still starting) leaves now.
    pub(super) fn close_focused(&mut self) {
        let Some(id) = self.focused() else {
            return;
        };
        let Some(p) = self.panes.get_mut(&id) else {
            return;
        };
        if p.session().is_some() {
            p.closing = true;
            p.close();
        } else {
            // A starting pane's session, if it starts after all, is ended on `Started`.
            self.remove_pane(id);
        }
    }

    /// A pane's program ended with `result` (its exit status, or why it could not run).
    pub(super) fn pane_ended(&mut self, id: PaneId, result: Result<i32, String>) {
        self.escalations.forget_pane(id, Instant::now());
        // The first end counts: a Domain torn down after its last session exited reports
        // its panes gone too.
        let Some(p) = self.panes.get_mut(&id).filter(|p| !p.has_ended()) else {
            return;
        };
        p.ended();
        p.scroll = 0;
        p.status = match &result {
            Ok(code) => PaneStatus::Exited(*code),
            Err(e) => PaneStatus::Failed(e.clone()),
        };
        if p.closing {
            self.remove_pane(id);
            return;
        }
        let how = match result {
            Ok(code) => format!("exited {code}"),
            Err(e) => e,
        };
        let close = self.close_keys();
        self.message(if self.panes.values().all(|p| p.has_ended()) {
            format!(
                "pane {id}: {how}; every pane has ended: Enter or {close} closes one, the last \
                 closed quits"
            )
        } else {
            format!("pane {id}: {how}; its last screen stays until Enter or {close} closes it")
        });
    }

    /// A key for the focused pane whose program ended: Enter closes it, anything else says how.
    /// Returns false when the focused pane still runs (the key is the program's).
    pub(super) fn key_to_ended_pane(&mut self, k: &KeyEvent) -> bool {
        let Some(id) = self.focused() else {
            return false;
        };
        if !self.panes.get(&id).is_some_and(|p| p.has_ended()) {
            return false;
        }
        if k.code == KeyCode::Enter && k.modifiers == KeyModifiers::NONE {
            self.remove_pane(id);
        } else {
            let close = self.close_keys();
            self.message(format!("pane {id} has ended: Enter or {close} closes it"));
        }
        true
    }

    fn close_keys(&self) -> String {
        match self.settings.keymap.keys(Action::ClosePane).first() {
            Some(k) => format!("{} {k}", self.settings.keymap.prefix()),
            None => "close-pane".to_owned(),
        }
    }

    /// `id` leaves the layout (and its tab when it was the last); no tab left quits the TUI.
    pub(super) fn remove_pane(&mut self, id: PaneId) {
        if let Some(p) = self.panes.remove(&id) {
            p.ended();
        }
        for t in &mut self.tabs {
            if t.panes().contains(&id) && !t.remove(id) {
                t.root = super::layout::Node::Split(Dir::Right, Vec::new());
            }
        }
        self.tabs.retain(|t| !t.panes().is_empty());
        self.tab = self.tab.min(self.tabs.len().saturating_sub(1));
        self.needs_render = true;
        if self.tabs.is_empty() {
            self.quit = true;
        }
    }
}

#[cfg(test)]
#[path = "app_ended_tests.rs"]
mod tests;
