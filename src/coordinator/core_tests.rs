//! Unit tests of the coordinator core's `step`: main paths, rejections, and trace replay.

use super::core::{enabled, next_stop, step, Reason, Rejected};
use super::effect::Effect;
use super::event::Event;
use super::invariants;
use super::state::{Approval, CliId, CliStatus, Outcome, Phase, RequestId, RequestState, State};
use super::trace::{replay, Nonconformance, Trace};

pub(super) const C1: CliId = CliId(1);
pub(super) const C2: CliId = CliId(2);
pub(super) const R1: RequestId = RequestId(1);
pub(super) const R2: RequestId = RequestId(2);

/// Applies `event`, which must be enabled and keep every invariant; returns its effects.
pub(super) fn ok(s: &mut State, event: Event) -> Vec<Effect> {
    match s.apply(&event) {
        Ok(effects) => {
            assert_eq!(invariants::violated(s), None, "after {event:?}: {s:#?}");
            effects
        }
        Err(e) => panic!("{event:?} rejected: {e}\n{s:#?}"),
    }
}

/// Applies `event`, which must be rejected without changing the state; returns the reason.
pub(super) fn rejected(s: &mut State, event: Event) -> Reason {
    let before = s.clone();
    let err = s.apply(&event).err();
    assert_eq!(*s, before, "a rejected {event:?} changed the state");
    assert!(!enabled(s, &event));
    match err {
        Some(Rejected { action, reason }) => {
            assert_eq!(action, event.name());
            reason
        }
        None => panic!("{event:?} was enabled"),
    }
}

/// A ready Domain led by C1 with `clis` registered Client Sessions C1, C2, …
pub(super) fn ready(clis: u64) -> State {
    let mut s = State::new();
    for i in 1..=clis {
        ok(&mut s, Event::Start { cli: CliId(i) });
    }
    ok(&mut s, Event::BecomeLeader { cli: C1 });
    for e in [
        Event::MountStateAnchor,
        Event::StartSidecar,
        Event::InstallPolicy,
        Event::StartSandbox,
        Event::Publish,
    ] {
        ok(&mut s, e);
    }
    for i in 1..=clis {
        ok(&mut s, Event::Register { cli: CliId(i) });
    }
    s
}

/// Submits `request` for `cli` with a valid signature and takes it to `Correlated`.
pub(super) fn correlated(s: &mut State, request: RequestId, cli: CliId, rule_match: bool) {
    ok(
        s,
        Event::Submit {
            request,
            cli,
            signature_valid: true,
            rule_match,
        },
    );
    ok(s, Event::Authenticate { request });
    let effects = ok(s, Event::Correlate { request });
    assert_eq!(
        effects,
        vec![Effect::RouteRequest {
            session: cli,
            request
        }]
    );
}

#[test]
fn startup_elects_one_leader_and_orders_resources() {
    let mut s = State::new();
    assert!(ok(&mut s, Event::Start { cli: C1 }).is_empty());
    ok(&mut s, Event::Start { cli: C2 });
    assert_eq!(
        ok(&mut s, Event::BecomeLeader { cli: C2 }),
        vec![Effect::CreateTrustAnchor]
    );
    assert_eq!(
        rejected(&mut s, Event::BecomeLeader { cli: C1 }),
        Reason::Phase(Phase::Starting)
    );
    assert_eq!(
        rejected(&mut s, Event::StartSidecar),
        Reason::Resource("the State Anchor is not mounted")
    );
    ok(&mut s, Event::MountStateAnchor);
    ok(&mut s, Event::StartSidecar);
    // SR-5: no sandbox before the sidecar's policy.
    assert_eq!(
        rejected(&mut s, Event::StartSandbox),
        Reason::Resource("the network policy is not installed")
    );
    assert_eq!(
        rejected(&mut s, Event::Register { cli: C1 }),
        Reason::Phase(Phase::Starting)
    );
    ok(&mut s, Event::InstallPolicy);
    assert_eq!(ok(&mut s, Event::StartSandbox), vec![Effect::StartSandbox]);
    assert_eq!(ok(&mut s, Event::Publish), vec![Effect::PublishEndpoint]);
    assert_eq!(
        ok(&mut s, Event::Register { cli: C1 }),
        vec![Effect::BindSession { cli: C1 }]
    );
    assert_eq!(s.leaders().collect::<Vec<_>>(), vec![C2]);
    assert_eq!(s.phase, Phase::Ready);
}

#[test]
fn cli_events_need_the_right_cli_state() {
    let mut s = ready(1);
    assert_eq!(
        rejected(&mut s, Event::Start { cli: C1 }),
        Reason::CliState(C1, Some(CliStatus::Registered))
    );
    assert_eq!(
        rejected(&mut s, Event::Leave { cli: C2 }),
        Reason::CliState(C2, None)
    );
    ok(&mut s, Event::Start { cli: C2 });
    assert_eq!(
        ok(&mut s, Event::Refuse { cli: C2 }),
        vec![Effect::RefuseSession { cli: C2 }]
    );
    assert_eq!(
        rejected(&mut s, Event::CancelJoin { cli: C2 }),
        Reason::CliState(C2, Some(CliStatus::Refused))
    );
}

#[test]
fn last_leave_tears_down_in_order_then_a_new_leader_may_start() {
    let mut s = ready(2);
    ok(&mut s, Event::Leave { cli: C1 });
    assert_eq!(rejected(&mut s, Event::BeginTeardown), Reason::DomainInUse);
    assert_eq!(
        ok(&mut s, Event::Leave { cli: C2 }),
        vec![Effect::Disconnect { session: C2 }]
    );
    assert_eq!(
        ok(&mut s, Event::BeginTeardown),
        vec![Effect::WithdrawPublication, Effect::InvalidateTrust]
    );
    // A CLI arriving now waits for the Domain to become absent.
    ok(&mut s, Event::Start { cli: CliId(3) });
    assert_eq!(
        rejected(&mut s, Event::StopSidecar),
        Reason::Resource("the Agent Sandbox still runs")
    );
    assert_eq!(
        rejected(&mut s, Event::ReachAbsent),
        Reason::Resource("the Agent Sandbox still runs")
    );
    ok(&mut s, Event::StopSandbox);
    assert_eq!(
        rejected(&mut s, Event::UnmountStateAnchor),
        Reason::Resource("the Network Sidecar still runs")
    );
    ok(&mut s, Event::StopSidecar);
    ok(&mut s, Event::UnmountStateAnchor);
    assert_eq!(
        ok(&mut s, Event::ReachAbsent),
        vec![Effect::ReleaseLifecycleLock]
    );
    assert!(invariants::absent_is_clean(&s));
    assert_eq!(s.leaders().count(), 0);
    ok(&mut s, Event::BecomeLeader { cli: CliId(3) });
}

#[test]
fn failure_withdraws_invalidates_disconnects_and_terminates_then_recovers() {
    let mut s = ready(2);
    ok(&mut s, Event::Start { cli: CliId(3) });
    correlated(&mut s, R1, C1, true);
    ok(&mut s, Event::AutoApprove { request: R1 });
    ok(&mut s, Event::Execute { request: R1 });
    assert_eq!(
        ok(&mut s, Event::Fail),
        vec![
            Effect::WithdrawPublication,
            Effect::InvalidateTrust,
            Effect::Disconnect { session: C1 },
            Effect::Disconnect { session: C2 },
            Effect::RefuseSession { cli: CliId(3) },
            Effect::TerminateHostProcess { request: R1 },
        ]
    );
    assert_eq!(s.requests[&R1].state, RequestState::Dropped);
    assert_eq!(s.cli_status(C1), Some(CliStatus::Disconnected));
    // Resources are not assumed gone: recovery stops them in order.
    assert!(s.sandbox && s.sidecar && s.state_anchor);
    assert_eq!(rejected(&mut s, Event::Fail), Reason::Phase(Phase::Failed));
    for e in [
        Event::StopSandbox,
        Event::StopSidecar,
        Event::UnmountStateAnchor,
        Event::ReachAbsent,
    ] {
        ok(&mut s, e);
    }
    assert_eq!(s.phase, Phase::Absent);
}

#[test]
fn failure_during_startup_is_recovered_from_what_exists() {
    let mut s = State::new();
    ok(&mut s, Event::Start { cli: C1 });
    ok(&mut s, Event::BecomeLeader { cli: C1 });
    ok(&mut s, Event::MountStateAnchor);
    ok(&mut s, Event::StartSidecar);
    assert_eq!(
        ok(&mut s, Event::Fail),
        vec![Effect::InvalidateTrust, Effect::RefuseSession { cli: C1 }]
    );
    assert_eq!(
        rejected(&mut s, Event::StopSandbox),
        Reason::Resource("the Agent Sandbox does not run")
    );
    let mut stops = Vec::new();
    while let Some(e) = next_stop(&s) {
        ok(&mut s, e);
        stops.push(e);
    }
    assert_eq!(
        stops,
        vec![
            Event::StopSidecar,
            Event::UnmountStateAnchor,
            Event::ReachAbsent
        ]
    );
    assert_eq!(s.phase, Phase::Absent);
}

#[test]
fn prompt_approve_execute_deliver() {
    let mut s = ready(1);
    correlated(&mut s, R1, C1, false);
    assert_eq!(
        rejected(&mut s, Event::AutoApprove { request: R1 }),
        Reason::NoRuleMatch(R1)
    );
    assert_eq!(
        rejected(&mut s, Event::Execute { request: R1 }),
        Reason::RequestState(R1, Some(RequestState::Correlated))
    );
    assert_eq!(
        ok(&mut s, Event::Prompt { request: R1 }),
        vec![Effect::ShowPrompt {
            session: C1,
            request: R1
        }]
    );
    assert_eq!(s.clis[&C1].terminal, Some(R1));
    assert_eq!(
        ok(
            &mut s,
            Event::Approve {
                request: R1,
                by: None
            }
        ),
        vec![
            Effect::WithdrawPrompt { request: R1 },
            Effect::ReturnTerminal { session: C1 }
        ]
    );
    assert_eq!(s.clis[&C1].terminal, None);
    assert_eq!(
        ok(&mut s, Event::Execute { request: R1 }),
        vec![Effect::RunHostCommand {
            request: R1,
            edited: false
        }]
    );
    assert_eq!(
        rejected(&mut s, Event::Execute { request: R1 }),
        Reason::RequestState(R1, Some(RequestState::Executing))
    );
    assert!(ok(&mut s, Event::Finish { request: R1 }).is_empty());
    assert_eq!(
        ok(
            &mut s,
            Event::Deliver {
                request: R1,
                cli: C1
            }
        ),
        vec![Effect::DeliverResult {
            session: C1,
            request: R1,
            outcome: Outcome::Completed
        }]
    );
    assert_eq!(
        rejected(&mut s, Event::Execute { request: R1 }),
        Reason::RequestState(R1, Some(RequestState::Delivered))
    );
    assert_eq!(s.requests[&R1].execs, 1);
}

#[test]
fn edited_and_auto_approved_requests_run_the_approved_vector() {
    let mut s = ready(1);
    correlated(&mut s, R1, C1, false);
    ok(&mut s, Event::Prompt { request: R1 });
    ok(
        &mut s,
        Event::Edit {
            request: R1,
            by: None,
        },
    );
    assert_eq!(s.requests[&R1].approval, Approval::Edited);
    assert_eq!(
        ok(&mut s, Event::Execute { request: R1 }),
        vec![Effect::RunHostCommand {
            request: R1,
            edited: true
        }]
    );
    correlated(&mut s, R2, C1, true);
    assert_eq!(
        rejected(&mut s, Event::Prompt { request: R2 }),
        Reason::RuleMatches(R2)
    );
    ok(&mut s, Event::AutoApprove { request: R2 });
    assert_eq!(s.requests[&R2].approval, Approval::Rule);
}

#[test]
fn one_prompt_per_terminal_and_the_terminal_returns() {
    let mut s = ready(1);
    correlated(&mut s, R1, C1, false);
    correlated(&mut s, R2, C1, false);
    ok(&mut s, Event::Prompt { request: R1 });
    assert_eq!(
        rejected(&mut s, Event::Prompt { request: R2 }),
        Reason::TerminalBusy(C1, R1)
    );
    ok(
        &mut s,
        Event::Deny {
            request: R1,
            by: None,
        },
    );
    ok(&mut s, Event::Prompt { request: R2 });
    assert_eq!(
        ok(&mut s, Event::Timeout { request: R2 }),
        vec![
            Effect::WithdrawPrompt { request: R2 },
            Effect::ReturnTerminal { session: C1 }
        ]
    );
    assert_eq!(s.clis[&C1].terminal, None);
    assert_eq!(s.requests[&R1].outcome, Outcome::Denied);
    assert_eq!(s.requests[&R2].outcome, Outcome::Timeout);
}

#[test]
fn results_go_only_to_the_owning_session() {
    let mut s = ready(2);
    correlated(&mut s, R1, C1, false);
    ok(&mut s, Event::Prompt { request: R1 });
    ok(
        &mut s,
        Event::Deny {
            request: R1,
            by: None,
        },
    );
    assert_eq!(
        rejected(
            &mut s,
            Event::Deliver {
                request: R1,
                cli: C2
            }
        ),
        Reason::NotOwner {
            request: R1,
            cli: C2,
            owner: C1
        }
    );
    ok(
        &mut s,
        Event::Deliver {
            request: R1,
            cli: C1,
        },
    );
    assert_eq!(s.requests[&R1].delivered_to, Some(C1));
}

#[test]
fn forged_stale_and_anchorless_requests_are_never_routed() {
    let mut s = ready(2);
    // A forged signature naming a registered session.
    ok(
        &mut s,
        Event::Submit {
            request: R1,
            cli: C1,
            signature_valid: false,
            rule_match: true,
        },
    );
    assert_eq!(
        rejected(&mut s, Event::Authenticate { request: R1 }),
        Reason::NotAuthentic(R1)
    );
    assert_eq!(
        ok(&mut s, Event::Reject { request: R1 }),
        vec![Effect::RejectRequest { request: R1 }]
    );
    // A valid signature needs a Session Anchor that was issued.
    assert_eq!(
        rejected(
            &mut s,
            Event::Submit {
                request: R2,
                cli: CliId(9),
                signature_valid: true,
                rule_match: true,
            }
        ),
        Reason::NoSessionAnchor(CliId(9))
    );
    // The Session Anchor of a session that left is no longer a current binding.
    ok(&mut s, Event::Leave { cli: C2 });
    ok(
        &mut s,
        Event::Submit {
            request: R2,
            cli: C2,
            signature_valid: true,
            rule_match: true,
        },
    );
    assert_eq!(
        rejected(&mut s, Event::Authenticate { request: R2 }),
        Reason::NotAuthentic(R2)
    );
    ok(&mut s, Event::Reject { request: R2 });
    // An Escalation Request ID is used once.
    assert_eq!(
        rejected(
            &mut s,
            Event::Submit {
                request: R1,
                cli: C1,
                signature_valid: true,
                rule_match: false,
            }
        ),
        Reason::RequestState(R1, Some(RequestState::Rejected))
    );
}

#[test]
fn an_authentic_request_cannot_be_rejected() {
    let mut s = ready(1);
    ok(
        &mut s,
        Event::Submit {
            request: R1,
            cli: C1,
            signature_valid: true,
            rule_match: false,
        },
    );
    assert_eq!(
        rejected(&mut s, Event::Reject { request: R1 }),
        Reason::Authentic(R1)
    );
}

#[test]
fn cancel_terminates_a_running_command_and_still_reports() {
    let mut s = ready(1);
    correlated(&mut s, R1, C1, true);
    ok(&mut s, Event::AutoApprove { request: R1 });
    ok(&mut s, Event::Execute { request: R1 });
    assert_eq!(
        ok(&mut s, Event::Cancel { request: R1 }),
        vec![Effect::TerminateHostProcess { request: R1 }]
    );
    assert_eq!(
        rejected(&mut s, Event::Cancel { request: R1 }),
        Reason::RequestState(R1, Some(RequestState::Resolved))
    );
    assert_eq!(
        ok(
            &mut s,
            Event::Deliver {
                request: R1,
                cli: C1
            }
        ),
        vec![Effect::DeliverResult {
            session: C1,
            request: R1,
            outcome: Outcome::Cancelled
        }]
    );
}

#[test]
fn cancelling_a_prompt_returns_the_terminal() {
    let mut s = ready(1);
    correlated(&mut s, R1, C1, false);
    ok(&mut s, Event::Prompt { request: R1 });
    assert_eq!(
        ok(&mut s, Event::Cancel { request: R1 }),
        vec![
            Effect::WithdrawPrompt { request: R1 },
            Effect::ReturnTerminal { session: C1 }
        ]
    );
    assert_eq!(s.clis[&C1].terminal, None);
}

#[test]
fn leaving_drops_requests_and_terminates_their_processes() {
    let mut s = ready(1);
    correlated(&mut s, R1, C1, true);
    ok(&mut s, Event::AutoApprove { request: R1 });
    ok(&mut s, Event::Execute { request: R1 });
    correlated(&mut s, R2, C1, false);
    ok(&mut s, Event::Prompt { request: R2 });
    assert_eq!(
        ok(&mut s, Event::Leave { cli: C1 }),
        vec![
            Effect::TerminateHostProcess { request: R1 },
            Effect::WithdrawPrompt { request: R2 },
            Effect::Disconnect { session: C1 }
        ]
    );
    assert_eq!(s.requests[&R1].state, RequestState::Dropped);
    assert_eq!(s.requests[&R2].state, RequestState::Dropped);
    assert_eq!(s.clis[&C1].terminal, None);
}

#[test]
fn unknown_requests_are_rejected_not_panicked_on() {
    let mut s = ready(1);
    for event in [
        Event::Authenticate { request: R2 },
        Event::Reject { request: R2 },
        Event::Prompt { request: R2 },
        Event::Cancel { request: R2 },
        Event::Deliver {
            request: R2,
            cli: C1,
        },
    ] {
        assert_eq!(
            rejected(&mut s, event),
            Reason::RequestState(R2, None),
            "{event:?}"
        );
    }
}

#[test]
fn rejections_explain_themselves() {
    let s = State::new();
    let err = step(&s, &Event::StartSandbox).err();
    assert_eq!(
        err.map(|e| e.to_string()).as_deref(),
        Some("StartSandbox is not enabled: the Domain is Absent")
    );
}

const HAND_WRITTEN_TRACE: &str = r#"
{"action":"Start","cli":1}
{"action":"Start","cli":2}
{"action":"BecomeLeader","cli":1}
{"action":"MountStateAnchor"}
{"action":"StartSidecar"}
{"action":"InstallPolicy"}
{"action":"StartSandbox"}
{"action":"Publish"}
{"action":"Register","cli":1}
{"action":"Register","cli":2}
{"action":"Submit","request":7,"cli":2,"signature_valid":true,"rule_match":false}
{"action":"Authenticate","request":7}
{"action":"Correlate","request":7}
{"action":"Prompt","request":7}
{"action":"Approve","request":7}
{"action":"Execute","request":7}
{"action":"Finish","request":7}
{"action":"Deliver","request":7,"cli":2}
{"action":"Leave","cli":1}
{"action":"Leave","cli":2}
{"action":"BeginTeardown"}
{"action":"StopSandbox"}
{"action":"StopSidecar"}
{"action":"UnmountStateAnchor"}
{"action":"ReachAbsent"}
"#;

#[test]
fn hand_written_trace_conforms() {
    let trace = match Trace::from_jsonl(HAND_WRITTEN_TRACE) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(trace.events.len(), 25);
    let end = match replay(&trace) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(end.phase, Phase::Absent);
    assert_eq!(end.requests[&RequestId(7)].delivered_to, Some(C2));
    // JSON lines round-trip.
    let text = trace.to_jsonl().unwrap_or_default();
    assert_eq!(Trace::from_jsonl(&text).ok(), Some(trace));
}

#[test]
fn nonconforming_trace_reports_the_first_bad_step() {
    // The result is delivered to a session that does not own the request.
    let bad = HAND_WRITTEN_TRACE.replace(
        r#"{"action":"Deliver","request":7,"cli":2}"#,
        r#"{"action":"Deliver","request":7,"cli":1}"#,
    );
    let trace = Trace::from_jsonl(&bad).unwrap_or_default();
    let err = replay(&trace).err();
    assert_eq!(err.map(|e| e.index), Some(17));
    assert!(matches!(
        err.map(|e| e.cause),
        Some(Nonconformance::NotEnabled(Rejected {
            action: "Deliver",
            reason: Reason::NotOwner { .. }
        }))
    ));
}

#[test]
fn malformed_trace_line_is_reported_with_its_number() {
    let err =
        Trace::from_jsonl("{\"action\":\"Start\",\"cli\":1}\n{\"action\":\"Launch\"}\n").err();
    assert_eq!(err.map(|e| e.line), Some(2));
}
