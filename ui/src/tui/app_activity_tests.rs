//! Activity markers in the TUI: what each pane's border and tab say, the tab bar's summary,
//! the jump key's order (escalations first, then attention, from the focused pane on), and
//! looking at a pane clearing its attention (issue #15). Offline panes; nothing runs.

use super::super::app::{App, Focus};
use super::super::layout::{Dir, PaneId};
use super::super::pane::{Pane, PaneStatus};
use super::super::test_frame::{self, offline_app};
use super::now_ms;
use lazaret_protocol::activity::{Need, SessionActivity};

fn app() -> App {
    offline_app()
}

fn session(n: PaneId) -> String {
    format!("{n:064x}")
}

/// An app with panes 1..=n (pane k shows session k), pane 1 and 2 in tab 1, the rest in tab 2;
/// the focus on pane 1.
fn app_with(n: PaneId) -> App {
    let mut app = app();
    for k in 1..=n {
        let mut p = Pane::offline(k, (10, 40), 100);
        p.status = PaneStatus::Running {
            session: session(k),
        };
        // Panes 1 and 3 open tabs; 2 and 4 split them.
        let split = (k % 2 == 0).then_some(Dir::Right);
        app.add_pane(p, split);
    }
    app.tab = 0;
    if let Some(t) = app.tabs.first_mut() {
        t.focus = 1;
    }
    app
}

fn act(last_ms_ago: Option<u64>, attention: &str, pending: u32) -> SessionActivity {
    SessionActivity {
        last_output_unix_ms: last_ms_ago.map_or(0, |ago| now_ms() - ago),
        attention: attention.into(),
        pending_escalations: pending,
        running: true,
        idle_after_ms: 5_000,
    }
}

/// One frame, 200 columns wide without the side panels (whole pane titles).
fn frame(app: &mut App) -> String {
    test_frame::frame(app, 200, 30)
}

#[test]
fn borders_tabs_and_the_summary_show_who_needs_you() {
    let mut app = app_with(4);
    app.activity_event(&session(1), act(Some(100), "", 0));
    app.activity_event(&session(2), act(Some(60_000), "", 0));
    app.activity_event(&session(3), act(Some(100), "notification: build done", 0));
    app.activity_event(&session(4), act(None, "", 1));
    let now = now_ms();
    assert_eq!(app.need_of(1, now), Need::Working);
    assert_eq!(app.need_of(2, now), Need::Idle);
    assert_eq!(app.need_of(3, now), Need::Attention);
    assert_eq!(app.need_of(4, now), Need::Escalation);
    assert_eq!(app.needs_summary(now), (1, 1));
    assert!(!app.tab_needs_you(0, now));
    assert!(app.tab_needs_you(1, now));
    let f = frame(&mut app);
    assert!(f.contains("1 · session 00000000 · working"), "{f}");
    assert!(f.contains("2 · session 00000000 · idle"), "{f}");
    assert!(f.contains("! tab 2 (2 panes)"), "{f}");
    assert!(
        f.contains(" tab 1 (2 panes)") && !f.contains("! tab 1"),
        "{f}"
    );
    assert!(f.contains(" 1 needs you · 1 escalation pending "), "{f}");
    // Tab 2 is not shown: its markers appear once it is.
    app.tab = 1;
    let f = frame(&mut app);
    assert!(f.contains("· ! NEEDS YOU: notification: build done"), "{f}");
    assert!(
        f.contains("4 · session 00000000 · ESCALATION PENDING"),
        "{f}"
    );
}

#[test]
fn the_jump_key_goes_to_escalations_first_then_attention_then_says_none() {
    let mut app = app_with(4);
    app.activity_event(&session(2), act(Some(100), "bell", 0));
    app.activity_event(&session(4), act(None, "", 2));
    app.focus = Focus::Escalations;
    app.jump_to_need();
    assert_eq!(
        (app.tab, app.focused(), app.focus),
        (1, Some(4), Focus::Panes)
    );
    // The escalation is decided: the bell is next.
    app.activity_event(&session(4), act(None, "", 0));
    app.jump_to_need();
    assert_eq!((app.tab, app.focused()), (0, Some(2)));
    // Looked at: nothing needs the developer any more.
    app.activity.clear();
    app.jump_to_need();
    assert_eq!((app.tab, app.focused()), (0, Some(2)));
    assert_eq!(
        app.messages.front().map(String::as_str),
        Some("no pane needs you")
    );
}

#[test]
fn looking_at_a_pane_clears_its_attention_only_when_the_terminal_has_focus() {
    let mut app = app_with(2);
    app.activity_event(&session(1), act(Some(100), "bell", 0));
    app.activity_event(&session(2), act(Some(100), "bell", 0));
    app.host_focused = false;
    app.look_at_focused();
    assert_eq!(app.activity[&session(1)].attention, "bell", "nobody looked");
    app.host_focused = true;
    app.focus = Focus::Escalations;
    app.look_at_focused();
    assert_eq!(
        app.activity[&session(1)].attention,
        "bell",
        "the panel has the keys"
    );
    app.focus = Focus::Panes;
    app.look_at_focused();
    assert_eq!(app.activity[&session(1)].attention, "", "looked at");
    assert_eq!(
        app.activity[&session(2)].attention,
        "bell",
        "not the focused pane"
    );
}

#[test]
fn an_ended_session_is_forgotten_and_sandbox_text_is_escaped_and_clipped() {
    let mut app = app_with(1);
    app.activity_event(
        &session(1),
        act(
            Some(100),
            "notification: \x1b]52;c;AAAA\x07 pwned and a very long text that goes on",
            0,
        ),
    );
    app.focus = Focus::Escalations;
    let f = frame(&mut app);
    assert!(!f.contains('\u{1b}') && !f.contains('\u{7}'), "{f}");
    assert!(f.contains("NEEDS YOU: notification: "), "{f}");
    assert!(f.contains('…') && !f.contains("goes on"), "{f}");
    let ended = SessionActivity {
        running: false,
        ..act(None, "bell", 0)
    };
    app.activity_event(&session(1), ended);
    assert!(app.activity.is_empty());
}

#[test]
fn a_pane_that_starts_needing_you_alerts_the_host_terminal_once() {
    let mut app = app_with(2);
    app.settings.alerts.bell = true;
    app.settings.alerts.notify = super::super::alerts::Notify::Osc9;
    app.activity_event(&session(1), act(Some(100), "", 0));
    assert!(app.send_alerts(now_ms()).is_empty());
    assert!(app.host_bytes.is_empty());
    app.activity_event(
        &session(2),
        act(Some(100), "notification: \\u{1b}]52;c;x", 0),
    );
    let sent = app.send_alerts(now_ms());
    assert_eq!(sent.len(), 1);
    assert_eq!(
        app.host_bytes,
        b"\x07\x1b]9;Lazaret: pane 2 needs you (its program called)\x07"
    );
    app.host_bytes.clear();
    assert!(app.send_alerts(now_ms()).is_empty(), "once per call");
    assert!(app.host_bytes.is_empty());
}
