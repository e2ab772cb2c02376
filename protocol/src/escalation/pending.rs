//! Escalation prompts as a client outside the session sees them (issue #15): the waiting
//! prompts a coordinator lists (`lazaret escalations`), and its answer to a decision sent from
//! any terminal (`lazaret approve`, `lazaret deny`).

use super::EscalationPrompt;
use serde::{Deserialize, Serialize};

/// A prompt waiting for its first decision. Everything in `prompt` but `profile` and
/// `host_cwd` was chosen by the sandbox: shown escaped, never raw.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PendingEscalation {
    pub prompt: EscalationPrompt,
    /// Seconds since the prompt was shown.
    pub age_secs: u32,
    /// Seconds left for the decision (and the command) before the request times out.
    pub seconds_left: u32,
}

/// The coordinator's answer to a decision sent with `decide_escalation`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case", deny_unknown_fields)]
pub enum DecideAnswer {
    /// This decision was the first: it is carried out.
    Decided {},
    /// Another client decided first: `decision` ("approved", "denied", …) `by` whom (e.g.
    /// "in a control centre (lazaret tui, client 3fa9c1d2)").
    AlreadyDecided { decision: String, by: String },
    /// Nobody decided in time.
    TimedOut {},
    /// It ended without a decision otherwise (cancelled, its session ended): `reason`.
    Withdrawn { reason: String },
    /// This coordinator knows no such request (never asked, or forgotten long ago).
    Unknown {},
    /// The decision cannot be taken now (e.g. the Domain is not ready): `reason`.
    Refused { reason: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_have_a_stable_wire_form() {
        let a = DecideAnswer::AlreadyDecided {
            decision: "denied".into(),
            by: "in a control centre (lazaret tui, client 3fa9c1d2)".into(),
        };
        let json = serde_json::to_string(&a).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"outcome":"already_decided","decision":"denied","by":"in a control centre (lazaret tui, client 3fa9c1d2)"}"#
        );
        let back: Result<DecideAnswer, _> = serde_json::from_str(r#"{"outcome":"decided"}"#);
        assert_eq!(back.ok(), Some(DecideAnswer::Decided {}));
        assert!(serde_json::from_str::<DecideAnswer>(r#"{"outcome":"timed_out","x":1}"#).is_err());
    }
}
