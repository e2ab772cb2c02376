//! Unit tests of the coordinator core's viewers (issue #14): attach, detach, control centres,
//! detached sessions, and first-decision-wins for escalation prompts.

use super::core::{Reason, Rejected};
use super::core_tests::{correlated, ok, ready, rejected, C1, C2, R1, R2};
use super::effect::Effect;
use super::event::Event;
use super::state::{CliStatus, Phase, RequestState, State};
use super::trace::{replay, Nonconformance, Trace};
use super::viewers::{Decider, View, ViewerId};

const V1: ViewerId = ViewerId(1);
const V2: ViewerId = ViewerId(2);
const V3: ViewerId = ViewerId(3);

/// A ready Domain with `clis` sessions and R1 of C1 prompting.
fn prompting(clis: u64) -> State {
    let mut s = ready(clis);
    correlated(&mut s, R1, C1, false);
    ok(&mut s, Event::Prompt { request: R1 });
    s
}

#[test]
fn a_decision_by_a_viewer_that_does_not_see_the_prompt_is_refused() {
    let mut s = prompting(2);
    ok(
        &mut s,
        Event::Attach {
            viewer: V1,
            cli: C2,
        },
    );
    for by in [V1, V2] {
        assert_eq!(
            rejected(
                &mut s,
                Event::Approve {
                    request: R1,
                    by: Some(by)
                }
            ),
            Reason::NotSeen {
                request: R1,
                decider: Decider::Viewer(by)
            },
            "{by} sees another session's prompt, or none"
        );
    }
    // A control centre sees every session's prompts.
    assert_eq!(
        ok(&mut s, Event::Watch { viewer: V3 }),
        vec![Effect::OfferPrompt {
            viewer: V3,
            request: R1
        }]
    );
    ok(
        &mut s,
        Event::Edit {
            request: R1,
            by: Some(V3),
        },
    );
    assert_eq!(s.requests[&R1].decided_by, Some(Decider::Viewer(V3)));
    assert!(s.requests[&R1].decider_saw);
}

#[test]
fn the_first_decision_wins_and_later_ones_are_refused() {
    let mut s = ready(1);
    ok(
        &mut s,
        Event::Attach {
            viewer: V1,
            cli: C1,
        },
    );
    ok(
        &mut s,
        Event::Attach {
            viewer: V2,
            cli: C1,
        },
    );
    correlated(&mut s, R1, C1, false);
    assert_eq!(
        ok(&mut s, Event::Prompt { request: R1 }),
        vec![
            Effect::ShowPrompt {
                session: C1,
                request: R1
            },
            Effect::OfferPrompt {
                viewer: V1,
                request: R1
            },
            Effect::OfferPrompt {
                viewer: V2,
                request: R1
            },
        ]
    );
    assert_eq!(
        ok(
            &mut s,
            Event::Approve {
                request: R1,
                by: Some(V2)
            }
        ),
        vec![
            Effect::WithdrawPrompt { request: R1 },
            Effect::ReturnTerminal { session: C1 }
        ]
    );
    let late = Reason::RequestState(R1, Some(RequestState::Approved));
    for event in [
        Event::Deny {
            request: R1,
            by: Some(V1),
        },
        Event::Approve {
            request: R1,
            by: None,
        },
        Event::Edit {
            request: R1,
            by: Some(V2),
        },
        Event::Timeout { request: R1 },
    ] {
        assert_eq!(rejected(&mut s, event), late, "{event:?}");
    }
    let r = s.requests[&R1];
    assert_eq!(r.decided_by, Some(Decider::Viewer(V2)));
    assert_eq!(r.decisions, 1);
    ok(&mut s, Event::Execute { request: R1 });
}

#[test]
fn the_sessions_own_terminal_decides_while_the_session_runs() {
    let mut s = prompting(1);
    ok(
        &mut s,
        Event::Deny {
            request: R1,
            by: None,
        },
    );
    assert_eq!(s.requests[&R1].decided_by, Some(Decider::Terminal));
    assert_eq!(s.requests[&R1].state, RequestState::Resolved);
}

#[test]
fn a_detached_sessions_prompt_waits_and_is_offered_on_attach() {
    let mut s = prompting(1);
    assert_eq!(s.requests[&R1].state, RequestState::Prompting);
    assert_eq!(
        ok(
            &mut s,
            Event::Attach {
                viewer: V1,
                cli: C1
            }
        ),
        vec![
            Effect::AttachViewer {
                viewer: V1,
                session: C1
            },
            Effect::OfferPrompt {
                viewer: V1,
                request: R1
            },
        ]
    );
    ok(&mut s, Event::Detach { viewer: V1 });
    // Nobody decided: the deadline does, and records no decider.
    ok(&mut s, Event::Timeout { request: R1 });
    assert_eq!(s.requests[&R1].decided_by, None);
    assert_eq!(s.requests[&R1].decisions, 1);
}

#[test]
fn detaching_never_ends_a_session() {
    let mut s = ready(1);
    ok(
        &mut s,
        Event::Attach {
            viewer: V1,
            cli: C1,
        },
    );
    assert_eq!(
        rejected(
            &mut s,
            Event::Attach {
                viewer: V1,
                cli: C1
            }
        ),
        Reason::ViewerState(V1, Some(View::Session(C1)))
    );
    assert_eq!(
        ok(&mut s, Event::Detach { viewer: V1 }),
        vec![Effect::DetachViewer { viewer: V1 }]
    );
    assert_eq!(s.cli_status(C1), Some(CliStatus::Registered));
    assert_eq!(
        rejected(&mut s, Event::Detach { viewer: V1 }),
        Reason::ViewerState(V1, None)
    );
    // Re-attach.
    ok(
        &mut s,
        Event::Attach {
            viewer: V1,
            cli: C1,
        },
    );
    assert_eq!(s.viewers[&V1], View::Session(C1));
}

#[test]
fn the_domain_is_not_torn_down_while_a_detached_session_runs() {
    let mut s = ready(2);
    ok(&mut s, Event::Watch { viewer: V1 });
    assert_eq!(
        rejected(&mut s, Event::BeginTeardown),
        Reason::DomainInUse,
        "two detached sessions and a control centre"
    );
    ok(&mut s, Event::Leave { cli: C1 });
    assert_eq!(rejected(&mut s, Event::BeginTeardown), Reason::DomainInUse);
    ok(&mut s, Event::Leave { cli: C2 });
    // A control centre does not keep the Domain: it is disconnected.
    let effects = ok(&mut s, Event::BeginTeardown);
    assert!(effects.contains(&Effect::DetachViewer { viewer: V1 }));
    assert!(s.viewers.is_empty());
    assert_eq!(
        rejected(&mut s, Event::Watch { viewer: V1 }),
        Reason::Phase(Phase::Draining)
    );
}

#[test]
fn leave_detaches_the_sessions_viewers_only() {
    let mut s = ready(2);
    ok(
        &mut s,
        Event::Attach {
            viewer: V1,
            cli: C1,
        },
    );
    ok(
        &mut s,
        Event::Attach {
            viewer: V2,
            cli: C2,
        },
    );
    ok(&mut s, Event::Watch { viewer: V3 });
    let effects = ok(&mut s, Event::Leave { cli: C1 });
    assert_eq!(
        effects,
        vec![
            Effect::DetachViewer { viewer: V1 },
            Effect::Disconnect { session: C1 }
        ]
    );
    assert_eq!(s.viewers.get(&V1), None);
    assert_eq!(s.viewers[&V2], View::Session(C2));
    assert_eq!(s.viewers[&V3], View::Centre);
    assert_eq!(
        rejected(
            &mut s,
            Event::Attach {
                viewer: V1,
                cli: C1
            }
        ),
        Reason::CliState(C1, Some(CliStatus::Left))
    );
}

#[test]
fn a_failure_detaches_every_viewer() {
    let mut s = prompting(2);
    ok(
        &mut s,
        Event::Attach {
            viewer: V1,
            cli: C1,
        },
    );
    ok(&mut s, Event::Watch { viewer: V2 });
    let effects = ok(&mut s, Event::Fail);
    assert!(effects.contains(&Effect::DetachViewer { viewer: V1 }));
    assert!(effects.contains(&Effect::DetachViewer { viewer: V2 }));
    assert!(effects.contains(&Effect::WithdrawPrompt { request: R1 }));
    assert!(s.viewers.is_empty());
}

/// Real runs allocate viewer ids without bound; traces before issue #14 have no `by`.
const VIEWER_TRACE: &str = r#"{"action":"Start","cli":1}
{"action":"BecomeLeader","cli":1}
{"action":"MountStateAnchor"}
{"action":"StartSidecar"}
{"action":"InstallPolicy"}
{"action":"StartSandbox"}
{"action":"Publish"}
{"action":"Register","cli":1}
{"action":"Attach","viewer":4000000000,"cli":1}
{"action":"Watch","viewer":17}
{"action":"Submit","request":1,"cli":1,"signature_valid":true,"rule_match":false}
{"action":"Authenticate","request":1}
{"action":"Correlate","request":1}
{"action":"Prompt","request":1}
{"action":"Approve","request":1}
{"action":"Submit","request":2,"cli":1,"signature_valid":true,"rule_match":false}
{"action":"Authenticate","request":2}
{"action":"Correlate","request":2}
{"action":"Prompt","request":2}
{"action":"Deny","request":2,"by":4000000000}
{"action":"Detach","viewer":4000000000}
{"action":"Leave","cli":1}
"#;

#[test]
fn traces_with_viewers_replay_and_old_decision_lines_parse() {
    let trace = match Trace::from_jsonl(VIEWER_TRACE) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    let end = match replay(&trace) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(end.requests[&R1].decided_by, Some(Decider::Terminal));
    assert_eq!(
        end.requests[&R2].decided_by,
        Some(Decider::Viewer(ViewerId(4_000_000_000)))
    );
    assert_eq!(end.viewers.get(&ViewerId(17)), Some(&View::Centre));
    let text = trace.to_jsonl().unwrap_or_default();
    assert_eq!(Trace::from_jsonl(&text).ok(), Some(trace));
}

#[test]
fn a_trace_with_a_second_decision_does_not_conform() {
    let bad = VIEWER_TRACE.replace(
        r#"{"action":"Detach","viewer":4000000000}"#,
        r#"{"action":"Approve","request":2,"by":17}"#,
    );
    let trace = Trace::from_jsonl(&bad).unwrap_or_default();
    let err = replay(&trace).err();
    assert_eq!(err.map(|e| e.index), Some(20));
    assert_eq!(
        err.map(|e| e.cause),
        Some(Nonconformance::NotEnabled(Rejected {
            action: "Approve",
            reason: Reason::RequestState(R2, Some(RequestState::Resolved))
        }))
    );
}
