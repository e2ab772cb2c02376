//! Lazaret's front ends (issue #14): the full-screen control centre `lazaret tui` ([`tui`]),
//! the plain terminal attached to a coordinator-owned session ([`attach`]), and the terminal
//! pieces `lazaret run` shares with them ([`terminal`]: output filter, escalation prompts,
//! line editor, raw mode, signals).
//!
//! It depends on `lazaret-client` and `lazaret-protocol` only, never on the engine: what a
//! panel shows arrives as a protocol message, and what needs the engine (resolving a
//! workspace, starting a Domain) is asked of the [`lazaret_client::target::Launcher`] it is
//! given. It starts no process and reads no Domain state from files.

pub mod attach;
pub mod detach_key;
pub mod terminal;
pub mod tui;
