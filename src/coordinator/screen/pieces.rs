//! Splitting program output into pieces that cannot scroll more rows than the emulator's own
//! history holds, so that every row scrolled off the screen can be read before it is dropped.
//!
//! Upper bound on the rows one piece scrolls, counted per byte:
//! - LF, VT, FF and the C1 controls IND / NEL (raw 0x84 / 0x85): one row each;
//! - an escape sequence other than SGR (`ESC [ … m`): a whole screen (`rows`) — ESC D/E/M, CSI S,
//!   ED 2 (alacritty scrolls the non-blank screen into history), RIS and any sequence not
//!   recognised here count the same;
//! - auto-wrap: at most one row per `cols` bytes of the piece (every cell takes at least a byte).
//!
//! CSI S asks for at most a screen; an escape whose end lies beyond the chunk counts as a screen.
//! The count over-estimates (CUP counts as a screen), which only makes pieces smaller.
//!
//! Rows scrolled off the primary screen are read at the end of a piece, from the screen then
//! shown: a piece also ends right before the byte that completes a switch to the alternate
//! screen ([`AltSwitch`], which carries the parser's position from one piece to the next, so
//! that the cut falls on the same byte however the output was read).

use super::alt_switch::AltSwitch;

/// Rows one piece may scroll at most; the emulator's history must hold at least this many more
/// than a whole screen.
pub const PIECE_SCROLL_BUDGET: usize = 400;

/// Length of the first piece of `bytes`, the parser standing at `at` before it: the longest
/// prefix whose scroll bound stays within [`PIECE_SCROLL_BUDGET`] and that ends before any
/// switch to the alternate screen but one completed by its first byte (at least one byte, so
/// that any screen size progresses). Returns where the parser stands after the piece too.
pub fn piece_len(bytes: &[u8], rows: usize, cols: usize, at: AltSwitch) -> (usize, AltSwitch) {
    let rows = rows.max(1);
    let cols = cols.max(1);
    let mut at = at;
    let mut units = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        // The byte at index j fits while units + (j + 1) / cols <= budget: bytes that cannot
        // scroll only wrap, and are taken in runs up to the first that no longer fits (no
        // division per byte: this runs over every byte of a flood).
        let first_over = PIECE_SCROLL_BUDGET
            .checked_sub(units)
            .map_or(0, |left| (left + 1).saturating_mul(cols) - 1);
        if at.is_ground() {
            // Outside an escape, only ESC moves the parser.
            let plain = bytes[i..]
                .iter()
                .position(|&b| may_scroll(b))
                .unwrap_or(bytes.len() - i);
            if plain > 0 {
                if first_over < i + plain {
                    let stop = first_over.max(i);
                    if stop > 0 {
                        return (stop, at);
                    }
                    // The very first byte is always taken.
                    i = 1;
                    continue;
                }
                i += plain;
                continue;
            }
        } else if !may_scroll(bytes[i]) {
            // Inside an escape: each byte moves the parser, up to the end of the escape or a
            // byte that may scroll; a piece ends before the byte that completes a switch.
            while i < bytes.len() && !at.is_ground() && !may_scroll(bytes[i]) {
                let mut next = at;
                let switch = next.step(bytes[i]);
                if i > 0 && (i >= first_over || switch) {
                    return (i, at);
                }
                at = next;
                i += 1;
            }
            continue;
        }
        // A byte that may scroll: it moves the parser only when it is ESC.
        let b = bytes[i];
        let (cost, len) = match b {
            0x1b => escape(&bytes[i..], rows),
            _ => (1, 1),
        };
        let wraps = (i + len) / cols;
        if i > 0 && units + cost + wraps > PIECE_SCROLL_BUDGET {
            return (i, at);
        }
        if b == 0x1b {
            // A complete SGR is dispatched at once: the parser is back outside.
            at = if len > 1 {
                AltSwitch::Ground
            } else {
                AltSwitch::Escape
            };
        }
        units += cost;
        i += len;
    }
    (bytes.len(), at)
}

/// LF, VT, FF, IND, NEL and ESC: the bytes that may scroll.
fn may_scroll(b: u8) -> bool {
    matches!(b, b'\n' | 0x0b | 0x0c | 0x84 | 0x85 | 0x1b)
}

/// Cost and length of the escape at the start of `bytes` (which starts with ESC): an SGR that is
/// complete in `bytes` costs nothing; anything else costs a screen and is taken as the ESC alone.
fn escape(bytes: &[u8], rows: usize) -> (usize, usize) {
    if bytes.get(1) == Some(&b'[') {
        let params = bytes[2..]
            .iter()
            .take_while(|b| b.is_ascii_digit() || **b == b';' || **b == b':')
            .count();
        if bytes.get(2 + params) == Some(&b'm') {
            return (0, 3 + params);
        }
    }
    (rows, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first piece's length, outside any escape.
    fn len(bytes: &[u8], rows: usize, cols: usize) -> usize {
        piece_len(bytes, rows, cols, AltSwitch::Ground).0
    }

    #[test]
    fn line_feeds_are_counted() {
        let lines = b"1\n".repeat(1000);
        let n = len(&lines, 24, 80);
        // 400 line feeds, plus at most 2 rows of wrapping (1 byte per row of 80 bytes).
        let feeds = lines[..n].iter().filter(|b| **b == b'\n').count();
        assert!((390..=PIECE_SCROLL_BUDGET).contains(&feeds), "{feeds}");
    }

    #[test]
    fn sgr_is_free_other_escapes_cost_a_screen() {
        let sgr = b"\x1b[1;31mx\x1b[0m".repeat(1000);
        assert_eq!(len(&sgr, 50, 1_000_000), sgr.len());
        let scroll = b"\x1b[50S".repeat(100);
        assert_eq!(len(&scroll, 50, 1_000_000), 8 * 5);
    }

    #[test]
    fn long_lines_are_bounded_by_wrapping() {
        let long = vec![b'x'; 1_000_000];
        let n = len(&long, 24, 80);
        assert!(n / 80 <= PIECE_SCROLL_BUDGET && n > 80 * 390, "{n}");
    }

    /// The per-byte definition the bulk scan must agree with.
    fn reference(bytes: &[u8], rows: usize, cols: usize, at: AltSwitch) -> (usize, AltSwitch) {
        let (rows, cols) = (rows.max(1), cols.max(1));
        let (mut units, mut i, mut at) = (0usize, 0, at);
        while i < bytes.len() {
            let (cost, len) = match bytes[i] {
                b'\n' | 0x0b | 0x0c | 0x84 | 0x85 => (1, 1),
                0x1b => escape(&bytes[i..], rows),
                _ => (0, 1),
            };
            if i > 0 && units + cost + (i + len) / cols > PIECE_SCROLL_BUDGET {
                return (i, at);
            }
            let mut next = at;
            for b in &bytes[i..i + len] {
                if next.step(*b) && i > 0 {
                    return (i, at);
                }
            }
            at = next;
            units += cost;
            i += len;
        }
        (bytes.len(), at)
    }

    /// Random output from an alphabet of scrolling bytes and pieces of escapes.
    fn random_output(rng: &mut crate::test_rng::Rng) -> Vec<u8> {
        let alphabet: &[u8] = b"ab \n\x0b\x0c\x84\x85\x1b\x1b\x18[[1;2m3S?4479h";
        let len = rng.below(5000) as usize;
        let plain_bias = rng.below(20);
        (0..len)
            .map(|_| {
                if rng.below(20) < plain_bias {
                    b'x'
                } else {
                    alphabet[rng.below(alphabet.len() as u64) as usize]
                }
            })
            .collect()
    }

    #[test]
    fn the_bulk_scan_agrees_with_the_per_byte_definition() {
        let mut rng = crate::test_rng::Rng(7);
        for case in 0..3000 {
            let bytes = random_output(&mut rng);
            let rows = 1 + rng.below(60) as usize;
            let cols = 1 + rng.below(120) as usize;
            let (mut rest, mut at) = (&bytes[..], AltSwitch::Ground);
            while !rest.is_empty() {
                let piece = piece_len(rest, rows, cols, at);
                assert_eq!(
                    piece,
                    reference(rest, rows, cols, at),
                    "case {case}, {rows}x{cols}"
                );
                let mut advanced = at;
                advanced.advance(&rest[..piece.0]);
                assert_eq!(advanced, piece.1, "case {case}");
                (rest, at) = (&rest[piece.0..], piece.1);
            }
        }
    }

    /// Fuzz finding 7: wherever reads end, every byte that completes a switch to the alternate
    /// screen starts a piece, and no piece holds one elsewhere.
    #[test]
    fn switches_start_pieces_whatever_the_reads() {
        let mut rng = crate::test_rng::Rng(19);
        for case in 0..2000 {
            let bytes = random_output(&mut rng);
            let mut whole = AltSwitch::Ground;
            let switches: Vec<usize> = (0..bytes.len()).filter(|&i| whole.step(bytes[i])).collect();
            let mut starts = Vec::new();
            let (mut offset, mut at) = (0, AltSwitch::Ground);
            while offset < bytes.len() {
                let read = 1 + rng.below(64) as usize;
                let end = (offset + read).min(bytes.len());
                while offset < end {
                    starts.push(offset);
                    let (n, after) = piece_len(&bytes[offset..end], 24, 80, at);
                    (offset, at) = (offset + n, after);
                }
            }
            for s in &switches {
                assert!(
                    starts.contains(s),
                    "case {case}: switch at {s}, pieces {starts:?}"
                );
            }
        }
    }

    #[test]
    fn a_piece_ends_before_the_byte_that_switches_to_the_alternate_screen() {
        assert_eq!(len(b"a\nb\x1b[?1049hc", 24, 80), 10);
        assert_eq!(len(b"a\x1b[?25;1049hc", 24, 80), 11);
        // The next piece starts with that byte and takes it.
        let both = b"\x1b[?1049hc\x1b[?1049l";
        let (n, at) = piece_len(both, 24, 80, AltSwitch::Ground);
        assert_eq!(n, 7);
        assert_eq!(piece_len(&both[n..], 24, 80, at), (10, AltSwitch::Ground));
        // Controls inside the sequence are executed by the terminal, bytes from 0x80 on
        // ignored: the switch still happens (found by fuzzing).
        assert_eq!(len(b"a\x1b[?104\t\x009h", 24, 80), 10);
        assert_eq!(len(b"a\x1b\x81[\x81?1049h", 24, 80), 10);
        // Finding 7: a line feed inside scrolls the primary screen in the piece before the
        // switch, also when a read ended inside the sequence.
        assert_eq!(len(b"a\n\x1b\n\xcc[\x81?1049h", 24, 80), 12);
        assert_eq!(
            piece_len(b"\n\xcc[\x81?1049hx", 24, 80, AltSwitch::Escape).0,
            9
        );
        // Not an alternate-screen switch, or not complete: no cut for it.
        assert_eq!(len(b"a\x1b[?10\x1849h", 24, 80), 10);
        assert_eq!(len(b"a\x1b[?25hc", 24, 80), 8);
        assert_eq!(len(b"a\x1b[?104", 24, 80), 7);
        assert_eq!(len(b"a\x1b[?10479h", 24, 80), 10);
        // alacritty switches for 1049 only.
        assert_eq!(len(b"a\x1b[?47hc", 24, 80), 8);
    }

    #[test]
    fn a_piece_always_progresses() {
        assert_eq!(len(b"\x1bD\x1bD", 10_000, 1), 1);
        assert_eq!(len(b"", 24, 80), 0);
    }
}
