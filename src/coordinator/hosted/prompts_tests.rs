//! Tests of the prompt board.

use super::prompts::*;
use super::viewer::Outbound;
use crate::escalation::routing::Decided;
use lazaret_protocol::escalation::EscalationPrompt;
use lazaret_protocol::messages::CoordinatorMessage;

use lazaret_protocol::escalation::{DecideAnswer, Decision};
use tokio::sync::mpsc;

fn d(decision: Decision) -> Decided {
    Decided::own(decision)
}

fn by<'a>(label: &'a str, client: &'a str) -> Decider<'a> {
    Decider { label, client }
}

#[test]
fn the_withdrawal_says_what_was_decided_and_by_which_kind_of_client() {
    let id = "0123456789abcdef0123456789abcdef";
    let cases = [
        (
            Decision::Approve {},
            "tui",
            "decided elsewhere: approved in a control centre (lazaret tui, client 01234567)",
        ),
        (
            Decision::Deny {},
            "attach",
            "decided elsewhere: denied in an attached terminal (lazaret attach, client 01234567)",
        ),
        (
            Decision::Edit {
                argv: vec!["ls".into()],
            },
            "run",
            "decided elsewhere: approved with an edited command in the terminal that started \
             the session (lazaret run --detachable, client 01234567)",
        ),
        (
            Decision::Approve {},
            "cli",
            "decided elsewhere: approved from the command line (lazaret approve, client 01234567)",
        ),
        (
            Decision::Deny {},
            "cli",
            "decided elsewhere: denied from the command line (lazaret deny, client 01234567)",
        ),
        (
            Decision::Approve {},
            "\x1b]0;odd",
            "decided elsewhere: approved in another client (client 01234567)",
        ),
    ];
    for (decision, label, want) in cases {
        assert_eq!(decided_elsewhere(&decision, &by(label, id)), want);
    }
}

/// A prompt of request `id` of session `session` (also for the driver's tests).
pub(crate) fn prompt(id: &str, session: &str) -> EscalationPrompt {
    EscalationPrompt {
        request_id: id.into(),
        profile: "p".into(),
        session_id: session.into(),
        argv: vec!["true".into()],
        program: String::new(),
        cwd: "/workspace".into(),
        host_cwd: "/w".into(),
        justification: String::new(),
        timeout_secs: 60,
        warnings: vec![],
    }
}

fn kinds(rx: &mut mpsc::UnboundedReceiver<Outbound>) -> Vec<String> {
    let mut out = Vec::new();
    while let Ok(Outbound::Message(m)) = rx.try_recv() {
        out.push(match m {
            CoordinatorMessage::EscalationPrompt { prompt } => {
                format!("ask {}", prompt.request_id)
            }
            CoordinatorMessage::EscalationWithdrawn { request_id, reason } => {
                format!("withdrawn {request_id}: {reason}")
            }
            other => format!("{other:?}"),
        });
    }
    out
}

#[test]
fn the_first_decision_wins_and_the_prompt_is_withdrawn_from_the_others() {
    let mut board = PromptBoard::default();
    let (a, mut ra) = mpsc::unbounded_channel();
    let (b, mut rb) = mpsc::unbounded_channel();
    let (reply, answer) = std::sync::mpsc::channel();
    board.ask("s1", prompt("r1", "s1"), reply, vec![(1, a), (2, b)]);
    assert_eq!(kinds(&mut ra), ["ask r1"]);
    assert_eq!(kinds(&mut rb), ["ask r1"]);
    assert_eq!(
        board.decide("r1", 2, &by("tui", "c2"), d(Decision::Deny {})),
        Ok(())
    );
    assert_eq!(
        board.decide("r1", 1, &by("attach", "c1"), d(Decision::Approve {})),
        Err(NotTaken::Unknown),
        "a second decision is not taken"
    );
    assert_eq!(answer.try_recv().map(|d| d.decision), Ok(Decision::Deny {}));
    assert!(
        answer.try_recv().is_err(),
        "exactly one decision reaches the request"
    );
    assert!(
        kinds(&mut ra).is_empty(),
        "the prompt is withdrawn by the core's step, not before"
    );
    assert_eq!(board.withdraw("r1", "decided elsewhere", true), 1);
    assert_eq!(
        kinds(&mut ra),
        ["withdrawn r1: decided elsewhere: denied in a control centre (lazaret tui, client c2)"]
    );
    assert!(
        kinds(&mut rb).is_empty(),
        "the decider closes its own prompt"
    );
}

#[test]
fn a_client_that_was_not_offered_the_prompt_cannot_decide_it() {
    let mut board = PromptBoard::default();
    let (a, _ra) = mpsc::unbounded_channel();
    let (reply, answer) = std::sync::mpsc::channel();
    board.ask("s1", prompt("r1", "s1"), reply, vec![(1, a)]);
    assert_eq!(
        board.decide("r1", 9, &by("x", "c9"), d(Decision::Approve {})),
        Err(NotTaken::NotOffered)
    );
    assert!(answer.try_recv().is_err());
    assert_eq!(board.waiting(), ["r1"]);
}

#[test]
fn a_prompt_of_a_detached_session_waits_for_a_client_that_attaches_later() {
    let mut board = PromptBoard::default();
    let (reply, answer) = std::sync::mpsc::channel();
    board.ask("s1", prompt("r1", "s1"), reply, vec![]);
    let (other, mut ro) = mpsc::unbounded_channel();
    board.offer("r9", 3, &other);
    assert!(
        kinds(&mut ro).is_empty(),
        "an unknown prompt is offered to nobody"
    );
    let (late, mut rl) = mpsc::unbounded_channel();
    board.offer("r1", 4, &late);
    board.offer("r1", 4, &late);
    assert_eq!(kinds(&mut rl), ["ask r1"], "offered once");
    assert_eq!(
        board.decide("r1", 4, &by("tui", "c4"), d(Decision::Approve {})),
        Ok(())
    );
    assert_eq!(
        answer.try_recv().map(|d| d.decision),
        Ok(Decision::Approve {})
    );
}

#[test]
fn withdrawing_tells_every_client_and_forgetting_a_client_removes_its_right_to_decide() {
    let mut board = PromptBoard::default();
    let (a, mut ra) = mpsc::unbounded_channel();
    let (reply, _answer) = std::sync::mpsc::channel();
    board.ask(
        "s1",
        prompt("r1", "s1"),
        reply.clone(),
        vec![(1, a.clone())],
    );
    board.forget(1, Some("s1"));
    assert_eq!(
        board.decide("r1", 1, &by("x", "c1"), d(Decision::Approve {})),
        Err(NotTaken::NotOffered)
    );
    board.ask("s1", prompt("r2", "s1"), reply, vec![(1, a)]);
    assert_eq!(board.withdraw("r2", "no decision in time", false), 1);
    let got = kinds(&mut ra);
    assert_eq!(
        got.last().map(String::as_str),
        Some("withdrawn r2: no decision in time")
    );
    assert!(board.waiting().iter().all(|r| r != "r2"));
}

#[test]
fn a_prompt_withdrawn_for_another_reason_after_a_decision_spares_the_decider() {
    let mut board = PromptBoard::default();
    let (a, mut ra) = mpsc::unbounded_channel();
    let (b, mut rb) = mpsc::unbounded_channel();
    let (reply, _answer) = std::sync::mpsc::channel();
    board.ask("s1", prompt("r1", "s1"), reply, vec![(1, a), (2, b)]);
    assert_eq!(
        board.decide("r1", 1, &by("tui", "c1"), d(Decision::Approve {})),
        Ok(())
    );
    assert_eq!(
        board.withdraw("r1", "the session ended; its request was cancelled", false),
        1
    );
    assert_eq!(kinds(&mut ra), ["ask r1"]);
    assert_eq!(
        kinds(&mut rb),
        [
            "ask r1",
            "withdrawn r1: the session ended; its request was cancelled"
        ]
    );
    assert_eq!(board.withdraw("r1", "again", false), 0);
    assert!(kinds(&mut rb).is_empty(), "withdrawn once");
}

#[test]
fn a_late_decider_learns_who_decided_first_or_that_time_ran_out() {
    let mut board = PromptBoard::default();
    let (a, _ra) = mpsc::unbounded_channel();
    let (reply, _answer) = std::sync::mpsc::channel();
    board.ask(
        "s1",
        prompt("r1", "s1"),
        reply.clone(),
        vec![(1, a.clone())],
    );
    board.ask("s1", prompt("r2", "s1"), reply, vec![(1, a)]);
    let listed: Vec<_> = board
        .list()
        .into_iter()
        .map(|p| p.prompt.request_id)
        .collect();
    assert_eq!(listed, ["r1", "r2"], "oldest first");
    assert!(board
        .list()
        .iter()
        .all(|p| p.seconds_left <= 60 && p.age_secs < 5));
    assert_eq!(
        board.decide("r1", 1, &by("cli", "c1234567890"), d(Decision::Deny {})),
        Ok(())
    );
    board.withdraw("r1", "decided elsewhere", true);
    board.withdraw("r2", "no decision in time", false);
    assert!(board.list().is_empty());
    assert!(!board.is_pending("r1"));
    assert_eq!(
        board.concluded("r1"),
        DecideAnswer::AlreadyDecided {
            decision: "denied".into(),
            by: "from the command line (lazaret deny, client c1234567)".into()
        }
    );
    assert_eq!(board.concluded("r2"), DecideAnswer::TimedOut {});
    assert_eq!(board.concluded("r3"), DecideAnswer::Unknown {});
}
