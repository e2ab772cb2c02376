//! A connection or DNS name the Network Sidecar holds under `default = "ask"` (issue #17):
//! neither accepted nor refused until the developer decides (`lazaret net allow` / `deny`,
//! the TUI's denials panel) or its time runs out. What `lazaret net held` prints and the
//! control centres show.
//!
//! The destination and the name were chosen by the sandbox: show them escaped.

use serde::{Deserialize, Serialize};

/// One held destination or name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldEntry {
    /// What `lazaret net allow` and `lazaret net deny` take: `ADDR:PORT` or a DNS name.
    pub target: String,
    /// `tcp`, `udp` or `dns`.
    pub protocol: String,
    /// When it was first held (Unix seconds).
    pub since: u64,
    /// When it is refused if nobody decides (Unix seconds).
    pub deadline: u64,
    /// Packets (connection attempts, retransmissions) or queries held so far.
    pub count: u64,
}

/// The most held entries a message carries.
pub const MAX_HELD_ENTRIES: usize = 64;
