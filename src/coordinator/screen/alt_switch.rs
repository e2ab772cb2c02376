//! Where the emulator's parser (vte 0.15) stands in an escape sequence, as far as a switch to
//! the alternate screen needs it: the byte that completes a DECSET of the alternate screen
//! (`ESC [ ? … 1049 … h`) is found whichever way the output was cut into reads and pieces.
//!
//! A piece of output must end right before that byte (see [`super::pieces`]): the rows that
//! scrolled off the primary screen before it — including those scrolled by a line feed *inside*
//! the sequence (a C0 control is executed in the middle of an escape; fuzz finding 7, issue #19)
//! — are then read from the primary screen, not left behind it.
//!
//! The model follows vte's state machine where it matters and folds everything else into
//! [`AltSwitch::Ground`]: from every state an ESC starts a new escape and CAN / SUB end it, and
//! only `ESC [` leads to a CSI. Parameters are read as vte reads them (a number saturating at
//! `u16::MAX`, leading zeros allowed, sub-parameters after `:` not a parameter of their own, at
//! most 32 values, beyond which the sequence is ignored). alacritty 0.25 switches for 1049 only
//! (not 47 / 1047); a test holds the model to the emulator byte for byte.

/// Values vte keeps per sequence (parameters and sub-parameters); a sequence with more is
/// ignored.
const MAX_PARAMS: u8 = 32;

/// The parser's position, carried from one piece of output to the next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AltSwitch {
    /// Outside any sequence that may still become a DECSET (text, other sequences, strings).
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// After `ESC [`.
    CsiEntry,
    /// In a CSI's parameters.
    CsiParam(Params),
}

/// A CSI's parameters as far as read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Params {
    /// Introduced by `?` (a DEC private mode).
    private: bool,
    /// The value being read.
    value: u16,
    /// `value` is a parameter's first value, not a sub-parameter.
    first: bool,
    /// Values stored so far.
    len: u8,
    /// Too many values: vte dispatches the sequence as ignored.
    ignoring: bool,
    /// A stored parameter names the alternate screen.
    alt: bool,
}

impl Params {
    fn new(private: bool) -> Self {
        Self {
            private,
            first: true,
            ..Self::default()
        }
    }

    /// Stores the value being read (`;`, `:` or the final byte); `first` is whether the next
    /// value starts a parameter.
    fn store(&mut self, first: bool) {
        if self.len == MAX_PARAMS {
            self.ignoring = true;
            return;
        }
        self.alt |= self.first && self.value == 1049;
        self.len += 1;
        self.value = 0;
        self.first = first;
    }

    fn digit(&mut self, b: u8) {
        if self.len == MAX_PARAMS {
            self.ignoring = true;
        } else {
            self.value = self
                .value
                .saturating_mul(10)
                .saturating_add(u16::from(b - b'0'));
        }
    }
}

/// C0 controls executed inside a sequence without ending it (all but CAN, SUB and ESC).
fn executed(b: u8) -> bool {
    b < 0x20 && !matches!(b, 0x18 | 0x1a | 0x1b)
}

impl AltSwitch {
    #[inline]
    pub fn is_ground(&self) -> bool {
        *self == Self::Ground
    }

    /// Moves past `b`; true when `b` completes a switch to the alternate screen.
    #[inline]
    pub fn step(&mut self, b: u8) -> bool {
        if b == 0x1b {
            *self = Self::Escape;
            return false;
        }
        if matches!(b, 0x18 | 0x1a) {
            *self = Self::Ground;
            return false;
        }
        // Executed controls, DEL and bytes from 0x80 on leave a sequence where it is.
        let ignored = executed(b) || b >= 0x7f;
        match self {
            Self::Ground => {}
            Self::Escape if ignored => {}
            Self::Escape => {
                *self = if b == b'[' {
                    Self::CsiEntry
                } else {
                    Self::Ground
                }
            }
            Self::CsiEntry if ignored => {}
            Self::CsiEntry => {
                let mut params = Params::new(b == b'?');
                *self = match b {
                    b'0'..=b'9' => {
                        params.digit(b);
                        Self::CsiParam(params)
                    }
                    b':' => {
                        params.store(false);
                        Self::CsiParam(params)
                    }
                    b';' => {
                        params.store(true);
                        Self::CsiParam(params)
                    }
                    b'<'..=b'?' => Self::CsiParam(params),
                    // Intermediates, or a final byte: nothing that switches screens.
                    _ => Self::Ground,
                };
            }
            Self::CsiParam(_) if ignored => {}
            Self::CsiParam(params) => match b {
                b'0'..=b'9' => params.digit(b),
                b':' => params.store(false),
                b';' => params.store(true),
                b'h' => {
                    let mut params = *params;
                    *self = Self::Ground;
                    params.store(true);
                    return params.private && params.alt && !params.ignoring;
                }
                _ => *self = Self::Ground,
            },
        }
        false
    }

    /// Moves past `bytes`.
    pub fn advance(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            if self.is_ground() {
                match rest.iter().position(|&b| b == 0x1b) {
                    Some(at) => rest = &rest[at..],
                    None => return,
                }
            }
            self.step(rest[0]);
            rest = &rest[1..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Offsets of the bytes in `bytes` that complete a switch.
    fn switches(bytes: &[u8]) -> Vec<usize> {
        let mut at = AltSwitch::default();
        (0..bytes.len()).filter(|&i| at.step(bytes[i])).collect()
    }

    #[test]
    fn the_decset_of_the_alternate_screen_is_found_at_its_final_byte() {
        assert_eq!(switches(b"a\x1b[?1049hb"), [8]);
        assert_eq!(switches(b"\x1b[?25;1049h\x1b[?47h\x1b[?1047h"), [10]);
        // As vte reads parameters: leading zeros, sub-parameters, a value that saturates.
        assert_eq!(switches(b"\x1b[?01049h"), [8]);
        assert_eq!(switches(b"\x1b[?1049:2h"), [9]);
        assert_eq!(switches(b"\x1b[?2:1049h"), Vec::<usize>::new());
        assert_eq!(switches(b"\x1b[?99999999h"), Vec::<usize>::new());
    }

    #[test]
    fn controls_and_ignored_bytes_inside_do_not_end_the_sequence() {
        // Fuzz finding 7: a line feed, invalid UTF-8 and C1 bytes inside.
        assert_eq!(switches(b"\x1b\n\xcc[\x81?1049h"), [10]);
        assert_eq!(switches(b"\x1b[?104\t\x009\x7fh"), [10]);
        // CAN and SUB end it; ESC starts another.
        assert_eq!(switches(b"\x1b[?10\x1849h"), Vec::<usize>::new());
        assert_eq!(switches(b"\x1b[?10\x1a49h"), Vec::<usize>::new());
        assert_eq!(switches(b"\x1b[?10\x1b[?1049h"), [12]);
    }

    #[test]
    fn other_sequences_do_not_switch() {
        for bytes in [
            &b"\x1b[1049h"[..], // not private
            b"\x1b[?1049l",     // reset
            b"\x1b[?1049 h",    // an intermediate
            b"\x1b[??1049h",    // a second marker
            b"\x1b[>1049h",     // another marker
            b"\x1b]?1049h",     // an OSC string
            b"\x1b ?[?1049h",   // an ESC intermediate first
            b"\x1b[?10479h",    // another mode
        ] {
            assert_eq!(switches(bytes), Vec::<usize>::new(), "{bytes:?}");
        }
    }

    #[test]
    fn more_than_32_values_are_ignored_as_vte_ignores_them() {
        let at_most = format!("\x1b[?{}1049h", "1;".repeat(31));
        assert_eq!(switches(at_most.as_bytes()).len(), 1);
        let too_many = format!("\x1b[?{}1049h", "1;".repeat(32));
        assert!(switches(too_many.as_bytes()).is_empty());
    }

    #[test]
    fn advance_ends_where_stepping_ends() {
        let bytes = b"text\x1b]0;t\x07\x1b[1mx\x1b[?10";
        let mut stepped = AltSwitch::default();
        for b in bytes {
            stepped.step(*b);
        }
        let mut advanced = AltSwitch::default();
        advanced.advance(&bytes[..7]);
        advanced.advance(&bytes[7..]);
        assert_eq!(advanced, stepped);
        assert!(matches!(stepped, AltSwitch::CsiParam(_)));
    }

    /// The model against the emulator itself: fed one byte at a time, alacritty enters the
    /// alternate screen exactly at the bytes the model says complete a switch (when it is not
    /// there already). Lead bytes of UTF-8 are left out: vte holds a lone one back between
    /// calls (`utf8_cut`), which a byte-at-a-time feed would trip on.
    #[test]
    fn the_model_agrees_with_the_emulator() {
        use super::super::term::{Listener, NoSync, Size};
        use alacritty_terminal::term::{Config, TermMode};
        use alacritty_terminal::vte::ansi::Processor;
        use alacritty_terminal::Term;

        let tokens: &[&[u8]] = &[
            b"\x1b[?1049h",
            b"\x1b[?1049l",
            b"\x1b[?47h",
            b"\x1b",
            b"[",
            b"?",
            b"1",
            b"0",
            b"4",
            b"9",
            b"7",
            b";",
            b":",
            b"\n",
            b"\x18",
            b"\x1a",
            b"\x7f",
            b"\x81",
            b"\x9b",
            b"h",
            b"l",
            b"m",
            b" ",
            b"x",
            b"]",
            b"\x07",
            b">",
            b"P",
            b"\x1b\\",
        ];
        let mut rng = crate::test_rng::Rng(11);
        let mut entered = 0;
        for case in 0..400 {
            let mut term = Term::new(Config::default(), &Size::new(4, 10), Listener::default());
            let mut parser: Processor<NoSync> = Processor::new();
            let mut model = AltSwitch::Ground;
            let mut fed = Vec::new();
            for _ in 0..rng.below(200) {
                for &b in tokens[rng.below(tokens.len() as u64) as usize] {
                    fed.push(b);
                    let was_alt = term.mode().contains(TermMode::ALT_SCREEN);
                    parser.advance(&mut term, &[b]);
                    let now_alt = term.mode().contains(TermMode::ALT_SCREEN);
                    let switch = model.step(b);
                    if !was_alt {
                        assert_eq!(switch, now_alt, "case {case}: {fed:?}");
                    }
                    entered += usize::from(!was_alt && now_alt);
                }
            }
        }
        assert!(entered > 100, "{entered}");
    }
}
