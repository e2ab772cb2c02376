//! Panes whose program ended keep their final screen and exit status until closed; the TUI
//! does not vanish when its last program ends. Offline panes; nothing runs.

use super::super::app::App;
use super::super::layout::{Dir, PaneId};
use super::super::pane::{Pane, PaneStatus};
use super::super::test_frame::{self, offline_app};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Panes 1..=n side by side in one tab, each with `last words of k` on its screen; focus on 1.
fn app_with(n: PaneId) -> App {
    let mut app = offline_app();
    for k in 1..=n {
        let mut p = Pane::offline(k, (10, 40), 100);
        p.status = PaneStatus::Running {
            session: format!("{k:064x}"),
        };
        p.emulator()
            .process(format!("last words of {k}\r\n").as_bytes());
        app.add_pane(p, (k > 1).then_some(Dir::Right));
    }
    if let Some(t) = app.tabs.first_mut() {
        t.focus = 1;
    }
    app
}

fn frame(app: &mut App) -> String {
    test_frame::frame(app, 160, 20)
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn message(app: &App) -> String {
    app.messages.front().cloned().unwrap_or_default()
}

#[test]
fn an_exited_pane_keeps_its_screen_and_status_until_enter_closes_it() {
    let mut app = app_with(2);
    app.pane_ended(1, Ok(3));
    assert_eq!(app.panes[&1].status, PaneStatus::Exited(3));
    let f = frame(&mut app);
    assert!(f.contains("1 · exited 3 · Enter closes"), "{f}");
    assert!(
        f.contains("last words of 1"),
        "the final screen stays:\n{f}"
    );
    assert!(
        message(&app).contains("pane 1: exited 3; its last screen stays"),
        "{}",
        message(&app)
    );
    assert!(!app.quit);

    // Keys are not the ended program's: they say how to close the pane.
    app.key_to_pane(&key(KeyCode::Char('a')));
    assert!(app.panes.contains_key(&1));
    assert!(message(&app).contains("pane 1 has ended: Enter or ctrl-b x closes it"));

    app.key_to_pane(&key(KeyCode::Enter));
    assert!(!app.panes.contains_key(&1), "Enter closed it");
    assert_eq!(app.tabs[0].panes(), vec![2]);
    assert!(!app.quit, "another pane runs");
}

#[test]
fn when_every_pane_has_ended_the_tui_stays_and_quits_when_the_last_is_closed() {
    let mut app = app_with(1);
    app.pane_ended(1, Ok(0));
    assert!(!app.quit, "the TUI does not vanish");
    assert!(
        message(&app).contains("every pane has ended"),
        "{}",
        message(&app)
    );
    assert!(frame(&mut app).contains("last words of 1"));
    app.key_to_pane(&key(KeyCode::Enter));
    assert!(app.quit, "closing the last pane quits");
}

#[test]
fn a_failed_pane_stays_with_its_reason_and_close_pane_removes_ended_panes_at_once() {
    let mut app = app_with(2);
    app.pane_ended(2, Err("the Domain's Session Coordinator went away".into()));
    assert!(
        matches!(app.panes[&2].status, PaneStatus::Failed(_)),
        "{:?}",
        app.panes[&2].status
    );
    assert!(frame(&mut app).contains("2 · failed · Enter closes"));
    assert!(message(&app).contains("went away"));
    if let Some(t) = app.tabs.first_mut() {
        t.focus = 2;
    }
    app.close_focused();
    assert!(!app.panes.contains_key(&2));
}

#[test]
fn a_pane_closed_while_its_session_ran_leaves_when_the_session_ends() {
    let mut app = app_with(2);
    if let Some(p) = app.panes.get_mut(&1) {
        p.closing = true;
    }
    app.pane_ended(1, Ok(0));
    assert!(!app.panes.contains_key(&1), "closed, not kept");
    assert!(!app.quit);
}

#[test]
fn a_running_pane_takes_enter_as_its_programs() {
    let mut app = app_with(1);
    app.key_to_pane(&key(KeyCode::Enter));
    assert!(app.panes.contains_key(&1));
    assert!(!app.quit);
}

#[test]
fn the_first_end_counts_a_domain_going_away_after_its_last_session_exited_changes_nothing() {
    let mut app = app_with(1);
    app.pane_ended(1, Ok(0));
    app.pane_ended(1, Err("the Domain's Session Coordinator went away".into()));
    assert_eq!(app.panes[&1].status, PaneStatus::Exited(0));
    assert!(frame(&mut app).contains("1 · exited 0 · Enter closes"));
}
