//! Copying from a pane to the host clipboard (issue #16): a selection over what the pane shows,
//! made with the keyboard (`ctrl-b y`: arrows or `hjkl` move, `v` or space marks, `y` or Enter
//! copies, Esc leaves) or with the mouse (a drag where the program does not take the mouse).
//! The TUI writes the text to the host terminal itself as OSC 52 — the sandbox's own OSC 52
//! never reaches the host (`terminal::output_filter`, the coordinator's screen).
//!
//! Sans-IO: [`CopyMode`] holds the selection and turns keys into [`CopyStep`]s; [`text`] reads
//! the selected cells out of a drawn buffer; [`osc52`] makes the bytes for the host terminal.
//! The selection covers the rows the pane shows (scroll back first to copy older lines).

use super::layout::PaneId;
use crossterm::event::KeyCode;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use unicode_width::UnicodeWidthStr;

/// The most text one copy sends (bytes before encoding): a full screen of wide characters
/// is far less; terminals cap OSC 52 too (xterm, tmux).
pub const MAX_COPY: usize = 256 * 1024;

/// A position in a pane's inner area: `(row, col)`, 0-based.
pub type Cell = (u16, u16);

/// A selection being made in one pane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyMode {
    pub pane: PaneId,
    pub cursor: Cell,
    /// Where the selection started; `None` until marked (then `y` copies the cursor's line).
    pub anchor: Option<Cell>,
    /// Made by a mouse drag (released: copied and left).
    pub by_mouse: bool,
}

/// What a key did in copy mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyStep {
    Stay,
    /// Copy the selection and leave.
    Copy,
    /// Leave without copying.
    Leave,
}

impl CopyMode {
    /// Copy mode entered by the keyboard, the cursor where the pane's cursor is.
    pub fn new(pane: PaneId, cursor: Cell) -> CopyMode {
        CopyMode {
            pane,
            cursor,
            anchor: None,
            by_mouse: false,
        }
    }

    /// A mouse press at `at`: the selection starts there.
    pub fn pressed(pane: PaneId, at: Cell) -> CopyMode {
        CopyMode {
            pane,
            cursor: at,
            anchor: Some(at),
            by_mouse: true,
        }
    }

    /// A key in a pane of `rows`×`cols`.
    pub fn key(&mut self, code: KeyCode, (rows, cols): (u16, u16)) -> CopyStep {
        let (row, col) = &mut self.cursor;
        let (last_row, last_col) = (rows.saturating_sub(1), cols.saturating_sub(1));
        match code {
            KeyCode::Left | KeyCode::Char('h') => *col = col.saturating_sub(1),
            KeyCode::Right | KeyCode::Char('l') => *col = (*col + 1).min(last_col),
            KeyCode::Up | KeyCode::Char('k') => *row = row.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => *row = (*row + 1).min(last_row),
            KeyCode::Home | KeyCode::Char('0') => *col = 0,
            KeyCode::End | KeyCode::Char('$') => *col = last_col,
            KeyCode::PageUp | KeyCode::Char('g') => *row = 0,
            KeyCode::PageDown | KeyCode::Char('G') => *row = last_row,
            KeyCode::Char('v' | ' ') => self.anchor = Some(self.cursor),
            KeyCode::Char('y') | KeyCode::Enter => return CopyStep::Copy,
            KeyCode::Esc | KeyCode::Char('q') => return CopyStep::Leave,
            _ => {}
        }
        self.cursor = (self.cursor.0.min(last_row), self.cursor.1.min(last_col));
        CopyStep::Stay
    }

    /// The selection's first and last cell in reading order (without a mark: the cursor's
    /// whole line).
    pub fn span(&self, cols: u16) -> (Cell, Cell) {
        match self.anchor {
            Some(a) => (a.min(self.cursor), a.max(self.cursor)),
            None => ((self.cursor.0, 0), (self.cursor.0, cols.saturating_sub(1))),
        }
    }

    /// Whether `cell` is selected (in a pane `cols` wide).
    pub fn selects(&self, cell: Cell, cols: u16) -> bool {
        let (from, to) = self.span(cols);
        self.anchor.is_some() && from <= cell && cell <= to
    }
}

/// The text of cells `from..=to` (reading order) of the pane drawn in `area` of `buf`: each
/// row's trailing blanks dropped, rows joined by newlines. A concealed cell (SGR 8, drawn
/// blank) is copied as the blank it shows, never as the text the sandbox hid in it.
pub fn text(buf: &Buffer, area: Rect, (from, to): (Cell, Cell)) -> String {
    let mut rows = Vec::new();
    for row in from.0..=to.0.min(area.height.saturating_sub(1)) {
        let first = if row == from.0 { from.1 } else { 0 };
        let last = if row == to.0 {
            to.1
        } else {
            area.width.saturating_sub(1)
        };
        let mut line = String::new();
        let mut covered = false;
        for col in first..=last.min(area.width.saturating_sub(1)) {
            if std::mem::take(&mut covered) {
                // The right half of a wide character: drawn as a reset cell.
                continue;
            }
            if let Some(cell) = buf.cell((area.x + col, area.y + row)) {
                let width = UnicodeWidthStr::width(cell.symbol());
                if cell.modifier.contains(ratatui::style::Modifier::HIDDEN) {
                    line.push_str(&" ".repeat(width.max(1)));
                } else {
                    line.push_str(cell.symbol());
                }
                covered = width > 1;
            }
        }
        rows.push(line.trim_end().to_owned());
    }
    let mut out = rows.join("\n");
    if out.len() > MAX_COPY {
        let mut end = MAX_COPY;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
    }
    out
}

/// `ESC ] 52 ; c ; BASE64 BEL`: sets the host terminal's clipboard (and tmux's paste buffer
/// with `set-clipboard on`). The text is base64-encoded, so no byte of it reaches the
/// terminal's parser as a control.
pub fn osc52(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    let mut out = b"\x1b]52;c;".to_vec();
    out.extend(
        base64::engine::general_purpose::STANDARD
            .encode(text.as_bytes())
            .bytes(),
    );
    out.push(0x07);
    out
}

#[cfg(test)]
#[path = "copy_mode_tests.rs"]
mod tests;
