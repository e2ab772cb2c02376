//! Session output is hostile (SR-1): whatever it writes, a snapshot's terminal bytes only print
//! and colour characters, and queries are answered by the coordinator's terminal.

use super::*;

/// Only the sequences the renderer writes itself (see the protocol's screen tests).
fn assert_only_known_sequences(out: &[u8]) {
    let text = std::str::from_utf8(out).expect("UTF-8");
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('=') | Some('>') => {}
                Some('[') => {
                    while chars
                        .peek()
                        .is_some_and(|p| p.is_ascii_digit() || ";:? ".contains(*p))
                    {
                        chars.next();
                    }
                    let fin = chars.next().expect("final byte");
                    assert!("mHJrlhq".contains(fin), "CSI …{fin}");
                }
                other => panic!("ESC {other:?}"),
            },
            '\r' | '\n' => {}
            c => assert!(!c.is_control(), "control {c:?}"),
        }
    }
}

const HOSTILE: &[u8] = b"osc52 \x1b]52;c;SGVsbG8=\x07 title \x1b]2;evil\x1b[31m\x07\r\n\
c1 \xc2\x9b6n \xc2\x90q\xc2\x9c raw \x9b31m \x85 \x84\r\n\
invalid \xff\xfe\xc0\x80 utf8 \xe4\xb8\r\n\
dcs \x1bP+q544e\x1b\\ apc \x1b_x\x1b\\ pm \x1b^x\x1b\\\r\n\
hyperlink \x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\\r\n\
nested \x1b[38;2;999999;1;1mx\x1b[0m\r\n";

#[test]
fn hostile_output_cannot_reach_a_clients_terminal() {
    let mut screen = SessionScreen::new(12, 60, 1000);
    screen.process(HOSTILE);
    screen.process(&vec![b'y'; 100_000]);
    screen.process(HOSTILE);
    let snap = screen.snapshot(usize::MAX);
    assert!(screen.history_len() > 1000 - 1);
    assert_only_known_sequences(&snap.to_ansi_with_history(true));
    for line in snap.lines.iter().chain(&snap.history) {
        assert!(line.items().all(|i| matches!(
            i,
            lazaret_protocol::screen::LineItem::Text(_)
                | lazaret_protocol::screen::LineItem::Sgr(_)
        )),);
        assert!(!line.plain_text().contains("http://evil"));
    }
    let title = snap.title.expect("title kept");
    assert!(!title.chars().any(char::is_control), "{title:?}");
}

#[test]
fn status_and_attribute_queries_are_answered() {
    let mut screen = SessionScreen::new(24, 80, 100);
    screen.process(b"abc\r\nde\x1b[6n");
    assert_eq!(screen.take_replies(), b"\x1b[2;3R");
    screen.process(b"\x1b[c");
    let da = screen.take_replies();
    assert!(da.starts_with(b"\x1b[?") && da.ends_with(b"c"), "{da:?}");
    assert!(screen.take_replies().is_empty());
}

#[test]
fn clipboard_requests_are_not_answered() {
    let mut screen = SessionScreen::new(24, 80, 100);
    screen.process(b"\x1b]52;c;?\x07\x1b]52;c;SGVsbG8=\x07");
    assert!(screen.take_replies().is_empty());
}

/// Found by fuzzing (issue #19, `scripts/fuzz screen`): a client one column wide and a
/// double-width char in the session's output panicked alacritty inside the coordinator.
#[test]
fn a_wide_char_on_a_one_column_screen_does_not_panic() {
    let mut screen = SessionScreen::new(4, 1, 100);
    screen.process("中文\r\n😀x".as_bytes());
    screen.resize(3, 1);
    screen.process("中".as_bytes());
    assert_eq!(screen.size(), (3, 2));
}

/// Found by fuzzing (issue #19, `scripts/fuzz screen`): vte 0.15 shifts a legacy `#rgb` colour
/// of an OSC 4 / 10 / 11 right by four bits per digit, which overflows past 16 digits — a panic
/// wherever overflow is checked (debug builds, the tests, the fuzzer). The workspace builds vte
/// without overflow checks in every profile (as a release build already did).
#[test]
fn a_legacy_colour_with_many_digits_does_not_panic() {
    let mut screen = SessionScreen::new(4, 20, 0);
    for osc in ["4;1;", "10;", "11;", "12;"] {
        screen.process(format!("\x1b]{osc}#{}\x07x", "0".repeat(60)).as_bytes());
        screen.process(format!("\x1b]{osc}#{}1\x1b\\y", "0".repeat(98)).as_bytes());
    }
    assert!(screen.snapshot(0).lines[0].text.starts_with("xy"));
}
