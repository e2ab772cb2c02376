//! [`ScreenSnapshot`] as terminal bytes for a fresh xterm-like terminal.
//!
//! The sequence: leave the alternate screen (a client that saw the session on it earlier — a
//! lagging one, a TUI pane fed screen updates — must not stay there), reset attributes, modes
//! and scroll region; clear (ED 0 from the home position:
//! ED 2 makes some terminals, alacritty among them, scroll the screen into their history); with
//! history, print the history lines from the top row and line-feed until every one has scrolled
//! into the terminal's scrollback (a soft-wrapped line runs on into the next instead of CR LF,
//! so the terminal marks the wrap itself) and the screen is blank; switch to the alternate
//! screen when the session is on it; draw the visible rows with absolute positioning and
//! auto-wrap off (a row that is too wide cannot scroll the screen); set the session's modes;
//! place the cursor and show it when it is visible.
//!
//! Line text goes through [`ScreenLine::items`], so only printable characters and SGR sequences
//! reach the output, whatever the snapshot holds.

use super::{
    Cursor, CursorShape, MouseMode, ScreenDamage, ScreenLine, ScreenModes, ScreenSnapshot,
};
use crate::screen::LineItem;
use std::io::Write;

/// Modes switched off before drawing (a client terminal may have any of them on).
const RESET: &[u8] =
    b"\x1b[?1049l\x1b[0m\x1b[r\x1b[?6l\x1b[?1l\x1b>\x1b[?2004l\x1b[?1000l\x1b[?1002l\
\x1b[?1003l\x1b[?1006l\x1b[?1004l\x1b[?7h\x1b[?25l\x1b[0 q";

/// Modes switched off before a damage update sets the session's (a mode the program turned
/// off since the last update must go off): [`RESET`] without leaving the alternate screen.
const MODES_OFF: &[u8] = b"\x1b[0m\x1b[r\x1b[?6l\x1b[?1l\x1b>\x1b[?2004l\x1b[?1000l\x1b[?1002l\
\x1b[?1003l\x1b[?1006l\x1b[?1004l\x1b[?25l\x1b[0 q";

pub(super) fn render_damage(damage: &ScreenDamage) -> Vec<u8> {
    let rows = damage.rows.max(1);
    let text: usize = damage.lines.iter().map(|(_, l)| l.text.len() + 24).sum();
    let mut out = Vec::with_capacity(128 + text);
    out.extend_from_slice(MODES_OFF);
    out.extend_from_slice(b"\x1b[?7l");
    for (row, line) in damage.lines.iter().filter(|(r, _)| *r < rows) {
        let _ = write!(out, "\x1b[{};1H\x1b[2K", u32::from(*row) + 1);
        styled(&mut out, line);
    }
    modes(&mut out, &damage.modes, damage.cursor.shape);
    cursor(&mut out, damage.cursor, rows, damage.cols);
    out
}

pub(super) fn render(snapshot: &ScreenSnapshot, with_history: bool) -> Vec<u8> {
    let rows = snapshot.rows.max(1);
    let mut out = Vec::with_capacity(estimate(snapshot, with_history));
    out.extend_from_slice(RESET);
    out.extend_from_slice(b"\x1b[H\x1b[J");
    if with_history && !snapshot.history.is_empty() {
        history(&mut out, &snapshot.history, rows);
    }
    if snapshot.modes.alt_screen {
        out.extend_from_slice(b"\x1b[?1049h\x1b[H\x1b[J");
    }
    out.extend_from_slice(b"\x1b[?7l");
    for (row, line) in snapshot.lines.iter().take(usize::from(rows)).enumerate() {
        if line.text.is_empty() {
            continue;
        }
        let _ = write!(out, "\x1b[{};1H", row + 1);
        styled(&mut out, line);
    }
    modes(&mut out, &snapshot.modes, snapshot.cursor.shape);
    cursor(&mut out, snapshot.cursor, rows, snapshot.cols);
    out
}

/// Places the cursor (clamped to the screen) and shows it when it is visible.
fn cursor(out: &mut Vec<u8>, cursor: Cursor, rows: u16, cols: u16) {
    let row = cursor.row.min(rows.max(1) - 1);
    let col = cursor.col.min(cols.max(1) - 1);
    let _ = write!(out, "\x1b[{};{}H", u32::from(row) + 1, u32::from(col) + 1);
    if cursor.visible {
        out.extend_from_slice(b"\x1b[?25h");
    }
}

fn estimate(snapshot: &ScreenSnapshot, with_history: bool) -> usize {
    let text = |lines: &[ScreenLine]| lines.iter().map(|l| l.text.len() + 16).sum::<usize>();
    let history = if with_history {
        text(&snapshot.history) + usize::from(snapshot.rows)
    } else {
        0
    };
    256 + text(&snapshot.lines) + history
}

/// Prints `lines` from the top row (the cursor is there) so that every one of them ends up in the
/// scrollback and the screen is blank afterwards.
fn history(out: &mut Vec<u8>, lines: &[ScreenLine], rows: u16) {
    let last = lines.len() - 1;
    for (i, line) in lines.iter().enumerate() {
        styled(out, line);
        if !line.wrapped || i == last {
            out.extend_from_slice(b"\r\n");
        }
    }
    // rows - 1 more line feeds: the cursor reaches the bottom and every printed row scrolls off.
    for _ in 1..rows {
        out.push(b'\n');
    }
}

/// One line's text and SGRs, filtered; attributes are reset before and after.
fn styled(out: &mut Vec<u8>, line: &ScreenLine) {
    for item in line.items() {
        match item {
            LineItem::Text(text) => out.extend_from_slice(text.as_bytes()),
            LineItem::Sgr(params) => {
                out.extend_from_slice(b"\x1b[");
                out.extend_from_slice(params.as_bytes());
                out.push(b'm');
            }
        }
    }
    out.extend_from_slice(b"\x1b[0m");
}

fn modes(out: &mut Vec<u8>, m: &ScreenModes, shape: Option<CursorShape>) {
    let set = |out: &mut Vec<u8>, on: bool, mode: u16| {
        if on {
            let _ = write!(out, "\x1b[?{mode}h");
        }
    };
    set(out, m.autowrap, 7);
    set(out, m.app_cursor, 1);
    if m.app_keypad {
        out.extend_from_slice(b"\x1b=");
    }
    set(out, m.bracketed_paste, 2004);
    let mouse = match m.mouse {
        MouseMode::Off => None,
        MouseMode::Click => Some(1000),
        MouseMode::Drag => Some(1002),
        MouseMode::Motion => Some(1003),
    };
    if let Some(mode) = mouse {
        set(out, true, mode);
    }
    set(out, m.sgr_mouse, 1006);
    set(out, m.focus_events, 1004);
    if let Some(shape) = shape {
        let n = match shape {
            CursorShape::Block { blinking } => 2 - u8::from(blinking),
            CursorShape::Underline { blinking } => 4 - u8::from(blinking),
            CursorShape::Bar { blinking } => 6 - u8::from(blinking),
        };
        let _ = write!(out, "\x1b[{n} q");
    }
}
