use super::*;
use crate::terminal::guard::GUARD;
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

fn prompt(id: &str, argv: &[&str]) -> EscalationPrompt {
    EscalationPrompt {
        request_id: id.into(),
        profile: "shell".into(),
        session_id: "s".into(),
        argv: argv.iter().map(|s| s.to_string()).collect(),
        program: String::new(),
        cwd: "/workspace".into(),
        host_cwd: "/h".into(),
        justification: String::new(),
        timeout_secs: 30,
        warnings: Vec::new(),
    }
}

const MS: Duration = Duration::from_millis(1);

/// A start time after the panel's creation (times are given, not read from the clock).
fn start() -> Instant {
    Instant::now() + Duration::from_secs(1)
}

/// A panel with requests `ids` (panes 1, 2, …) pushed at `t0`; their reply channels.
fn panel(t0: Instant, ids: &[&str]) -> (EscalationPanel, Vec<Receiver<Decision>>) {
    let mut panel = EscalationPanel::default();
    let mut rxs = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let (tx, rx) = channel();
        panel.push(i as u32 + 1, prompt(id, &["echo", id]), tx, t0);
        rxs.push(rx);
    }
    (panel, rxs)
}

#[test]
fn decisions_reach_the_right_request_and_are_remembered() {
    let t0 = start();
    let mut t = t0 + GUARD;
    let mut later = || {
        t += GUARD + MS;
        t
    };
    let mut panel = EscalationPanel::default();
    let (tx1, rx1) = channel();
    let (tx2, rx2) = channel();
    panel.push(1, prompt("r1", &["git", "push"]), tx1, t0);
    panel.push(2, prompt("r2", &["echo", "hi"]), tx2, t0);
    panel.down(later());
    assert_eq!(panel.selected_pane(), Some(2));
    panel.edit(later());
    let editor = panel.editing.as_mut().map(|e| e.text());
    assert_eq!(editor.as_deref(), Some("echo hi"));
    let now = later();
    for k in [
        Key::KillToStart,
        Key::Char('e'),
        Key::Char('c'),
        Key::Char('h'),
    ] {
        panel.edit_key(&k, now);
    }
    for c in " 'a b'".chars() {
        panel.edit_key(&Key::Char(c), now);
    }
    panel.edit_key(&Key::Enter, now);
    assert_eq!(
        rx2.try_recv().ok(),
        Some(Decision::Edit {
            argv: vec!["ech".into(), "a b".into()]
        })
    );
    assert_eq!(panel.selected_pane(), Some(1));
    panel.deny(later());
    assert_eq!(rx1.try_recv().ok(), Some(Decision::Deny {}));
    assert!(panel.pending.is_empty());
    let outcomes: Vec<_> = panel.history.iter().map(|r| (r.pane, r.outcome)).collect();
    assert_eq!(outcomes, vec![(1, "denied"), (2, "edited")]);
}

#[test]
fn an_unbalanced_edit_is_refused_and_withdrawals_are_recorded() {
    let t0 = start();
    let (mut panel, rx) = panel(t0, &["r1"]);
    panel.edit(t0 + GUARD);
    panel.edit_key(&Key::Char('\''), t0 + GUARD);
    panel.edit_key(&Key::Enter, t0 + GUARD);
    assert!(panel.edit_error.is_some());
    assert!(rx[0].try_recv().is_err());
    let (_, argv) = panel.withdraw("r1", t0 + GUARD).expect("r1 was pending");
    assert_eq!(argv, panel.history[0].argv);
    assert!(panel.pending.is_empty() && panel.editing.is_none());
    assert_eq!(
        panel.withdraw("r1", t0 + GUARD),
        None,
        "not pending any more"
    );
    assert_eq!(panel.history[0].outcome, "withdrawn");
}

#[test]
fn a_new_request_needs_the_guard_time() {
    let t0 = start();
    let (mut panel, rx) = panel(t0, &["r1"]);
    panel.approve(t0 + 100 * MS);
    assert!(rx[0].try_recv().is_err());
    assert_eq!(panel.notice, Some(KEY_IGNORED));
    // The dropped key restarted the quiet time.
    panel.approve(t0 + GUARD + 50 * MS);
    assert!(rx[0].try_recv().is_err());
    panel.approve(t0 + 2 * GUARD + 100 * MS);
    assert_eq!(rx[0].try_recv().ok(), Some(Decision::Approve {}));
    assert_eq!(panel.notice, None);
}

#[test]
fn the_selected_request_withdrawn_never_lets_a_pressed_key_approve_another() {
    let t0 = start();
    let (mut panel, rx) = panel(t0, &["r1", "r2", "r3"]);
    panel.down(t0 + GUARD);
    assert_eq!(
        panel.selected().map(|p| p.prompt.request_id.as_str()),
        Some("r2")
    );
    // The developer looked at r2 for a while; r2 times out just before their key.
    let t = t0 + 3 * GUARD;
    panel.withdraw("r2", t);
    assert_eq!(panel.notice, Some(SELECTION_MOVED));
    let now_selected = panel.selected().map(|p| p.prompt.request_id.clone());
    assert!(now_selected.is_some());
    panel.approve(t + 20 * MS);
    for r in &rx {
        assert!(
            r.try_recv().is_err(),
            "a key meant for r2 decided another request"
        );
    }
    assert_eq!(panel.notice, Some(KEY_IGNORED));
    // Looked, pressed again: the decision goes to the request now shown.
    panel.approve(t + 20 * MS + GUARD);
    let decided: Vec<bool> = rx.iter().map(|r| r.try_recv().is_ok()).collect();
    let which = if now_selected.as_deref() == Some("r1") {
        0
    } else {
        2
    };
    assert!(
        decided[which] && decided.iter().filter(|d| **d).count() == 1,
        "{decided:?}"
    );
}

#[test]
fn a_held_key_never_approves_the_next_request_after_a_decision() {
    let t0 = start();
    let (mut panel, rx) = panel(t0, &["r1", "r2"]);
    let t = t0 + GUARD;
    panel.approve(t);
    assert_eq!(rx[0].try_recv().ok(), Some(Decision::Approve {}));
    // Auto-repeat of the same key (as presses, or as repeat events), for 2 s.
    for i in 1..=60 {
        let at = t + i * 33 * MS;
        if i % 2 == 0 {
            panel.approve(at);
        } else {
            panel.held(at);
        }
    }
    assert!(
        rx[1].try_recv().is_err(),
        "a held key approved the next request"
    );
    assert_eq!(panel.notice, Some(KEY_IGNORED));
    panel.approve(t + 60 * 33 * MS + GUARD);
    assert_eq!(rx[1].try_recv().ok(), Some(Decision::Approve {}));
}

#[test]
fn decided_elsewhere_while_editing_abandons_the_edit() {
    let t0 = start();
    let (mut panel, rx) = panel(t0, &["r1", "r2"]);
    panel.down(t0 + GUARD);
    panel.edit(t0 + 2 * GUARD + MS);
    assert!(panel.editing.is_some());
    panel.withdraw("r2", t0 + 3 * GUARD);
    // The editor held r2's argv: Enter must not send it to r1.
    assert!(panel.editing.is_none());
    panel.edit_key(&Key::Enter, t0 + 3 * GUARD + MS);
    assert!(rx[0].try_recv().is_err());
    assert_eq!(panel.notice, Some(SELECTION_MOVED));
}

#[test]
fn taking_the_keyboard_rearms_and_a_new_request_elsewhere_does_not_move_the_selection() {
    let t0 = start();
    let (mut panel, rx) = panel(t0, &["r1"]);
    // The panel gets the keyboard long after the request arrived (prefix, then a).
    let t = t0 + 10 * GUARD;
    panel.shown(t);
    panel.approve(t + 30 * MS);
    assert!(rx[0].try_recv().is_err());
    // Another request arrives: the selection stays on r1, no new guard for it.
    let (tx, rx2) = channel();
    panel.push(2, prompt("r2", &["echo"]), tx, t + 2 * GUARD);
    assert_eq!(
        panel.selected().map(|p| p.prompt.request_id.as_str()),
        Some("r1")
    );
    panel.approve(t + 3 * GUARD);
    assert_eq!(rx[0].try_recv().ok(), Some(Decision::Approve {}));
    assert!(rx2.try_recv().is_err());
}

#[test]
fn the_withdrawn_note_says_why_and_shortens_the_command() {
    assert_eq!(
        withdrawn_note(
            2,
            &["git".into(), "push".into()],
            "decided in another client (tui c2)"
        ),
        "escalation of pane 2 withdrawn (decided in another client (tui c2)): git push"
    );
    let long = vec!["x".repeat(100)];
    let note = withdrawn_note(0, &long, "no decision in time");
    assert_eq!(
        note,
        format!(
            "escalation withdrawn (no decision in time): {}…",
            "x".repeat(60)
        )
    );
}
