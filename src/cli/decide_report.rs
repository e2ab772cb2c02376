//! What `lazaret approve` and `lazaret deny` report: the coordinator's answer in words (or
//! JSON), and the exit status of each outcome (documented in docs/escalation.md).

use crate::terminal::escape::visible;
use lazaret_client::locate::RunningDomain;
use lazaret_protocol::escalation::{DecideAnswer, Decision};

/// Exit status: the request was decided by this command.
pub const EXIT_DECIDED: i32 = 0;
/// Exit status: the ID (or prefix) names no waiting request, and no coordinator knows it.
pub const EXIT_UNKNOWN: i32 = 3;
/// Exit status: another client decided the request first.
pub const EXIT_ALREADY_DECIDED: i32 = 4;
/// Exit status: the request no longer waits: it timed out, or it was cancelled (its session
/// ended).
pub const EXIT_ENDED: i32 = 5;
/// Exit status: the request ID or the edited command is malformed, or the prefix is ambiguous.
pub const EXIT_USAGE: i32 = 2;
/// Exit status: nothing was decided because the request is not the one shown: its command
/// digest differs from `--expect-argv-hash`, or the prefix typed named another request when
/// `lazaret escalations` listed it.
pub const EXIT_CHANGED: i32 = 6;
/// Exit status: Lazaret failed (as for every verb; e.g. the Domain takes no decisions now).
pub const EXIT_FAILED: i32 = 125;

/// What the command reports, and its exit status.
#[derive(Debug, PartialEq, Eq)]
pub struct Report {
    pub code: i32,
    pub text: String,
}

/// The report of a coordinator's `answer` to `decision` on `request_id`.
pub fn report(request_id: &str, decision: &Decision, answer: &DecideAnswer) -> Report {
    let short = request_id.get(..12).unwrap_or(request_id);
    let done = match decision {
        Decision::Approve {} => "approved",
        Decision::Edit { .. } => "approved with an edited command",
        Decision::Deny {} => "denied",
    };
    match answer {
        DecideAnswer::Decided {} => Report {
            code: EXIT_DECIDED,
            text: format!("{done} escalation request {short}"),
        },
        DecideAnswer::AlreadyDecided { decision, by } => Report {
            code: EXIT_ALREADY_DECIDED,
            text: format!(
                "escalation request {short} was already {} {}; this decision changed nothing",
                visible(decision),
                visible(by)
            ),
        },
        DecideAnswer::TimedOut {} => Report {
            code: EXIT_ENDED,
            text: format!(
                "escalation request {short} timed out before a decision; the sandbox can ask \
                 again"
            ),
        },
        DecideAnswer::Withdrawn { reason } => Report {
            code: EXIT_ENDED,
            text: format!(
                "escalation request {short} no longer waits: {}",
                visible(reason)
            ),
        },
        DecideAnswer::Unknown {} => Report {
            code: EXIT_UNKNOWN,
            text: format!(
                "no running Domain knows escalation request {short}: see `lazaret escalations` \
                 for the waiting ones (a plain `lazaret run` asks on its own terminal only)"
            ),
        },
        DecideAnswer::Refused { reason } => Report {
            code: EXIT_FAILED,
            text: format!(
                "escalation request {short} was not decided: {}",
                visible(reason)
            ),
        },
    }
}

/// Prints the outcome (JSON on stdout with `json`; else the text, on stderr unless decided);
/// returns the exit status.
pub fn emit(
    json: bool,
    request_id: &str,
    domain: Option<&RunningDomain>,
    answer: &DecideAnswer,
    report: Report,
) -> i32 {
    if json {
        let mut doc = serde_json::to_value(answer).unwrap_or_default();
        if let Some(o) = doc.as_object_mut() {
            o.insert("request_id".into(), request_id.into());
            o.insert("exit_status".into(), report.code.into());
            o.insert("message".into(), report.text.clone().into());
            if let Some(d) = domain {
                o.insert("domain_id".into(), d.status.domain_id.clone().into());
                o.insert(
                    "workspace".into(),
                    d.status.workspace.display().to_string().into(),
                );
            }
        }
        match super::safe_json::to_string(&doc) {
            Ok(text) => crate::say_out!("{text}"),
            Err(e) => crate::say!("lazaret: {e:#}"),
        }
    } else if report.code == EXIT_DECIDED {
        crate::say_out!("lazaret: {}", report.text);
    } else {
        crate::say!("lazaret: {}", report.text);
    }
    report.code
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn each_outcome_has_its_documented_exit_status_and_says_what_happened() {
        let approve = Decision::Approve {};
        let r = report(ID, &approve, &DecideAnswer::Decided {});
        assert_eq!(r.code, 0);
        assert_eq!(r.text, "approved escalation request 0123456789ab");
        let r = report(ID, &Decision::Deny {}, &DecideAnswer::Decided {});
        assert_eq!(r.text, "denied escalation request 0123456789ab");
        let earlier = DecideAnswer::AlreadyDecided {
            decision: "denied".into(),
            by: "in a control centre (lazaret tui, client 3fa9c1d2)".into(),
        };
        let r = report(ID, &approve, &earlier);
        assert_eq!(r.code, EXIT_ALREADY_DECIDED);
        assert_eq!(
            r.text,
            "escalation request 0123456789ab was already denied in a control centre (lazaret \
             tui, client 3fa9c1d2); this decision changed nothing"
        );
        assert_eq!(
            report(ID, &approve, &DecideAnswer::TimedOut {}).code,
            EXIT_ENDED
        );
        let gone = DecideAnswer::Withdrawn {
            reason: "the session ended; its request was cancelled".into(),
        };
        let r = report(ID, &approve, &gone);
        assert_eq!(r.code, EXIT_ENDED);
        assert!(r
            .text
            .ends_with("no longer waits: the session ended; its request was cancelled"));
        assert_eq!(
            report(ID, &approve, &DecideAnswer::Unknown {}).code,
            EXIT_UNKNOWN
        );
        let refused = DecideAnswer::Refused {
            reason: "not ready\u{1b}]0;x".into(),
        };
        let r = report(ID, &approve, &refused);
        assert_eq!(r.code, EXIT_FAILED);
        assert!(r.text.contains(r"\u{1b}]0;x"), "{}", r.text);
    }
}
