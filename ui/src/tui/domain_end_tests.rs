//! The Domain panel once the coordinator went away (issue #32, D2): after a failed first start
//! it says the coordinator stopped, and why, instead of "running (pid …)". Offline panes; the
//! link events are fed as a coordinator sends them.

use super::super::app::{App, Focus};
use super::super::event::AppEvent;
use super::super::pane::Pane;
use super::super::test_frame::{frame_as_is, offline_app};
use super::{ended_view, DomainEnd};
use lazaret_client::link::LinkEvent;
use lazaret_protocol::domain_state::DomainView;

/// Above the kernel's largest pid: never a running process.
const GONE_PID: u32 = 4_194_999;

const SETUP_FAILED: &str = "setup of profile \"shell\" failed (exit 60): curl: (60) SSL \
                            certificate problem: self-signed certificate in certificate chain";

fn running(app: &App, pid: u32) -> DomainView {
    DomainView {
        domain_id: app.plan.domain_id(),
        profile: "shell".into(),
        workspace: "/home/dev/proj".into(),
        fingerprint: app.plan.fingerprint.clone(),
        coordinator: Some((pid, true)),
        sandbox_running: true,
        sidecar_running: true,
        ..DomainView::default()
    }
}

fn link(app: &mut App, event: LinkEvent) {
    let domain = app.plan.domain_id();
    app.handle(AppEvent::Link { domain, event });
}

/// The frame as the loop draws it: the panels follow the focused pane's Domain first.
fn frame(app: &mut App) -> String {
    app.follow_focus();
    frame_as_is(app, 120, 24)
}

/// One pane whose session could not start, the Domain panel focused.
fn app() -> App {
    let mut app = offline_app();
    app.add_pane(Pane::offline(1, (10, 40), 100), None);
    app.focus = Focus::DomainState;
    app
}

#[test]
fn after_a_failed_first_start_the_panel_says_the_coordinator_stopped_and_why() {
    let mut app = app();
    let state = running(&app, GONE_PID);
    link(&mut app, LinkEvent::DomainState(state));
    let f = frame(&mut app);
    assert!(
        f.contains(&format!("coordinator running (pid {GONE_PID})")),
        "{f}"
    );

    // The session's start is refused (its profile setup failed), then the coordinator, left
    // without sessions, shuts down and says so.
    link(
        &mut app,
        LinkEvent::StartFailed {
            token: 1,
            reason: SETUP_FAILED.into(),
        },
    );
    link(
        &mut app,
        LinkEvent::Gone("the Domain is shutting down".into()),
    );
    let f = frame(&mut app);
    assert!(!f.contains("coordinator running"), "{f}");
    assert!(
        f.contains(&format!("coordinator stopped (pid {GONE_PID}): the Domain")),
        "{f}"
    );
    assert!(f.contains("last start  refused: setup of profile"), "{f}");
    assert!(!f.contains("sandbox     running"), "{f}");
    insta::assert_snapshot!(f);

    // Started again (a new pane): its coordinator's state replaces the end.
    let state = running(&app, GONE_PID + 1);
    link(&mut app, LinkEvent::DomainState(state));
    let f = frame(&mut app);
    assert!(
        f.contains(&format!("coordinator running (pid {})", GONE_PID + 1)),
        "{f}"
    );
    assert!(!f.contains("stopped") && !f.contains("last start"), "{f}");
}

#[test]
fn a_coordinator_tearing_down_after_its_goodbye_is_stopped_once_its_process_is_gone() {
    let mut app = app();
    let state = running(&app, 4242);
    let end = DomainEnd::observe(Some(&state), "the Domain is shutting down", None, |_| true);
    assert!(end.still_runs);
    assert_eq!(
        end.coordinator_text(),
        "disconnected (pid 4242), still running: the Domain is shutting down"
    );
    let domain = app.plan.domain_id();
    app.domain_states
        .insert(domain.clone(), ended_view(Some(&state), &domain, &end));
    app.domain_ends.insert(domain.clone(), end);
    assert!(
        app.recheck_ended_coordinators(|_| true),
        "still running: look again"
    );
    assert_eq!(app.domain_states[&domain].coordinator, Some((4242, true)));
    assert!(!app.recheck_ended_coordinators(|_| false));
    assert_eq!(app.domain_states[&domain].coordinator, Some((4242, false)));
    let f = frame(&mut app);
    assert!(
        f.contains("coordinator stopped (pid 4242): the Domain is"),
        "{f}"
    );
}

#[test]
fn a_coordinator_never_heard_from_has_no_pid_to_claim() {
    let end = DomainEnd::observe(None, "the coordinator closed the connection", None, |_| {
        true
    });
    assert_eq!(
        end.coordinator_text(),
        "not running: the coordinator closed the connection"
    );
    assert_eq!(ended_view(None, "d", &end).coordinator, None);
}

#[test]
fn a_domain_that_could_not_be_started_says_why() {
    let mut app = app();
    let f = frame(&mut app);
    assert!(f.contains("coordinator none"), "{f}");
    app.handle(AppEvent::Unreachable {
        domain: app.plan.domain_id(),
        reason: "starting the Domain: the image localhost/x is missing".into(),
    });
    let f = frame(&mut app);
    assert!(!f.contains("coordinator none"), "{f}");
    assert!(
        f.contains("coordinator not running: starting the Domain:"),
        "{f}"
    );
}
