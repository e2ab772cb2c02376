//! Scrolling back in an attached pane (issue #14): the pane keeps no scrollback of its own —
//! the coordinator keeps each session's history compactly (sessions live for days) — so a pane
//! scrolled back asks the coordinator for exactly the lines it shows and draws them above the
//! top of its live screen.

use super::emulator::{indexed_color, Emulator};
use lazaret_protocol::screen::{LineItem, ScreenLine};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

/// History lines received for a pane: `lines` end `from_end` lines before the newest.
#[derive(Clone, Debug, Default)]
pub struct RemoteHistory {
    pub from_end: u32,
    /// Lines the coordinator keeps in all.
    pub total: u32,
    pub lines: Vec<ScreenLine>,
}

/// The history window a pane of `rows` rows scrolled back `scroll` lines needs:
/// `(from_end, count)`, count 0 when not scrolled.
pub fn window(scroll: usize, rows: u16) -> (u32, u32) {
    let count = scroll.min(usize::from(rows));
    let from_end = scroll - count;
    (
        u32::try_from(from_end).unwrap_or(u32::MAX),
        u32::try_from(count).unwrap_or(u32::MAX),
    )
}

/// Draws the pane scrolled back `scroll` lines: the history lines on top (blank until they
/// arrive), the live screen's top rows below.
pub fn draw(
    buf: &mut Buffer,
    area: Rect,
    scroll: usize,
    history: Option<&RemoteHistory>,
    emu: &dyn Emulator,
) {
    let (from_end, count) = window(scroll, area.height);
    let count = count as u16;
    let mut live = Buffer::empty(area);
    emu.draw(&mut live, area, 0);
    for y in 0..area.height {
        for x in 0..area.width {
            let at = (area.x + x, area.y + y);
            if y < count {
                buf[at].reset();
            } else if let Some(cell) = live.cell((area.x + x, area.y + y - count)) {
                buf[at] = cell.clone();
            }
        }
    }
    let Some(h) = history.filter(|h| h.from_end == from_end) else {
        return;
    };
    // The lines fill the window from its bottom up (fewer near the oldest end).
    let first = count.saturating_sub(h.lines.len() as u16);
    for (i, line) in h.lines.iter().rev().take(usize::from(count)).enumerate() {
        let y = area.y + count - 1 - i as u16;
        if y < area.y + first {
            break;
        }
        draw_line(buf, Rect::new(area.x, y, area.width, 1), line);
    }
}

/// One history line's text and colours into `row`; every escape but SGR is long gone (see
/// [`ScreenLine::items`]), and the text never leaves `row`.
fn draw_line(buf: &mut Buffer, row: Rect, line: &ScreenLine) {
    let mut style = Style::default();
    let mut x = row.x;
    let end = row.x + row.width;
    for item in line.items() {
        match item {
            LineItem::Sgr(params) => style = apply_sgr(style, params),
            LineItem::Text(text) => {
                if x >= end {
                    break;
                }
                let (nx, _) = buf.set_stringn(x, row.y, text, usize::from(end - x), style);
                x = nx;
            }
        }
    }
}

/// `style` after an SGR sequence's parameters (`1;31`, `38;5;208`, `48;2;1;2;3`, …).
pub fn apply_sgr(mut style: Style, params: &str) -> Style {
    let nums: Vec<u16> = params
        .split([';', ':'])
        .map(|p| p.parse().unwrap_or(0))
        .collect();
    let mut i = 0;
    while i < nums.len() {
        let n = nums[i];
        match n {
            0 => style = Style::default(),
            1 => style = style.add_modifier(Modifier::BOLD),
            2 => style = style.add_modifier(Modifier::DIM),
            3 => style = style.add_modifier(Modifier::ITALIC),
            4 => style = style.add_modifier(Modifier::UNDERLINED),
            5 | 6 => style = style.add_modifier(Modifier::SLOW_BLINK),
            7 => style = style.add_modifier(Modifier::REVERSED),
            8 => style = style.add_modifier(Modifier::HIDDEN),
            9 => style = style.add_modifier(Modifier::CROSSED_OUT),
            22 => style = style.remove_modifier(Modifier::BOLD | Modifier::DIM),
            23 => style = style.remove_modifier(Modifier::ITALIC),
            24 => style = style.remove_modifier(Modifier::UNDERLINED),
            25 => style = style.remove_modifier(Modifier::SLOW_BLINK),
            27 => style = style.remove_modifier(Modifier::REVERSED),
            28 => style = style.remove_modifier(Modifier::HIDDEN),
            29 => style = style.remove_modifier(Modifier::CROSSED_OUT),
            30..=37 => style = style.fg(indexed_color((n - 30) as u8)),
            90..=97 => style = style.fg(indexed_color((n - 90 + 8) as u8)),
            40..=47 => style = style.bg(indexed_color((n - 40) as u8)),
            100..=107 => style = style.bg(indexed_color((n - 100 + 8) as u8)),
            39 => style = style.fg(Color::Reset),
            49 => style = style.bg(Color::Reset),
            38 | 48 => {
                let (color, used) = extended(&nums[i + 1..]);
                if let Some(c) = color {
                    style = if n == 38 { style.fg(c) } else { style.bg(c) };
                }
                i += used;
            }
            _ => {}
        }
        i += 1;
    }
    style
}

/// `5;n` or `2;r;g;b` after a 38/48: the colour and how many parameters it took.
fn extended(rest: &[u16]) -> (Option<Color>, usize) {
    let byte = |v: u16| u8::try_from(v).ok();
    match rest {
        [5, n, ..] => (byte(*n).map(indexed_color), 2),
        [2, r, g, b, ..] => match (byte(*r), byte(*g), byte(*b)) {
            (Some(r), Some(g), Some(b)) => (Some(Color::Rgb(r, g, b)), 4),
            _ => (None, 4),
        },
        _ => (None, rest.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_covers_what_a_scrolled_pane_shows() {
        assert_eq!(window(0, 10), (0, 0));
        assert_eq!(window(3, 10), (0, 3));
        assert_eq!(window(10, 10), (0, 10));
        assert_eq!(window(25, 10), (15, 10));
    }

    #[test]
    fn sgr_parameters_become_styles() {
        let s = apply_sgr(Style::default(), "1;31;48;5;208");
        assert!(s.add_modifier.contains(Modifier::BOLD));
        assert_eq!(s.fg, Some(indexed_color(1)));
        assert_eq!(s.bg, Some(indexed_color(208)));
        let s = apply_sgr(s, "0;38;2;1;2;3");
        assert_eq!(s.fg, Some(Color::Rgb(1, 2, 3)));
        assert!(!s.add_modifier.contains(Modifier::BOLD));
        // Malformed parameters never panic.
        let _ = apply_sgr(Style::default(), "38;5");
        let _ = apply_sgr(Style::default(), "48;2;999;1");
        let _ = apply_sgr(Style::default(), ";;;");
    }

    #[test]
    fn history_lines_are_drawn_above_the_live_screen_and_never_leave_their_row() {
        let area = Rect::new(0, 0, 12, 4);
        let mut emu = super::super::emulator::new_emulator(4, 12, 0);
        emu.process(b"live-1\r\nlive-2\r\nlive-3\r\nlive-4");
        let h = RemoteHistory {
            from_end: 0,
            total: 2,
            lines: vec![
                ScreenLine::new("old-a".into(), false),
                ScreenLine::new(format!("\u{1b}[31mold-b{}", "x".repeat(40)), false),
            ],
        };
        let mut buf = Buffer::empty(area);
        draw(&mut buf, area, 2, Some(&h), emu.as_ref());
        let rows: Vec<String> = (0..4)
            .map(|y| (0..12).map(|x| buf[(x, y)].symbol().to_owned()).collect())
            .collect();
        assert_eq!(rows[0].trim_end(), "old-a");
        assert_eq!(rows[1], "old-bxxxxxxx");
        assert_eq!(rows[2].trim_end(), "live-1");
        assert_eq!(rows[3].trim_end(), "live-2");
        assert_eq!(buf[(0, 1)].fg, indexed_color(1));
    }

    #[test]
    fn the_scrollback_setting_bounds_how_far_a_pane_scrolls_back() {
        use super::super::pane::Pane;
        let mut p = Pane::offline(1, (10, 40), 1000);
        p.remote = true;
        p.history = Some(RemoteHistory {
            from_end: 0,
            total: 5000,
            lines: Vec::new(),
        });
        assert_eq!(
            p.history_max(5),
            1000,
            "the setting, below the coordinator's 5,000"
        );
        p.scroll_limit = 100_000;
        assert_eq!(p.history_max(5), 5000, "the coordinator's history");
        p.scroll_limit = 0;
        assert_eq!(p.history_max(5), 0, "scrollback = 0: no scrolling back");
        // Before the coordinator said how much it keeps: one more page, within the setting.
        p.history = None;
        p.scroll = 3;
        p.scroll_limit = 6;
        assert_eq!(p.history_max(5), 6);
        p.scroll_limit = 100;
        assert_eq!(p.history_max(5), 8);
    }
}
