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
    pub request_id: String,
    /// The Agent Profile of the Domain.
    pub profile: String,
    /// The requesting session: the one the prompt is sent to.
    pub session_id: String,
    /// The argument vector, exactly as requested.
    pub argv: Vec<String>,
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
