//! One frame of the TUI: tab bar, panes, side panels, status bar, help overlay. Everything a
//! sandbox chose (argv, justification, paths, DNS names, messages) goes through
//! [`escape::visible`] before it reaches a cell; pane contents come from the emulator's grid,
//! never as raw bytes.

use super::app::{App, Focus};
use super::pane::PaneStatus;
use super::panels;
use super::theme::Role;
use crate::terminal::escape;
use lazaret_protocol::activity::{Need, SessionActivity};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

/// Splits the screen: tab bar, main area, side area (empty when panels are hidden), status.
pub fn areas(full: Rect, panels: bool) -> (Rect, Rect, Rect, Rect) {
    let [tabs, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(full);
    if !panels {
        return (
            tabs,
            body,
            Rect::new(body.right(), body.y, 0, body.height),
            status,
        );
    }
    let side = (body.width * 2 / 5).clamp(30, 64).min(body.width / 2);
    let [main, side] =
        Layout::horizontal([Constraint::Min(1), Constraint::Length(side)]).areas(body);
    (tabs, main, side, status)
}

/// The inside of a pane's border.
pub fn inner(r: Rect) -> Rect {
    Rect::new(
        r.x.saturating_add(1),
        r.y.saturating_add(1),
        r.width.saturating_sub(2),
        r.height.saturating_sub(2),
    )
}

/// Lays the current tab out in `app.main_area` and resizes its panes to fit.
pub fn layout_panes(app: &mut App, full: Rect) {
    let (_, main, side, _) = areas(full, app.panels);
    app.main_area = main;
    app.side_area = side;
    app.pane_rects = app
        .tabs
        .get(app.tab)
        .map(|t| t.rects(main))
        .unwrap_or_default();
    for (id, r) in &app.pane_rects {
        if let Some(p) = app.panes.get(id) {
            let i = inner(*r);
            p.resize(i.height, i.width);
        }
    }
}

pub fn draw(frame: &mut Frame<'_>, app: &App) {
    let theme = &app.settings.theme;
    let (tabs, _, _, status) = areas(frame.area(), app.panels);
    draw_tabs(frame, app, tabs);
    let pending_panes: Vec<_> = app.escalations.pending.iter().map(|p| p.pane).collect();
    let now = super::app_activity::now_ms();
    let selected = app.escalations.selected_pane();
    for (id, rect) in &app.pane_rects {
        let Some(pane) = app.panes.get(id) else {
            continue;
        };
        let focused = app.focused() == Some(*id) && app.focus == Focus::Panes;
        let need = app.need_of(*id, now);
        let border = if selected == Some(*id) && app.focus == Focus::Escalations {
            theme.style(Role::Highlight)
        } else if pending_panes.contains(id) || need <= Need::Attention {
            theme.style(Role::Pending)
        } else if focused {
            theme.style(Role::Focus)
        } else {
            theme.style(Role::Border)
        };
        let state = match &pane.status {
            PaneStatus::Starting => "starting…".to_owned(),
            PaneStatus::Running { session } => {
                format!("session {}", session.chars().take(8).collect::<String>())
            }
            PaneStatus::Exited(c) => format!("exited {c}"),
            PaneStatus::Failed(_) => "failed".to_owned(),
        };
        let mut title = format!(" {id} · {state} ");
        if pane.has_ended() {
            title.push_str("· Enter closes ");
        } else if pending_panes.contains(id) {
            title.push_str("· ESCALATION PENDING ");
        } else {
            title.push_str(&need_marker(need, app.activity_of(*id)));
        }
        if pane.scroll > 0 {
            title.push_str(&format!("· scrolled {} ", pane.scroll));
        }
        if app
            .copy
            .as_ref()
            .is_some_and(|c| c.pane == *id && !c.by_mouse)
        {
            title.push_str("· copy: v marks, y copies, Esc leaves ");
        }
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(border)
            .title(Span::styled(title, border));
        frame.render_widget(block, *rect);
        let area = inner(*rect);
        pane_content(frame.buffer_mut(), area, pane);
        if let Some(copy) = app.copy.as_ref().filter(|c| c.pane == *id) {
            mark_selection(frame.buffer_mut(), area, copy);
            continue;
        }
        if focused && !app.help && !pane.has_ended() {
            if let Some((row, col)) = pane.emulator().cursor(pane.scroll) {
                frame.set_cursor_position((area.x + col, area.y + row));
            }
        }
    }
    if app.panels && app.side_area.width > 0 {
        panels::draw(frame, app, app.side_area);
    }
    draw_status(frame, app, status);
    if app.help {
        draw_help(frame, app);
    }
    if let Some(picker) = &app.picker {
        super::picker::draw(frame, picker, &app.settings.theme);
    }
}

/// The pane's screen (or, scrolled back, its history above it) in `area`.
pub fn pane_content(buf: &mut ratatui::buffer::Buffer, area: Rect, pane: &super::pane::Pane) {
    let emu = pane.emulator();
    if pane.remote && pane.scroll > 0 {
        super::pane_history::draw(buf, area, pane.scroll, pane.history.as_ref(), emu.as_ref());
    } else {
        emu.draw(buf, area, pane.scroll);
    }
}

/// Copy mode's selection and cursor, drawn reversed.
fn mark_selection(
    buf: &mut ratatui::buffer::Buffer,
    area: Rect,
    copy: &super::copy_mode::CopyMode,
) {
    let flip = |buf: &mut ratatui::buffer::Buffer, (row, col): (u16, u16)| {
        if let Some(cell) = buf.cell_mut((area.x + col, area.y + row)) {
            let reversed = cell.modifier.contains(ratatui::style::Modifier::REVERSED);
            cell.modifier
                .set(ratatui::style::Modifier::REVERSED, !reversed);
        }
    };
    for row in 0..area.height {
        for col in 0..area.width {
            if copy.selects((row, col), area.width) || copy.cursor == (row, col) {
                flip(buf, (row, col));
            }
        }
    }
}

/// What a pane's title says of its session's activity (after its state).
fn need_marker(need: Need, activity: Option<&SessionActivity>) -> String {
    match (need, activity) {
        (Need::Escalation, _) => "· ESCALATION PENDING ".to_owned(),
        (Need::Attention, Some(a)) => format!("· ! NEEDS YOU: {} ", clip(&a.attention, 40)),
        (Need::Working, _) => "· working ".to_owned(),
        (Need::Idle, Some(_)) => "· idle ".to_owned(),
        _ => String::new(),
    }
}

/// At most `max` characters of `text`, which its coordinator escaped: anything a terminal
/// would interpret is escaped again all the same, but backslashes are kept as they are
/// (escaping them again would double the coordinator's `\u{1b}`).
pub(super) fn clip(text: &str, max: usize) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\\' {
            shown.push(c);
        } else {
            escape::push_visible(&mut shown, c);
        }
    }
    if shown.chars().count() <= max {
        return shown;
    }
    let mut s: String = shown.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

fn draw_tabs(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let theme = &app.settings.theme;
    let now = super::app_activity::now_ms();
    let mut spans = vec![Span::styled(" lazaret ", theme.style(Role::Title))];
    for (i, t) in app.tabs.iter().enumerate() {
        let needs = app.tab_needs_you(i, now);
        let role = if needs {
            Role::Pending
        } else if i == app.tab {
            Role::TabActive
        } else {
            Role::Tab
        };
        spans.push(Span::styled(
            format!(
                " {}tab {} ({} pane{}) ",
                if needs { "! " } else { "" },
                i + 1,
                t.panes().len(),
                if t.panes().len() == 1 { "" } else { "s" }
            ),
            theme.style(role),
        ));
    }
    let (attention, n) = app.needs_summary(now);
    let mut summary = Vec::new();
    if attention > 0 {
        summary.push(format!(
            "{attention} need{} you",
            if attention == 1 { "s" } else { "" }
        ));
    }
    if n > 0 {
        summary.push(format!(
            "{n} escalation{} pending",
            if n == 1 { "" } else { "s" }
        ));
    }
    // Seen with the panels hidden too: connections a sidecar holds, waiting for you.
    let held = app.held_count();
    if held > 0 {
        summary.push(format!("{held} held"));
    }
    if !summary.is_empty() {
        spans.push(Span::styled(
            format!(" {} ", summary.join(" · ")),
            theme.style(Role::Pending),
        ));
    }
    let plan = app
        .focused()
        .and_then(|id| app.panes.get(&id))
        .and_then(|p| p.plan.as_deref())
        .unwrap_or(&app.plan);
    spans.push(Span::styled(
        format!(
            " {} · {} ",
            escape::visible(&plan.address.profile),
            escape::visible(&plan.address.workspace.display().to_string())
        ),
        theme.style(Role::Dim),
    ));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_status(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let theme = &app.settings.theme;
    let prefix = app.settings.keymap.prefix().to_string();
    let mode = if app.prefix {
        Span::styled(format!(" {prefix} … "), theme.style(Role::Pending))
    } else {
        match app.focus {
            Focus::Panes => Span::styled(" PANE ", theme.style(Role::Status)),
            Focus::Escalations => Span::styled(" ESCALATIONS ", theme.style(Role::Focus)),
            Focus::Denials => Span::styled(" DENIALS ", theme.style(Role::Focus)),
            Focus::DomainState => Span::styled(" DOMAIN ", theme.style(Role::Focus)),
        }
    };
    if app.confirm_quit {
        let line = Line::from(vec![
            Span::styled(" quit: ", theme.style(Role::Focus)),
            Span::styled(
                "e ends this TUI's sessions · d detaches (they keep running; lazaret tui shows \
                 them again) · any other key stays",
                theme.style(Role::Text),
            ),
        ]);
        frame.render_widget(Paragraph::new(line).style(theme.style(Role::Status)), area);
        return;
    }
    if let Some(editor) = &app.asking {
        let line = Line::from(vec![
            Span::styled(" new pane in (DIR [PROFILE]): ", theme.style(Role::Focus)),
            Span::styled(escape::visible(&editor.text()), theme.style(Role::Text)),
            Span::styled(
                " ",
                theme
                    .style(Role::Text)
                    .add_modifier(ratatui::style::Modifier::REVERSED),
            ),
            Span::styled("  enter opens · esc cancels", theme.style(Role::Dim)),
        ]);
        frame.render_widget(Paragraph::new(line).style(theme.style(Role::Status)), area);
        return;
    }
    let message = app
        .messages
        .front()
        .map(|m| escape::visible(m))
        .unwrap_or_default();
    let line = Line::from(vec![
        mode,
        Span::styled(format!(" {message}"), theme.style(Role::Status)),
        Span::styled(format!("  {prefix} ? help "), theme.style(Role::Dim)),
    ]);
    frame.render_widget(Paragraph::new(line).style(theme.style(Role::Status)), area);
}

fn draw_help(frame: &mut Frame<'_>, app: &App) {
    let theme = &app.settings.theme;
    let rows = app.settings.keymap.help();
    let key_width = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(8)
        + 2;
    let full = frame.area();
    let w = (key_width as u16 + 64).min(full.width);
    let h = (rows.len() as u16 + 2).min(full.height);
    let area = Rect::new(
        full.x + (full.width - w) / 2,
        full.y + (full.height - h) / 2,
        w,
        h,
    );
    let lines: Vec<Line<'_>> = rows
        .iter()
        .map(|(k, what)| {
            Line::from(vec![
                Span::styled(format!("{k:<key_width$}"), theme.style(Role::HelpKey)),
                Span::styled(what.clone(), theme.style(Role::Text)),
            ])
        })
        .collect();
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_style(theme.style(Role::Focus))
                    .title(" keys (any key closes) "),
            )
            .style(Style::default()),
        area,
    );
}
