//! The developer's terminal in front of a sandbox session (FR-8, DX-5, DX-4): what the
//! session's output may do to it (`output_filter`), escalation prompts that take it over for a
//! while (`gate`, `prompt`, `guard`, `line_editor`), the card of a connection held under
//! `default = "ask"` (`held_card`), the card of a Domain failure (`failure_card`), raw mode,
//! late input drained on the way out (`drain`) and signals.

pub mod card_text;
pub mod control_bytes;
pub mod drain;
pub mod escape;
pub mod failure_card;
pub mod gate;
pub mod guard;
pub mod held_card;
pub mod line_editor;
pub mod output_filter;
pub mod prompt;
pub mod raw_mode;
#[cfg(test)]
mod recorded_screen;
pub mod row_reset;
pub mod signals;
pub mod utf8_cut;

use std::io::IsTerminal;

/// Whether stdin is a terminal (a PTY is used then, pipes otherwise).
pub fn stdin_is_terminal() -> bool {
    std::io::stdin().is_terminal()
}
