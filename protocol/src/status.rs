//! A running Domain's published status (`status.json` in its runtime dir), written by its
//! Session Coordinator and read by `lazaret ps`, `lazaret attach` and the session picker.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

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
    /// Whether the session's process still runs and nobody ended it: false from the moment a
    /// client ends it (its processes are being hung up; it takes no new attachments) until it
    /// has left the Domain, which it does as soon as its process ended. Absent in the status of
    /// an older coordinator: then true (it listed running sessions only).
    #[serde(default = "yes")]
    pub running: bool,
    /// Where the client that last showed it put it (opaque; a TUI's tab and split).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub layout_hint: String,
}

fn yes() -> bool {
    true
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
    /// Reads a status file; None when it is missing or malformed (a coordinator that is
    /// starting or went away).
    pub fn read(path: &std::path::Path) -> Option<DomainStatus> {
        let text = std::fs::read_to_string(path).ok()?;
        serde_json::from_str(&text).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_of_an_older_status_file_is_running() {
        let old =
            r#"{"session_id":"s","client_cli_id":"c","command":["bash"],"started_unix_ms":1}"#;
        let s: SessionStatus = serde_json::from_str(old).expect("an older session status");
        assert!(s.running);
        let ended = r#"{"session_id":"s","client_cli_id":"c","command":[],"started_unix_ms":1,"running":false}"#;
        let s: SessionStatus = serde_json::from_str(ended).expect("a session status");
        assert!(!s.running);
        let json = serde_json::to_value(&s).expect("json");
        assert_eq!(json["running"], false);
    }
}
