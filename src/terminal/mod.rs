//! The developer's terminal during `lazaret run` (FR-8, DX-5): a real PTY when stdin is a
//! terminal, plain pipes otherwise; the terminal is restored on every exit path.

pub mod cancel;
pub mod control_bytes;
pub mod escape;
pub mod gate;
pub mod guard;
pub mod line_editor;
pub mod output_filter;
pub mod passthrough;
pub mod prompt;
pub mod pty;
pub mod raw_mode;
pub mod signals;

use std::io::IsTerminal;

/// Whether `lazaret run` attaches the command to a PTY.
pub fn stdin_is_terminal() -> bool {
    std::io::stdin().is_terminal()
}
