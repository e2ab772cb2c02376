//! The session picker (`ctrl-b s`): every running Domain of the user and its sessions, so the
//! control centre can show any agent, not only those it started. Coordinator-owned sessions
//! open in a new tab; a `lazaret run` session is listed but runs on its own terminal.

use super::theme::{Role, Theme};
use crate::terminal::escape;
use lazaret_protocol::activity::{Need, SessionActivity};
use lazaret_protocol::status::SessionStatus;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;
use std::path::PathBuf;

pub struct Entry {
    pub workspace: PathBuf,
    pub profile: String,
    pub session: SessionStatus,
}

#[derive(Default)]
pub struct Picker {
    pub entries: Vec<Entry>,
    pub selected: usize,
}

/// What a key in the picker does.
#[derive(Debug, PartialEq, Eq)]
pub enum Picked {
    Stay,
    Close,
    Open(usize),
}

impl Picker {
    /// Every session of the running Domains, those that need the developer first (issue
    /// #15: escalation, attention, working, idle), then the most recent first.
    pub fn load(runtime_root: &std::path::Path) -> Picker {
        let mut entries = Vec::new();
        for d in lazaret_client::locate::domains(runtime_root).unwrap_or_default() {
            for s in &d.status.sessions {
                entries.push(Entry {
                    workspace: d.status.workspace.clone(),
                    profile: d.status.profile.clone(),
                    session: s.clone(),
                });
            }
        }
        sort(&mut entries, super::app_activity::now_ms());
        Picker {
            entries,
            selected: 0,
        }
    }

    pub fn key(&mut self, code: crossterm::event::KeyCode) -> Picked {
        use crossterm::event::KeyCode;
        let n = self.entries.len();
        match code {
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => {
                self.selected = (self.selected + 1).min(n.saturating_sub(1))
            }
            KeyCode::Enter if n > 0 => return Picked::Open(self.selected),
            KeyCode::Esc | KeyCode::Char('q') => return Picked::Close,
            _ => {}
        }
        Picked::Stay
    }
}

/// Those that need the developer first, then the most recent first.
fn sort(entries: &mut [Entry], now_ms: u64) {
    entries.sort_by_key(|e| {
        (
            need(&e.session, now_ms),
            std::cmp::Reverse(e.session.started_unix_ms),
        )
    });
}

/// What the session's coordinator last published of its activity, ranked at `now_ms`
/// (a `lazaret run` session's is not observed: idle).
fn need(s: &SessionStatus, now_ms: u64) -> Need {
    if !s.hosted {
        return Need::Idle;
    }
    SessionActivity::of_status(s).need(now_ms)
}

/// One line of the list.
fn describe(e: &Entry) -> String {
    let s = &e.session;
    let attached = if !s.hosted {
        "its own terminal".to_owned()
    } else if s.attached.is_empty() {
        "detached".to_owned()
    } else {
        format!("attached: {}", s.attached.join(","))
    };
    let state = match need(s, super::app_activity::now_ms()) {
        _ if !s.hosted => attached,
        Need::Escalation => format!("{attached}; ESCALATION PENDING"),
        Need::Attention => format!(
            "{attached}; ! NEEDS YOU: {}",
            super::draw::clip(&s.attention, 40)
        ),
        Need::Working => format!("{attached}; working"),
        Need::Idle => format!("{attached}; idle"),
        Need::Ended => format!("{attached}; ending"),
    };
    format!(
        "{}  {}  {}  [{}]  {}",
        s.session_id.get(..12).unwrap_or(&s.session_id),
        escape::visible(&e.workspace.display().to_string()),
        escape::visible(&e.profile),
        state,
        escape::argv(&s.command)
    )
}

pub fn draw(frame: &mut Frame<'_>, picker: &Picker, theme: &Theme) {
    let full = frame.area();
    let w = full.width.saturating_sub(8).clamp(20, 120).min(full.width);
    let h = (picker.entries.len() as u16 + 4)
        .clamp(5, full.height.max(5))
        .min(full.height);
    let area = Rect::new(
        full.x + (full.width - w) / 2,
        full.y + (full.height - h) / 2,
        w,
        h,
    );
    let mut lines: Vec<Line<'_>> = Vec::new();
    if picker.entries.is_empty() {
        lines.push(Line::from(Span::styled(
            "no running sessions",
            theme.style(Role::Dim),
        )));
    }
    for (i, e) in picker.entries.iter().enumerate() {
        let role = if i == picker.selected {
            Role::Focus
        } else {
            Role::Text
        };
        lines.push(Line::from(Span::styled(describe(e), theme.style(role))));
    }
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines)
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme.style(Role::Focus))
                    .title(" sessions: enter opens in a new tab, esc closes "),
            )
            .style(Style::default()),
        area,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: u64, hosted: bool, last: u64, attention: &str, pending: u32) -> Entry {
        let mut s = SessionStatus::registered(&format!("{n:064x}"), "c", n);
        s.hosted = hosted;
        s.last_output_unix_ms = last;
        s.attention = attention.into();
        s.pending_escalations = pending;
        Entry {
            workspace: PathBuf::from("/w"),
            profile: "shell".into(),
            session: s,
        }
    }

    #[test]
    fn sessions_that_need_you_come_first_then_the_newest() {
        let now = 1_000_000;
        let mut entries = vec![
            entry(1, true, 0, "", 0),
            entry(2, true, now - 100, "", 0),
            entry(3, true, 0, "bell", 0),
            entry(4, false, now, "bell", 3),
            entry(5, true, 0, "", 1),
            entry(6, true, 0, "", 0),
        ];
        sort(&mut entries, now);
        let order: Vec<u64> = entries.iter().map(|e| e.session.started_unix_ms).collect();
        // escalation, attention, working, then idle newest first (a `lazaret run` session is
        // not observed: idle).
        assert_eq!(order, vec![5, 3, 2, 6, 4, 1]);
        assert!(describe(&entries[0]).contains("detached; ESCALATION PENDING"));
        assert!(describe(&entries[1]).contains("! NEEDS YOU: bell"));
        assert!(describe(&entries[4]).contains("[its own terminal]"));
    }
}
