//! A Client Session's terminal as the Session Coordinator keeps it (issue #14): the emulator
//! state a client attaching later receives at once ([`ScreenSnapshot`]), with a bounded, compact
//! scrollback, and the answers to the program's terminal queries while no client is attached.
//!
//! The screen, cursor and modes live in an `alacritty_terminal` `Term` whose own history is
//! kept short ([`EMULATOR_HISTORY`] rows). Rows that scroll off the top are read out of that
//! history after every piece of output ([`pieces`] bounds how far one piece can scroll),
//! converted to compact styled text ([`encode`]) and kept in the [`history`] ring of
//! `scrollback_lines` lines; the emulator's history is then emptied, and its row cache freed once
//! output stops scrolling ([`SessionScreen::trim`]).
//!
//! Documented limits:
//! - Lines are lost from the history only when a single piece scrolls more than
//!   [`EMULATOR_HISTORY`] rows, which needs sequences that each scroll a whole screen (CSI S,
//!   ED 2 of a full screen) on a screen of more than `EMULATOR_HISTORY - PIECE_SCROLL_BUDGET`
//!   rows, or when the program clears the history (CSI 3J, RIS): the rows scrolled earlier in
//!   the same piece go with it. Lines scrolled within a scroll region that does not start at the
//!   top row never reach any history (as in xterm).
//! - CSI 3J does not clear the compact history.
//! - The alternate screen has no history; while it is shown, a snapshot carries it, not the
//!   primary screen behind it.
//! - Resize: alacritty reflows the screen; rows a narrower width adds stay on screen while
//!   there are empty rows below the cursor, as in tmux ([`reflow`]), the rest go to the
//!   history. The compact history keeps the width its lines had. While the alternate screen
//!   is shown, the primary screen behind it is reflowed alacritty's way: its added rows go to
//!   the history when the alternate screen ends, even if there was room below.
//! - Sizes are capped at [`term::MAX_ROWS`]×[`term::MAX_COLS`].

mod alt_switch;
mod damage;
mod encode;
mod history;
mod pieces;
mod reflow;
mod snapshot;
mod term;

#[cfg(test)]
mod damage_tests;
#[cfg(test)]
mod fuzz_finding_tests;
#[cfg(test)]
mod history_tests;
#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod resize_tests;
#[cfg(test)]
mod round_trip_tests;

use std::mem::size_of;

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::Line;
use alacritty_terminal::term::cell::Cell;
use alacritty_terminal::term::{Config, Osc52, TermDamage, TermMode};
use alacritty_terminal::vte::ansi::Processor;
use alacritty_terminal::Term;
use lazaret_protocol::screen::{ScreenDamage, ScreenSnapshot};

use alt_switch::AltSwitch;
pub use damage::Changes;
use damage::Damage;
use history::History;
use term::{Listener, NoSync, Size};

/// Rows the emulator's own history holds between two reads; one piece of output scrolls at
/// most [`pieces::PIECE_SCROLL_BUDGET`] rows plus one screen. (alacritty allocates its history
/// rows a thousand at a time anyway.)
pub const EMULATOR_HISTORY: usize = 1000;

/// One session's terminal state.
pub struct SessionScreen {
    term: Term<Listener>,
    parser: Processor<NoSync>,
    /// What the parser has not been fed yet: an incomplete UTF-8 sequence at the end of the
    /// output so far.
    utf8: lazaret_ui::terminal::utf8_cut::Utf8Cut,
    /// Where the parser stands in an escape sequence: where the next piece of output may end.
    position: AltSwitch,
    listener: Listener,
    history: History,
    /// The emulator has allocated history rows since the last [`SessionScreen::trim`].
    row_cache: bool,
    /// Which rows changed when.
    damage: Damage,
}

impl SessionScreen {
    pub fn new(rows: u16, cols: u16, scrollback_lines: usize) -> Self {
        let listener = Listener::default();
        let config = Config {
            scrolling_history: EMULATOR_HISTORY,
            osc52: Osc52::Disabled,
            kitty_keyboard: false,
            ..Config::default()
        };
        Self {
            term: Term::new(config, &Size::new(rows, cols), listener.clone()),
            parser: Processor::new(),
            utf8: Default::default(),
            position: AltSwitch::Ground,
            listener,
            history: History::new(scrollback_lines),
            row_cache: false,
            damage: Damage::new(usize::from(rows)),
        }
    }

    /// Feeds program output; rows it scrolls off the primary screen go to the history. When
    /// this output scrolled nothing, the emulator's history row cache is freed (output has
    /// calmed down: a prompt, an echo, a full-screen redraw).
    pub fn process(&mut self, bytes: &[u8]) {
        let mut scrolled = false;
        // The parser is fed whole characters only (vte 0.15 loses the one after a sequence
        // it completes across calls: see `utf8_cut`).
        let mut joined = Vec::new();
        let mut rest = self.utf8.feed(bytes, &mut joined);
        while !rest.is_empty() {
            let (rows, cols) = self.dims();
            let (mut n, mut after) = pieces::piece_len(rest, rows, cols, self.position);
            // A piece ending inside an escape (before the byte that switches to the
            // alternate screen) ends where it is: vte reads no UTF-8 there.
            if after.is_ground() {
                let m = lazaret_ui::terminal::utf8_cut::boundary_near(rest, n.max(1));
                if m != n {
                    (n, after) = (m, self.position);
                    after.advance(&rest[..n]);
                }
            }
            self.parser.advance(&mut self.term, &rest[..n]);
            self.position = after;
            scrolled |= self.collect_scrolled();
            rest = &rest[n..];
        }
        self.note_damage();
        if !scrolled {
            self.trim();
        }
    }

    /// Folds the emulator's damage since the last output into a new generation.
    fn note_damage(&mut self) {
        self.damage.next();
        let rows = self.term.grid().screen_lines();
        match self.term.damage() {
            TermDamage::Full => self.damage.full(rows),
            TermDamage::Partial(lines) => {
                for bounds in lines {
                    self.damage.row(bounds.line);
                }
            }
        }
        self.term.reset_damage();
    }

    /// The generation of the screen as it is now (see [`Self::changes_since`]).
    pub fn generation(&self) -> u64 {
        self.damage.generation()
    }

    /// What changed since generation `since`.
    pub fn changes_since(&self, since: u64) -> Changes {
        self.damage.since(since)
    }

    /// How many rows changed since generation `since` (`None`: the whole screen).
    pub fn changed_rows_since(&self, since: u64) -> Option<usize> {
        self.damage.count_since(since)
    }

    /// The rows `which` (0-based) as they are now, with the cursor and modes.
    pub fn damage(&self, which: &[usize]) -> ScreenDamage {
        snapshot::damage(&self.term, which)
    }

    /// Frees the emulator's cached history rows (about a thousand rows of full-width cells)
    /// when it holds none; the coordinator may call it when a session has been quiet a while.
    /// (The cache belongs to the primary screen; while the alternate one is shown it stays.)
    /// Returns whether it freed anything.
    pub fn trim(&mut self) -> bool {
        let primary = !self.term.mode().contains(TermMode::ALT_SCREEN);
        if self.row_cache && primary && self.term.grid().history_size() == 0 {
            self.term.grid_mut().truncate();
            self.row_cache = false;
            return true;
        }
        false
    }

    /// Answers to the program's queries (DSR `ESC[6n`, DA `ESC[c`, …), to be written to the
    /// session's PTY.
    pub fn take_replies(&mut self) -> Vec<u8> {
        self.listener.with(|r| std::mem::take(&mut r.replies))
    }

    /// Resizes the screen (at most [`term::MAX_ROWS`]×[`term::MAX_COLS`]), reflowing the
    /// primary screen's soft-wrapped lines. Rows a narrower width adds stay on screen while
    /// there are empty rows below the cursor ([`reflow`]); only the rows that no longer fit go
    /// to the history.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.term.resize(Size::new(rows, cols));
        lazaret_ui::terminal::row_reset::mark_rows_written(self.term.grid_mut());
        let back = reflow::keep_on_screen(self.term.grid_mut());
        self.collect_scrolled_but(back);
        self.note_damage();
    }

    pub fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.dims();
        let clamp = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
        (clamp(rows), clamp(cols))
    }

    /// The current state, with at most `history_lines` of the newest history lines.
    pub fn snapshot(&self, history_lines: usize) -> ScreenSnapshot {
        let title = self.listener.with(|r| r.title.clone());
        snapshot::build(&self.term, self.history.newest(history_lines), title)
    }

    /// `count` history lines ending `from_end` lines before the newest, oldest first: what a
    /// client scrolled back that far shows (clients keep no history of their own).
    pub fn history_range(
        &self,
        from_end: usize,
        count: usize,
    ) -> Vec<lazaret_protocol::screen::ScreenLine> {
        self.history.range(from_end, count)
    }

    /// Lines in the compact history.
    pub fn history_len(&self) -> usize {
        self.history.len()
    }

    /// Approximate heap bytes held: both emulator grids, its history row cache while
    /// allocated, and the compact history.
    pub fn heap_bytes(&self) -> usize {
        let (rows, cols) = self.dims();
        let row = cols * size_of::<Cell>() + size_of::<Vec<Cell>>();
        let cache = if self.row_cache {
            EMULATOR_HISTORY * row
        } else {
            0
        };
        2 * rows * row + cache + self.history.heap_bytes()
    }

    fn dims(&self) -> (usize, usize) {
        let grid = self.term.grid();
        (grid.screen_lines(), grid.columns())
    }

    /// Moves the rows in the emulator's history (oldest first) into the compact history and
    /// empties the emulator's. Returns whether there were any.
    fn collect_scrolled(&mut self) -> bool {
        self.collect_scrolled_but(0)
    }

    /// [`Self::collect_scrolled`], dropping the newest `skip` rows of the emulator's history.
    fn collect_scrolled_but(&mut self, skip: usize) -> bool {
        let grid = self.term.grid();
        let scrolled = grid.history_size();
        if scrolled == 0 {
            return false;
        }
        let top = i32::try_from(scrolled).unwrap_or(i32::MAX);
        let newest = i32::try_from(skip).unwrap_or(i32::MAX).saturating_add(1);
        for line in (newest..=top).rev() {
            self.history
                .push(encode::encode_row(&grid[Line(-line)][..]));
        }
        self.term.grid_mut().clear_history();
        self.row_cache = true;
        true
    }
}
