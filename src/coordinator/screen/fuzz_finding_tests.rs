//! Inputs the `screen` fuzz target's read-cut check failed on (issue #19), replayed as the
//! target decodes them: the same output fed whole, and with each read cut in two, shows the same
//! screen after every step. The inputs are seeds of the target too (`fuzz/corpus/screen/`).

use super::*;

/// Replays a `screen` fuzz input: three bytes of size and scrollback, then per step either
/// `0xff` and a new size, or `n` and a read of `4n` bytes (cut at `7n` modulo its length + 1).
fn same_screen_wherever_reads_end(data: &[u8]) {
    let mut input = data.iter().copied();
    let mut next = || input.next().unwrap_or(0);
    let rows = u16::from(next() % 24) + 1;
    let cols = u16::from(next() % 80) + 1;
    let scrollback = usize::from(next());
    let (mut whole, mut cut) = (
        SessionScreen::new(rows, cols, scrollback),
        SessionScreen::new(rows, cols, scrollback),
    );
    let mut rest: &[u8] = data.get(3..).unwrap_or(&[]);
    let mut step = 0;
    while let Some((&n, tail)) = rest.split_first() {
        rest = tail;
        step += 1;
        if n == 0xff {
            let r = u16::from(rest.first().copied().unwrap_or(0) % 30);
            let c = u16::from(rest.get(1).copied().unwrap_or(0) % 90);
            rest = rest.get(2..).unwrap_or(&[]);
            whole.resize(r, c);
            cut.resize(r, c);
            continue;
        }
        let (read, tail) = rest.split_at((usize::from(n) * 4).min(rest.len()));
        rest = tail;
        whole.process(read);
        let at = usize::from(n).wrapping_mul(7) % (read.len() + 1);
        cut.process(&read[..at]);
        cut.process(&read[at..]);
        assert_eq!(
            cut.snapshot(usize::MAX).lines,
            whole.snapshot(usize::MAX).lines,
            "step {step}"
        );
    }
}

/// Finding 6: blank cells kept an old background after a resize — or not, depending on where
/// reads ended: rows erased under a cyan background, widened by a resize, then recycled by
/// scrolling kept their cyan cells (alacritty resets only the cells a row marks written;
/// `row_reset`).
#[test]
fn widened_rows_keep_no_old_background_wherever_reads_end() {
    same_screen_wherever_reads_end(include_bytes!(
        "../../../fuzz/corpus/screen/widened-row-reset"
    ));
}

/// Finding 7: a line feed *inside* a switch to the alternate screen (`ESC LF 0xcc [ 0x81 ?1049
/// h`: a C0 control runs in the middle of an escape, the other bytes are ignored) scrolled the
/// primary screen in the piece that then switched, so that row was read from the alternate
/// screen — and came back into view on a later resize instead of reaching the history —
/// unless a read ended inside the sequence. A piece now ends right before the `h`
/// (`alt_switch`), wherever reads end.
#[test]
fn a_line_feed_inside_the_alternate_screen_switch_scrolls_the_same_wherever_reads_end() {
    same_screen_wherever_reads_end(include_bytes!(
        "../../../fuzz/corpus/screen/line-feed-inside-alt-screen-switch"
    ));
}
