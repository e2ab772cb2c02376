//! The terminal state the coordinator keeps per hosted session, and the redraw a client gets
//! when it attaches.

/// A session's terminal as the coordinator emulates it.
pub struct ScreenState {
    parser: vt100::Parser,
}

impl ScreenState {
    pub fn new(rows: u16, cols: u16, scrollback: usize) -> ScreenState {
        ScreenState {
            parser: vt100::Parser::new(nz(rows), nz(cols), scrollback),
        }
    }

    /// Feeds program output.
    pub fn process(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
    }

    /// Answers to the program's terminal queries, for its PTY.
    pub fn take_replies(&mut self) -> Vec<u8> {
        Vec::new()
    }

    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.parser.set_size(nz(rows), nz(cols));
    }

    pub fn size(&self) -> (u16, u16) {
        let (r, c) = self.parser.screen().size();
        (r.get(), c.get())
    }

    /// The bytes that make a fresh terminal of the same size show this state.
    pub fn redraw(&self, _history: usize) -> Vec<u8> {
        let screen = self.parser.screen();
        let mut out = b"\x1b[0m\x1b[H\x1b[2J".to_vec();
        if screen.alternate_screen() {
            out.extend_from_slice(b"\x1b[?1049h\x1b[H\x1b[2J");
        }
        out.extend(screen.state_formatted().into_bytes());
        out
    }
}

fn nz(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).unwrap_or(std::num::NonZeroU16::MIN)
}
