//! The escalations panel's state (sans-IO): pending requests of the TUI's sessions, oldest
//! first, one selected; approve, edit the argv in place, deny; a bounded history of outcomes.
//!
//! A decision applies to the request the developer saw selected (DX-4). Whenever the selected
//! request changes — the developer moved, decided, or the one they had selected was withdrawn
//! (timed out, its session ended, decided elsewhere) — or the panel takes the keyboard, the
//! [`Guard`] starts again: decision keys within its quiet time are dropped with a visible
//! [`EscalationPanel::notice`], and so is every auto-repeated key, so a key already pressed
//! or held never decides a request the developer has not looked at. An edit in progress is
//! abandoned when the selection changes under it.

use super::layout::PaneId;
use crate::terminal::guard::Guard;
use crate::terminal::line_editor::{self, Edit, Key, LineEditor};
use lazaret_protocol::escalation::{Decision, EscalationPrompt};
use std::collections::VecDeque;
use std::sync::mpsc::Sender;
use std::time::Instant;

const HISTORY: usize = 50;

/// Shown when a decision key was dropped by the guard.
pub const KEY_IGNORED: &str =
    "key ignored: this request was just selected, or keys came in quick succession \
     (held?) — look, then press again";
/// Shown when the selected request went away and another one is selected now.
pub const SELECTION_MOVED: &str =
    "the request you had selected was withdrawn (timed out, its session ended or decided \
     elsewhere); check this one before deciding";

/// The status line's note when a pending request was withdrawn (`reason` from the
/// coordinator: "decided in another client (…)", "no decision in time", …). The argv is the
/// sandbox's: shortened here, escaped where it is drawn.
pub fn withdrawn_note(pane: PaneId, argv: &[String], reason: &str) -> String {
    const SHOWN: usize = 60;
    let command = argv.join(" ");
    let command = match command.char_indices().nth(SHOWN) {
        Some((at, _)) => format!("{}…", &command[..at]),
        None => command,
    };
    let whose = if pane == 0 {
        String::new()
    } else {
        format!(" of pane {pane}")
    };
    format!("escalation{whose} withdrawn ({reason}): {command}")
}

pub struct Pending {
    pub pane: PaneId,
    pub prompt: EscalationPrompt,
    reply: Sender<Decision>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub pane: PaneId,
    pub argv: Vec<String>,
    /// "approved", "edited", "denied", "withdrawn".
    pub outcome: &'static str,
}

pub struct EscalationPanel {
    pub pending: Vec<Pending>,
    pub selected: usize,
    /// The selected request's argv being edited.
    pub editing: Option<LineEditor>,
    pub edit_error: Option<String>,
    pub history: VecDeque<Resolved>,
    /// A hint for the developer about the guard (drawn in the panel).
    pub notice: Option<&'static str>,
    /// The selected request is shown whole (`v`), not cut to a few rows a field.
    pub full: bool,
    /// The request ID the guard was last armed for.
    seen: Option<String>,
    guard: Guard,
}

impl Default for EscalationPanel {
    fn default() -> Self {
        EscalationPanel {
            pending: Vec::new(),
            selected: 0,
            editing: None,
            edit_error: None,
            history: VecDeque::new(),
            notice: None,
            full: false,
            seen: None,
            guard: Guard::new(Instant::now()),
        }
    }
}

impl EscalationPanel {
    pub fn push(
        &mut self,
        pane: PaneId,
        prompt: EscalationPrompt,
        reply: Sender<Decision>,
        now: Instant,
    ) {
        self.pending.push(Pending {
            pane,
            prompt,
            reply,
        });
        self.sync(now, false);
    }

    /// The prompt for `request_id` is no longer wanted (timed out, its session left, or
    /// decided elsewhere). Returns the withdrawn request's pane and argv, None when it was not
    /// pending here.
    pub fn withdraw(&mut self, request_id: &str, now: Instant) -> Option<(PaneId, Vec<String>)> {
        let i = self
            .pending
            .iter()
            .position(|p| p.prompt.request_id == request_id)?;
        let p = self.pending.remove(i);
        self.resolved(p.pane, p.prompt.argv.clone(), "withdrawn");
        self.after_removal(i);
        self.sync(now, true);
        Some((p.pane, p.prompt.argv))
    }

    /// A pane ended: its pending requests go with it.
    pub fn forget_pane(&mut self, pane: PaneId, now: Instant) {
        let ids: Vec<String> = self
            .pending
            .iter()
            .filter(|p| p.pane == pane)
            .map(|p| p.prompt.request_id.clone())
            .collect();
        for id in ids {
            let _ = self.withdraw(&id, now);
        }
    }

    pub fn selected(&self) -> Option<&Pending> {
        self.pending.get(self.selected)
    }

    /// The pane whose request is selected (highlighted in the layout).
    pub fn selected_pane(&self) -> Option<PaneId> {
        self.selected().map(|p| p.pane)
    }

    /// The panel took the keyboard at `now`: what it shows selected is newly seen.
    pub fn shown(&mut self, now: Instant) {
        self.guard.rearm(now);
    }

    /// A key that is not a decision reached the panel at `now` (it restarts the quiet time).
    pub fn key(&mut self, now: Instant) {
        self.guard.admit(now);
    }

    /// A decision key auto-repeated by the terminal: never a decision.
    pub fn held(&mut self, now: Instant) {
        self.guard.admit(now);
        self.notice = Some(KEY_IGNORED);
    }

    pub fn up(&mut self, now: Instant) {
        self.guard.admit(now);
        self.selected = self.selected.saturating_sub(1);
        self.notice = None;
        self.sync(now, false);
    }

    pub fn down(&mut self, now: Instant) {
        self.guard.admit(now);
        if self.selected + 1 < self.pending.len() {
            self.selected += 1;
        }
        self.notice = None;
        self.sync(now, false);
    }

    pub fn approve(&mut self, now: Instant) {
        if self.admitted(now) {
            self.decide(Decision::Approve {}, "approved", now);
        }
    }

    pub fn deny(&mut self, now: Instant) {
        if self.admitted(now) {
            self.decide(Decision::Deny {}, "denied", now);
        }
    }

    /// Starts editing the selected request's argv (as a shell-quoted line).
    pub fn edit(&mut self, now: Instant) {
        if !self.admitted(now) {
            return;
        }
        if let Some(p) = self.selected() {
            self.editing = Some(LineEditor::new(&line_editor::join(&p.prompt.argv)));
            self.edit_error = None;
        }
    }

    /// `v`: the selected request whole, or bounded again. Not a decision: it restarts the
    /// guard's quiet time like any other key.
    pub fn toggle_full(&mut self, now: Instant) {
        self.guard.admit(now);
        self.full = !self.full;
    }

    pub fn cancel_edit(&mut self) {
        self.editing = None;
        self.edit_error = None;
    }

    /// A key while editing: Enter approves the edited argv (when it parses), Esc stops editing.
    pub fn edit_key(&mut self, key: &Key, now: Instant) {
        let Some(editor) = self.editing.as_mut() else {
            return;
        };
        match editor.apply(key) {
            Edit::Continue => {}
            Edit::Cancel => self.cancel_edit(),
            Edit::Submit => {
                let parsed = line_editor::split(&editor.text()).and_then(|argv| {
                    let d = Decision::Edit { argv };
                    d.validate().map(|_| d).map_err(|e| e.to_string())
                });
                match parsed {
                    Ok(d) => {
                        self.editing = None;
                        self.decide(d, "edited", now);
                    }
                    Err(e) => self.edit_error = Some(e),
                }
            }
        }
    }

    /// Whether a decision key at `now` counts (else the hint says why it did not).
    fn admitted(&mut self, now: Instant) -> bool {
        self.sync(now, false);
        let quiet = self.guard.admit(now);
        self.notice = if quiet { None } else { Some(KEY_IGNORED) };
        quiet
    }

    /// Re-arms the guard (and abandons an edit) when the selected request is not the one the
    /// guard was armed for; `withdrawn`: it changed because the seen one went away.
    fn sync(&mut self, now: Instant, withdrawn: bool) {
        let id = self.selected().map(|p| p.prompt.request_id.clone());
        if id == self.seen {
            return;
        }
        if withdrawn && self.seen.is_some() && id.is_some() {
            self.notice = Some(SELECTION_MOVED);
        }
        self.seen = id;
        self.full = false;
        self.guard.rearm(now);
        self.cancel_edit();
    }

    fn decide(&mut self, decision: Decision, outcome: &'static str, now: Instant) {
        if self.selected >= self.pending.len() {
            return;
        }
        let p = self.pending.remove(self.selected);
        let argv = match &decision {
            Decision::Edit { argv } if *argv != p.prompt.argv => argv.clone(),
            _ => p.prompt.argv.clone(),
        };
        let outcome = match &decision {
            Decision::Edit { argv } if *argv == p.prompt.argv => "approved",
            _ => outcome,
        };
        let _ = p.reply.send(decision);
        self.resolved(p.pane, argv, outcome);
        self.cancel_edit();
        self.after_removal(self.selected);
        self.sync(now, false);
    }

    fn resolved(&mut self, pane: PaneId, argv: Vec<String>, outcome: &'static str) {
        self.history.push_front(Resolved {
            pane,
            argv,
            outcome,
        });
        self.history.truncate(HISTORY);
    }

    fn after_removal(&mut self, removed: usize) {
        if removed < self.selected || self.selected >= self.pending.len() {
            self.selected = self.selected.saturating_sub(1);
        }
        if self.pending.is_empty() {
            self.selected = 0;
            self.cancel_edit();
        }
    }
}

#[cfg(test)]
#[path = "escalation_panel_tests.rs"]
mod tests;
