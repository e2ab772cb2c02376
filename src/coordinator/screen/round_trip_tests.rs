//! A snapshot's `to_ansi` fed into a fresh terminal reproduces the state it was taken from.

use super::*;
use alacritty_terminal::index::Column;
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::vte::ansi::{Color, NamedColor, Rgb};

/// Replays `screen`'s snapshot (with `history` lines) into a fresh screen of the same size.
fn replay(screen: &SessionScreen, history: usize) -> SessionScreen {
    let (rows, cols) = screen.size();
    let mut fresh = SessionScreen::new(rows, cols, 10_000);
    fresh.process(&screen.snapshot(history).to_ansi_with_history(history > 0));
    fresh
}

fn assert_same_state(a: &SessionScreen, b: &SessionScreen) {
    let (sa, sb) = (a.snapshot(0), b.snapshot(0));
    for (row, (la, lb)) in sa.lines.iter().zip(&sb.lines).enumerate() {
        assert_eq!(la.text, lb.text, "row {row}");
    }
    assert_eq!(sa.cursor, sb.cursor);
    assert_eq!(sa.modes, sb.modes);
    assert_eq!(sa.lines.len(), sb.lines.len());
}

const STYLED: &[u8] = b"plain line\r\n\
\x1b[1;3;38;2;1;2;3mbold italic rgb\x1b[0m then \x1b[4;48;5;200munderlined 256\x1b[0m\r\n\
\x1b[31mred \x1b[92mbright green \x1b[7minverse\x1b[27m \x1b[9mstrike\x1b[0m\r\n\
wide \xe4\xb8\xad\xe6\x96\x87 and e\xcc\x81 combining\r\n\
\x1b[44m   blue blanks   \x1b[0m\r\n\
\ttab\r\n\
\x1b[2mdim\x1b[22m \x1b[8mhidden\x1b[0m\x1b[5;7H";

#[test]
fn visible_screen_attributes_and_cursor_survive() {
    let mut a = SessionScreen::new(10, 40, 100);
    a.process(STYLED);
    let b = replay(&a, 0);
    assert_same_state(&a, &b);
    let snap = b.snapshot(0);
    assert_eq!(snap.lines[0].plain_text(), "plain line");
    assert!(snap.lines[3]
        .plain_text()
        .starts_with("wide 中文 and e\u{301}"));
    assert_eq!((snap.cursor.row, snap.cursor.col), (4, 6));
}

#[test]
fn sampled_cells_keep_colours_and_flags() {
    let mut a = SessionScreen::new(10, 40, 100);
    a.process(STYLED);
    let b = replay(&a, 0);
    let grid = b.term.grid();
    let cell = &grid[Line(1)][Column(0)];
    assert_eq!(cell.c, 'b');
    assert_eq!(cell.fg, Color::Spec(Rgb { r: 1, g: 2, b: 3 }));
    assert!(cell.flags.contains(Flags::BOLD | Flags::ITALIC));
    let underlined = &grid[Line(1)][Column(21)];
    assert_eq!(underlined.c, 'u');
    assert_eq!(underlined.bg, Color::Indexed(200));
    assert!(underlined.flags.contains(Flags::UNDERLINE));
    assert_eq!(grid[Line(2)][Column(0)].fg, Color::Named(NamedColor::Red));
    assert_eq!(
        grid[Line(2)][Column(4)].fg,
        Color::Named(NamedColor::BrightGreen)
    );
    assert_eq!(grid[Line(4)][Column(0)].bg, Color::Named(NamedColor::Blue));
    assert!(grid[Line(5)][Column(0)].c == ' ' && grid[Line(5)][Column(8)].c == 't');
}

#[test]
fn modes_survive() {
    let mut a = SessionScreen::new(8, 30, 100);
    a.process(
        b"\x1b[?1049h\x1b[?1h\x1b=\x1b[?2004h\x1b[?1002h\x1b[?1006h\x1b[?1004h\x1b[?7l\
\x1b[5 q\x1b[?25l\x1b[3;3Hin the alt screen",
    );
    let b = replay(&a, 0);
    assert_same_state(&a, &b);
    let snap = b.snapshot(0);
    assert!(snap.modes.alt_screen && snap.modes.app_cursor && snap.modes.app_keypad);
    assert!(snap.modes.bracketed_paste && snap.modes.sgr_mouse && snap.modes.focus_events);
    assert_eq!(snap.modes.mouse, lazaret_protocol::screen::MouseMode::Drag);
    assert!(!snap.modes.autowrap && !snap.cursor.visible);
    assert_eq!(
        snap.cursor.shape,
        Some(lazaret_protocol::screen::CursorShape::Bar { blinking: true })
    );
}

#[test]
fn history_and_soft_wraps_survive() {
    let mut a = SessionScreen::new(5, 20, 1000);
    for i in 0..50 {
        a.process(format!("line {i} \x1b[32mgreen\x1b[0m\r\n").as_bytes());
    }
    a.process(&[b'w'; 45]);
    a.process(b"\r\n");
    for i in 0..6 {
        a.process(format!("tail {i}\r\n").as_bytes());
    }
    let b = replay(&a, 1000);
    assert_same_state(&a, &b);
    let (ha, hb) = (a.snapshot(1000).history, b.snapshot(1000).history);
    assert_eq!(ha.len(), 55);
    assert_eq!(ha, hb);
    assert!(ha[50].wrapped && ha[51].wrapped && !ha[52].wrapped);
    assert_eq!(ha[51].plain_text(), "w".repeat(20));
    assert_eq!(ha[52].plain_text(), "w".repeat(5));
}

/// Found by fuzzing (issue #19, `scripts/fuzz screen`, after 2.7 M executions): vte 0.15 lost
/// the character after a UTF-8 sequence one `advance` ended and the next completed. Both cuts
/// happen here: a read boundary (any byte) and a piece boundary (`pieces`, here after the
/// escapes that use up a piece's scroll budget). The screen is the same whatever the cuts.
#[test]
fn a_character_cut_between_reads_or_pieces_loses_nothing_after_it() {
    let text = "ae\u{301}e\u{301}z 中文 \u{1F600}!";
    for escapes in 0..30 {
        let mut bytes = "\x1b[H".repeat(escapes).into_bytes();
        bytes.extend_from_slice(text.as_bytes());
        let mut whole = SessionScreen::new(16, 16, 0);
        whole.process(&bytes);
        let want = whole.snapshot(0);
        assert!(
            want.lines[0].text.starts_with("ae\u{301}e\u{301}z"),
            "{escapes} escapes: {:?}",
            want.lines[0].text
        );
        for at in 1..bytes.len() {
            let mut cut = SessionScreen::new(16, 16, 0);
            cut.process(&bytes[..at]);
            cut.process(&bytes[at..]);
            assert_eq!(
                cut.snapshot(0).lines,
                want.lines,
                "{escapes} escapes, cut at {at}"
            );
        }
    }
    // A piece boundary inside U+0301: 24 escapes that may scroll a screen each leave a budget
    // of 16 rows, so the plain run after them is cut at byte 271 (the crash's cut), here
    // between the two bytes of U+0301.
    let rows = whole_and_by_byte(&after_24_escapes(197, "e\u{301}e\u{301}z".as_bytes()));
    assert!(rows.concat().contains("xe\u{301}e\u{301}z"), "{rows:?}");
    // The same cut after a lone lead byte (an invalid sequence: `F0` then `X`).
    whole_and_by_byte(&after_24_escapes(198, b"\xf0X\xe4\xb8Y\x9fZ"));
}

/// 24 `ESC[H` (a screen of scroll budget each), `xs` x's, then `tail`: 16×16 pieces end at byte
/// 271.
fn after_24_escapes(xs: usize, tail: &[u8]) -> Vec<u8> {
    let mut bytes = "\x1b[H".repeat(24).into_bytes();
    bytes.extend(std::iter::repeat_n(b'x', xs));
    bytes.extend_from_slice(tail);
    assert_eq!(pieces::piece_len(&bytes, 16, 16, Default::default()).0, 271);
    bytes
}

/// The rows of a 16×16 screen fed `bytes` at once, checked equal to the same fed byte by byte.
fn whole_and_by_byte(bytes: &[u8]) -> Vec<String> {
    let mut whole = SessionScreen::new(16, 16, 0);
    whole.process(bytes);
    let mut by_byte = SessionScreen::new(16, 16, 0);
    for b in bytes {
        by_byte.process(std::slice::from_ref(b));
    }
    assert_eq!(whole.snapshot(0).lines, by_byte.snapshot(0).lines);
    whole
        .snapshot(0)
        .lines
        .iter()
        .map(|l| l.text.clone())
        .collect()
}
