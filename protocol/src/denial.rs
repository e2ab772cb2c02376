//! A network denial as the denial ledger aggregates it (spec §3.5): what `lazaret net denials`
//! prints and the TUI's denials panel shows.

use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;

/// An entry of the aggregated ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DenialEntry {
    pub first_seen: u64,
    pub last_seen: u64,
    pub protocol: String,
    pub address: Ipv4Addr,
    pub port: u16,
    pub rule: String,
    pub count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}
