//! The terminal state the coordinator keeps per hosted session ([`SessionScreen`]: screen,
//! modes, compact bounded scrollback), and the redraw a client gets when it attaches.

use crate::coordinator::screen::{Changes, SessionScreen};

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

    /// The generation of the screen as it is now: a client that got [`Self::redraw`] or
    /// [`Self::update`] now is at this one.
    pub fn generation(&self) -> u64 {
        self.screen.generation()
    }

    /// The bytes that bring a client whose terminal shows generation `since` (without history)
    /// to the screen as it is now, the generation it is then at, and whether they are the
    /// whole screen: the changed rows when few changed, else the whole screen (see
    /// [`lazaret_protocol::screen::ScreenDamage`]).
    pub fn update(&self, since: u64) -> (Vec<u8>, u64, bool) {
        let now = self.screen.generation();
        match self.rows_since(since) {
            Some(changed) if changed.is_empty() => (Vec::new(), now, false),
            Some(changed) => (self.screen.damage(&changed).to_ansi(), now, false),
            None => (self.redraw(0), now, true),
        }
    }

    /// Whether the update since generation `since` is the whole screen (see
    /// [`Self::rows_since`]).
    pub fn is_whole_update(&self, since: u64) -> bool {
        self.screen
            .changed_rows_since(since)
            .is_none_or(|n| self.too_many(n))
    }

    /// More than half the screen changed: a redraw then costs as much and sets everything.
    fn too_many(&self, changed: usize) -> bool {
        let (rows, _) = self.screen.size();
        changed * 2 > usize::from(rows)
    }

    /// The rows changed since generation `since`, or `None` when the update is the whole
    /// screen: it all changed, or more than half of it (a redraw then costs as much and sets
    /// everything).
    fn rows_since(&self, since: u64) -> Option<Vec<usize>> {
        match self.screen.changes_since(since) {
            Changes::None => Some(Vec::new()),
            Changes::Rows(changed) if !self.too_many(changed.len()) => Some(changed),
            Changes::Rows(_) | Changes::Full => None,
        }
    }

    /// The bytes that make a fresh terminal of the same size show this state, after up to
    /// `history` lines of scrollback.
    pub fn redraw(&self, history: usize) -> Vec<u8> {
        self.screen
            .snapshot(history)
            .to_ansi_with_history(history > 0)
    }
}
