//! [`ScreenSnapshot`] of an emulator: its visible rows, cursor and modes; [`ScreenDamage`]:
//! some of its rows, cursor and modes.

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::Line;
use alacritty_terminal::term::TermMode;
use alacritty_terminal::vte::ansi::{CursorShape as Shape, CursorStyle};
use alacritty_terminal::Term;
use lazaret_protocol::screen::{
    Cursor, CursorShape, MouseMode, ScreenDamage, ScreenLine, ScreenModes, ScreenSnapshot,
};

use super::encode::encode_row;
use super::term::Listener;

pub fn build(
    term: &Term<Listener>,
    history: Vec<ScreenLine>,
    title: Option<String>,
) -> ScreenSnapshot {
    let rows = term.grid().screen_lines();
    ScreenSnapshot {
        rows: clamp(rows),
        cols: clamp(term.grid().columns()),
        lines: (0..rows).map(|r| row(term, r)).collect(),
        history,
        cursor: cursor(term),
        modes: modes(*term.mode()),
        title,
    }
}

/// The rows `which` (0-based, on the screen), with the cursor and modes.
pub fn damage(term: &Term<Listener>, which: &[usize]) -> ScreenDamage {
    let grid = term.grid();
    ScreenDamage {
        rows: clamp(grid.screen_lines()),
        cols: clamp(grid.columns()),
        lines: which
            .iter()
            .filter(|&&r| r < grid.screen_lines())
            .map(|&r| (clamp(r), row(term, r)))
            .collect(),
        cursor: cursor(term),
        modes: modes(*term.mode()),
    }
}

fn clamp(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

fn row(term: &Term<Listener>, r: usize) -> ScreenLine {
    encode_row(&term.grid()[Line(i32::try_from(r).unwrap_or(i32::MAX))][..])
}

fn cursor(term: &Term<Listener>) -> Cursor {
    let point = term.grid().cursor.point;
    Cursor {
        row: clamp(usize::try_from(point.line.0).unwrap_or(0)),
        col: clamp(point.column.0),
        visible: term.mode().contains(TermMode::SHOW_CURSOR),
        shape: shape(term.cursor_style()),
    }
}

fn modes(mode: TermMode) -> ScreenModes {
    let mouse = if mode.contains(TermMode::MOUSE_MOTION) {
        MouseMode::Motion
    } else if mode.contains(TermMode::MOUSE_DRAG) {
        MouseMode::Drag
    } else if mode.contains(TermMode::MOUSE_REPORT_CLICK) {
        MouseMode::Click
    } else {
        MouseMode::Off
    };
    ScreenModes {
        alt_screen: mode.contains(TermMode::ALT_SCREEN),
        app_cursor: mode.contains(TermMode::APP_CURSOR),
        app_keypad: mode.contains(TermMode::APP_KEYPAD),
        bracketed_paste: mode.contains(TermMode::BRACKETED_PASTE),
        mouse,
        sgr_mouse: mode.contains(TermMode::SGR_MOUSE),
        focus_events: mode.contains(TermMode::FOCUS_IN_OUT),
        autowrap: mode.contains(TermMode::LINE_WRAP),
    }
}

/// The program's cursor shape; `None` for the default (a steady block) and for shapes a
/// DECSCUSR cannot ask for.
fn shape(style: CursorStyle) -> Option<CursorShape> {
    let blinking = style.blinking;
    match style.shape {
        Shape::Block if !blinking => None,
        Shape::Block => Some(CursorShape::Block { blinking }),
        Shape::Underline => Some(CursorShape::Underline { blinking }),
        Shape::Beam => Some(CursorShape::Bar { blinking }),
        Shape::HollowBlock | Shape::Hidden => None,
    }
}
