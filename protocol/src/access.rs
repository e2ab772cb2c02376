//! What a session's output may do to the developer's terminal: part of an Agent Profile, and
//! what every terminal front end (`lazaret run`, `lazaret attach`, a TUI pane) enforces.

use serde::{Deserialize, Serialize};

/// `[profiles.NAME.terminal]`: what the sandbox's output may do to the host terminal in
/// `lazaret run` beyond drawing (DX-4). Both off by default; see the output filter of the terminal front ends (lazaret-ui).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalAccess {
    /// OSC 52 (set and query the clipboard), OSC 5522, OSC 1337 `Copy`/`CopyToClipboard`.
    pub clipboard: bool,
    /// Desktop notifications: OSC 9, OSC 99, OSC 777, OSC 1337 `RequestAttention`.
    pub notifications: bool,
}
