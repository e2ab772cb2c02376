//! The escalations panel's state (sans-IO): pending requests of the TUI's sessions, oldest
//! first, one selected; approve, edit the argv in place, deny; a bounded history of outcomes.

use super::layout::PaneId;
use crate::terminal::line_editor::{self, Edit, Key, LineEditor};
use lazaret_protocol::escalation::{Decision, EscalationPrompt};
use std::collections::VecDeque;
use std::sync::mpsc::Sender;

const HISTORY: usize = 50;

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

#[derive(Default)]
pub struct EscalationPanel {
    pub pending: Vec<Pending>,
    pub selected: usize,
    /// The selected request's argv being edited.
    pub editing: Option<LineEditor>,
    pub edit_error: Option<String>,
    pub history: VecDeque<Resolved>,
}

impl EscalationPanel {
    pub fn push(&mut self, pane: PaneId, prompt: EscalationPrompt, reply: Sender<Decision>) {
        self.pending.push(Pending {
            pane,
            prompt,
            reply,
        });
    }

    /// The prompt for `request_id` is no longer wanted (timed out, or its session left).
    pub fn withdraw(&mut self, request_id: &str) {
        if let Some(i) = self
            .pending
            .iter()
            .position(|p| p.prompt.request_id == request_id)
        {
            let p = self.pending.remove(i);
            self.resolved(p.pane, p.prompt.argv, "withdrawn");
            self.after_removal(i);
        }
    }

    /// A pane ended: its pending requests go with it.
    pub fn forget_pane(&mut self, pane: PaneId) {
        let ids: Vec<String> = self
            .pending
            .iter()
            .filter(|p| p.pane == pane)
            .map(|p| p.prompt.request_id.clone())
            .collect();
        for id in ids {
            self.withdraw(&id);
        }
    }

    pub fn selected(&self) -> Option<&Pending> {
        self.pending.get(self.selected)
    }

    /// The pane whose request is selected (highlighted in the layout).
    pub fn selected_pane(&self) -> Option<PaneId> {
        self.selected().map(|p| p.pane)
    }

    pub fn up(&mut self) {
        self.selected = self.selected.saturating_sub(1);
        self.cancel_edit();
    }

    pub fn down(&mut self) {
        if self.selected + 1 < self.pending.len() {
            self.selected += 1;
        }
        self.cancel_edit();
    }

    pub fn approve(&mut self) {
        self.decide(Decision::Approve {}, "approved");
    }

    pub fn deny(&mut self) {
        self.decide(Decision::Deny {}, "denied");
    }

    /// Starts editing the selected request's argv (as a shell-quoted line).
    pub fn edit(&mut self) {
        if let Some(p) = self.selected() {
            self.editing = Some(LineEditor::new(&line_editor::join(&p.prompt.argv)));
            self.edit_error = None;
        }
    }

    pub fn cancel_edit(&mut self) {
        self.editing = None;
        self.edit_error = None;
    }

    /// A key while editing: Enter approves the edited argv (when it parses), Esc stops editing.
    pub fn edit_key(&mut self, key: &Key) {
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
                        self.decide(d, "edited");
                    }
                    Err(e) => self.edit_error = Some(e),
                }
            }
        }
    }

    fn decide(&mut self, decision: Decision, outcome: &'static str) {
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
mod tests {
    use super::*;

    fn prompt(id: &str, argv: &[&str]) -> EscalationPrompt {
        EscalationPrompt {
            request_id: id.into(),
            profile: "shell".into(),
            session_id: "s".into(),
            argv: argv.iter().map(|s| s.to_string()).collect(),
            cwd: "/workspace".into(),
            host_cwd: "/h".into(),
            justification: String::new(),
            timeout_secs: 30,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn decisions_reach_the_right_request_and_are_remembered() {
        let mut panel = EscalationPanel::default();
        let (tx1, rx1) = std::sync::mpsc::channel();
        let (tx2, rx2) = std::sync::mpsc::channel();
        panel.push(1, prompt("r1", &["git", "push"]), tx1);
        panel.push(2, prompt("r2", &["echo", "hi"]), tx2);
        panel.down();
        assert_eq!(panel.selected_pane(), Some(2));
        panel.edit();
        let editor = panel.editing.as_mut().map(|e| e.text());
        assert_eq!(editor.as_deref(), Some("echo hi"));
        for k in [
            Key::KillToStart,
            Key::Char('e'),
            Key::Char('c'),
            Key::Char('h'),
        ] {
            panel.edit_key(&k);
        }
        for c in " 'a b'".chars() {
            panel.edit_key(&Key::Char(c));
        }
        panel.edit_key(&Key::Enter);
        assert_eq!(
            rx2.try_recv().ok(),
            Some(Decision::Edit {
                argv: vec!["ech".into(), "a b".into()]
            })
        );
        assert_eq!(panel.selected_pane(), Some(1));
        panel.deny();
        assert_eq!(rx1.try_recv().ok(), Some(Decision::Deny {}));
        assert!(panel.pending.is_empty());
        let outcomes: Vec<_> = panel.history.iter().map(|r| (r.pane, r.outcome)).collect();
        assert_eq!(outcomes, vec![(1, "denied"), (2, "edited")]);
    }

    #[test]
    fn an_unbalanced_edit_is_refused_and_withdrawals_are_recorded() {
        let mut panel = EscalationPanel::default();
        let (tx, rx) = std::sync::mpsc::channel();
        panel.push(1, prompt("r1", &["ls"]), tx);
        panel.edit();
        panel.edit_key(&Key::Char('\''));
        panel.edit_key(&Key::Enter);
        assert!(panel.edit_error.is_some());
        assert!(rx.try_recv().is_err());
        panel.withdraw("r1");
        assert!(panel.pending.is_empty() && panel.editing.is_none());
        assert_eq!(panel.history[0].outcome, "withdrawn");
    }
}
