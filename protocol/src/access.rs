//! What a session's output may do to the developer's terminal: part of an Agent Profile, and
//! what every terminal front end (`lazaret run`, `lazaret attach`, a TUI pane) enforces.

use serde::{Deserialize, Serialize};

/// `[profiles.NAME.terminal]`: what the sandbox's output may do to the host terminal in
/// `lazaret run` beyond drawing (DX-4). All off by default; see the output filter of the
/// terminal front ends (lazaret-ui).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalAccess {
    /// OSC 52 (set and query the clipboard), OSC 5522, OSC 1337 `Copy`/`CopyToClipboard`.
    pub clipboard: bool,
    /// Desktop notifications: OSC 9, OSC 99, OSC 777, OSC 1337 `RequestAttention`.
    pub notifications: bool,
    /// OSC 8 hyperlinks with their targets; off: the link's text only, the target dropped (a
    /// link's text can name another place than it opens, `file://`, `vscode://`).
    #[serde(default)]
    pub hyperlinks: bool,
    /// Queries whose reply echoes text the sandbox chose back as the developer's input:
    /// DECRQSS (`DCS $ q`), XTGETTCAP (`DCS + q`), OSC 50 (font), CSI 20 t / CSI 21 t (icon
    /// label, window title).
    #[serde(default)]
    pub echo_queries: bool,
}

/// The descriptor a session's command inherits its terminal on, for `/dev/tty` (issue #16):
/// gVisor's own `/dev/tty` fails (`EIO`, and a host terminal is never a controlling terminal
/// there), so inside the sandbox `/dev/tty` is a symlink to `/proc/self/fd/255` and the
/// Escalation Client (`--keep-terminal`) starts each session's command with its terminal
/// duplicated on this descriptor (not close-on-exec). Opening `/proc/self/fd/N` of a terminal
/// opens that terminal again, so `tty`, `exec 3<>/dev/tty` and `read -s < /dev/tty` work.
/// bash moves its own high descriptors below one that is taken.
pub const TERMINAL_FD: i32 = 255;

/// Where `/dev/tty` points inside the sandbox.
pub const DEV_TTY_TARGET: &str = "/proc/self/fd/255";
