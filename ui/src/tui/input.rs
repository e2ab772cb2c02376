//! Host input encoded as the bytes an xterm-compatible terminal would send to the focused
//! pane's program, following the modes that program has set.

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

use super::emulator::{Modes, MouseMode};

const ESC: u8 = 0x1b;

/// The bytes for a key press (or repeat); releases send nothing.
///
/// Cursor keys follow DECCKM (`ESC O x` in application mode) unless modified, in which case they
/// carry xterm's modifier parameter `1 + shift + 2·alt + 4·ctrl`, as do the `~` keys.
pub fn encode_key(key: &KeyEvent, modes: &Modes) -> Vec<u8> {
    if !matches!(key.kind, KeyEventKind::Press | KeyEventKind::Repeat) {
        return Vec::new();
    }
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let modifier = 1 + u8::from(shift) + 2 * u8::from(alt) + 4 * u8::from(ctrl);
    let app_cursor = modes.app_cursor;
    let plain = match key.code {
        KeyCode::Char(c) => encode_char(c, ctrl),
        KeyCode::Enter => vec![b'\r'],
        KeyCode::Tab => vec![b'\t'],
        KeyCode::Backspace if ctrl => vec![0x08],
        KeyCode::Backspace => vec![0x7f],
        KeyCode::Esc => vec![ESC],
        KeyCode::Null => vec![0],
        KeyCode::BackTab => return b"\x1b[Z".to_vec(),
        KeyCode::Up => return letter_key(b'A', modifier, app_cursor),
        KeyCode::Down => return letter_key(b'B', modifier, app_cursor),
        KeyCode::Right => return letter_key(b'C', modifier, app_cursor),
        KeyCode::Left => return letter_key(b'D', modifier, app_cursor),
        KeyCode::Home => return letter_key(b'H', modifier, app_cursor),
        KeyCode::End => return letter_key(b'F', modifier, app_cursor),
        KeyCode::F(n @ 1..=4) => return letter_key(b'P' + (n - 1), modifier, true),
        KeyCode::Insert => return tilde_key(2, modifier),
        KeyCode::Delete => return tilde_key(3, modifier),
        KeyCode::PageUp => return tilde_key(5, modifier),
        KeyCode::PageDown => return tilde_key(6, modifier),
        KeyCode::F(n @ 5..=12) => {
            const CODES: [u8; 8] = [15, 17, 18, 19, 20, 21, 23, 24];
            return tilde_key(CODES[usize::from(n - 5)], modifier);
        }
        _ => return Vec::new(),
    };
    if alt {
        let mut out = vec![ESC];
        out.extend(plain);
        out
    } else {
        plain
    }
}

/// A character, as a control code when Ctrl makes one (xterm's table), else its UTF-8.
fn encode_char(c: char, ctrl: bool) -> Vec<u8> {
    let control = match c {
        _ if !ctrl => None,
        'a'..='z' | 'A'..='Z' => Some(c as u8 & 0x1f),
        ' ' | '@' | '2' => Some(0x00),
        '[' | '3' => Some(0x1b),
        '\\' | '4' => Some(0x1c),
        ']' | '5' => Some(0x1d),
        '^' | '6' | '~' => Some(0x1e),
        '_' | '7' | '/' => Some(0x1f),
        '?' | '8' => Some(0x7f),
        _ => None,
    };
    match control {
        Some(b) => vec![b],
        None => c.to_string().into_bytes(),
    }
}

/// `ESC [ x`, `ESC O x` (application / SS3 form), or `ESC [ 1 ; m x` when modified.
fn letter_key(letter: u8, modifier: u8, ss3: bool) -> Vec<u8> {
    match modifier {
        1 if ss3 => vec![ESC, b'O', letter],
        1 => vec![ESC, b'[', letter],
        m => format!("\x1b[1;{m}{}", char::from(letter)).into_bytes(),
    }
}

/// `ESC [ n ~`, or `ESC [ n ; m ~` when modified.
fn tilde_key(n: u8, modifier: u8) -> Vec<u8> {
    match modifier {
        1 => format!("\x1b[{n}~").into_bytes(),
        m => format!("\x1b[{n};{m}~").into_bytes(),
    }
}

/// Pasted text. With bracketed paste the text goes between `ESC[200~` and `ESC[201~` and may
/// not end the bracket early: `ESC[201~` and every other ESC (and the 8-bit CSI, U+009B) are
/// removed. Without it, line ends become `\r` as if typed (`\r\n` is one Enter, not two).
pub fn encode_paste(text: &str, modes: &Modes) -> Vec<u8> {
    if modes.bracketed_paste {
        let inner: String = text
            .replace("\x1b[201~", "")
            .chars()
            .filter(|&c| c != '\x1b' && c != '\u{9b}')
            .collect();
        let mut out = b"\x1b[200~".to_vec();
        out.extend_from_slice(inner.as_bytes());
        out.extend_from_slice(b"\x1b[201~");
        out
    } else {
        text.replace("\r\n", "\r").replace('\n', "\r").into_bytes()
    }
}

/// A mouse report for the pane, `col`/`row` 0-based within its inner area; `None` when the
/// program's mouse mode does not ask for this event, or (X10 encoding) the position cannot be
/// expressed in one byte.
pub fn encode_mouse(ev: &MouseEvent, col: u16, row: u16, modes: &Modes) -> Option<Vec<u8>> {
    let wanted = match ev.kind {
        MouseEventKind::Down(_)
        | MouseEventKind::Up(_)
        | MouseEventKind::ScrollUp
        | MouseEventKind::ScrollDown
        | MouseEventKind::ScrollLeft
        | MouseEventKind::ScrollRight => modes.mouse != MouseMode::Off,
        MouseEventKind::Drag(_) => matches!(modes.mouse, MouseMode::Drag | MouseMode::Motion),
        MouseEventKind::Moved => modes.mouse == MouseMode::Motion,
    };
    if !wanted {
        return None;
    }
    let button = |b: MouseButton| match b {
        MouseButton::Left => 0u8,
        MouseButton::Middle => 1,
        MouseButton::Right => 2,
    };
    let release = matches!(ev.kind, MouseEventKind::Up(_));
    let code = match ev.kind {
        MouseEventKind::Down(b) => button(b),
        // X10 cannot say which button was released.
        MouseEventKind::Up(_) if !modes.mouse_sgr => 3,
        MouseEventKind::Up(b) => button(b),
        MouseEventKind::Drag(b) => 32 + button(b),
        MouseEventKind::Moved => 32 + 3,
        MouseEventKind::ScrollUp => 64,
        MouseEventKind::ScrollDown => 65,
        MouseEventKind::ScrollLeft => 66,
        MouseEventKind::ScrollRight => 67,
    };
    let mods = ev.modifiers;
    let code = code
        + 4 * u8::from(mods.contains(KeyModifiers::SHIFT))
        + 8 * u8::from(mods.contains(KeyModifiers::ALT))
        + 16 * u8::from(mods.contains(KeyModifiers::CONTROL));
    if modes.mouse_sgr {
        let end = if release { 'm' } else { 'M' };
        let (x, y) = (u32::from(col) + 1, u32::from(row) + 1);
        return Some(format!("\x1b[<{code};{x};{y}{end}").into_bytes());
    }
    if col > 222 || row > 222 {
        return None;
    }
    // Both ≤ 222, so 32 + 1 + n fits in a byte.
    let byte = |n: u16| 33 + n as u8;
    Some(vec![ESC, b'[', b'M', 32 + code, byte(col), byte(row)])
}

/// Cursor-key presses one wheel notch sends (tmux's 3 lines).
pub const WHEEL_LINES: usize = 3;

/// tmux's `alternate-scroll` (issue #32, D6): a wheel notch over a full-screen program (on the
/// alternate screen) that did not ask for the mouse is [`WHEEL_LINES`] cursor-up or cursor-down
/// presses, in the form DECCKM asks for (`ESC O A` in application mode, else `ESC [ A`), so
/// `less`, `man` or `vim` scroll their document. `None` elsewhere: on the normal screen the
/// wheel scrolls the pane's history, and a program in a mouse mode gets the wheel itself.
pub fn alternate_scroll(ev: &MouseEvent, modes: &Modes) -> Option<Vec<u8>> {
    if !modes.alt_screen || modes.mouse != MouseMode::Off {
        return None;
    }
    let letter = match ev.kind {
        MouseEventKind::ScrollUp => b'A',
        MouseEventKind::ScrollDown => b'B',
        _ => return None,
    };
    Some(letter_key(letter, 1, modes.app_cursor).repeat(WHEEL_LINES))
}

/// `ESC[I` / `ESC[O` when the pane gains or loses focus, if the program asked (DECSET 1004).
pub fn focus_event(gained: bool, modes: &Modes) -> Option<Vec<u8>> {
    modes.focus_events.then(|| {
        if gained {
            b"\x1b[I".to_vec()
        } else {
            b"\x1b[O".to_vec()
        }
    })
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod tests;
