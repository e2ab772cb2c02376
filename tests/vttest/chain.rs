//! What a `lazaret tui` pane shows of a program's output: the bytes go through the Session
//! Coordinator's copy of the terminal (`ScreenState`), which sends the pane screen updates (the
//! changed rows, or the whole screen); the pane parses those into its own emulator and draws it
//! into ratatui cells. Also, for finding where a difference comes from, the same emulator fed
//! the program's bytes directly.

use super::grid::{Cell, Colour, Screen};
use lazaret::coordinator::hosted::screen_state::ScreenState;
use lazaret::coordinator::hosted::SCROLLBACK;
use lazaret_ui::tui::emulator::{new_emulator, Emulator};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

pub struct Chain {
    coordinator: ScreenState,
    pane: Box<dyn Emulator>,
    /// The generation of the coordinator's screen the pane shows.
    shown: u64,
    direct: Box<dyn Emulator>,
}

impl Chain {
    /// A pane attached to a new session: it gets the whole screen first.
    pub fn new(rows: u16, cols: u16) -> Chain {
        let coordinator = ScreenState::new(rows, cols, SCROLLBACK);
        let mut pane = new_emulator(rows, cols, 0);
        pane.process(&coordinator.redraw(0));
        Chain {
            shown: coordinator.generation(),
            coordinator,
            pane,
            direct: new_emulator(rows, cols, 0),
        }
    }

    /// The program writes `bytes`, read by the coordinator `chunk` bytes at a time; the pane
    /// gets a screen update after each read. Returns the coordinator's answers to the
    /// program's queries (what it writes to the session's terminal).
    pub fn feed(&mut self, bytes: &[u8], chunk: usize) -> Vec<u8> {
        let mut replies = Vec::new();
        for piece in bytes.chunks(chunk.max(1)) {
            self.coordinator.process(piece);
            replies.extend(self.coordinator.take_replies());
            let (update, generation, _) = self.coordinator.update(self.shown);
            self.pane.process(&update);
            self.shown = generation;
            self.direct.process(piece);
            let _ = self.direct.take_replies();
        }
        replies
    }

    pub fn pane(&self) -> Screen {
        draw(self.pane.as_ref())
    }

    pub fn direct(&self) -> Screen {
        draw(self.direct.as_ref())
    }
}

fn draw(emulator: &dyn Emulator) -> Screen {
    let (rows, cols) = emulator.size();
    let area = Rect::new(0, 0, cols, rows);
    let mut buf = Buffer::empty(area);
    emulator.draw(&mut buf, area, 0);
    let rows = (0..rows)
        .map(|y| {
            let mut row: Vec<Cell> = Vec::new();
            let mut skip = false;
            for x in 0..cols {
                let cell = &buf[(x, y)];
                let text = if skip {
                    String::new()
                } else {
                    cell.symbol().to_owned()
                };
                skip = !skip && unicode_width::UnicodeWidthStr::width(cell.symbol()) == 2;
                row.push(Cell {
                    text,
                    fg: Colour::of(cell.fg),
                    bg: Colour::of(cell.bg),
                    attrs: cell.modifier,
                });
            }
            row
        })
        .collect();
    Screen {
        rows,
        cursor: emulator.cursor(0),
    }
}
