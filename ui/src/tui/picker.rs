//! The session picker (`ctrl-b s`): every running Domain of the user and its sessions, so the
//! control centre can show any agent, not only those it started. Coordinator-owned sessions
//! open in a new tab; a `lazaret run` session is listed but runs on its own terminal.

use super::theme::{Role, Theme};
use crate::terminal::escape;
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
    /// Every session of the running Domains, most recent first.
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
        entries.sort_by_key(|e| std::cmp::Reverse(e.session.started_unix_ms));
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

/// One line of the list.
fn describe(e: &Entry) -> String {
    let s = &e.session;
    let state = if !s.hosted {
        "its own terminal".to_owned()
    } else if s.attached.is_empty() {
        "detached".to_owned()
    } else {
        format!("attached: {}", s.attached.join(","))
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
