//! An Escalation Request on its way to the developer (FR-5, DX-4): what the coordinator sends
//! to the owning Client CLI to ask, and the decision that comes back.
//!
//! Everything in an [`EscalationPrompt`] except `profile` and `host_cwd` was chosen by the
//! sandbox; a client shows it escaped, never raw.

use super::{check_argv, RecordError};
use serde::{Deserialize, Serialize};

/// What the developer is asked about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EscalationPrompt {
    /// The request's ID as the coordinator minted it when it accepted the request: never the
    /// ID the sandbox chose, never reused in the coordinator's life (`docs/escalation.md`,
    /// "Request IDs"). Decisions name it.
    pub request_id: String,
    /// The Agent Profile of the Domain.
    pub profile: String,
    /// The requesting session: the one the prompt is sent to.
    pub session_id: String,
    /// The argument vector, exactly as requested.
    pub argv: Vec<String>,
    /// The host program `argv[0]` resolves to, as the coordinator resolved it (made by the
    /// coordinator from a sandbox-chosen name: shown escaped); empty when it resolved to none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub program: String,
    /// The working directory in the sandbox, as requested.
    pub cwd: String,
    /// Where the command would run on the host.
    pub host_cwd: String,
    pub justification: String,
    /// Seconds left for the decision and the command together.
    pub timeout_secs: u32,
    /// What the coordinator wants the developer to know before deciding, e.g. that the
    /// working directory lies in a repository the sandbox made. Such a request is never
    /// auto-approved. Made by the coordinator, but it may quote sandbox-chosen paths: shown
    /// escaped like the rest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Hex digits of a [`EscalationPrompt::digest`].
pub const DIGEST_HEX_LEN: usize = 12;

impl EscalationPrompt {
    /// A short digest of what an approval would run and where: SHA-256 over the argv, the
    /// resolved program and the host directory, each length-prefixed, as [`DIGEST_HEX_LEN`]
    /// hex digits. `lazaret escalations` shows it; `lazaret approve --expect-argv-hash`
    /// refuses a request whose digest differs, so a script binds to the exact command.
    pub fn digest(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        let mut field = |bytes: &[u8]| {
            h.update((bytes.len() as u64).to_be_bytes());
            h.update(bytes);
        };
        field(&(self.argv.len() as u64).to_be_bytes());
        for a in &self.argv {
            field(a.as_bytes());
        }
        field(self.program.as_bytes());
        field(self.host_cwd.as_bytes());
        h.finalize()
            .iter()
            .take(DIGEST_HEX_LEN / 2)
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// The developer's answer to an [`EscalationPrompt`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case", deny_unknown_fields)]
pub enum Decision {
    /// Run the argument vector as requested.
    Approve {},
    /// Run this argument vector instead (the result reports it as `ran_argv`).
    Edit { argv: Vec<String> },
    /// Do not run it.
    Deny {},
}

impl Decision {
    /// An edited argument vector must obey the rules of a requested one (non-empty, no NUL or
    /// newline bytes, bounded): it is executed as is and reported in the result.
    pub fn validate(&self) -> Result<(), RecordError> {
        match self {
            Decision::Edit { argv } => check_argv(argv),
            Decision::Approve {} | Decision::Deny {} => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_have_a_stable_wire_form() {
        let edit = Decision::Edit {
            argv: vec!["git".into(), "status".into()],
        };
        let json = serde_json::to_string(&edit).unwrap_or_default();
        assert_eq!(json, r#"{"decision":"edit","argv":["git","status"]}"#);
        let back: Decision =
            serde_json::from_str(r#"{"decision":"approve"}"#).unwrap_or(Decision::Deny {});
        assert_eq!(back, Decision::Approve {});
        assert!(serde_json::from_str::<Decision>(r#"{"decision":"deny","x":1}"#).is_err());
    }

    fn prompt(argv: &[&str], host_cwd: &str) -> EscalationPrompt {
        EscalationPrompt {
            request_id: "0".repeat(32),
            profile: "shell".into(),
            session_id: "s".into(),
            argv: argv.iter().map(|s| s.to_string()).collect(),
            program: "/usr/bin/git".into(),
            cwd: "/workspace".into(),
            host_cwd: host_cwd.into(),
            justification: "why".into(),
            timeout_secs: 60,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn the_digest_binds_the_argv_its_boundaries_and_the_place() {
        let base = prompt(&["git", "push"], "/home/dev/p");
        let d = base.digest();
        assert_eq!(d.len(), DIGEST_HEX_LEN);
        assert!(d.bytes().all(|b| b.is_ascii_hexdigit()));
        // Only what would run counts: the justification and the ID do not.
        let mut same = base.clone();
        same.justification = "other".into();
        same.request_id = "1".repeat(32);
        assert_eq!(same.digest(), d);
        for other in [
            prompt(&["git", "push", "-f"], "/home/dev/p"),
            prompt(&["git push"], "/home/dev/p"),
            prompt(&["gitp", "ush"], "/home/dev/p"),
            prompt(&["git", "push"], "/home/dev/q"),
        ] {
            assert_ne!(other.digest(), d, "{:?}", other.argv);
        }
        let mut elsewhere = base.clone();
        elsewhere.program = "/workspace/git".into();
        assert_ne!(elsewhere.digest(), d);
    }

    #[test]
    fn an_edited_argv_obeys_the_request_rules() {
        let bad = |argv: &[&str]| {
            Decision::Edit {
                argv: argv.iter().map(|s| s.to_string()).collect(),
            }
            .validate()
            .is_err()
        };
        assert!(bad(&[]));
        assert!(bad(&[""]));
        assert!(bad(&["echo", "a\nb"]));
        assert!(bad(&["echo", "a\0b"]));
        assert!(!bad(&["echo", "a b"]));
    }
}
