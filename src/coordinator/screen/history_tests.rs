//! The compact history: rows scrolled off the primary screen, bounded, in order.

use super::*;

fn history_text(screen: &SessionScreen) -> Vec<String> {
    let snap = screen.snapshot(usize::MAX);
    snap.history.iter().map(|l| l.plain_text()).collect()
}

#[test]
fn seq_in_64k_chunks_keeps_exactly_the_last_lines() {
    let output: String = (1..=20_000).map(|n| format!("{n}\r\n")).collect();
    let mut screen = SessionScreen::new(24, 80, 5_000);
    for chunk in output.as_bytes().chunks(64 * 1024) {
        screen.process(chunk);
    }
    // 20,000 lines and the cursor's empty row: 19,977 scrolled off, the newest 5,000 kept.
    assert_eq!(screen.history_len(), 5_000);
    let expected: Vec<String> = (14_978..=19_977).map(|n| n.to_string()).collect();
    assert_eq!(history_text(&screen), expected);
    let snap = screen.snapshot(0);
    assert_eq!(snap.lines[0].plain_text(), "19978");
    assert_eq!(snap.lines[22].plain_text(), "20000");
}

#[test]
fn a_snapshot_carries_at_most_the_lines_asked_for() {
    let mut screen = SessionScreen::new(4, 20, 100);
    screen.process("a\r\nb\r\nc\r\nd\r\ne\r\nf\r\n".as_bytes());
    assert_eq!(screen.history_len(), 3);
    let snap = screen.snapshot(2);
    let text: Vec<String> = snap.history.iter().map(|l| l.plain_text()).collect();
    assert_eq!(text, ["b", "c"]);
    assert!(screen.snapshot(0).history.is_empty());
}

#[test]
fn alt_screen_programs_leave_no_history() {
    let mut screen = SessionScreen::new(10, 40, 1000);
    screen.process(b"$ vim\r\n\x1b[?1049h");
    for i in 0..5_000 {
        screen.process(format!("alt {i}\r\n").as_bytes());
    }
    screen.process(b"\x1b[?1049l$ ");
    assert_eq!(screen.history_len(), 0);
    let snap = screen.snapshot(10);
    assert_eq!(snap.lines[0].plain_text(), "$ vim");
    assert_eq!(snap.lines[1].plain_text(), "$");
    assert!(!snap.modes.alt_screen);
}

#[test]
fn a_huge_line_is_kept_whole_as_soft_wrapped_rows() {
    let mut screen = SessionScreen::new(24, 80, 20_000);
    screen.process(&vec![b'x'; 1_000_000]);
    let snap = screen.snapshot(usize::MAX);
    let count = |lines: &[lazaret_protocol::screen::ScreenLine]| {
        lines.iter().map(|l| l.plain_text().len()).sum::<usize>()
    };
    assert_eq!(count(&snap.history) + count(&snap.lines), 1_000_000);
    assert!(snap.history.iter().all(|l| l.wrapped));
}

#[test]
fn shrinking_the_screen_moves_rows_into_the_history() {
    let mut screen = SessionScreen::new(10, 20, 100);
    for i in 0..9 {
        screen.process(format!("r{i}\r\n").as_bytes());
    }
    screen.resize(4, 20);
    assert_eq!(screen.size(), (4, 20));
    let text = history_text(&screen);
    assert_eq!(text, ["r0", "r1", "r2", "r3", "r4", "r5"]);
}

#[test]
fn the_row_cache_is_freed_once_output_stops_scrolling() {
    let mut screen = SessionScreen::new(24, 190, 5_000);
    let idle = screen.heap_bytes();
    screen.process("line\r\n".repeat(100).as_bytes());
    let busy = screen.heap_bytes();
    screen.process(b"$ ");
    let calm = screen.heap_bytes();
    assert!(busy > idle + 1_000 * 190 * 20, "{idle} {busy}");
    assert!(calm < idle + 100_000, "{idle} {calm}");
    assert_eq!(screen.history_len(), 77);
}

#[test]
fn the_row_cache_of_the_primary_screen_is_freed_after_the_alternate_screen() {
    let mut screen = SessionScreen::new(24, 190, 5_000);
    let idle = screen.heap_bytes();
    screen.process("line\r\n".repeat(100).as_bytes());
    screen.process(b"\x1b[?1049hfull-screen program");
    assert!(screen.heap_bytes() > idle + 1_000 * 190 * 20);
    screen.process(b"\x1b[?1049l");
    assert!(screen.heap_bytes() < idle + 100_000);
}

#[test]
fn the_ring_holds_no_more_slots_than_lines_allowed() {
    let mut screen = SessionScreen::new(4, 10, 5_000);
    let rows: String = (0..6_000).map(|n| format!("{n}\r\n")).collect();
    screen.process(rows.as_bytes());
    assert_eq!(screen.history_len(), 5_000);
    assert!(
        screen.history.heap_bytes() < 5_000 * 24 + 6 * 5_000,
        "{}",
        screen.history.heap_bytes()
    );
}

#[test]
fn a_session_screen_can_move_to_another_thread() {
    fn assert_send<T: Send + 'static>(_: &T) {}
    let screen = SessionScreen::new(4, 10, 10);
    assert_send(&screen);
    let handle = std::thread::spawn(move || screen.size());
    assert_eq!(handle.join().ok(), Some((4, 10)));
}

/// Found by fuzzing (issue #19, `screen`'s read-cut check): a row the primary screen scrolled
/// off in the same piece of output that then switched to the alternate screen stayed in the
/// emulator's primary grid (the history is read from the screen shown at a piece's end) —
/// missing from the history, and back on screen at the next taller resize, depending on where
/// the reads ended. A piece now ends before a switch to the alternate screen.
#[test]
fn rows_scrolled_off_before_the_alternate_screen_reach_the_history_whatever_the_reads() {
    // The program is still on the alternate screen when a read ends and the screen grows; it
    // leaves the alternate screen later.
    let out = b"one\r\ntwo\r\nthree\x1b[?1049hALT";
    for at in 0..=out.len() {
        let mut s = SessionScreen::new(2, 20, 10);
        s.process(&out[..at]);
        s.process(&out[at..]);
        s.resize(5, 20);
        s.process(b"\x1b[?1049l");
        let snap = s.snapshot(usize::MAX);
        let history: Vec<&str> = snap.history.iter().map(|l| l.text.as_str()).collect();
        let shown: Vec<&str> = snap.lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(history, ["one"], "cut at {at}: history");
        assert_eq!(shown, ["two", "three", "", "", ""], "cut at {at}: screen");
    }
}
