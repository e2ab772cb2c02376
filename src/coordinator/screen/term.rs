//! The `alacritty_terminal` pieces a [`super::SessionScreen`] drives: the event listener that
//! collects query answers and the title, a parser without synchronized-update timers, sizes.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use alacritty_terminal::event::{Event, EventListener};
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::vte::ansi::Timeout;

/// Longest window title kept (characters); the rest is cut.
const MAX_TITLE_CHARS: usize = 256;

/// What the emulator reports while processing output.
#[derive(Default)]
pub struct Reports {
    /// Answers to DSR, DA1/DA2, DECRQM, CSI 18 t: written back to the session's PTY.
    pub replies: Vec<u8>,
    /// The window title (OSC 0/2), control characters removed.
    pub title: Option<String>,
}

/// The listener handed to the emulator. Only `PtyWrite` and titles are kept: OSC 52 clipboard
/// access is disabled in the config, colour and pixel-size queries go unanswered (the
/// coordinator knows no palette or cell size; programs send DA1 after them and do not hang).
#[derive(Clone, Default)]
pub struct Listener(pub Arc<Mutex<Reports>>);

impl Listener {
    pub fn with<R>(&self, f: impl FnOnce(&mut Reports) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl EventListener for Listener {
    fn send_event(&self, event: Event) {
        match event {
            Event::PtyWrite(text) => self.with(|r| r.replies.extend_from_slice(text.as_bytes())),
            Event::Title(title) => self.with(|r| r.title = Some(clean_title(&title))),
            Event::ResetTitle => self.with(|r| r.title = None),
            _ => {}
        }
    }
}

fn clean_title(title: &str) -> String {
    title
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_TITLE_CHARS)
        .collect()
}

/// Synchronized updates (DECSET 2026) off: the parser would hold output back until the program
/// ends the update or a timer nobody drives fires.
#[derive(Default)]
pub struct NoSync;

impl Timeout for NoSync {
    fn set_timeout(&mut self, _: Duration) {}
    fn clear_timeout(&mut self) {}
    fn pending_timeout(&self) -> bool {
        false
    }
}

/// Largest screen kept: a client's size is not trusted to be sane (two grids of `u16::MAX`²
/// cells would take some hundred GB). Rows stay below `EMULATOR_HISTORY - PIECE_SCROLL_BUDGET`,
/// so one piece of output still loses no history; 500×2000 cells are about 24 MB a grid.
pub const MAX_ROWS: u16 = 500;
pub const MAX_COLS: u16 = 2_000;

/// Narrowest screen kept: alacritty panics on a double-width char in a one-column grid (found by
/// fuzzing, issue #19), so a client one column wide gets a screen of two.
pub const MIN_COLS: u16 = 2;

/// A screen size in alacritty's terms (at least 1×[`MIN_COLS`], at most
/// [`MAX_ROWS`]×[`MAX_COLS`]).
pub struct Size {
    pub rows: usize,
    pub cols: usize,
}

impl Size {
    pub fn new(rows: u16, cols: u16) -> Self {
        Self {
            rows: usize::from(rows.clamp(1, MAX_ROWS)),
            cols: usize::from(cols.clamp(MIN_COLS, MAX_COLS)),
        }
    }
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
