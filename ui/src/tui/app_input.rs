//! What keys and the mouse do to the TUI: the prefix and its commands, keys for the focused
//! pane (encoded for its modes), the panels' keys, clicks and the wheel.

use super::app::{App, Focus};
use super::input;
use super::keymap::PanelAction;
use crate::terminal::line_editor::{Edit, Key};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};
use ratatui::layout::Rect;
use std::time::Instant;

pub(super) fn key_of(k: &KeyEvent) -> Key {
    let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
    match k.code {
        KeyCode::Char('c') if ctrl => Key::Interrupt,
        KeyCode::Char('u') if ctrl => Key::KillToStart,
        KeyCode::Char('w') if ctrl => Key::KillWord,
        KeyCode::Char('a') if ctrl => Key::Home,
        KeyCode::Char('e') if ctrl => Key::End,
        KeyCode::Char(_) if ctrl => Key::Other,
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Enter => Key::Enter,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Delete => Key::Delete,
        KeyCode::Left => Key::Left,
        KeyCode::Right => Key::Right,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        KeyCode::Esc => Key::Escape,
        _ => Key::Other,
    }
}

impl App {
    pub(super) fn key_to_pane(&mut self, k: &KeyEvent) {
        if self.key_to_ended_pane(k) {
            return;
        }
        let Some(p) = self.focused().and_then(|id| self.panes.get_mut(&id)) else {
            return;
        };
        let was_scrolled = p.scroll > 0;
        p.scroll = 0;
        let bytes = input::encode_key(k, &p.emulator().modes());
        self.needs_render = was_scrolled;
        if !bytes.is_empty() {
            p.write(&bytes);
        }
    }

    fn panel_key(&mut self, k: &KeyEvent) {
        let now = Instant::now();
        match self.focus {
            Focus::Escalations if self.escalations.editing.is_some() => {
                self.escalations.edit_key(&key_of(k), now);
                self.back_to_panes_when_done();
            }
            Focus::Escalations if k.code == KeyCode::Char('v') => self.escalations.toggle_full(now),
            Focus::Escalations => match self.settings.keymap.in_panel(k) {
                // Auto-repeat is a key held down, never a decision (DX-4).
                Some(PanelAction::Approve | PanelAction::Edit | PanelAction::Deny)
                    if k.kind == KeyEventKind::Repeat =>
                {
                    self.escalations.held(now)
                }
                Some(PanelAction::Approve) => {
                    self.escalations.approve(now);
                    self.back_to_panes_when_done();
                }
                Some(PanelAction::Edit) => self.escalations.edit(now),
                Some(PanelAction::Deny) => {
                    self.escalations.deny(now);
                    self.back_to_panes_when_done();
                }
                Some(PanelAction::Up) => self.escalations.up(now),
                Some(PanelAction::Down) => self.escalations.down(now),
                Some(PanelAction::Back) => self.focus = Focus::Panes,
                None => self.escalations.key(now),
            },
            Focus::Denials if self.filtering => match k.code {
                KeyCode::Enter | KeyCode::Esc => self.filtering = false,
                KeyCode::Backspace => {
                    self.denial_filter.pop();
                }
                KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
                    self.denial_filter.push(c)
                }
                _ => {}
            },
            Focus::Denials if self.net_confirm.is_some() => {
                self.confirm_key(matches!(k.code, KeyCode::Char('y') | KeyCode::Char('Y')))
            }
            Focus::Denials if k.code == KeyCode::Char('/') => self.filtering = true,
            Focus::Denials if matches!(k.code, KeyCode::Up | KeyCode::Char('k')) => {
                self.denial_up()
            }
            Focus::Denials if matches!(k.code, KeyCode::Down | KeyCode::Char('j')) => {
                self.denial_down()
            }
            Focus::Denials if k.kind == KeyEventKind::Repeat => {}
            Focus::Denials if k.code == KeyCode::Char('a') => self.allow_selected(false, false),
            Focus::Denials if k.code == KeyCode::Char('w') => self.allow_selected(false, true),
            Focus::Denials if k.code == KeyCode::Char('s') => self.allow_selected(true, false),
            Focus::Denials if k.code == KeyCode::Char('d') => self.deny_selected(),
            _ if k.code == KeyCode::Esc => self.focus = Focus::Panes,
            _ => {}
        }
    }

    /// The last pending request was decided: the keyboard goes back to the panes.
    fn back_to_panes_when_done(&mut self) {
        if self.escalations.pending.is_empty() {
            self.focus = Focus::Panes;
        }
    }

    pub(super) fn key(&mut self, k: &KeyEvent) {
        if !matches!(k.kind, KeyEventKind::Press | KeyEventKind::Repeat) {
            return;
        }
        if self.help {
            self.help = false;
            return;
        }
        if self.confirm_quit {
            let c = match k.code {
                crossterm::event::KeyCode::Char(c) => Some(c),
                _ => None,
            };
            self.quit_key(c);
            return;
        }
        if let Some(picker) = self.picker.as_mut() {
            match picker.key(k.code) {
                super::picker::Picked::Stay => {}
                super::picker::Picked::Close => self.picker = None,
                super::picker::Picked::Open(i) => self.open_picked(i),
            }
            return;
        }
        if let Some(editor) = self.asking.as_mut() {
            match editor.apply(&key_of(k)) {
                Edit::Continue => {}
                Edit::Cancel => self.asking = None,
                Edit::Submit => {
                    let text = editor.text();
                    self.asking = None;
                    self.open_elsewhere(&text);
                }
            }
            return;
        }
        if self.prefix {
            self.prefix = false;
            if let Some(action) = self.settings.keymap.after_prefix(k) {
                self.act(action);
            }
            return;
        }
        if self.settings.keymap.is_prefix(k) {
            self.prefix = true;
            return;
        }
        // A drag whose release was never seen (it ended outside the pane) is dropped.
        self.copy = self.copy.take().filter(|c| !c.by_mouse);
        if self.copy.is_some() {
            self.copy_key(k);
            return;
        }
        match self.focus {
            Focus::Panes => self.key_to_pane(k),
            _ => self.panel_key(k),
        }
    }

    pub(super) fn mouse(&mut self, m: &crossterm::event::MouseEvent) {
        let at = |r: &Rect| {
            m.column >= r.x && m.column < r.right() && m.row >= r.y && m.row < r.bottom()
        };
        if self.panels && at(&self.side_area) {
            if matches!(m.kind, MouseEventKind::Down(_)) && self.focus == Focus::Panes {
                self.focus = Focus::Escalations;
                self.escalations.shown(Instant::now());
            }
            return;
        }
        let Some(&(id, rect)) = self.pane_rects.iter().find(|(_, r)| at(r)) else {
            return;
        };
        if matches!(m.kind, MouseEventKind::Down(_)) {
            if let Some(t) = self.tabs.get_mut(self.tab) {
                t.focus = id;
            }
            self.focus = Focus::Panes;
        }
        let Some(p) = self.panes.get(&id) else {
            return;
        };
        let inner = Rect::new(
            rect.x + 1,
            rect.y + 1,
            rect.width.saturating_sub(2),
            rect.height.saturating_sub(2),
        );
        let modes = p.emulator().modes();
        let (col, row) = (
            m.column.saturating_sub(inner.x),
            m.row.saturating_sub(inner.y),
        );
        if !at(&inner) {
            return;
        }
        if let Some(bytes) = input::encode_mouse(m, col, row, &modes) {
            p.write(&bytes);
            return;
        }
        // A full-screen program without the mouse: the wheel scrolls its document (keyboard
        // copy mode of this pane keeps the wheel for the history).
        let copying = self.copy.as_ref().is_some_and(|c| c.pane == id);
        if let Some(keys) = input::alternate_scroll(m, &modes).filter(|_| !copying) {
            p.write(&keys);
            return;
        }
        if self.copy_mouse(id, m.kind, (row, col)) {
            return;
        }
        let Some(p) = self.panes.get_mut(&id) else {
            return;
        };
        match m.kind {
            // The program does not want the wheel: it scrolls the pane's history.
            MouseEventKind::ScrollUp => {
                let max = p.history_max(3);
                p.scroll = (p.scroll + 3).min(max);
                p.want_history();
            }
            MouseEventKind::ScrollDown => {
                p.scroll = p.scroll.saturating_sub(3);
                p.want_history();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
#[path = "app_wheel_tests.rs"]
mod wheel_tests;
