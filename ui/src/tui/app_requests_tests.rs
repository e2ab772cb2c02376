//! The status line says a request waits only while it does (issue #32, D4): decided in this
//! TUI's panel, decided elsewhere (withdrawn here), or gone with its pane, its note leaves.
//! Offline panes; nothing runs.

use super::super::app::App;
use super::super::event::AppEvent;
use super::super::layout::{Dir, PaneId};
use super::super::pane::{Pane, PaneStatus};
use super::super::test_frame::{frame_as_is, offline_app};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use lazaret_protocol::escalation::{Decision, EscalationPrompt};
use std::sync::mpsc::Receiver;

/// Panes 1 and 2 side by side, each running a session.
fn app() -> App {
    let mut app = offline_app();
    for k in 1..=2 {
        let mut p = Pane::offline(k, (10, 40), 100);
        p.status = PaneStatus::Running {
            session: format!("{k:064x}"),
        };
        app.add_pane(p, (k > 1).then_some(Dir::Right));
    }
    app
}

/// Pane `pane`'s session asks to run `argv` on the host (as its coordinator offers it).
fn ask(app: &mut App, pane: PaneId, id: &str, argv: &[&str]) -> Receiver<Decision> {
    let (reply, answer) = std::sync::mpsc::channel();
    app.handle(AppEvent::Prompt {
        pane,
        prompt: EscalationPrompt {
            request_id: id.into(),
            profile: "shell".into(),
            session_id: format!("{pane:064x}"),
            argv: argv.iter().map(|s| s.to_string()).collect(),
            program: String::new(),
            cwd: "/workspace".into(),
            host_cwd: "/home/dev/proj".into(),
            justification: String::new(),
            timeout_secs: 30,
            warnings: Vec::new(),
        },
        reply,
    });
    answer
}

fn press(app: &mut App, code: KeyCode, mods: KeyModifiers) {
    app.handle(AppEvent::Input(Event::Key(KeyEvent::new(code, mods))));
}

/// ctrl-b a (the panel takes the keyboard), a look, then `key` decides the selected request.
fn decide_in_panel(app: &mut App, key: char) {
    press(app, KeyCode::Char('b'), KeyModifiers::CONTROL);
    press(app, KeyCode::Char('a'), KeyModifiers::NONE);
    // Decision keys within the panel's guard time are dropped (DX-4).
    std::thread::sleep(crate::terminal::guard::GUARD + std::time::Duration::from_millis(50));
    press(app, KeyCode::Char(key), KeyModifiers::NONE);
}

/// The status line (the frame's last row), as drawn.
fn status_line(app: &mut App) -> String {
    let f = frame_as_is(app, 160, 24);
    f.lines().last().unwrap_or_default().trim_end().to_owned()
}

#[test]
fn approved_in_this_tui_the_request_leaves_the_status_line() {
    let mut app = app();
    app.message("1 more detached session in another workspace: ctrl-b s".into());
    let answer = ask(&mut app, 2, "r1", &["git", "push"]);
    assert!(
        status_line(&mut app).contains("pane 2 asks to run a command on the host"),
        "{}",
        status_line(&mut app)
    );
    decide_in_panel(&mut app, 'a');
    assert!(
        matches!(answer.try_recv(), Ok(Decision::Approve {})),
        "the request was approved"
    );
    assert!(app.escalations.pending.is_empty());
    let status = status_line(&mut app);
    assert!(!status.contains("asks to run"), "{status}");
    insta::assert_snapshot!(status);
}

#[test]
fn denied_here_with_another_still_waiting_the_status_line_names_the_one_waiting() {
    let mut app = app();
    let _first = ask(&mut app, 1, "r1", &["make", "deploy"]);
    let second = ask(&mut app, 2, "r2", &["git", "push"]);
    assert!(status_line(&mut app).contains("pane 2 asks"));
    // The oldest is selected first: move to pane 2's and deny it.
    press(&mut app, KeyCode::Char('b'), KeyModifiers::CONTROL);
    press(&mut app, KeyCode::Char('a'), KeyModifiers::NONE);
    press(&mut app, KeyCode::Down, KeyModifiers::NONE);
    std::thread::sleep(crate::terminal::guard::GUARD + std::time::Duration::from_millis(50));
    press(&mut app, KeyCode::Char('d'), KeyModifiers::NONE);
    assert!(matches!(second.try_recv(), Ok(Decision::Deny {})));
    let status = status_line(&mut app);
    assert!(!status.contains("pane 2 asks"), "{status}");
    assert!(status.contains("pane 1 asks to run a command"), "{status}");
}

#[test]
fn decided_elsewhere_or_withdrawn_the_note_goes_from_the_status_line_for_good() {
    let mut app = app();
    let _a = ask(&mut app, 2, "r1", &["git", "push"]);
    // `lazaret approve` from another terminal: the coordinator withdraws it here.
    app.handle(AppEvent::Link {
        domain: app.plan.domain_id(),
        event: lazaret_client::link::LinkEvent::Withdrawn {
            request_id: "r1".into(),
            reason: "approved by lazaret approve (cli, client 1a2b3c4d)".into(),
        },
    });
    let status = status_line(&mut app);
    assert!(
        status.contains("escalation of pane 2 withdrawn"),
        "{status}"
    );
    // Nothing brings the stale note back once later notes come and go.
    assert!(
        !app.messages.iter().any(|m| m.contains("asks to run")),
        "{:?}",
        app.messages
    );

    // A request gone with its pane.
    let _b = ask(&mut app, 1, "r2", &["make"]);
    assert!(status_line(&mut app).contains("pane 1 asks"));
    app.handle(AppEvent::Ended {
        pane: 1,
        result: Ok(0),
    });
    assert!(app.escalations.pending.is_empty());
    assert!(
        !app.messages.iter().any(|m| m.contains("asks to run")),
        "{:?}",
        app.messages
    );
}
