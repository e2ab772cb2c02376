//! The side panels: escalations (pending, with the selected one's details and the edit line;
//! then history), Domain state, network denials (newest first, filterable, with counts).

use super::app::{App, Focus};
use super::keymap::Action;
use super::theme::Role;
use crate::terminal::card_text;
use crate::terminal::escape;

/// Columns of a field's label in the escalations panel (`  cmd  `).
const LABEL: &str = "  cmd  ";
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use ratatui::Frame;

pub fn draw(frame: &mut Frame<'_>, app: &App, area: Rect) {
    // The Domain panel gets what it needs (up to half), denials at least a few rows, and the
    // escalations panel — the one that asks for decisions — the rest.
    let inner_width = area.width.saturating_sub(2);
    let state_rows = domain_lines(app, inner_width).len() as u16 + 2;
    let state_rows = state_rows.min(area.height / 2);
    // Held connections wait for the developer: the panel grows by them (up to a fifth more).
    let held_rows = (app.held.len() as u16).min(area.height / 5);
    let [esc, state, denials] = Layout::vertical([
        Constraint::Min(6),
        Constraint::Length(state_rows),
        Constraint::Length((area.height / 5).max(5) + held_rows),
    ])
    .areas(area);
    escalations(frame, app, esc);
    domain_state(frame, app, state);
    network_denials(frame, app, denials);
}

/// `label` then `value` cut into rows of the panel's width, continuation rows indented under
/// the value, so that a wrapped value never looks like a line of its own.
fn field<'a>(
    label: &str,
    value: &str,
    width: u16,
    label_style: Style,
    style: Style,
) -> Vec<Line<'a>> {
    use unicode_width::UnicodeWidthChar;
    let indent = label.chars().count();
    let room = usize::from(width).saturating_sub(indent).max(8);
    let mut rows: Vec<String> = vec![String::new()];
    let mut used = 0;
    for c in value.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > room {
            rows.push(String::new());
            used = 0;
        }
        if let Some(last) = rows.last_mut() {
            last.push(c);
        }
        used += w;
    }
    rows.into_iter()
        .enumerate()
        .map(|(i, row)| {
            let head = if i == 0 {
                label.to_owned()
            } else {
                " ".repeat(indent)
            };
            Line::from(vec![
                Span::styled(head, label_style),
                Span::styled(row, style),
            ])
        })
        .collect()
}

fn block<'a>(app: &App, title: String, focused: bool) -> Block<'a> {
    let theme = &app.settings.theme;
    let style = if focused {
        theme.style(Role::Focus)
    } else {
        theme.style(Role::Border)
    };
    Block::default()
        .borders(Borders::ALL)
        .border_style(style)
        .title(Span::styled(title, style))
}

fn escalations(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let theme = &app.settings.theme;
    let panel = &app.escalations;
    let focused = app.focus == Focus::Escalations;
    let mut lines: Vec<Line<'_>> = Vec::new();
    if panel.pending.is_empty() {
        lines.push(Line::styled("no pending requests", theme.style(Role::Dim)));
    } else if let Some(notice) = panel.notice {
        lines.push(Line::styled(
            format!("⚠ {notice}"),
            theme.style(Role::Warning),
        ));
    }
    for (i, p) in panel.pending.iter().enumerate() {
        let selected = i == panel.selected;
        let mark = if selected { "▶" } else { " " };
        let head = if selected && focused {
            theme.style(Role::Highlight)
        } else {
            theme.style(Role::Pending)
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{mark} PENDING pane {}", p.pane), head),
            Span::styled(
                format!(
                    " {} · session {}",
                    escape::visible(&p.prompt.profile),
                    escape::visible(&p.prompt.session_id.chars().take(8).collect::<String>())
                ),
                theme.style(Role::Dim),
            ),
        ]));
        if !selected {
            let (dim, text) = (theme.style(Role::Dim), theme.style(Role::Text));
            let width = area.width.saturating_sub(2);
            lines.extend(field("  ", &escape::argv(&p.prompt.argv), width, dim, text));
            continue;
        }
        let width = area.width.saturating_sub(2);
        let (dim, text) = (theme.style(Role::Dim), theme.style(Role::Text));
        // Warnings first, then the program and count, each field cut to a few rows (`v`
        // shows the request whole): a long argv never pushes the warnings out of view.
        let room = usize::from(width).saturating_sub(LABEL.len());
        let warn = theme.style(Role::Warning);
        for f in card_text::fields(&p.prompt, room, panel.full) {
            let label = match f.label {
                "warning" => "  (!)  ",
                "program" => "  prog ",
                "command" => "  cmd  ",
                "in" => "  in   ",
                _ => "  why  ",
            };
            let (l, t) = if f.warning { (warn, warn) } else { (dim, text) };
            lines.extend(field(label, &f.text, width, l, t));
        }
        match &panel.editing {
            Some(editor) => {
                // The line as typed (each char escaped), the cursor shown as a reversed cell.
                let chars: Vec<char> = editor.text().chars().collect();
                let at = editor.cursor().min(chars.len());
                let show = |cs: &[char]| -> String {
                    cs.iter().map(|c| escape::visible(&c.to_string())).collect()
                };
                let under = chars
                    .get(at)
                    .map_or(" ".to_owned(), |c| escape::visible(&c.to_string()));
                let after = if at < chars.len() {
                    show(&chars[at + 1..])
                } else {
                    String::new()
                };
                lines.push(Line::from(vec![
                    Span::styled("  edit> ", theme.style(Role::Warning)),
                    Span::styled(show(&chars[..at]), theme.style(Role::Text)),
                    Span::styled(
                        under,
                        theme.style(Role::Text).add_modifier(Modifier::REVERSED),
                    ),
                    Span::styled(after, theme.style(Role::Text)),
                ]));
                if let Some(e) = &panel.edit_error {
                    lines.push(Line::styled(
                        format!("  {}", escape::visible(e)),
                        theme.style(Role::Danger),
                    ));
                }
                lines.push(Line::styled(
                    "  enter: run the edited command · esc: back",
                    theme.style(Role::Dim),
                ));
            }
            None if focused => lines.push(Line::styled(
                if panel.full
                    || !card_text::is_cut(&p.prompt, usize::from(width).saturating_sub(LABEL.len()))
                {
                    "  a approve · e edit · d deny · ↑↓ · esc"
                } else {
                    "  a approve · e edit · d deny · v show all · ↑↓ · esc"
                },
                theme.style(Role::HelpKey),
            )),
            None => lines.push(Line::styled(
                format!("  {} a to review", app.settings.keymap.prefix()),
                theme.style(Role::Dim),
            )),
        }
    }
    if !panel.history.is_empty() {
        lines.push(Line::styled("history", theme.style(Role::Title)));
    }
    for r in panel.history.iter().take(usize::from(area.height)) {
        let role = match r.outcome {
            "approved" | "edited" => Role::Approved,
            "denied" => Role::Denied,
            _ => Role::Warning,
        };
        lines.extend(field(
            &format!(" {:<9} ", r.outcome),
            &format!("pane {} {}", r.pane, escape::argv(&r.argv)),
            area.width.saturating_sub(2),
            app.settings.theme.style(role),
            theme.style(Role::Text),
        ));
    }
    let title = format!(" Escalations ({}) ", panel.pending.len());
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block(app, title, focused)),
        area,
    );
}

fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// The Domain panel's rows for a panel `width` wide: failures first (they matter most when
/// space is short), then components, sessions, State Anchors.
fn domain_lines<'a>(app: &App, width: u16) -> Vec<Line<'a>> {
    let theme = &app.settings.theme;
    let d = &app.domain;
    let (dim, text) = (theme.style(Role::Dim), theme.style(Role::Text));
    let danger = theme.style(Role::Danger);
    if d.domain_id.is_empty() {
        return vec![Line::styled("reading the Domain's state…", dim)];
    }
    let up = |running: bool| {
        if running {
            Span::styled("running", theme.style(Role::Approved))
        } else {
            Span::styled("not running", theme.style(Role::Danger))
        }
    };
    let label = |s: &str| Span::styled(format!("{s:<12}"), dim);
    let mut lines = Vec::new();
    for f in &d.failures {
        lines.extend(field(
            "failure ",
            &escape::visible(f),
            width,
            theme.style(Role::Danger),
            theme.style(Role::Danger),
        ));
    }
    let end = app.domain_ends.get(&d.domain_id);
    match end {
        // The coordinator went away (issue #32, D2): what was observed, and why.
        Some(end) => {
            let style = if end.still_runs { text } else { danger };
            lines.extend(field(
                "coordinator ",
                &escape::visible(&end.coordinator_text()),
                width,
                dim,
                style,
            ));
            if let Some(why) = &end.start_failure {
                lines.extend(field(
                    "last start  ",
                    &format!("refused: {}", escape::visible(why)),
                    width,
                    dim,
                    danger,
                ));
            }
        }
        None => lines.push(Line::from(vec![
            label("coordinator"),
            match d.coordinator {
                Some((pid, alive)) => {
                    let mut s = up(alive);
                    s.content = format!("{} (pid {pid})", s.content).into();
                    s
                }
                None => Span::styled("none", dim),
            },
        ])),
    }
    if end.is_some_and(|e| !e.still_runs) {
        // Nobody watches its containers now; a new pane starts the Domain again.
        let keys = match app.settings.keymap.keys(Action::NewPane).first() {
            Some(k) => format!("{} {k}", app.settings.keymap.prefix()),
            None => "a new pane".to_owned(),
        };
        lines.extend(field(
            "",
            &format!("a new pane ({keys}) starts the Domain again"),
            width,
            dim,
            dim,
        ));
    } else {
        lines.push(Line::from(vec![label("sidecar"), up(d.sidecar_running)]));
        lines.push(Line::from(vec![label("sandbox"), up(d.sandbox_running)]));
    }
    lines.push(Line::from(vec![
        label("fingerprint"),
        Span::styled(d.fingerprint.chars().take(16).collect::<String>(), text),
    ]));
    lines.push(Line::from(vec![
        label("sessions"),
        Span::styled(d.sessions.len().to_string(), text),
    ]));
    for (id, cmd) in &d.sessions {
        let id: String = id.chars().take(8).collect();
        lines.extend(field(
            &format!("  {id} "),
            &escape::visible(&cmd.join(" ")),
            width,
            dim,
            text,
        ));
    }
    for p in &d.ports {
        lines.push(Line::from(vec![
            label("port"),
            Span::styled(format!("{}:{} → {}", p.address, p.host_port, p.port), text),
        ]));
    }
    if !d.anchors.is_empty() {
        lines.push(Line::styled("State Anchors", theme.style(Role::Title)));
    }
    let path_width = d
        .anchors
        .iter()
        .map(|a| {
            escape::visible(&a.path.display().to_string())
                .chars()
                .count()
        })
        .max()
        .unwrap_or(0);
    for a in &d.anchors {
        lines.push(Line::styled(
            format!(
                "  {:<path_width$}  {}{}",
                escape::visible(&a.path.display().to_string()),
                if a.partial { "≥ " } else { "" },
                size(a.bytes)
            ),
            text,
        ));
    }
    lines
}

fn domain_state(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let lines = domain_lines(app, area.width.saturating_sub(2));
    let title = format!(" Domain {} ", escape::visible(&app.domain.domain_id));
    frame.render_widget(
        Paragraph::new(lines).block(block(app, title, app.focus == Focus::DomainState)),
        area,
    );
}

fn network_denials(frame: &mut Frame<'_>, app: &App, area: Rect) {
    use super::denials_panel::{allowed_now, held_row, target_of, ConfirmStep, Row};
    let theme = &app.settings.theme;
    let rows = app.denial_rows();
    let shown = rows.len() - app.held.len();
    let focused = app.focus == Focus::Denials;
    let selected = app.denial_selected.min(rows.len().saturating_sub(1));
    let mut lines = Vec::new();
    if app.filtering || !app.denial_filter.is_empty() {
        let state = if app.filtering {
            " (typing: enter ends)"
        } else {
            ""
        };
        lines.push(Line::styled(
            format!("filter: {}{state}", escape::visible(&app.denial_filter)),
            theme.style(Role::Warning),
        ));
    } else if focused {
        lines.push(Line::styled(
            "a allow · w wide · d deny · s save · / filter",
            theme.style(Role::HelpKey),
        ));
    } else if !app.held.is_empty() {
        lines.push(Line::styled(
            format!("{}, then a allows · d denies", app.denials_key()),
            theme.style(Role::Pending),
        ));
    }
    if let Some(c) = app.net_confirm.as_ref().filter(|_| focused) {
        let target = escape::visible(&c.target);
        match &c.step {
            ConfirmStep::Private { .. } => lines.push(Line::styled(
                format!("{target} is private: y allows it · any key cancels"),
                theme.style(Role::Warning),
            )),
            ConfirmStep::Save {
                message,
                lines: changed,
            } => {
                lines.push(Line::styled(
                    format!("{}: y writes · any key cancels", escape::visible(message)),
                    theme.style(Role::Warning),
                ));
                for l in changed {
                    lines.push(Line::styled(escape::visible(l), theme.style(Role::Text)));
                }
            }
        }
    }
    if shown == 0 && app.held.is_empty() {
        lines.push(Line::styled(
            "no denied connections",
            theme.style(Role::Dim),
        ));
    }
    let now = app.now_unix();
    for (i, row) in rows.iter().enumerate().take(usize::from(area.height)) {
        let marker = if focused && i == selected { "▶" } else { " " };
        let marker = Span::styled(marker, theme.style(Role::HelpKey));
        let e = match row {
            Row::Held(h) => {
                lines.push(Line::from(vec![
                    marker,
                    Span::styled(
                        format!("   {}", held_row(h, now)),
                        theme.style(Role::Pending),
                    ),
                ]));
                continue;
            }
            Row::Denial(e) => e,
        };
        let dest = escape::visible(&target_of(e));
        lines.push(Line::from(vec![
            marker,
            Span::styled(format!("{:>4} ", e.count), theme.style(Role::Denied)),
            Span::styled(
                format!("{:<4} {dest} ", e.protocol),
                theme.style(Role::Text),
            ),
            if allowed_now(&app.domain.run_allowed, e) {
                Span::styled("allowed for this run", theme.style(Role::HelpKey))
            } else {
                Span::styled(escape::visible(&e.rule), theme.style(Role::Dim))
            },
        ]));
    }
    let mut title = if shown == app.denials.len() {
        format!(" Network denials ({}) ", app.denials.len())
    } else {
        format!(" Network denials ({} of {}) ", shown, app.denials.len())
    };
    if !app.held.is_empty() {
        title.push_str(&format!("· {} held ", app.held.len()));
    }
    frame.render_widget(
        Paragraph::new(lines).block(block(app, title, app.focus == Focus::Denials)),
        area,
    );
}
