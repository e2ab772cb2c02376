use super::*;
use lazaret_protocol::status::SessionStatus;

fn session(id: &str, started_by: &str, attached: &[&str], started: u64) -> SessionStatus {
    SessionStatus {
        command: vec!["bash".into()],
        hosted: true,
        attached: attached.iter().map(|a| (*a).to_owned()).collect(),
        started_by: started_by.into(),
        layout_hint: format!("hint-{id}"),
        ..SessionStatus::registered(id, "cli", started)
    }
}

fn domain(workspace: &str, profile: &str, sessions: Vec<SessionStatus>) -> DomainStatus {
    DomainStatus {
        domain_id: format!("{workspace}-{profile}"),
        profile: profile.into(),
        workspace: workspace.into(),
        coordinator_pid: 1,
        coordinator_id: "c".into(),
        sandbox: "s".into(),
        sessions,
        failures: Vec::new(),
        linger_secs: 0,
        idle_stop_secs: 0,
    }
}

fn ids(s: &Selection) -> Vec<&str> {
    s.here.iter().map(|d| d.session_id.as_str()).collect()
}

#[test]
fn only_this_workspaces_detached_tui_sessions_come_back_in_every_profile() {
    let mut run_owned = session("r", "run", &["run"], 1);
    run_owned.hosted = false;
    let domains = [
        domain(
            "/w/a",
            "default",
            vec![
                session("a2", "tui", &[], 20),
                session("a1", "tui", &[], 10),
                session("a-taken", "tui", &["tui"], 5),
                session("a-attach", "tui", &["attach"], 6),
                session("a-run", "run", &[], 7),
                run_owned,
            ],
        ),
        domain("/w/a", "other", vec![session("a3", "tui", &[], 1)]),
        domain(
            "/w/b",
            "default",
            vec![
                session("b1", "tui", &[], 1),
                session("b2", "run", &[], 2),
                session("b-taken", "tui", &["tui"], 3),
            ],
        ),
        domain("/w/a/sub", "default", vec![session("c1", "tui", &[], 1)]),
    ];
    let s = select(&domains, Path::new("/w/a"));
    // Oldest first within a Domain; a session another client shows is left alone.
    assert_eq!(ids(&s), ["a1", "a2", "a3"]);
    assert_eq!(s.here[2].profile, "other");
    assert_eq!(s.here[0].layout_hint, "hint-a1");
    assert_eq!(s.here[0].workspace, Path::new("/w/a"));
    // b1, b2 (a detached `run --detachable` session) and c1 (a nested workspace is another
    // workspace); attached ones are not counted.
    assert_eq!(s.elsewhere, 3);

    // The other workspace's TUI takes only its own.
    let s = select(&domains, Path::new("/w/b"));
    assert_eq!(ids(&s), ["b1"]);
    assert_eq!(s.elsewhere, 5, "a1 a2 a-run a3 c1");

    let s = select(&domains, Path::new("/w/none"));
    assert!(s.here.is_empty());
    assert_eq!(s.elsewhere, 7);
}

#[test]
fn a_session_shown_by_one_tui_is_not_taken_by_the_next() {
    // The first TUI re-attached a1: the coordinator publishes it attached.
    let domains = [domain(
        "/w/a",
        "default",
        vec![session("a1", "tui", &["tui"], 1)],
    )];
    let s = select(&domains, Path::new("/w/a"));
    assert_eq!(s, Selection::default());
}

#[test]
fn a_session_being_ended_is_not_shown_again() {
    // A TUI quit with "end": its sessions are hung up and detached until they are gone; a TUI
    // started in that moment must not re-attach them (it would close at once when they end).
    let mut ending = session("e1", "tui", &[], 1);
    ending.running = false;
    let domains = [domain("/w/a", "default", vec![ending])];
    let s = select(&domains, Path::new("/w/a"));
    assert_eq!(s, Selection::default());
}

#[test]
fn the_note_counts_the_sessions_left_elsewhere() {
    assert_eq!(elsewhere_note(0, "ctrl-b s"), None);
    assert_eq!(
        elsewhere_note(1, "ctrl-b s").as_deref(),
        Some("1 more detached session in another workspace: ctrl-b s")
    );
    assert_eq!(
        elsewhere_note(3, "ctrl-b s").as_deref(),
        Some("3 more detached sessions in other workspaces: ctrl-b s")
    );
}
