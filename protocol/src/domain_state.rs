//! A Domain's state as its Session Coordinator reports it to control centres (the TUI's
//! Domain panel): coordinator, containers, sessions, State Anchor usage, failures.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A State Anchor: its container path and the size of what the Domain changed in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnchorSize {
    pub path: PathBuf,
    pub bytes: u64,
    /// Some entries could not be read (owned by another uid of the sandbox): at least `bytes`.
    pub partial: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DomainView {
    pub domain_id: String,
    pub profile: String,
    pub workspace: PathBuf,
    pub fingerprint: String,
    /// The coordinator's pid and whether it is alive (None: no status file, not running).
    pub coordinator: Option<(u32, bool)>,
    pub sandbox_running: bool,
    pub sidecar_running: bool,
    /// Session IDs and their commands.
    pub sessions: Vec<(String, Vec<String>)>,
    pub anchors: Vec<AnchorSize>,
    pub failures: Vec<String>,
    /// Ports of the sandbox published on the host (`lazaret port publish`).
    #[serde(default)]
    pub ports: Vec<crate::messages::PublishedPort>,
    /// Destinations allowed for this run (`lazaret net allow`): `ADDR`, `ADDR:PORT`, `NAME`.
    #[serde(default)]
    pub run_allowed: Vec<String>,
}
