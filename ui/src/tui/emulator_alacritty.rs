//! [`Emulator`] on `alacritty_terminal`: the emulator of a real terminal, which answers the
//! usual queries itself and reflows text on resize.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use alacritty_terminal::event::{Event, EventListener};
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::Line;
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::term::{Config, Osc52, TermMode};
use alacritty_terminal::vte::ansi::{Color as AnsiColor, NamedColor, Processor, Timeout};
use alacritty_terminal::Term;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};

use super::emulator::{
    blank_at, clear_from, indexed_color, join_rows, put_cell, reset_modes_bytes, Emulator, Look,
    Modes, MouseMode, Symbol, ABORT_SEQUENCE, LEAVE_ALT_SCREEN,
};

/// Collects the terminal's answers for the pane's PTY.
///
/// Only `PtyWrite` (DSR, DA1/DA2, DECRQM, CSI 18 t) is forwarded. Everything else is dropped on
/// purpose: OSC 52 clipboard store/load would let the sandbox read or write the host clipboard,
/// titles and bells are the control centre's business, and colour (OSC 4/10/11) and pixel-size
/// queries go unanswered because the pane does not know the host terminal's palette or cell
/// size — programs asking them send DA1 after, so they do not hang.
#[derive(Clone, Default)]
struct Replies(Arc<Mutex<Vec<u8>>>);

impl EventListener for Replies {
    fn send_event(&self, event: Event) {
        if let Event::PtyWrite(text) = event {
            let mut replies = self.0.lock().unwrap_or_else(|e| e.into_inner());
            replies.extend_from_slice(text.as_bytes());
        }
    }
}

/// Synchronized updates (DECSET 2026) switched off: the processor would hold output back until
/// the program ends the update or a timer the pane has no tick for fires, so a program dying
/// inside an update would freeze its pane. The pane redraws at its own pace anyway.
#[derive(Default)]
struct NoSync;

impl Timeout for NoSync {
    fn set_timeout(&mut self, _: Duration) {}
    fn clear_timeout(&mut self) {}
    fn pending_timeout(&self) -> bool {
        false
    }
}

/// Screen size in alacritty's terms.
struct Size {
    rows: usize,
    cols: usize,
}

impl Dimensions for Size {
    fn total_lines(&self) -> usize {
        self.rows
    }
    fn screen_lines(&self) -> usize {
        self.rows
    }
    fn columns(&self) -> usize {
        self.cols
    }
}

/// A pane's terminal on `alacritty_terminal`.
pub struct AlacrittyEmulator {
    term: Term<Replies>,
    parser: Processor<NoSync>,
    /// An incomplete UTF-8 sequence at the end of the output so far, not fed yet (see
    /// [`crate::terminal::utf8_cut`]).
    utf8: crate::terminal::utf8_cut::Utf8Cut,
    replies: Replies,
}

impl AlacrittyEmulator {
    pub fn new(rows: u16, cols: u16, scrollback: usize) -> Self {
        let replies = Replies::default();
        let config = Config {
            scrolling_history: scrollback,
            osc52: Osc52::Disabled,
            kitty_keyboard: false,
            ..Config::default()
        };
        let term = Term::new(config, &size(rows, cols), replies.clone());
        Self {
            term,
            parser: Processor::new(),
            utf8: Default::default(),
            replies,
        }
    }

    /// The rows shown with the view `scroll` lines back, top first.
    fn visible_rows(&self, scroll: usize) -> impl Iterator<Item = &[Cell]> {
        let grid = self.term.grid();
        let scroll = scroll.min(grid.history_size()) as i32;
        let rows = grid.screen_lines() as i32;
        (0..rows).map(move |r| &grid[Line(r - scroll)][..])
    }
}

/// At least 1×2: alacritty panics on a double-width char in a one-column grid (found by
/// fuzzing, issue #19); a one-column pane shows the first column of two.
fn size(rows: u16, cols: u16) -> Size {
    Size {
        rows: usize::from(rows.max(1)),
        cols: usize::from(cols.max(2)),
    }
}

fn color(c: AnsiColor) -> Color {
    match c {
        AnsiColor::Spec(rgb) => Color::Rgb(rgb.r, rgb.g, rgb.b),
        AnsiColor::Indexed(n) => indexed_color(n),
        AnsiColor::Named(named) => {
            let n = named as usize;
            let dim = NamedColor::DimBlack as usize;
            match n {
                0..=15 => indexed_color(n as u8),
                _ if (dim..dim + 8).contains(&n) => indexed_color((n - dim) as u8),
                _ => Color::Reset,
            }
        }
    }
}

fn look(cell: &Cell) -> Look {
    const MODIFIERS: [(Flags, Modifier); 7] = [
        (Flags::BOLD, Modifier::BOLD),
        (Flags::DIM, Modifier::DIM),
        (Flags::ITALIC, Modifier::ITALIC),
        (Flags::ALL_UNDERLINES, Modifier::UNDERLINED),
        (Flags::INVERSE, Modifier::REVERSED),
        (Flags::HIDDEN, Modifier::HIDDEN),
        (Flags::STRIKEOUT, Modifier::CROSSED_OUT),
    ];
    let mut modifier = Modifier::empty();
    for (flag, m) in MODIFIERS {
        if cell.flags.intersects(flag) {
            modifier |= m;
        }
    }
    Look {
        fg: color(cell.fg),
        bg: color(cell.bg),
        modifier,
    }
}

/// A space with no attributes and the default colours: what a reset frame cell shows.
fn is_blank(cell: &Cell) -> bool {
    cell.c == ' '
        && cell.flags.is_empty()
        && color(cell.fg) == Color::Reset
        && color(cell.bg) == Color::Reset
}

/// Whether the cell is the right half of a wide char, or the blank alacritty leaves at the end
/// of a line when a wide char wrapped: neither is drawn as its own symbol.
fn is_spacer(cell: &Cell) -> bool {
    cell.flags.contains(Flags::WIDE_CHAR_SPACER)
}

/// The cell's char, except that alacritty keeps a tab's `'\t'` in its first cell (for copying),
/// which must not reach the host terminal.
fn base_char(cell: &Cell) -> char {
    if cell.c.is_control() {
        ' '
    } else {
        cell.c
    }
}

impl Emulator for AlacrittyEmulator {
    fn process(&mut self, bytes: &[u8]) {
        let mut joined = Vec::new();
        let whole = self.utf8.feed(bytes, &mut joined);
        self.parser.advance(&mut self.term, whole);
    }

    fn resize(&mut self, rows: u16, cols: u16) {
        self.term.resize(size(rows, cols));
        crate::terminal::row_reset::mark_rows_written(self.term.grid_mut());
    }

    fn size(&self) -> (u16, u16) {
        let grid = self.term.grid();
        let clamp = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
        (clamp(grid.screen_lines()), clamp(grid.columns()))
    }

    fn take_replies(&mut self) -> Vec<u8> {
        let mut replies = self.replies.0.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *replies)
    }

    fn modes(&self) -> Modes {
        let mode = *self.term.mode();
        let mouse = if mode.contains(TermMode::MOUSE_MOTION) {
            MouseMode::Motion
        } else if mode.contains(TermMode::MOUSE_DRAG) {
            MouseMode::Drag
        } else if mode.contains(TermMode::MOUSE_REPORT_CLICK) {
            MouseMode::Click
        } else {
            MouseMode::Off
        };
        Modes {
            alt_screen: mode.contains(TermMode::ALT_SCREEN),
            app_cursor: mode.contains(TermMode::APP_CURSOR),
            bracketed_paste: mode.contains(TermMode::BRACKETED_PASTE),
            mouse,
            mouse_sgr: mode.contains(TermMode::SGR_MOUSE),
            cursor_visible: mode.contains(TermMode::SHOW_CURSOR),
            focus_events: mode.contains(TermMode::FOCUS_IN_OUT),
        }
    }

    fn cursor(&self, scroll: usize) -> Option<(u16, u16)> {
        if scroll > 0 || !self.term.mode().contains(TermMode::SHOW_CURSOR) {
            return None;
        }
        let point = self.term.grid().cursor.point;
        let row = u16::try_from(point.line.0).ok()?;
        let col = u16::try_from(point.column.0).ok()?;
        Some((row, col))
    }

    fn draw(&self, buf: &mut Buffer, area: Rect, scroll: usize) {
        let area = area.intersection(buf.area);
        let mut rows_drawn = 0;
        for (y, cells) in self
            .visible_rows(scroll)
            .take(usize::from(area.height))
            .enumerate()
        {
            let y = y as u16;
            let mut x = 0u16;
            for cell in cells.iter().take(usize::from(area.width)) {
                if is_blank(cell) {
                    // Most of a screen: the frame's cell is blank already (ratatui starts each
                    // frame from a reset buffer), nothing to write.
                    blank_at(buf, area, x, y);
                } else if !is_spacer(cell) {
                    let wide = cell.flags.contains(Flags::WIDE_CHAR);
                    let text: String;
                    let symbol = match cell.zerowidth() {
                        Some(marks) => {
                            text = std::iter::once(base_char(cell))
                                .chain(marks.iter().copied())
                                .collect();
                            Symbol::Str(&text)
                        }
                        None => Symbol::Char(base_char(cell)),
                    };
                    put_cell(buf, area, x, y, symbol, wide, look(cell));
                }
                x += 1;
            }
            clear_from(buf, area, x, y);
            rows_drawn = y + 1;
        }
        for y in rows_drawn..area.height {
            clear_from(buf, area, 0, y);
        }
    }

    fn history_len(&self) -> usize {
        self.term.grid().history_size()
    }

    fn reset_modes(&mut self) {
        if self.term.mode().contains(TermMode::ALT_SCREEN) {
            self.process(ABORT_SEQUENCE);
            self.process(LEAVE_ALT_SCREEN);
        }
        let point = self.term.grid().cursor.point;
        let row = u16::try_from(point.line.0).unwrap_or(0);
        let col = u16::try_from(point.column.0).unwrap_or(0);
        self.process(&reset_modes_bytes(row, col));
    }

    fn screen_text(&self) -> String {
        join_rows(self.visible_rows(0).map(|cells| {
            let mut line = String::with_capacity(cells.len());
            for cell in cells.iter().filter(|c| !is_spacer(c)) {
                line.push(base_char(cell));
                line.extend(cell.zerowidth().into_iter().flatten());
            }
            line
        }))
    }
}
