//! A coordinator-owned session's terminal state (the Session Coordinator's emulator): fed
//! arbitrary program output in arbitrary reads, with resizes; its snapshot is what attaching
//! clients' terminals receive.
#![no_main]

use lazaret::coordinator::screen::SessionScreen;
use lazaret_fuzz::Bytes;
use lazaret_protocol::screen::ScreenSnapshot;
use libfuzzer_sys::fuzz_target;

/// Only the sequences a snapshot's renderer writes itself: SGR, cursor position, erase, scroll
/// region, DEC modes, DECSCUSR and keypad modes; no other control character than CR and LF.
fn only_rendered_sequences(out: &[u8]) {
    let text = std::str::from_utf8(out).expect("snapshot bytes are UTF-8");
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        rest = &rest[c.len_utf8()..];
        if c == '\x1b' {
            if let Some(r) = rest.strip_prefix(['=', '>']) {
                rest = r;
                continue;
            }
            let body = rest.strip_prefix('[').expect("ESC [ or ESC = / ESC >");
            let params = body
                .find(|p: char| !(p.is_ascii_digit() || ";:? ".contains(p)))
                .expect("a final byte");
            let fin = body[params..].chars().next().expect("a final byte");
            assert!("mHJrlhq".contains(fin), "CSI {:?}", &body[..=params]);
            rest = &body[params + 1..];
        } else {
            assert!(c == '\r' || c == '\n' || !c.is_control(), "control {c:?}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Bytes::new(data);
    let rows = u16::from(input.u8() % 24) + 1;
    let cols = u16::from(input.u8() % 80) + 1;
    let scrollback = usize::from(input.u8());
    let mut screen = SessionScreen::new(rows, cols, scrollback);
    // The same output cut elsewhere (each read in two at a point the input chooses): the screen
    // may not depend on where reads end (a UTF-8 sequence cut between reads lost the character
    // after it: vte 0.15, alacritty/vte#159).
    let mut cut = SessionScreen::new(rows, cols, scrollback);
    while !input.is_empty() {
        match input.u8() {
            // A resize now and then (zero is taken as one).
            0xff => {
                let (r, c) = (u16::from(input.u8() % 30), u16::from(input.u8() % 90));
                screen.resize(r, c);
                cut.resize(r, c);
            }
            n => {
                let read = input.take(usize::from(n) * 4);
                screen.process(read);
                let at = usize::from(n).wrapping_mul(7) % (read.len() + 1);
                cut.process(&read[..at]);
                cut.process(&read[at..]);
            }
        }
        let _ = screen.take_replies();
        let _ = cut.take_replies();
    }
    assert_eq!(
        cut.snapshot(usize::MAX).lines,
        screen.snapshot(usize::MAX).lines,
        "the screen depends on where reads end"
    );
    let (rows, cols) = screen.size();
    assert!(rows >= 1 && cols >= 1);
    assert!(screen.history_len() <= scrollback);

    let snap = screen.snapshot(usize::MAX);
    assert_eq!((snap.rows, snap.cols), (rows, cols));
    assert_eq!(snap.lines.len(), usize::from(rows));
    assert!(snap.history.len() <= scrollback);
    let ansi = snap.to_ansi_with_history(true);
    only_rendered_sequences(&ansi);

    // A snapshot replayed into a fresh screen shows the same text (trailing blanks aside) in
    // every row of single-width chars. Rows with double-width chars may differ: alacritty can
    // leave a wide char without its right half (insert mode, overwrites), which the replay lays
    // out anew (journal 2026-12-05-issue19-fuzz). The replayed screen is a fixed point.
    let replayed = replay(&snap, rows, cols);
    for (row, (a, b)) in snap.lines.iter().zip(&replayed.lines).enumerate() {
        let shown = a.plain_text();
        if shown.is_ascii() {
            assert_eq!(
                shown.trim_end(),
                b.plain_text().trim_end(),
                "row {row} of {rows}x{cols}: {:?} replayed as {:?}",
                a.text,
                b.text
            );
        }
    }
    let again = replay(&replayed, rows, cols);
    assert_eq!(
        again.lines, replayed.lines,
        "a replayed screen replays the same"
    );
    assert_eq!(again.cursor, replayed.cursor);
});

fn replay(snap: &ScreenSnapshot, rows: u16, cols: u16) -> ScreenSnapshot {
    let mut fresh = SessionScreen::new(rows, cols, 0);
    fresh.process(&snap.to_ansi());
    fresh.snapshot(0)
}
