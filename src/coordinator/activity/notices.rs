//! What a session's program does to call for the developer, found in its output stream as the
//! coordinator reads it (issue #15): the bell (BEL outside any string) and desktop
//! notifications — OSC 9 (iTerm2 / ConEmu; `9;4;…` is ConEmu's progress report, not a
//! notification), OSC 777 `notify;TITLE;BODY` (urxvt, VTE) and OSC 99 (kitty: `META;PAYLOAD`).
//!
//! The output is hostile: the scanner keeps its state across reads (a sequence may be split
//! anywhere), looks at each byte once, keeps at most [`MAX_TEXT`] bytes of a string and returns
//! notification text as the program sent it (lossy UTF-8, capped): callers show it escaped.
//! Anything malformed is simply not a notice.

/// At most this many bytes of a notification's text are kept.
pub const MAX_TEXT: usize = 200;

/// What the program asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    Bell,
    /// A desktop notification, with its text (not escaped yet, at most [`MAX_TEXT`] bytes).
    Notification(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    /// After ESC.
    Escape,
    /// Inside an OSC string.
    Osc,
    /// ESC inside an OSC string (ST is ESC \).
    OscEscape,
    /// Inside a DCS, SOS, PM or APC string: nothing in it is a notice.
    Str,
    /// ESC inside such a string.
    StrEscape,
}

/// The longest OSC prefix kept to classify a string (`777;notify;` plus the text).
const MAX_OSC: usize = 16 + MAX_TEXT;

#[derive(Debug)]
pub struct NoticeScanner {
    state: State,
    osc: Vec<u8>,
}

impl Default for NoticeScanner {
    fn default() -> Self {
        NoticeScanner {
            state: State::Ground,
            osc: Vec::new(),
        }
    }
}

impl NoticeScanner {
    /// Scans the next piece of output; notices found are appended to `out`, in order.
    pub fn scan(&mut self, bytes: &[u8], out: &mut Vec<Notice>) {
        let mut i = 0;
        while i < bytes.len() {
            if self.state == State::Ground {
                // Plain text is most of any output: jump to the next byte that matters.
                match bytes[i..].iter().position(|b| *b == 0x07 || *b == 0x1b) {
                    Some(at) => i += at,
                    None => return,
                }
            }
            self.step(bytes[i], out);
            i += 1;
        }
    }

    fn step(&mut self, b: u8, out: &mut Vec<Notice>) {
        const BEL: u8 = 0x07;
        const ESC: u8 = 0x1b;
        const CAN: u8 = 0x18;
        const SUB: u8 = 0x1a;
        self.state = match (self.state, b) {
            (State::Ground, BEL) => {
                out.push(Notice::Bell);
                State::Ground
            }
            (State::Ground, ESC) => State::Escape,
            (State::Ground, _) => State::Ground,
            (State::Escape, b']') => {
                self.osc.clear();
                State::Osc
            }
            (State::Escape, b'P' | b'X' | b'^' | b'_') => State::Str,
            (State::Escape, ESC) => State::Escape,
            // A bell right after a lone ESC is still executed by the terminal.
            (State::Escape, BEL) => {
                out.push(Notice::Bell);
                State::Ground
            }
            (State::Escape, _) => State::Ground,
            (State::Osc, BEL) => {
                self.finish_osc(out);
                State::Ground
            }
            (State::Osc, ESC) => State::OscEscape,
            (State::Osc, CAN | SUB) => State::Ground,
            (State::Osc, b) => {
                if self.osc.len() < MAX_OSC {
                    self.osc.push(b);
                }
                State::Osc
            }
            (State::OscEscape, b'\\') => {
                self.finish_osc(out);
                State::Ground
            }
            // Any other byte aborts the string and starts a new escape sequence.
            (State::OscEscape, b']') => {
                self.osc.clear();
                State::Osc
            }
            (State::OscEscape, b'P' | b'X' | b'^' | b'_') => State::Str,
            (State::OscEscape, ESC) => State::Escape,
            (State::OscEscape, _) => State::Ground,
            (State::Str, ESC) => State::StrEscape,
            (State::Str, BEL | CAN | SUB) => State::Ground,
            (State::Str, _) => State::Str,
            (State::StrEscape, b'\\') => State::Ground,
            (State::StrEscape, b']') => {
                self.osc.clear();
                State::Osc
            }
            (State::StrEscape, ESC) => State::Escape,
            (State::StrEscape, _) => State::Ground,
        };
    }

    fn finish_osc(&mut self, out: &mut Vec<Notice>) {
        if let Some(text) = notification(&self.osc) {
            out.push(Notice::Notification(text));
        }
        self.osc.clear();
    }
}

/// The text of an OSC string that is a desktop notification.
fn notification(osc: &[u8]) -> Option<String> {
    let (code, rest) = split(osc)?;
    let text: &[u8] = match code {
        b"9" if rest.starts_with(b"4;") => return None,
        b"9" => rest,
        b"777" => {
            let body = rest.strip_prefix(b"notify;")?;
            // TITLE;BODY: shown as "TITLE: BODY".
            return Some(cap(match split(body) {
                Some((title, text)) => format!("{}: {}", lossy(title), lossy(text)),
                None => lossy(body),
            }));
        }
        b"99" => split(rest)?.1,
        _ => return None,
    };
    Some(cap(lossy(text)))
}

fn split(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = bytes.iter().position(|b| *b == b';')?;
    Some((&bytes[..at], &bytes[at + 1..]))
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// At most [`MAX_TEXT`] bytes, cut at a char boundary.
fn cap(mut s: String) -> String {
    if s.len() > MAX_TEXT {
        let mut end = MAX_TEXT;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

#[cfg(test)]
#[path = "notices_tests.rs"]
mod tests;
