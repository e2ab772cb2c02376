//! [`Emulator`] on `vt100`, kept so the choice of emulator crate is measured rather than assumed
//! (see `examples/emulator_throughput.rs`).
//!
//! vt100 answers no queries itself; they reach [`vt100::Callbacks::unhandled_csi`] after its own
//! parser has reassembled them across chunk boundaries, and are answered there.

use std::cell::RefCell;
use std::num::NonZeroU16;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use vt100::{MouseProtocolEncoding, MouseProtocolMode};

use super::emulator::{
    clear_from, indexed_color, join_rows, put_cell, reset_modes_bytes, Emulator, Look, Modes,
    MouseMode, Symbol, ABORT_SEQUENCE, LEAVE_ALT_SCREEN,
};

/// Primary device attributes: a VT220-class terminal with ANSI colour, like xterm's answer.
const DA1_REPLY: &[u8] = b"\x1b[?62;22c";
/// Secondary device attributes: "VT100, firmware 10" — no xterm version to key quirks off.
const DA2_REPLY: &[u8] = b"\x1b[>0;10;1c";

/// Answers queries and tracks the one mode vt100 does not (focus reporting, DECSET 1004).
///
/// Clipboard (OSC 52), title and bell callbacks keep their no-op defaults: the sandbox must not
/// reach the host clipboard, and titles are the control centre's business. A full reset (RIS,
/// `ESC c`) is not seen here, so it leaves `focus_events` as it was.
#[derive(Default)]
struct Queries {
    replies: Vec<u8>,
    focus_events: bool,
}

impl vt100::Callbacks for Queries {
    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        let first = params.first().and_then(|p| p.first()).copied().unwrap_or(0);
        let cursor = || {
            let (row, col) = screen.cursor_position();
            let cols = screen.size().1.get();
            (u32::from(row) + 1, u32::from(col.min(cols - 1)) + 1)
        };
        match (i1, i2, c) {
            (None, None, 'n') if first == 5 => self.replies.extend_from_slice(b"\x1b[0n"),
            (None, None, 'n') if first == 6 => {
                let (row, col) = cursor();
                self.replies.extend(format!("\x1b[{row};{col}R").bytes());
            }
            (Some(b'?'), None, 'n') if first == 6 => {
                let (row, col) = cursor();
                self.replies.extend(format!("\x1b[?{row};{col}R").bytes());
            }
            (None, None, 'c') if first == 0 => self.replies.extend_from_slice(DA1_REPLY),
            (Some(b'>'), None, 'c') if first == 0 => self.replies.extend_from_slice(DA2_REPLY),
            (None, None, 't') if first == 18 => {
                let (rows, cols) = screen.size();
                self.replies
                    .extend(format!("\x1b[8;{rows};{cols}t").bytes());
            }
            (Some(b'?'), None, 'h' | 'l') if params.iter().any(|p| *p == [1004]) => {
                self.focus_events = c == 'h';
            }
            _ => {}
        }
    }
}

/// A pane's terminal on `vt100`.
///
/// The parser sits in a `RefCell` because vt100 scrolls back by moving the screen's view
/// (`set_scrollback`), which `draw(&self)` must do and undo.
pub struct Vt100Emulator {
    parser: RefCell<vt100::Parser<Queries>>,
    /// An incomplete UTF-8 sequence at the end of the output so far, not fed yet (vte loses
    /// the character after a sequence completed across calls: [`crate::terminal::utf8_cut`]).
    utf8: crate::terminal::utf8_cut::Utf8Cut,
}

fn non_zero(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

impl Vt100Emulator {
    pub fn new(rows: u16, cols: u16, scrollback: usize) -> Self {
        let parser = vt100::Parser::new_with_callbacks(
            non_zero(rows),
            non_zero(cols),
            scrollback,
            Queries::default(),
        );
        Self {
            parser: RefCell::new(parser),
            utf8: Default::default(),
        }
    }

    /// Calls `f` on the screen scrolled back `scroll` lines, then returns to the live view.
    /// Returns `None` only if re-entered, which the single-threaded pane never does.
    fn with_screen<R>(&self, scroll: usize, f: impl FnOnce(&vt100::Screen) -> R) -> Option<R> {
        let mut parser = self.parser.try_borrow_mut().ok()?;
        if scroll == 0 {
            return Some(f(parser.screen()));
        }
        parser.screen_mut().set_scrollback(scroll);
        let result = f(parser.screen());
        parser.screen_mut().set_scrollback(0);
        Some(result)
    }
}

fn color(c: vt100::Color) -> Color {
    match c {
        vt100::Color::Default => Color::Reset,
        vt100::Color::Idx(n) => indexed_color(n),
        vt100::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}

fn look(cell: &vt100::Cell) -> Look {
    let mut modifier = Modifier::empty();
    for (on, m) in [
        (cell.bold(), Modifier::BOLD),
        (cell.dim(), Modifier::DIM),
        (cell.italic(), Modifier::ITALIC),
        (cell.underline(), Modifier::UNDERLINED),
        (cell.inverse(), Modifier::REVERSED),
    ] {
        if on {
            modifier |= m;
        }
    }
    Look {
        fg: color(cell.fgcolor()),
        bg: color(cell.bgcolor()),
        modifier,
    }
}

impl Emulator for Vt100Emulator {
    fn process(&mut self, bytes: &[u8]) {
        let mut joined = Vec::new();
        let whole = self.utf8.feed(bytes, &mut joined);
        self.parser.get_mut().process(whole);
    }

    fn resize(&mut self, rows: u16, cols: u16) {
        self.parser
            .get_mut()
            .set_size(non_zero(rows), non_zero(cols));
    }

    fn size(&self) -> (u16, u16) {
        self.with_screen(0, |s| (s.size().0.get(), s.size().1.get()))
            .unwrap_or((1, 1))
    }

    fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.parser.get_mut().callbacks_mut().replies)
    }

    fn modes(&self) -> Modes {
        let Ok(parser) = self.parser.try_borrow() else {
            return Modes::default();
        };
        let screen = parser.screen();
        let mouse = match screen.mouse_protocol_mode() {
            MouseProtocolMode::None => MouseMode::Off,
            MouseProtocolMode::Press | MouseProtocolMode::PressRelease => MouseMode::Click,
            MouseProtocolMode::ButtonMotion => MouseMode::Drag,
            MouseProtocolMode::AnyMotion => MouseMode::Motion,
        };
        Modes {
            alt_screen: screen.alternate_screen(),
            app_cursor: screen.application_cursor(),
            bracketed_paste: screen.bracketed_paste(),
            mouse,
            mouse_sgr: screen.mouse_protocol_encoding() == MouseProtocolEncoding::Sgr,
            cursor_visible: !screen.hide_cursor(),
            focus_events: parser.callbacks().focus_events,
        }
    }

    fn cursor(&self, scroll: usize) -> Option<(u16, u16)> {
        if scroll > 0 {
            return None;
        }
        self.with_screen(0, |s| {
            let (row, col) = s.cursor_position();
            (!s.hide_cursor()).then(|| (row, col.min(s.size().1.get() - 1)))
        })
        .flatten()
    }

    fn draw(&self, buf: &mut Buffer, area: Rect, scroll: usize) {
        let area = area.intersection(buf.area);
        self.with_screen(scroll, |screen| {
            let (rows, cols) = (screen.size().0.get(), screen.size().1.get());
            for y in 0..area.height {
                if y >= rows {
                    clear_from(buf, area, 0, y);
                    continue;
                }
                let width = cols.min(area.width);
                for x in 0..width {
                    match screen.cell(y, x) {
                        Some(cell) if cell.is_wide_continuation() => {}
                        Some(cell) => {
                            let text = cell.contents();
                            let symbol = if text.is_empty() { " " } else { text };
                            let look = look(cell);
                            put_cell(buf, area, x, y, Symbol::Str(symbol), cell.is_wide(), look);
                        }
                        None => {
                            put_cell(buf, area, x, y, Symbol::Char(' '), false, Look::default());
                        }
                    }
                }
                clear_from(buf, area, width, y);
            }
        });
    }

    fn history_len(&self) -> usize {
        self.with_screen(0, vt100::Screen::scrollback_len)
            .unwrap_or(0)
    }

    fn reset_modes(&mut self) {
        if self.parser.get_mut().screen().alternate_screen() {
            self.process(ABORT_SEQUENCE);
            self.process(LEAVE_ALT_SCREEN);
        }
        let (row, col) = self.parser.get_mut().screen().cursor_position();
        self.process(&reset_modes_bytes(row, col));
    }

    fn screen_text(&self) -> String {
        self.with_screen(0, |screen| {
            let (rows, cols) = (screen.size().0.get(), screen.size().1.get());
            join_rows((0..rows).map(|y| {
                let mut line = String::with_capacity(usize::from(cols));
                for cell in (0..cols).filter_map(|x| screen.cell(y, x)) {
                    match cell.contents() {
                        _ if cell.is_wide_continuation() => {}
                        "" => line.push(' '),
                        text => line.push_str(text),
                    }
                }
                line
            }))
        })
        .unwrap_or_default()
    }
}
