use super::*;

const S1: &str = "11111111111111111111111111111111";
const S2: &str = "22222222222222222222222222222222";

fn session(id: &str, hosted: bool) -> SessionStatus {
    SessionStatus {
        hosted,
        command: vec!["sh".into(), "-c".into(), "true".into()],
        started_by: "run".into(),
        ..SessionStatus::registered(id, "cli", 1_000)
    }
}

fn domain(sessions: Vec<SessionStatus>) -> DomainStatus {
    DomainStatus {
        domain_id: "d".into(),
        profile: "default".into(),
        workspace: "/home/dev/p".into(),
        coordinator_pid: 42,
        coordinator_id: "c".into(),
        sandbox: "s".into(),
        sessions,
        failures: vec![],
        linger_secs: 0,
        idle_stop_secs: 0,
    }
}

fn act(last: u64, attention: &str, pending: u32) -> SessionActivity {
    SessionActivity {
        last_output_unix_ms: last,
        attention: attention.into(),
        pending_escalations: pending,
        running: true,
        idle_after_ms: 5_000,
    }
}

fn kinds(events: &[Happened]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            Happened::Activity { activity, .. } => format!("activity {activity}"),
            other => serde_json::to_value(other)
                .ok()
                .and_then(|v| v["event"].as_str().map(str::to_owned))
                .unwrap_or_default(),
        })
        .collect()
}

#[test]
fn a_running_domain_is_told_as_its_sessions_with_their_activity() {
    let mut s = session(S1, true);
    s.last_output_unix_ms = 99_000;
    let (_, events) = DomainWatch::start(&domain(vec![s.clone(), session(S2, false)]), 100_000);
    assert_eq!(
        kinds(&events),
        [
            "domain_started",
            "session_started",
            "activity working",
            "session_started"
        ]
    );
    // The session's own threshold (its profile's), when the status file has one.
    s.idle_after_ms = 500;
    let (_, events) = DomainWatch::start(&domain(vec![s]), 100_000);
    assert_eq!(
        kinds(&events),
        ["domain_started", "session_started", "activity idle"]
    );
}

#[test]
fn activity_is_told_when_it_changes_and_working_turns_idle_with_time() {
    let (mut w, _) = DomainWatch::start(&domain(vec![session(S1, true)]), 100_000);
    assert_eq!(
        kinds(&w.activity(S1, act(100_000, "", 0), 100_000)),
        ["activity working"]
    );
    // More output: still working, nothing to tell.
    assert!(w.activity(S1, act(101_000, "", 0), 101_000).is_empty());
    assert!(w.tick(105_999).is_empty());
    assert_eq!(kinds(&w.tick(106_000)), ["activity idle"]);
    assert!(w.tick(107_000).is_empty());
    let bell = w.activity(S1, act(101_000, "bell", 0), 107_000);
    assert_eq!(kinds(&bell), ["activity attention"]);
    assert!(matches!(&bell[0], Happened::Activity { attention, .. } if attention == "bell"));
    // Another reason is another event.
    let n = w.activity(S1, act(101_000, "notification: hi", 0), 107_000);
    assert_eq!(kinds(&n), ["activity attention"]);
    assert_eq!(
        kinds(&w.activity(S1, act(101_000, "bell", 1), 107_000)),
        ["activity escalation"]
    );
}

#[test]
fn an_activity_before_the_status_file_lists_the_session_waits_for_its_start() {
    let (mut w, _) = DomainWatch::start(&domain(vec![]), 100_000);
    assert!(w.activity(S1, act(100_000, "", 0), 100_000).is_empty());
    assert!(w.wants_status());
    let events = w.status(&domain(vec![session(S1, true)]), 100_100);
    assert_eq!(kinds(&events), ["session_started", "activity working"]);
    assert!(!w.wants_status());
}

#[test]
fn a_session_ends_once_with_its_exit_status() {
    let (mut w, _) = DomainWatch::start(&domain(vec![session(S1, true)]), 100_000);
    let ended = w.exited(S1, Some(3), "the command exited with status 3");
    assert_eq!(
        ended,
        [Happened::SessionEnded {
            session_id: S1.into(),
            exit_status: Some(3),
            reason: "the command exited with status 3".into()
        }]
    );
    // The status file written before the exit still lists it: no new start.
    assert!(w
        .status(&domain(vec![session(S1, true)]), 100_100)
        .is_empty());
    assert!(w.exited(S1, Some(3), "again").is_empty());
    assert!(w.activity(S1, act(100_000, "", 0), 100_200).is_empty());
    assert_eq!(kinds(&w.stopped()), ["domain_stopped"]);
}

#[test]
fn a_session_missing_from_the_status_file_ends_after_a_grace() {
    let (mut w, _) = DomainWatch::start(
        &domain(vec![session(S1, true), session(S2, false)]),
        100_000,
    );
    // The `lazaret run` session ends at once (no status comes for it).
    let events = w.status(&domain(vec![]), 101_000);
    assert_eq!(kinds(&events), ["session_ended"]);
    assert!(
        matches!(&events[0], Happened::SessionEnded { session_id, exit_status: None, .. } if session_id == S2)
    );
    assert!(w.tick(101_000 + VANISHED_GRACE_MS - 1).is_empty());
    let late = w.tick(101_000 + VANISHED_GRACE_MS);
    assert!(
        matches!(&late[..], [Happened::SessionEnded { session_id, exit_status: None, .. }] if session_id == S1)
    );
}

#[test]
fn a_stopped_domain_ends_its_sessions_first_and_stops_once() {
    let (mut w, _) = DomainWatch::start(&domain(vec![session(S1, true)]), 100_000);
    assert_eq!(kinds(&w.stopped()), ["session_ended", "domain_stopped"]);
    assert!(w.stopped().is_empty());
    assert!(w
        .status(&domain(vec![session(S2, true)]), 100_000)
        .is_empty());
}

#[test]
fn a_prompt_waits_once_and_is_withdrawn_once() {
    let (mut w, _) = DomainWatch::start(&domain(vec![]), 100_000);
    let p = EscalationPrompt {
        request_id: "ab".repeat(16),
        profile: "default".into(),
        session_id: S1.into(),
        argv: vec!["git".into(), "push".into()],
        program: String::new(),
        cwd: "/workspace".into(),
        host_cwd: "/home/dev/p".into(),
        justification: String::new(),
        timeout_secs: 300,
        warnings: vec![],
    };
    assert_eq!(kinds(&w.prompt(&p)), ["escalation_waiting"]);
    // Offered again (a centre that starts watching): told once.
    assert!(w.prompt(&p).is_empty());
    let gone = w.withdrawn(&p.request_id, "approved");
    assert_eq!(
        gone,
        [Happened::EscalationWithdrawn {
            session_id: S1.into(),
            request_id: p.request_id.clone(),
            reason: "approved".into()
        }]
    );
    assert!(w.withdrawn(&p.request_id, "approved").is_empty());
}
