//! The Session Coordinator's picture of one Client Session's terminal (issue #14): what a client
//! attaching to a session receives at once, before the session's live output bytes.
//!
//! A [`ScreenSnapshot`] is built by the trusted coordinator, but every character in it was
//! written by the session's program inside the Agent Sandbox and is hostile (SR-1). The line
//! format ([`ScreenLine`]) is therefore checked again wherever it is turned into terminal bytes:
//! [`ScreenSnapshot::to_ansi`] lets through printable characters and well-formed SGR sequences
//! only, whatever the snapshot holds.

mod ansi;
mod damage;
mod line;

#[cfg(test)]
mod tests;

pub use damage::ScreenDamage;
pub use line::{LineItem, ScreenLine, MAX_SGR_LEN};

use serde::{Deserialize, Serialize};

/// One session's terminal state: size, visible lines, recent history, cursor and the modes a
/// client terminal must reproduce for the live output that follows to mean the same thing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenSnapshot {
    /// Screen height in rows.
    pub rows: u16,
    /// Screen width in columns.
    pub cols: u16,
    /// The visible screen, top row first; `rows` lines when built by the coordinator (a
    /// consumer draws at most `rows` and treats missing lines as blank).
    pub lines: Vec<ScreenLine>,
    /// Lines scrolled off the top of the primary screen, oldest first (at most the number the
    /// client asked for; empty while nothing scrolled or when none was asked for).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<ScreenLine>,
    /// Cursor position (0-based, clamped to the screen by consumers) and visibility.
    pub cursor: Cursor,
    /// Terminal modes the program set.
    pub modes: ScreenModes,
    /// The window title the program set (OSC 0/2), if any; never emitted by
    /// [`ScreenSnapshot::to_ansi`] — a client shows it its own way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// The cursor: 0-based row and column, visibility (DECTCEM) and shape (DECSCUSR, `None` when the
/// program never changed it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    pub row: u16,
    pub col: u16,
    pub visible: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<CursorShape>,
}

impl Default for Cursor {
    fn default() -> Self {
        Self {
            row: 0,
            col: 0,
            visible: true,
            shape: None,
        }
    }
}

/// Cursor shapes of DECSCUSR.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CursorShape {
    Block { blinking: bool },
    Underline { blinking: bool },
    Bar { blinking: bool },
}

/// Mouse reporting the program asked for (DECSET 1000 / 1002 / 1003; the highest wins).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MouseMode {
    #[default]
    Off,
    /// 1000: button presses and releases.
    Click,
    /// 1002: also motion while a button is held.
    Drag,
    /// 1003: all motion.
    Motion,
}

/// The modes a client must reproduce. Everything else (scroll region, origin mode, insert mode,
/// character sets, saved cursor) is not carried; see the coordinator's docs for the effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenModes {
    /// The alternate screen (DECSET 1049) is shown; it has no history.
    pub alt_screen: bool,
    /// Application cursor keys (DECCKM, DECSET 1).
    pub app_cursor: bool,
    /// Application keypad (DECKPAM, `ESC =`).
    pub app_keypad: bool,
    /// Bracketed paste (DECSET 2004).
    pub bracketed_paste: bool,
    /// Mouse reporting (DECSET 1000/1002/1003).
    pub mouse: MouseMode,
    /// SGR mouse encoding (DECSET 1006).
    pub sgr_mouse: bool,
    /// Focus in/out events (DECSET 1004).
    pub focus_events: bool,
    /// Auto-wrap (DECAWM, DECSET 7).
    pub autowrap: bool,
}

impl Default for ScreenModes {
    fn default() -> Self {
        Self {
            alt_screen: false,
            app_cursor: false,
            app_keypad: false,
            bracketed_paste: false,
            mouse: MouseMode::Off,
            sgr_mouse: false,
            focus_events: false,
            autowrap: true,
        }
    }
}

impl ScreenSnapshot {
    /// The bytes that make a fresh xterm-like terminal of the same size show this state, without
    /// the history.
    pub fn to_ansi(&self) -> Vec<u8> {
        self.to_ansi_with_history(false)
    }

    /// The bytes that make a fresh xterm-like terminal of the same size show this state; with
    /// `history`, the history lines are printed first so that they scroll into the terminal's
    /// own scrollback. See [`ansi`] for the sequence and what is filtered.
    pub fn to_ansi_with_history(&self, history: bool) -> Vec<u8> {
        ansi::render(self, history)
    }
}
