//! The coordinator's published status, read by `lazaret ps`: one JSON file per running Domain,
//! replaced atomically on every change.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SessionStatus {
    pub session_id: String,
    pub client_cli_id: String,
    pub command: Vec<String>,
    pub started_unix_ms: u64,
    /// Owned by the coordinator, attachable (`lazaret attach`); else its `lazaret run` owns it.
    #[serde(default)]
    pub hosted: bool,
    /// Labels of the clients attached to a coordinator-owned session now.
    #[serde(default)]
    pub attached: Vec<String>,
    /// Label of the client that started it ("run", "tui", "attach").
    #[serde(default)]
    pub started_by: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct DomainStatus {
    pub domain_id: String,
    pub profile: String,
    pub workspace: PathBuf,
    pub coordinator_pid: u32,
    pub coordinator_id: String,
    pub sandbox: String,
    pub sessions: Vec<SessionStatus>,
    /// What went wrong while the Domain runs (e.g. the Network Sidecar died), oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
}

impl DomainStatus {
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, text + "\n")?;
        std::fs::rename(&tmp, path)
    }

    pub fn read(path: &Path) -> Option<DomainStatus> {
        let text = std::fs::read_to_string(path).ok()?;
        serde_json::from_str(&text).ok()
    }
}

/// Milliseconds since the Unix epoch, for status timestamps.
pub fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
