//! The terminal-emulator interface panes draw through, independent of the emulator crate, so the
//! crate can be swapped (and measured) without touching the panes.

use std::num::NonZeroU16;

use ratatui::buffer::{Buffer, CellDiffOption, CellWidth};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};

use super::emulator_alacritty::AlacrittyEmulator;

/// Which mouse events the program asked for (DECSET 1000/1002/1003; X10 mode 9 counts as Click
/// where the crate knows it — vt100 does, alacritty ignores mode 9). `Off`: the mouse belongs
/// to the control centre. The same type as the coordinator's snapshot carries.
pub use lazaret_protocol::screen::MouseMode;

/// The terminal modes that change how host input must be encoded for the pane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Modes {
    /// DECSET 1049/47: a full-screen program; its screen has no scrollback.
    pub alt_screen: bool,
    /// DECCKM: cursor keys as `ESC O x`.
    pub app_cursor: bool,
    /// DECSET 2004: pastes are bracketed.
    pub bracketed_paste: bool,
    pub mouse: MouseMode,
    /// DECSET 1006: mouse reports in SGR form rather than X10 bytes.
    pub mouse_sgr: bool,
    /// DECTCEM.
    pub cursor_visible: bool,
    /// DECSET 1004: the program wants `ESC[I` / `ESC[O` on focus changes.
    pub focus_events: bool,
}

/// One pane's emulated terminal.
pub trait Emulator: Send {
    /// Feeds program output; sequences may be split anywhere across calls.
    fn process(&mut self, bytes: &[u8]);
    /// Resizes the screen (zero is taken as one).
    fn resize(&mut self, rows: u16, cols: u16);
    /// (rows, cols).
    fn size(&self) -> (u16, u16);
    /// Answers to the program's terminal queries (DSR 5/6 cursor position, DA1, DA2, …), to be
    /// written to the pane's PTY — never to the host terminal.
    fn take_replies(&mut self) -> Vec<u8>;
    fn modes(&self) -> Modes;
    /// Cursor (row, col) within the screen when visible and not scrolled back.
    fn cursor(&self, scroll: usize) -> Option<(u16, u16)>;
    /// Draws the screen, scrolled back `scroll` lines into the history, into `area` of `buf`.
    /// Never writes outside `area`; a double-width char that would cross the right edge of the
    /// area is drawn as a space. `scroll` past the history stops at its oldest line; the part of
    /// `area` beyond the screen (a resize in flight) is blanked.
    fn draw(&self, buf: &mut Buffer, area: Rect, scroll: usize);
    /// Lines of scrollback currently kept.
    fn history_len(&self) -> usize;
    /// The program died: back to a fresh terminal state (modes off: no mouse, no bracketed paste,
    /// no app cursor, main screen), keeping the visible text if the crate allows, else clearing.
    fn reset_modes(&mut self);
    /// The visible screen as text, rows joined by '\n', trailing spaces trimmed (tests, snapshots).
    fn screen_text(&self) -> String;
}

/// The emulator panes use, with `scrollback` lines of history: `alacritty_terminal`.
///
/// Chosen by `cargo run --release --example emulator_throughput` (16 KiB chunks, scrollback
/// 5000, MB/s alacritty / vt100 at 24×80 and 50×200): `yes` output 131/6.7 and 123/3.3,
/// 80-column ASCII lines 133/61 and 127/32, SGR-coloured CJK/emoji 121/95 and 111/62 — 1.3× to
/// 37× faster, the gap widest exactly where an agent floods a pane with short lines (vt100
/// allocates every scrolled-off row). It also answers more queries itself, reflows text on
/// resize, and keeps hidden/strikeout attributes.
pub fn new_emulator(rows: u16, cols: u16, scrollback: usize) -> Box<dyn Emulator> {
    Box::new(AlacrittyEmulator::new(rows, cols, scrollback))
}

/// The bytes that turn off every mode a dead program may have left on, without erasing text,
/// leaving the cursor at (`row`, `col`) of the main screen.
///
/// CAN first aborts a sequence the program died in the middle of, so the rest is not swallowed.
/// Origin mode and the scroll region are reset, which homes the cursor, so it is put back last.
pub(crate) fn reset_modes_bytes(row: u16, col: u16) -> Vec<u8> {
    const RESET: &[u8] = b"\x18\x1b[?6l\x1b[r\x1b[0m\x1b(B\x1b[4l\x1b[?7h\x1b>\x1b[?25h\x1b[?1l\
\x1b[?9l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1004l\
\x1b[?2004l\x1b[0 q";
    let mut out = RESET.to_vec();
    out.extend(format!("\x1b[{};{}H", u32::from(row) + 1, u32::from(col) + 1).bytes());
    out
}

/// CAN: aborts an escape sequence the program died in the middle of.
pub(crate) const ABORT_SEQUENCE: &[u8] = b"\x18";

/// Leaves the alternate screen (after [`ABORT_SEQUENCE`]); sent only when it is active, since
/// 1049l restores the saved cursor.
pub(crate) const LEAVE_ALT_SCREEN: &[u8] = b"\x1b[?1049l";

/// The 16 ANSI colours as ratatui names them, by xterm palette index.
pub const NAMED_COLORS: [Color; 16] = [
    Color::Black,
    Color::Red,
    Color::Green,
    Color::Yellow,
    Color::Blue,
    Color::Magenta,
    Color::Cyan,
    Color::Gray,
    Color::DarkGray,
    Color::LightRed,
    Color::LightGreen,
    Color::LightYellow,
    Color::LightBlue,
    Color::LightMagenta,
    Color::LightCyan,
    Color::White,
];

/// The ratatui colour for an xterm palette index; 0–15 become the named ANSI colours so the host
/// terminal applies its own theme.
pub(crate) fn indexed_color(n: u8) -> Color {
    NAMED_COLORS
        .get(usize::from(n))
        .copied()
        .unwrap_or(Color::Indexed(n))
}

/// What one emulator cell shows: a char (the common, allocation-free case) or a cluster with
/// combining marks.
pub(crate) enum Symbol<'a> {
    Char(char),
    Str(&'a str),
}

/// A cell's look, in ratatui terms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Look {
    pub fg: Color,
    pub bg: Color,
    pub modifier: Modifier,
}

/// Writes one emulator cell at (`col`, `row`) of `area` (already clipped to the buffer).
///
/// A wide symbol takes the next cell too (reset, as ratatui's own `set_stringn` does, so the
/// diff skips it); when that cell would be outside `area` it is drawn as a space instead. When
/// ratatui would measure the symbol differently from the emulator (emoji with VS16, ZWJ
/// sequences), the emulator's width is forced so ratatui's diff stays aligned with the grid.
pub(crate) fn put_cell(
    buf: &mut Buffer,
    area: Rect,
    col: u16,
    row: u16,
    symbol: Symbol<'_>,
    wide: bool,
    look: Look,
) {
    if col >= area.width || row >= area.height {
        return;
    }
    let (x, y) = (area.x + col, area.y + row);
    let fits = !wide || col + 1 < area.width;
    let width = if wide && fits {
        NonZeroU16::MIN.saturating_add(1)
    } else {
        NonZeroU16::MIN
    };
    if let Some(cell) = buf.cell_mut((x, y)) {
        cell.reset();
        match symbol {
            _ if !fits => cell.set_char(' '),
            Symbol::Char(c) => cell.set_char(c),
            Symbol::Str(s) => cell.set_symbol(s),
        };
        cell.fg = look.fg;
        cell.bg = look.bg;
        cell.modifier = look.modifier;
        // A printable ASCII char is one column to ratatui too: no need to measure it.
        let ascii = matches!(symbol, Symbol::Char(c) if c.is_ascii_graphic() || c == ' ');
        if !(ascii && fits && !wide) && cell.cell_width() != width.get() {
            cell.set_diff_option(CellDiffOption::ForcedWidth(width));
        }
    }
    if wide && fits {
        if let Some(cell) = buf.cell_mut((x + 1, y)) {
            cell.reset();
            cell.bg = look.bg;
        }
    }
}

/// Blanks the part of `area` from `col` rightwards on `row` (the screen may be narrower than
/// the pane while a resize is in flight).
pub(crate) fn clear_from(buf: &mut Buffer, area: Rect, col: u16, row: u16) {
    if row >= area.height {
        return;
    }
    for c in col..area.width {
        blank_at(buf, area, c, row);
    }
}

/// Blanks one cell of `area` (a cell that is blank already is left alone: cheaper than a
/// reset, and the common case in a frame that starts from a reset buffer).
pub(crate) fn blank_at(buf: &mut Buffer, area: Rect, col: u16, row: u16) {
    if col >= area.width || row >= area.height {
        return;
    }
    if let Some(cell) = buf.cell_mut((area.x + col, area.y + row)) {
        if *cell != ratatui::buffer::Cell::EMPTY {
            cell.reset();
        }
    }
}

/// Trims trailing spaces of each row and joins them with '\n'.
pub(crate) fn join_rows(rows: impl Iterator<Item = String>) -> String {
    rows.map(|r| r.trim_end_matches(' ').to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
#[path = "emulator_tests.rs"]
mod tests;
