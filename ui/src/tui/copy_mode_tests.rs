//! Copy mode: keys move and mark, the selection's text as drawn, OSC 52 for the host, and the
//! app's glue (keyboard copy mode, a mouse drag, programs that take the mouse). Offline panes.

use super::super::app::App;
use super::super::copy_mode::{osc52, text, CopyMode, CopyStep, MAX_COPY};
use super::super::keymap::Action;
use super::super::layout::Dir;
use super::super::pane::{Pane, PaneStatus};
use super::super::test_frame::{self, offline_app};
use base64::Engine as _;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

fn buffer(lines: &[&str], width: u16) -> (Buffer, Rect) {
    let area = Rect::new(3, 2, width, lines.len() as u16);
    let mut buf = Buffer::empty(Rect::new(0, 0, width + 6, lines.len() as u16 + 4));
    for (i, l) in lines.iter().enumerate() {
        buf.set_string(
            area.x,
            area.y + i as u16,
            l,
            ratatui::style::Style::default(),
        );
    }
    (buf, area)
}

fn decoded(bytes: &[u8]) -> String {
    let s = std::str::from_utf8(bytes).unwrap_or_default();
    let body = s
        .strip_prefix("\x1b]52;c;")
        .and_then(|b| b.strip_suffix('\x07'))
        .unwrap_or_else(|| panic!("not an OSC 52 set: {s:?}"));
    let raw = base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap_or_default();
    String::from_utf8(raw).unwrap_or_default()
}

#[test]
fn keys_move_within_the_pane_and_mark_the_selection() {
    let mut c = CopyMode::new(1, (2, 3));
    let size = (5, 10);
    for code in [KeyCode::Up, KeyCode::Up, KeyCode::Up, KeyCode::Char('h')] {
        assert_eq!(c.key(code, size), CopyStep::Stay);
    }
    assert_eq!(c.cursor, (0, 2), "Up stops at the top row");
    assert_eq!(c.anchor, None);
    assert!(!c.selects((0, 2), 10), "nothing is selected before a mark");
    c.key(KeyCode::Char('v'), size);
    c.key(KeyCode::End, size);
    c.key(KeyCode::Char('j'), size);
    c.key(KeyCode::Right, size);
    assert_eq!(c.cursor, (1, 9), "Right stops at the last column");
    assert!(c.selects((0, 2), 10) && c.selects((0, 9), 10) && c.selects((1, 0), 10));
    assert!(!c.selects((0, 1), 10) && !c.selects((2, 0), 10));
    c.key(KeyCode::Char('G'), size);
    assert_eq!(c.cursor, (4, 9));
    assert_eq!(c.key(KeyCode::Char('y'), size), CopyStep::Copy);
    assert_eq!(c.key(KeyCode::Enter, size), CopyStep::Copy);
    assert_eq!(c.key(KeyCode::Esc, size), CopyStep::Leave);
    assert_eq!(c.key(KeyCode::Char('q'), size), CopyStep::Leave);
}

#[test]
fn a_selection_backwards_reads_in_order_and_without_a_mark_the_line_is_copied() {
    let mut c = CopyMode::new(1, (2, 4));
    assert_eq!(c.span(10), ((2, 0), (2, 9)));
    c.anchor = Some((3, 1));
    assert_eq!(c.span(10), ((2, 4), (3, 1)));
}

#[test]
fn text_is_read_as_drawn_with_trailing_blanks_dropped_and_wide_characters_once() {
    let (buf, area) = buffer(&["hello world", "  indented  ", "日本語 ok", "last"], 14);
    assert_eq!(text(&buf, area, ((0, 6), (1, 9))), "world\n  indented");
    assert_eq!(text(&buf, area, ((2, 0), (2, 13))), "日本語 ok");
    assert_eq!(text(&buf, area, ((3, 0), (3, 1))), "la");
    // Rows past the area are not read.
    assert_eq!(text(&buf, area, ((3, 0), (9, 3))), "last");
}

#[test]
fn osc52_carries_the_text_base64_encoded_so_no_control_reaches_the_host_parser() {
    let t = "rm -rf / \x1b]52;c;ZXZpbA==\x07 ünïcode";
    let bytes = osc52(t);
    assert!(bytes.starts_with(b"\x1b]52;c;") && bytes.ends_with(b"\x07"));
    let body = &bytes[7..bytes.len() - 1];
    assert!(
        body.iter()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(b)),
        "{body:?}"
    );
    assert_eq!(decoded(&bytes), t);
}

#[test]
fn a_copy_is_capped() {
    let long = "x".repeat(200);
    let lines: Vec<&str> = std::iter::repeat_n(long.as_str(), 2000).collect();
    let (buf, area) = buffer(&lines, 200);
    let t = text(&buf, area, ((0, 0), (1999, 199)));
    assert_eq!(t.len(), MAX_COPY);
}

#[test]
fn concealed_text_is_copied_as_the_blanks_it_shows() {
    let mut app = offline_app();
    let mut p = Pane::offline(1, (10, 40), 100);
    p.status = PaneStatus::Running {
        session: format!("{:064x}", 1),
    };
    p.emulator()
        .process(b"pass: \x1b[8mhunter2 \xe6\x97\xa5\x1b[0m ok\r\n$ ");
    app.add_pane(p, None::<Dir>);
    // Drawn with the HIDDEN modifier (the host terminal shows blanks).
    let _ = test_frame::frame(&mut app, 80, 20);
    app.act(Action::CopyMode);
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        decoded(&app.host_bytes),
        format!("pass:{} ok", " ".repeat(11))
    );
}

fn app_with_text() -> App {
    let mut app = offline_app();
    let mut p = Pane::offline(1, (10, 40), 100);
    p.status = PaneStatus::Running {
        session: format!("{:064x}", 1),
    };
    p.emulator()
        .process(b"first line of output\r\nsecond line\r\n$ ");
    app.add_pane(p, None::<Dir>);
    app
}

fn key(app: &mut App, code: KeyCode) {
    app.key(&KeyEvent::new(code, KeyModifiers::NONE));
}

#[test]
fn copy_mode_copies_the_marked_text_to_the_host_clipboard_and_sends_no_key_to_the_pane() {
    let mut app = app_with_text();
    let f = test_frame::frame(&mut app, 80, 20);
    assert!(f.contains("second line"), "{f}");
    app.act(Action::CopyMode);
    let f = test_frame::frame(&mut app, 80, 20);
    assert!(f.contains("copy: v marks, y copies, Esc leaves"), "{f}");
    // The cursor starts at the prompt (row 2): up two rows, to the line's start, mark, right
    // five, copy.
    for code in [
        KeyCode::Up,
        KeyCode::Up,
        KeyCode::Char('0'),
        KeyCode::Char('v'),
    ] {
        key(&mut app, code);
    }
    for _ in 0..4 {
        key(&mut app, KeyCode::Char('l'));
    }
    key(&mut app, KeyCode::Char('y'));
    assert!(app.copy.is_none(), "a copy leaves copy mode");
    assert_eq!(decoded(&app.host_bytes), "first");
    assert!(
        app.messages
            .front()
            .is_some_and(|m| m.contains("copied 5 characters to the host clipboard")),
        "{:?}",
        app.messages
    );
    // Without a mark, the cursor's whole line.
    app.host_bytes.clear();
    app.act(Action::CopyMode);
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Enter);
    assert_eq!(decoded(&app.host_bytes), "second line");
    // Esc leaves without copying.
    app.host_bytes.clear();
    app.act(Action::CopyMode);
    key(&mut app, KeyCode::Esc);
    assert!(app.copy.is_none() && app.host_bytes.is_empty());
}

fn mouse(app: &mut App, kind: MouseEventKind, column: u16, row: u16) {
    app.mouse(&MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    });
}

#[test]
fn a_mouse_drag_selects_and_its_release_copies_unless_the_program_takes_the_mouse() {
    let mut app = app_with_text();
    test_frame::frame(&mut app, 80, 20);
    let inner = app
        .pane_rects
        .first()
        .map(|(_, r)| super::super::draw::inner(*r))
        .unwrap_or_default();
    let (x, y) = (inner.x, inner.y);
    mouse(&mut app, MouseEventKind::Down(MouseButton::Left), x + 6, y);
    mouse(
        &mut app,
        MouseEventKind::Drag(MouseButton::Left),
        x + 3,
        y + 1,
    );
    assert!(app.copy.as_ref().is_some_and(|c| c.by_mouse));
    mouse(
        &mut app,
        MouseEventKind::Up(MouseButton::Left),
        x + 3,
        y + 1,
    );
    assert_eq!(decoded(&app.host_bytes), "line of output\nseco");
    assert!(app.copy.is_none());

    // A click alone copies nothing.
    app.host_bytes.clear();
    mouse(&mut app, MouseEventKind::Down(MouseButton::Left), x + 2, y);
    mouse(&mut app, MouseEventKind::Up(MouseButton::Left), x + 2, y);
    assert!(app.host_bytes.is_empty());

    // A program that asked for the mouse gets the drag instead.
    if let Some(p) = app.panes.get(&1) {
        p.emulator().process(b"\x1b[?1002h\x1b[?1006h");
    }
    mouse(&mut app, MouseEventKind::Down(MouseButton::Left), x + 6, y);
    mouse(
        &mut app,
        MouseEventKind::Drag(MouseButton::Left),
        x + 3,
        y + 1,
    );
    mouse(
        &mut app,
        MouseEventKind::Up(MouseButton::Left),
        x + 3,
        y + 1,
    );
    assert!(app.copy.is_none() && app.host_bytes.is_empty());
}
