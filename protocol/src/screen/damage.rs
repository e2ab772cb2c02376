//! [`ScreenDamage`]: the rows of a session's screen that changed since a client's last update,
//! for a client whose terminal already shows the earlier state (a TUI pane fed screen updates).
//! A key's echo changes one row; sending that row instead of the whole screen keeps the
//! coordinator, the link and the pane's emulator off the keystroke's path.

use super::{Cursor, ScreenLine, ScreenModes};
use serde::{Deserialize, Serialize};

/// Changed rows with the cursor and modes now. Built by the coordinator only when the client's
/// screen has the same size and screen (primary or alternate) as when it last got the full
/// state; anything else (a scroll, a resize, the alternate screen switched) is a full redraw.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenDamage {
    pub rows: u16,
    pub cols: u16,
    /// The changed rows (0-based row, its content now), each drawn whole.
    pub lines: Vec<(u16, ScreenLine)>,
    pub cursor: Cursor,
    pub modes: ScreenModes,
}

impl ScreenDamage {
    /// The bytes that bring a terminal showing the earlier state to this one: each changed row
    /// erased and drawn at its absolute position, then the modes and the cursor. Line text goes
    /// through [`ScreenLine::items`] (printable characters and SGR only), as in a full redraw.
    pub fn to_ansi(&self) -> Vec<u8> {
        super::ansi::render_damage(self)
    }
}
