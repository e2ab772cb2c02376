//! The terminal state the coordinator keeps per hosted session ([`SessionScreen`]: screen,
//! modes, compact bounded scrollback), and the redraw a client gets when it attaches.

use crate::coordinator::screen::SessionScreen;

/// A session's terminal as the coordinator emulates it.
pub struct ScreenState {
    screen: SessionScreen,
}

impl ScreenState {
    pub fn new(rows: u16, cols: u16, scrollback: usize) -> ScreenState {
        ScreenState {
            screen: SessionScreen::new(rows.max(1), cols.max(1), scrollback),
        }
    }

    /// Feeds program output.
    pub fn process(&mut self, bytes: &[u8]) {
        self.screen.process(bytes);
    }

    /// Answers to the program's terminal queries, for its PTY: the coordinator's copy of the
    /// terminal answers them once, whether or not a client is attached.
    pub fn take_replies(&mut self) -> Vec<u8> {
        self.screen.take_replies()
    }

    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.screen.resize(rows.max(1), cols.max(1));
    }

    pub fn size(&self) -> (u16, u16) {
        self.screen.size()
    }

    /// Frees the emulator's cached history rows once the session is quiet.
    pub fn trim(&mut self) -> bool {
        self.screen.trim()
    }

    /// Lines kept in the compact scrollback.
    pub fn history_len(&self) -> usize {
        self.screen.history_len()
    }

    /// `count` scrollback lines ending `from_end` before the newest, oldest first.
    pub fn history_range(
        &self,
        from_end: usize,
        count: usize,
    ) -> Vec<lazaret_protocol::screen::ScreenLine> {
        self.screen.history_range(from_end, count)
    }

    /// The bytes that make a fresh terminal of the same size show this state, after up to
    /// `history` lines of scrollback.
    pub fn redraw(&self, history: usize) -> Vec<u8> {
        self.screen
            .snapshot(history)
            .to_ansi_with_history(history > 0)
    }
}
