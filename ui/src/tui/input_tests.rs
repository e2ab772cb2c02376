use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

use super::*;

fn key(code: KeyCode, modifiers: KeyModifiers) -> Vec<u8> {
    encode_key(&KeyEvent::new(code, modifiers), &Modes::default())
}

fn key_in(code: KeyCode, modes: &Modes) -> Vec<u8> {
    encode_key(&KeyEvent::new(code, KeyModifiers::NONE), modes)
}

#[test]
fn chars_and_control_codes() {
    let none = KeyModifiers::NONE;
    let ctrl = KeyModifiers::CONTROL;
    assert_eq!(key(KeyCode::Char('a'), none), b"a");
    assert_eq!(key(KeyCode::Char('é'), none), "é".as_bytes());
    assert_eq!(key(KeyCode::Char('A'), KeyModifiers::SHIFT), b"A");
    assert_eq!(key(KeyCode::Char('c'), ctrl), [0x03]);
    assert_eq!(key(KeyCode::Char('Z'), ctrl | KeyModifiers::SHIFT), [0x1a]);
    assert_eq!(key(KeyCode::Char(' '), ctrl), [0x00]);
    assert_eq!(key(KeyCode::Char('@'), ctrl), [0x00]);
    assert_eq!(key(KeyCode::Char('['), ctrl), [0x1b]);
    assert_eq!(key(KeyCode::Char('\\'), ctrl), [0x1c]);
    assert_eq!(key(KeyCode::Char(']'), ctrl), [0x1d]);
    assert_eq!(key(KeyCode::Char('^'), ctrl), [0x1e]);
    assert_eq!(key(KeyCode::Char('_'), ctrl), [0x1f]);
    assert_eq!(key(KeyCode::Char('x'), KeyModifiers::ALT), b"\x1bx");
    assert_eq!(
        key(KeyCode::Char('a'), ctrl | KeyModifiers::ALT),
        b"\x1b\x01"
    );
}

#[test]
fn editing_keys() {
    let none = KeyModifiers::NONE;
    assert_eq!(key(KeyCode::Enter, none), b"\r");
    assert_eq!(key(KeyCode::Tab, none), b"\t");
    assert_eq!(key(KeyCode::BackTab, KeyModifiers::SHIFT), b"\x1b[Z");
    assert_eq!(key(KeyCode::Backspace, none), [0x7f]);
    assert_eq!(key(KeyCode::Backspace, KeyModifiers::ALT), b"\x1b\x7f");
    assert_eq!(key(KeyCode::Esc, none), [0x1b]);
    assert_eq!(key(KeyCode::PageUp, none), b"\x1b[5~");
    assert_eq!(key(KeyCode::PageDown, none), b"\x1b[6~");
    assert_eq!(key(KeyCode::Insert, none), b"\x1b[2~");
    assert_eq!(key(KeyCode::Delete, none), b"\x1b[3~");
    assert_eq!(key(KeyCode::Delete, KeyModifiers::CONTROL), b"\x1b[3;5~");
}

#[test]
fn function_keys() {
    let none = KeyModifiers::NONE;
    assert_eq!(key(KeyCode::F(1), none), b"\x1bOP");
    assert_eq!(key(KeyCode::F(4), none), b"\x1bOS");
    assert_eq!(key(KeyCode::F(5), none), b"\x1b[15~");
    assert_eq!(key(KeyCode::F(6), none), b"\x1b[17~");
    assert_eq!(key(KeyCode::F(11), none), b"\x1b[23~");
    assert_eq!(key(KeyCode::F(12), none), b"\x1b[24~");
    assert_eq!(key(KeyCode::F(2), KeyModifiers::SHIFT), b"\x1b[1;2Q");
    assert_eq!(key(KeyCode::F(13), none), b"");
}

#[test]
fn app_cursor_mode_changes_arrows_home_end() {
    let normal = Modes::default();
    let app = Modes {
        app_cursor: true,
        ..Modes::default()
    };
    assert_eq!(key_in(KeyCode::Up, &normal), b"\x1b[A");
    assert_eq!(key_in(KeyCode::Up, &app), b"\x1bOA");
    assert_eq!(key_in(KeyCode::Left, &normal), b"\x1b[D");
    assert_eq!(key_in(KeyCode::Left, &app), b"\x1bOD");
    assert_eq!(key_in(KeyCode::Home, &normal), b"\x1b[H");
    assert_eq!(key_in(KeyCode::End, &app), b"\x1bOF");
}

#[test]
fn modified_arrows_use_xterm_parameter() {
    let app = Modes {
        app_cursor: true,
        ..Modes::default()
    };
    let ctrl_right = KeyEvent::new(KeyCode::Right, KeyModifiers::CONTROL);
    assert_eq!(encode_key(&ctrl_right, &app), b"\x1b[1;5C");
    assert_eq!(key(KeyCode::Up, KeyModifiers::SHIFT), b"\x1b[1;2A");
    assert_eq!(key(KeyCode::Down, KeyModifiers::ALT), b"\x1b[1;3B");
    let all = KeyModifiers::SHIFT | KeyModifiers::ALT | KeyModifiers::CONTROL;
    assert_eq!(key(KeyCode::Home, all), b"\x1b[1;8H");
}

#[test]
fn only_press_and_repeat_are_encoded() {
    let modes = Modes::default();
    let mut ev = KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE);
    ev.kind = KeyEventKind::Release;
    assert!(encode_key(&ev, &modes).is_empty());
    ev.kind = KeyEventKind::Repeat;
    assert_eq!(encode_key(&ev, &modes), b"a");
}

#[test]
fn bracketed_paste_cannot_end_the_bracket_early() {
    let modes = Modes {
        bracketed_paste: true,
        ..Modes::default()
    };
    let out = encode_paste("ls\x1b[201~; rm -rf ~\x1b\n", &modes);
    assert_eq!(out, b"\x1b[200~ls; rm -rf ~\n\x1b[201~");
    // Removing one terminator must not assemble another out of the pieces.
    let out = encode_paste("\x1b\x1b[201~[201~", &modes);
    assert_eq!(out, b"\x1b[200~[201~\x1b[201~");
}

#[test]
fn plain_paste_turns_newlines_into_enter() {
    let out = encode_paste("a\nb\r\nc", &Modes::default());
    assert_eq!(out, b"a\rb\rc");
}

fn mouse(kind: MouseEventKind) -> MouseEvent {
    MouseEvent {
        kind,
        column: 0,
        row: 0,
        modifiers: KeyModifiers::NONE,
    }
}

#[test]
fn mouse_sgr_encoding() {
    let modes = Modes {
        mouse: MouseMode::Click,
        mouse_sgr: true,
        ..Modes::default()
    };
    let down = mouse(MouseEventKind::Down(MouseButton::Left));
    assert_eq!(
        encode_mouse(&down, 4, 9, &modes).as_deref(),
        Some(&b"\x1b[<0;5;10M"[..])
    );
    let up = mouse(MouseEventKind::Up(MouseButton::Right));
    assert_eq!(
        encode_mouse(&up, 300, 0, &modes).as_deref(),
        Some(&b"\x1b[<2;301;1m"[..])
    );
    let mut wheel = mouse(MouseEventKind::ScrollDown);
    wheel.modifiers = KeyModifiers::CONTROL;
    assert_eq!(
        encode_mouse(&wheel, 0, 0, &modes).as_deref(),
        Some(&b"\x1b[<81;1;1M"[..])
    );
}

#[test]
fn mouse_x10_encoding() {
    let modes = Modes {
        mouse: MouseMode::Click,
        ..Modes::default()
    };
    let down = mouse(MouseEventKind::Down(MouseButton::Middle));
    assert_eq!(
        encode_mouse(&down, 0, 2, &modes),
        Some(vec![0x1b, b'[', b'M', 33, 33, 35])
    );
    let up = mouse(MouseEventKind::Up(MouseButton::Middle));
    assert_eq!(
        encode_mouse(&up, 222, 0, &modes),
        Some(vec![0x1b, b'[', b'M', 35, 255, 33])
    );
    assert_eq!(encode_mouse(&up, 223, 0, &modes), None);
    assert_eq!(encode_mouse(&up, 0, 223, &modes), None);
}

#[test]
fn mouse_modes_filter_events() {
    let drag = mouse(MouseEventKind::Drag(MouseButton::Left));
    let moved = mouse(MouseEventKind::Moved);
    let down = mouse(MouseEventKind::Down(MouseButton::Left));
    let with = |mouse| Modes {
        mouse,
        mouse_sgr: true,
        ..Modes::default()
    };
    assert_eq!(encode_mouse(&down, 0, 0, &Modes::default()), None);
    assert_eq!(
        encode_mouse(&mouse(MouseEventKind::ScrollUp), 0, 0, &Modes::default()),
        None
    );
    assert!(encode_mouse(&down, 0, 0, &with(MouseMode::Click)).is_some());
    assert_eq!(encode_mouse(&drag, 0, 0, &with(MouseMode::Click)), None);
    assert_eq!(
        encode_mouse(&drag, 1, 1, &with(MouseMode::Drag)).as_deref(),
        Some(&b"\x1b[<32;2;2M"[..])
    );
    assert_eq!(encode_mouse(&moved, 0, 0, &with(MouseMode::Drag)), None);
    assert_eq!(
        encode_mouse(&moved, 0, 0, &with(MouseMode::Motion)).as_deref(),
        Some(&b"\x1b[<35;1;1M"[..])
    );
}

#[test]
fn focus_events_only_when_asked() {
    let on = Modes {
        focus_events: true,
        ..Modes::default()
    };
    assert_eq!(focus_event(true, &on).as_deref(), Some(&b"\x1b[I"[..]));
    assert_eq!(focus_event(false, &on).as_deref(), Some(&b"\x1b[O"[..]));
    assert_eq!(focus_event(true, &Modes::default()), None);
}

#[test]
fn the_wheel_over_a_full_screen_program_without_the_mouse_sends_cursor_keys() {
    let alt = Modes {
        alt_screen: true,
        ..Modes::default()
    };
    let up = mouse(MouseEventKind::ScrollUp);
    let down = mouse(MouseEventKind::ScrollDown);
    assert_eq!(
        alternate_scroll(&up, &alt).as_deref(),
        Some(&b"\x1b[A\x1b[A\x1b[A"[..])
    );
    assert_eq!(
        alternate_scroll(&down, &alt).as_deref(),
        Some(&b"\x1b[B\x1b[B\x1b[B"[..])
    );
    // Application cursor mode (DECCKM), as less and vim set it.
    let app = Modes {
        app_cursor: true,
        ..alt
    };
    assert_eq!(
        alternate_scroll(&down, &app).as_deref(),
        Some(&b"\x1bOB\x1bOB\x1bOB"[..])
    );
    // Not on the alternate screen: the wheel scrolls the pane's history instead.
    assert_eq!(alternate_scroll(&up, &Modes::default()), None);
    // A program that takes the mouse gets the wheel as a mouse report.
    let mouse_on = Modes {
        mouse: MouseMode::Click,
        ..alt
    };
    assert_eq!(alternate_scroll(&up, &mouse_on), None);
    // Only the wheel.
    let click = mouse(MouseEventKind::Down(MouseButton::Left));
    assert_eq!(alternate_scroll(&click, &alt), None);
}
