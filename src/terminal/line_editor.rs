//! Keys and a one-line editor for the "edit the command" prompt (sans-IO).
//!
//! The terminal is in raw mode and stdin bytes arrive in arbitrary chunks: [`KeyDecoder`]
//! turns them into [`Key`]s, [`LineEditor`] applies them to the line and lays it out for
//! redrawing, and [`split`] turns the submitted line back into an argv.

use super::escape;
use std::ops::Range;
use unicode_width::UnicodeWidthChar;

/// One decoded keypress; `KillToStart` is Ctrl-U, `KillWord` Ctrl-W, `Interrupt` Ctrl-C,
/// and everything the editor does not use is `Other`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Enter,
    Backspace,
    Delete,
    Left,
    Right,
    Home,
    End,
    KillToStart,
    KillWord,
    Interrupt,
    Escape,
    Other,
}

const ESC: u8 = 0x1b;
/// Longest CSI sequence buffered; longer ones are dropped so input cannot grow the buffer.
const MAX_CSI: usize = 32;
const PASTE_END: &[u8] = b"\x1b[201~";

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Mode {
    #[default]
    Normal,
    /// Inside bracketed paste: text only, so a pasted newline can never submit.
    Paste,
    /// Discarding the rest of an overlong CSI sequence up to its final byte.
    SkipCsi,
}

/// `None` if more bytes are needed, else the key (if any) and the bytes consumed (at least 1).
type Step = Option<(Option<Key>, usize)>;

/// Decodes raw-mode terminal input into keys; buffers only incomplete sequences (a few bytes).
#[derive(Debug, Default)]
pub struct KeyDecoder {
    pending: Vec<u8>,
    mode: Mode,
}

impl KeyDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes `bytes` after whatever an earlier chunk left incomplete.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Key> {
        self.pending.extend_from_slice(bytes);
        self.drain(false)
    }

    /// Call after a short pause with no input: a lone ESC was the Escape key, and any other
    /// incomplete sequence becomes [`Key::Other`]. A bracketed paste stays open (its end
    /// marker may still arrive), so a slow paste can never turn into keypresses.
    pub fn flush(&mut self) -> Vec<Key> {
        if self.mode == Mode::SkipCsi {
            self.mode = Mode::Normal;
        }
        self.drain(true)
    }

    fn drain(&mut self, flushing: bool) -> Vec<Key> {
        let mut keys = Vec::new();
        let mut at = 0;
        while let Some(rest) = self.pending.get(at..).filter(|r| !r.is_empty()) {
            let step = match self.mode {
                Mode::Normal => normal(rest, &mut self.mode),
                Mode::Paste => paste(rest, &mut self.mode),
                Mode::SkipCsi => skip_csi(rest, &mut self.mode),
            };
            let idle = flushing && self.mode == Mode::Normal;
            let (key, used) = match step {
                Some(done) => done,
                None if idle && rest == [ESC] => (Some(Key::Escape), 1),
                None if idle => (Some(Key::Other), rest.len()),
                None => break,
            };
            keys.extend(key);
            at += used;
        }
        self.pending.drain(..at);
        keys
    }
}

fn normal(rest: &[u8], mode: &mut Mode) -> Step {
    let key = match rest.first()? {
        &ESC => return escape_sequence(rest, mode),
        b'\r' | b'\n' => Key::Enter,
        0x7f | 0x08 => Key::Backspace,
        0x01 => Key::Home,
        0x05 => Key::End,
        0x02 => Key::Left,
        0x06 => Key::Right,
        0x15 => Key::KillToStart,
        0x17 => Key::KillWord,
        0x03 => Key::Interrupt,
        0x04 => Key::Delete,
        0x00..=0x1f => Key::Other,
        &b @ 0x20..=0x7e => Key::Char(char::from(b)),
        _ => return utf8(rest).map(|(c, n)| (Some(c.map_or(Key::Other, Key::Char)), n)),
    };
    Some((Some(key), 1))
}

/// `rest` starts with ESC.
fn escape_sequence(rest: &[u8], mode: &mut Mode) -> Step {
    match *rest.get(1)? {
        b'[' => csi(rest, mode),
        // SS3 (application cursor mode) takes exactly one final byte; else it was Alt+O.
        b'O' => Some(match *rest.get(2)? {
            b @ 0x40..=0x7e => (csi_key(b"", b, mode), 3),
            _ => (Some(Key::Other), 2),
        }),
        ESC => Some((Some(Key::Escape), 1)),
        0x00..=0x7f => Some((Some(Key::Other), 2)),
        // Alt + a non-ASCII char: consume the whole char.
        _ => utf8(&rest[1..]).map(|(c, n)| (Some(Key::Other), if c.is_some() { 1 + n } else { 1 })),
    }
}

/// `rest` starts with `ESC [`: parameter and intermediate bytes, then one final byte.
fn csi(rest: &[u8], mode: &mut Mode) -> Step {
    if rest.get(2) == Some(&b'M') {
        // X10 mouse report: three raw bytes follow.
        return (rest.len() >= 6).then_some((Some(Key::Other), 6));
    }
    for (i, &b) in rest.iter().enumerate().skip(2) {
        match b {
            0x20..=0x3f if i + 1 >= MAX_CSI => {
                *mode = Mode::SkipCsi;
                return Some((Some(Key::Other), i + 1));
            }
            0x20..=0x3f => {}
            0x40..=0x7e => return Some((csi_key(&rest[2..i], b, mode), i + 1)),
            // Malformed: drop what came so far and decode this byte afresh.
            _ => return Some((Some(Key::Other), i)),
        }
    }
    None
}

/// The key for a CSI sequence (or SS3, with no `params`) ending in `last`.
fn csi_key(params: &[u8], last: u8, mode: &mut Mode) -> Option<Key> {
    Some(match (params, last) {
        (b"", b'C') => Key::Right,
        (b"", b'D') => Key::Left,
        (b"", b'H') => Key::Home,
        (b"", b'F') => Key::End,
        (b"1" | b"7", b'~') => Key::Home,
        (b"4" | b"8", b'~') => Key::End,
        (b"3", b'~') => Key::Delete,
        (b"200", b'~') => {
            *mode = Mode::Paste;
            return None;
        }
        (b"201", b'~') => return None,
        _ => Key::Other,
    })
}

/// Inside a bracketed paste: printable chars only; line breaks and tabs become spaces.
fn paste(rest: &[u8], mode: &mut Mode) -> Step {
    match *rest.first()? {
        ESC if rest.starts_with(PASTE_END) => {
            *mode = Mode::Normal;
            Some((None, PASTE_END.len()))
        }
        ESC if PASTE_END.starts_with(rest) => None,
        b'\r' | b'\n' | b'\t' => Some((Some(Key::Char(' ')), 1)),
        0x00..=0x1f | 0x7f => Some((None, 1)),
        b @ 0x20..=0x7e => Some((Some(Key::Char(char::from(b))), 1)),
        _ => utf8(rest).map(|(c, n)| (c.map(Key::Char), n)),
    }
}

fn skip_csi(rest: &[u8], mode: &mut Mode) -> Step {
    let b = *rest.first()?;
    if (0x20..=0x3f).contains(&b) {
        return Some((None, 1));
    }
    *mode = Mode::Normal;
    if (0x40..=0x7e).contains(&b) {
        Some((None, 1))
    } else {
        normal(rest, mode)
    }
}

/// The first UTF-8 char of `bytes`: `None` if incomplete, else the char (`None` if invalid
/// or a C1 control, never shown as typed text) and its length in bytes.
fn utf8(bytes: &[u8]) -> Option<(Option<char>, usize)> {
    let head = &bytes[..bytes.len().min(4)];
    let valid = match std::str::from_utf8(head) {
        Ok(s) => s,
        Err(e) if e.valid_up_to() > 0 => std::str::from_utf8(&head[..e.valid_up_to()]).ok()?,
        Err(e) => return e.error_len().map(|n| (None, n)),
    };
    let c = valid.chars().next()?;
    Some(((!c.is_control()).then_some(c), c.len_utf8()))
}

/// What the prompt does after a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    Continue,
    Submit,
    Cancel,
}

/// Most UTF-8 bytes typing or pasting can grow the line to; bounds memory and redraw cost.
pub const MAX_BYTES: usize = 64 * 1024;

/// The line being edited, as chars with a cursor (a char index, `0..=len`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineEditor {
    chars: Vec<char>,
    cursor: usize,
    bytes: usize,
}

/// A laid-out line; positions are 0-based and relative to where `text` starts (column 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub text: String,
    /// Rows `text` occupies once wrapped (at least 1).
    pub rows: u16,
    pub cursor_row: u16,
    pub cursor_col: u16,
}

impl LineEditor {
    /// Starts with `text` whole (never truncated, even beyond [`MAX_BYTES`]: a silently cut
    /// command would differ from the one shown), cursor at the end.
    pub fn new(text: &str) -> Self {
        let chars: Vec<char> = text.chars().collect();
        Self {
            cursor: chars.len(),
            chars,
            bytes: text.len(),
        }
    }

    pub fn text(&self) -> String {
        self.chars.iter().collect()
    }

    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn apply(&mut self, key: &Key) -> Edit {
        let len = self.chars.len();
        match key {
            Key::Char(c) => self.insert(*c),
            Key::Backspace if self.cursor > 0 => self.remove(self.cursor - 1..self.cursor),
            Key::Delete if self.cursor < len => self.remove(self.cursor..self.cursor + 1),
            Key::Left => self.cursor = self.cursor.saturating_sub(1),
            Key::Right => self.cursor = (self.cursor + 1).min(len),
            Key::Home => self.cursor = 0,
            Key::End => self.cursor = len,
            Key::KillToStart => self.remove(0..self.cursor),
            Key::KillWord => self.remove(self.word_start()..self.cursor),
            Key::Enter => return Edit::Submit,
            Key::Escape | Key::Interrupt => return Edit::Cancel,
            Key::Backspace | Key::Delete | Key::Other => {}
        }
        Edit::Continue
    }

    fn insert(&mut self, c: char) {
        if c.is_control() || self.bytes + c.len_utf8() > MAX_BYTES {
            return;
        }
        self.chars.insert(self.cursor, c);
        self.cursor += 1;
        self.bytes += c.len_utf8();
    }

    /// Removes `range` and leaves the cursor where it started.
    fn remove(&mut self, range: Range<usize>) {
        self.cursor = range.start;
        let removed = self.chars.drain(range);
        self.bytes -= removed.map(char::len_utf8).sum::<usize>();
    }

    /// Where Ctrl-W's kill starts: before the spaces, then the word, left of the cursor.
    fn word_start(&self) -> usize {
        let before = self.chars[..self.cursor].iter().rev();
        let spaces = before.clone().take_while(|c| c.is_whitespace()).count();
        let word = before
            .skip(spaces)
            .take_while(|c| !c.is_whitespace())
            .count();
        self.cursor - spaces - word
    }

    /// Lays out trusted plain `prefix` then the line, each char through [`escape::visible`]
    /// (a raw ESC shows as `\u{1b}` yet stays one editing unit), for a terminal `cols` wide
    /// (0 means 80), using unicode-width; a wide char that would straddle the edge wraps.
    ///
    /// To redraw: move up the previous `cursor_row` rows, `\r`, clear to the end of screen,
    /// write `text`, then move from its last row (`rows - 1`) to (`cursor_row`, `cursor_col`).
    /// After a full last row `cursor_row` is `rows`: reach it with `\r\n` (cursor-down does
    /// not scroll).
    pub fn render(&self, prefix: &str, cols: u16) -> Rendered {
        let cols = if cols == 0 { 80 } else { usize::from(cols) };
        let mut at = Layout {
            cols,
            row: 0,
            col: 0,
        };
        let mut text = String::from(prefix);
        prefix.chars().for_each(|c| at.put(c));
        let mut cursor = None;
        let mut unit = String::new();
        for (i, &c) in self.chars.iter().enumerate() {
            unit.clear();
            escape::push_visible(&mut unit, c);
            if i == self.cursor {
                cursor = Some(at.before(unit.chars().next()));
            }
            unit.chars().for_each(|u| at.put(u));
            text.push_str(&unit);
        }
        let (cursor_row, cursor_col) = cursor.unwrap_or_else(|| at.before(None));
        Rendered {
            text,
            rows: clamp(at.row + 1),
            cursor_row: clamp(cursor_row),
            cursor_col: clamp(cursor_col),
        }
    }
}

/// Where the next char lands on a terminal that wraps lazily (a full row wraps on the next
/// printed char, not at once).
struct Layout {
    row: usize,
    col: usize,
    cols: usize,
}

impl Layout {
    fn put(&mut self, c: char) {
        let w = c.width().unwrap_or(0);
        if w == 0 {
            return;
        }
        if self.col > 0 && self.col + w > self.cols {
            self.row += 1;
            self.col = 0;
        }
        self.col += w;
    }

    /// The cursor position before `next`: where `next` will be drawn.
    fn before(&self, next: Option<char>) -> (usize, usize) {
        let w = next.and_then(|c| c.width()).unwrap_or(0);
        if self.col > 0 && (self.col >= self.cols || self.col + w > self.cols) {
            (self.row + 1, 0)
        } else {
            (self.row, self.col)
        }
    }
}

fn clamp(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// The edited line as an argv, parsed like a POSIX shell word list with only quote removal
/// (no expansion; note that `#` starting a word begins a comment).
pub fn split(text: &str) -> Result<Vec<String>, String> {
    let argv = shell_words::split(text).map_err(|e| format!("unbalanced quotes: {e}"))?;
    if argv.is_empty() {
        return Err("the command is empty".to_string());
    }
    Ok(argv)
}

/// The argv as an editable line; [`split`] gives back exactly `argv`.
pub fn join(argv: &[String]) -> String {
    shell_words::join(argv)
}

#[cfg(test)]
#[path = "line_editor_tests.rs"]
mod tests;
