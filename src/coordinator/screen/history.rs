//! The compact history ring: rows scrolled off a session's primary screen, oldest first, each
//! stored as its [`ScreenLine`] text in one exact-size allocation (a plain row is just its
//! characters; a styled row adds its SGR sequences) — never as a row of full-width cells.

use std::collections::VecDeque;
use std::mem::size_of;

use lazaret_protocol::screen::ScreenLine;

struct StoredLine {
    text: Box<str>,
    wrapped: bool,
}

/// At most `limit` lines; pushing beyond drops the oldest.
pub struct History {
    lines: VecDeque<StoredLine>,
    limit: usize,
    text_bytes: usize,
}

impl History {
    pub fn new(limit: usize) -> Self {
        Self {
            lines: VecDeque::new(),
            limit,
            text_bytes: 0,
        }
    }

    pub fn push(&mut self, line: ScreenLine) {
        if self.limit == 0 {
            return;
        }
        if self.lines.len() == self.limit {
            if let Some(old) = self.lines.pop_front() {
                self.text_bytes -= old.text.len();
            }
        }
        if self.lines.len() == self.lines.capacity() {
            // Grow by doubling but never past the limit (plain doubling would end at the next
            // power of two: 8,192 slots for 5,000 lines).
            let len = self.lines.len();
            self.lines.reserve_exact(len.max(64).min(self.limit - len));
        }
        self.text_bytes += line.text.len();
        self.lines.push_back(StoredLine {
            text: line.text.into_boxed_str(),
            wrapped: line.wrapped,
        });
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// The newest `n` lines (or all), oldest first.
    pub fn newest(&self, n: usize) -> Vec<ScreenLine> {
        let skip = self.lines.len().saturating_sub(n);
        self.lines
            .iter()
            .skip(skip)
            .map(|l| ScreenLine::new(l.text.to_string(), l.wrapped))
            .collect()
    }

    /// `count` lines ending `from_end` lines before the newest, oldest first (fewer at the
    /// oldest end).
    pub fn range(&self, from_end: usize, count: usize) -> Vec<ScreenLine> {
        let end = self.lines.len().saturating_sub(from_end);
        let start = end.saturating_sub(count);
        self.lines
            .range(start..end)
            .map(|l| ScreenLine::new(l.text.to_string(), l.wrapped))
            .collect()
    }

    /// Heap bytes held: the ring's slots and the lines' text.
    pub fn heap_bytes(&self) -> usize {
        self.lines.capacity() * size_of::<StoredLine>() + self.text_bytes
    }
}
