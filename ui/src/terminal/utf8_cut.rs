//! Feeding an emulator's parser at UTF-8 character boundaries only (issue #19, found by
//! `scripts/fuzz screen`).
//!
//! `vte` 0.15.0 (alacritty's parser, the newest release) loses the character after a UTF-8
//! sequence that one `advance` call ended and the next completed — a PTY read boundary inside
//! `U+0301` followed by `e\u{301}` drops the `e` (alacritty/vte#159). Output is read in arbitrary
//! pieces, so the emulators (the coordinator's session screen, the TUI's panes) hold back an
//! incomplete sequence at the end of what they were given and feed it with what comes next: the
//! parser sees the same bytes, cut only between characters.

/// The incomplete UTF-8 sequence held back from the end of the last input (at most 3 bytes).
#[derive(Debug, Default, Clone)]
pub struct Utf8Cut {
    held: Vec<u8>,
}

impl Utf8Cut {
    /// `bytes` after what was held back, cut before an incomplete sequence at its end, which is
    /// held back in turn. The returned bytes are whole characters at both ends (or not UTF-8).
    pub fn feed<'a>(&mut self, bytes: &'a [u8], joined: &'a mut Vec<u8>) -> &'a [u8] {
        let input: &[u8] = if self.held.is_empty() {
            bytes
        } else {
            joined.clear();
            joined.append(&mut self.held);
            joined.extend_from_slice(bytes);
            joined
        };
        let cut = input.len() - incomplete_tail(input);
        self.held.extend_from_slice(&input[cut..]);
        &input[..cut]
    }
}

/// How many bytes at the end of `bytes` are the start of a UTF-8 sequence that needs more bytes
/// (a lead byte followed by fewer continuation bytes than it announces); 0 when none.
pub fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=3.min(bytes.len()) {
        let b = bytes[bytes.len() - back];
        if is_continuation(b) {
            continue;
        }
        let needs = match b {
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => return 0,
        };
        return if back < needs { back } else { 0 };
    }
    0
}

/// Where to end a piece of `bytes` that would end at `n` so that it does not end inside a
/// UTF-8 sequence (valid or not: vte reads an incomplete sequence completed by its next call
/// differently from the same bytes in one call): before the sequence, or after it when it
/// starts the piece (a piece always progresses); `n` when the piece ends between characters.
pub fn boundary_near(bytes: &[u8], n: usize) -> usize {
    if n == 0 || n >= bytes.len() {
        return n;
    }
    let back = incomplete_tail(&bytes[..n]);
    if back == 0 {
        return n;
    }
    if back < n {
        return n - back;
    }
    // The piece is one incomplete sequence: take it whole, or up to the byte that ends it.
    let most = (n + 4).min(bytes.len());
    (n + 1..=most)
        .find(|&end| incomplete_tail(&bytes[..end]) == 0)
        .unwrap_or(most)
}

fn is_continuation(b: u8) -> bool {
    (0x80..=0xbf).contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_incomplete_sequence_at_the_end_is_held_until_completed() {
        let mut cut = Utf8Cut::default();
        let mut joined = Vec::new();
        assert_eq!(cut.feed(b"ae\xcc", &mut joined), b"ae");
        assert_eq!(
            cut.feed(b"\x81e\xcc\x81z", &mut joined),
            b"\xcc\x81e\xcc\x81z"
        );
        assert_eq!(cut.feed(b"\xe4", &mut joined), b"");
        assert_eq!(cut.feed(b"\xb8", &mut joined), b"");
        assert_eq!(cut.feed(b"\xad!", &mut joined), "中!".as_bytes());
    }

    #[test]
    fn only_a_valid_start_is_held() {
        assert_eq!(incomplete_tail(b"abc"), 0);
        assert_eq!(incomplete_tail("é".as_bytes()), 0);
        assert_eq!(incomplete_tail(b"a\xc3"), 1);
        assert_eq!(incomplete_tail(b"a\xf0\x9f\x98"), 3);
        assert_eq!(incomplete_tail("😀".as_bytes()), 0);
        // Invalid leads and stray continuation bytes go on at once (the parser replaces them).
        assert_eq!(incomplete_tail(b"a\xff"), 0);
        assert_eq!(incomplete_tail(b"\x80\x80\x80"), 0);
        assert_eq!(incomplete_tail(b"\x1b]0;\x9c"), 0);
    }

    #[test]
    fn a_piece_ends_between_characters() {
        let s = "ab\u{301}cd".as_bytes(); // a b cc 81 c d
        assert_eq!(boundary_near(s, 3), 2);
        assert_eq!(boundary_near(s, 4), 4);
        assert_eq!(boundary_near(s, 2), 2);
        // A sequence that starts the piece is taken whole.
        assert_eq!(boundary_near(b"\xcc\x81x", 1), 2);
        assert_eq!(boundary_near("中x".as_bytes(), 1), 3);
        // An invalid sequence (a lead byte, then no continuation) is not cut from its end
        // either: found by fuzzing (a row scrolled differently when the cut fell after it).
        assert_eq!(boundary_near(b"ab\xf0Xcd", 3), 2);
        assert_eq!(boundary_near(b"\xf0Xcd", 1), 2);
        assert_eq!(boundary_near(b"\xe4\xb8", 1), 2);
        // Stray continuation bytes are no sequence: cut anywhere.
        assert_eq!(boundary_near(b"\x81\x81\x81\x81\x81\x81", 1), 1);
    }
}
