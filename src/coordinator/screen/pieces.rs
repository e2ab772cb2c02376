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

/// Rows one piece may scroll at most; the emulator's history must hold at least this many more
/// than a whole screen.
pub const PIECE_SCROLL_BUDGET: usize = 400;

/// Length of the first piece of `bytes`: the longest prefix whose scroll bound stays within
/// [`PIECE_SCROLL_BUDGET`] (at least one byte, so that any screen size progresses).
pub fn piece_len(bytes: &[u8], rows: usize, cols: usize) -> usize {
    let rows = rows.max(1);
    let cols = cols.max(1);
    let mut units = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        // A run of bytes that cannot scroll only wraps: taken whole up to the first byte that
        // no longer fits (no division per byte: this runs over every byte of a flood).
        let plain = bytes[i..]
            .iter()
            .position(|&b| may_scroll(b))
            .unwrap_or(bytes.len() - i);
        if plain > 0 {
            // The byte at index j fits while units + (j + 1) / cols <= budget.
            let first_over = PIECE_SCROLL_BUDGET
                .checked_sub(units)
                .map_or(0, |left| (left + 1).saturating_mul(cols) - 1);
            if first_over < i + plain {
                let stop = first_over.max(i);
                if stop > 0 {
                    return stop;
                }
                // The very first byte is always taken.
                i = 1;
                continue;
            }
            i += plain;
            continue;
        }
        // Rows scrolled off the primary screen are read at the end of a piece, from the screen
        // then shown: a piece ends before a switch to the alternate screen.
        if i > 0 && bytes[i] == 0x1b && enters_alt_screen(&bytes[i..]) {
            return i;
        }
        let (cost, len) = match bytes[i] {
            0x1b => escape(&bytes[i..], rows),
            _ => (1, 1),
        };
        let wraps = (i + len) / cols;
        if i > 0 && units + cost + wraps > PIECE_SCROLL_BUDGET {
            return i;
        }
        units += cost;
        i += len;
    }
    bytes.len()
}

/// Whether `bytes` starts with a DECSET of the alternate screen (`ESC [ ? … 47 / 1047 / 1049 … h`),
/// complete, read as the parser reads it: C0 controls inside are executed and skipped (CAN,
/// SUB and ESC end the sequence), DEL and bytes from 0x80 on are ignored.
fn enters_alt_screen(bytes: &[u8]) -> bool {
    let skipped = |b: u8| b >= 0x7f || (b < 0x20 && !matches!(b, 0x18 | 0x1a | 0x1b));
    let mut rest = bytes.iter().copied();
    if rest.next() != Some(0x1b) {
        return false;
    }
    for want in [b'[', b'?'] {
        match rest.find(|b| !skipped(*b)) {
            Some(b) if b == want => {}
            _ => return false,
        }
    }
    let mut params = Vec::new();
    for b in rest {
        match b {
            b'h' => {
                return params
                    .split(|b| *b == b';')
                    .any(|p: &[u8]| matches!(p, b"47" | b"1047" | b"1049"))
            }
            b'0'..=b'9' | b';' | b':' => params.push(b),
            b if skipped(b) => {}
            _ => return false,
        }
    }
    false
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

    #[test]
    fn line_feeds_are_counted() {
        let lines = b"1\n".repeat(1000);
        let n = piece_len(&lines, 24, 80);
        // 400 line feeds, plus at most 2 rows of wrapping (1 byte per row of 80 bytes).
        let feeds = lines[..n].iter().filter(|b| **b == b'\n').count();
        assert!((390..=PIECE_SCROLL_BUDGET).contains(&feeds), "{feeds}");
    }

    #[test]
    fn sgr_is_free_other_escapes_cost_a_screen() {
        let sgr = b"\x1b[1;31mx\x1b[0m".repeat(1000);
        assert_eq!(piece_len(&sgr, 50, 1_000_000), sgr.len());
        let scroll = b"\x1b[50S".repeat(100);
        assert_eq!(piece_len(&scroll, 50, 1_000_000), 8 * 5);
    }

    #[test]
    fn long_lines_are_bounded_by_wrapping() {
        let long = vec![b'x'; 1_000_000];
        let n = piece_len(&long, 24, 80);
        assert!(n / 80 <= PIECE_SCROLL_BUDGET && n > 80 * 390, "{n}");
    }

    /// The per-byte definition the bulk scan must agree with.
    fn reference(bytes: &[u8], rows: usize, cols: usize) -> usize {
        let (rows, cols) = (rows.max(1), cols.max(1));
        let (mut units, mut i) = (0usize, 0);
        while i < bytes.len() {
            if i > 0 && bytes[i] == 0x1b && enters_alt_screen(&bytes[i..]) {
                return i;
            }
            let (cost, len) = match bytes[i] {
                b'\n' | 0x0b | 0x0c | 0x84 | 0x85 => (1, 1),
                0x1b => escape(&bytes[i..], rows),
                _ => (0, 1),
            };
            if i > 0 && units + cost + (i + len) / cols > PIECE_SCROLL_BUDGET {
                return i;
            }
            units += cost;
            i += len;
        }
        bytes.len()
    }

    #[test]
    fn the_bulk_scan_agrees_with_the_per_byte_definition() {
        let mut rng = crate::test_rng::Rng(7);
        let alphabet: &[u8] = b"ab \n\x0b\x0c\x84\x85\x1b[1;2m3S?47h";
        for case in 0..3000 {
            let len = rng.below(5000) as usize;
            let plain_bias = rng.below(20);
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    if rng.below(20) < plain_bias {
                        b'x'
                    } else {
                        alphabet[rng.below(alphabet.len() as u64) as usize]
                    }
                })
                .collect();
            let rows = 1 + rng.below(60) as usize;
            let cols = 1 + rng.below(120) as usize;
            let mut rest = &bytes[..];
            while !rest.is_empty() {
                let n = piece_len(rest, rows, cols);
                assert_eq!(n, reference(rest, rows, cols), "case {case}, {rows}x{cols}");
                rest = &rest[n.max(1)..];
            }
        }
    }

    #[test]
    fn a_piece_ends_before_the_alternate_screen() {
        assert_eq!(piece_len(b"a\nb\x1b[?1049hc", 24, 80), 3);
        assert_eq!(piece_len(b"a\x1b[?25;47hc", 24, 80), 1);
        assert_eq!(piece_len(b"\x1b[?1049hc\x1b[?1049l", 24, 80), 17);
        // Controls inside the sequence are executed by the terminal, bytes from 0x80 on
        // ignored: the switch still happens (both found by fuzzing).
        assert_eq!(piece_len(b"a\x1b[?104\t\x009h", 24, 80), 1);
        assert_eq!(piece_len(b"a\x1b\x81[\x81?1049h", 24, 80), 1);
        assert_eq!(piece_len(b"a\x1b[?10\x1849h", 24, 80), 10);
        // Not an alternate-screen switch, or not complete: no cut for it.
        assert_eq!(piece_len(b"a\x1b[?25hc", 24, 80), 8);
        assert_eq!(piece_len(b"a\x1b[?104", 24, 80), 7);
        assert_eq!(piece_len(b"a\x1b[?10479h", 24, 80), 10);
    }

    #[test]
    fn a_piece_always_progresses() {
        assert_eq!(piece_len(b"\x1bD\x1bD", 10_000, 1), 1);
        assert_eq!(piece_len(b"", 24, 80), 0);
    }
}
