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
    /// When a coordinator-owned session last printed (Unix ms; 0: not yet), as the coordinator
    /// observed it; refreshed at most once a second while output flows.
    #[serde(default)]
    pub last_output_unix_ms: u64,
    /// Why the session's program called for the developer since a client last looked at it —
    /// `bell`, or `notification: TEXT` with the program's text escaped and capped; empty:
    /// nothing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub attention: String,
    /// Host Escalation requests of a coordinator-owned session waiting for the developer.
    #[serde(default)]
    pub pending_escalations: u32,
    /// The coordinator's threshold for this session: output older than this is `idle`
    /// (the profile's `[activity] idle_after`; 0 or absent: the default, 5 s).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub idle_after_ms: u64,
    /// Filled in by `lazaret ps --json` when it prints (derived from the fields above at that
    /// moment: `working`, `idle`, …); never written by the coordinator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity: Option<String>,
}

fn yes() -> bool {
    true
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl SessionStatus {
    /// A session just registered by `client_cli_id`: a plain `lazaret run` session, running,
    /// nothing observed yet (the coordinator fills in the rest as it learns it).
    pub fn registered(session_id: &str, client_cli_id: &str, started_unix_ms: u64) -> Self {
        SessionStatus {
            session_id: session_id.to_owned(),
            client_cli_id: client_cli_id.to_owned(),
            command: Vec::new(),
            started_unix_ms,
            hosted: false,
            attached: Vec::new(),
            started_by: "run".to_owned(),
            running: true,
            layout_hint: String::new(),
            last_output_unix_ms: 0,
            attention: String::new(),
            pending_escalations: 0,
            idle_after_ms: 0,
            activity: None,
        }
    }
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
    /// Seconds the Domain stays up after its last session (`linger`, issue #18); 0: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub linger_secs: u64,
    /// Seconds with every session detached and silent after which the Domain is stopped
    /// (`idle_stop`, issue #18); 0: never.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub idle_stop_secs: u64,
}

impl DomainStatus {
    /// Reads a status file; None when it is missing or malformed (a coordinator that is
    /// starting or went away).
    pub fn read(path: &std::path::Path) -> Option<DomainStatus> {
        let text = std::fs::read_to_string(path).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Whether a session other than those in `ended` is listed: the Domain stays up once those
    /// have left. (A session's clients learn that it exited before it leaves the Domain, so
    /// for a moment the status may still list it.)
    pub fn has_sessions_besides(&self, ended: &[String]) -> bool {
        self.sessions.iter().any(|s| !ended.contains(&s.session_id))
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

    #[test]
    fn only_sessions_besides_the_ended_ones_keep_the_domain() {
        let session = |id: &str| SessionStatus {
            hosted: true,
            started_by: "tui".into(),
            ..SessionStatus::registered(id, "c", 1)
        };
        let mut status = DomainStatus {
            domain_id: "d".into(),
            profile: "p".into(),
            workspace: "/w".into(),
            coordinator_pid: 1,
            coordinator_id: "c".into(),
            sandbox: "s".into(),
            sessions: vec![session("a"), session("b")],
            failures: vec![],
            linger_secs: 0,
            idle_stop_secs: 0,
        };
        let ended = |ids: &[&str]| ids.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(status.has_sessions_besides(&ended(&[])));
        assert!(status.has_sessions_besides(&ended(&["a"])));
        assert!(!status.has_sessions_besides(&ended(&["a", "b"])));
        status.sessions.clear();
        assert!(!status.has_sessions_besides(&ended(&[])));
    }
}
