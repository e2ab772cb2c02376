//! The denials panel's selection and what it asks before acting. Offline: no coordinator; the
//! answers a coordinator would send are handed in directly.

use super::super::app::{App, Focus};
use super::super::test_frame::{self, offline_app};
use super::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::net::Ipv4Addr;

fn entry(addr: [u8; 4], port: u16, name: Option<&str>) -> DenialEntry {
    DenialEntry {
        first_seen: 1,
        last_seen: 2,
        protocol: if name.is_some() { "dns" } else { "tcp" }.into(),
        address: Ipv4Addr::from(addr),
        port,
        rule: "deny 10.0.0.0/8 (default)".into(),
        count: 3,
        name: name.map(str::to_owned),
    }
}

fn app() -> App {
    let mut app = offline_app();
    app.add_pane(super::super::pane::Pane::offline(1, (10, 40), 100), None);
    app.denials = vec![
        entry([198, 51, 100, 7], 443, None),
        entry([0, 0, 0, 0], 53, Some("registry.example.org")),
        entry([10, 99, 0, 1], 18080, None),
    ];
    app.focus = Focus::Denials;
    app.panels = true;
    app
}

fn key(app: &mut App, code: KeyCode) {
    app.key(&KeyEvent::new(code, KeyModifiers::NONE));
}

fn answer(ok: bool, message: &str, needs_private: bool, lines: &[&str]) -> AllowAnswer {
    AllowAnswer {
        ok,
        message: message.into(),
        needs_private,
        lines: lines.iter().map(|l| (*l).to_owned()).collect(),
    }
}

#[test]
fn targets_are_what_lazaret_net_allow_takes_and_the_selection_follows_the_filter() {
    let mut app = app();
    assert_eq!(
        app.selected_denial().map(target_of).as_deref(),
        Some("198.51.100.7:443")
    );
    key(&mut app, KeyCode::Down);
    assert_eq!(
        app.selected_denial().map(target_of).as_deref(),
        Some("registry.example.org")
    );
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    assert_eq!(
        app.selected_denial().map(target_of).as_deref(),
        Some("10.99.0.1:18080")
    );
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Char('/'));
    for c in "10.99".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    key(&mut app, KeyCode::Enter);
    // One row left: the selection is that row.
    assert_eq!(
        app.selected_denial().map(target_of).as_deref(),
        Some("10.99.0.1:18080")
    );
    let f = test_frame::frame_as_is(&mut app, 160, 40);
    assert!(f.contains("▶   3 tcp  10.99.0.1:18080"), "{f}");
}

#[test]
fn a_private_address_is_allowed_only_after_y_and_any_other_key_cancels() {
    let mut app = app();
    let domain = app.current_plan().domain_id();
    app.destination_allowed(
        &domain,
        "10.99.0.1:18080".into(),
        SaveStep::No,
        answer(false, "10.99.0.1 is in 10.0.0.0/8 …", true, &[]),
        false,
    );
    let f = test_frame::frame_as_is(&mut app, 160, 40);
    assert!(f.contains("10.99.0.1:18080 is private: y allows it"), "{f}");
    key(&mut app, KeyCode::Char('a'));
    assert_eq!(app.net_confirm, None, "any other key cancels");
    assert!(app
        .messages
        .front()
        .is_some_and(|m| m.contains("nothing changed")));

    app.destination_allowed(
        &domain,
        "10.99.0.1:18080".into(),
        SaveStep::No,
        answer(false, "private", true, &[]),
        false,
    );
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(app.net_confirm, None);
    // Offline: the confirmed request cannot go out, and says so.
    assert!(
        app.messages
            .front()
            .is_some_and(|m| m.contains("not connected")),
        "{:?}",
        app.messages.front()
    );
}

#[test]
fn saving_shows_the_exact_lines_before_writing_them() {
    let mut app = app();
    let domain = app.current_plan().domain_id();
    app.destination_allowed(
        &domain,
        "registry.example.org".into(),
        SaveStep::Preview,
        answer(
            true,
            "add registry.example.org to profile py in ~/.config/lazaret/config.toml",
            false,
            &[
                "- deny_names = [\"registry.example.org\"]",
                "+ deny_names = []",
                "+ allow_names = [\"registry.example.org\"]",
            ],
        ),
        false,
    );
    let f = test_frame::frame_as_is(&mut app, 200, 40);
    for line in [
        "add registry.example.org to profile py in ~/.config/lazaret/config.toml: y writes",
        "- deny_names = [\"registry.example.org\"]",
        "+ allow_names = [\"registry.example.org\"]",
    ] {
        assert!(f.contains(line), "{line:?} in:\n{f}");
    }
    assert!(matches!(
        app.net_confirm.as_ref().map(|c| &c.step),
        Some(ConfirmStep::Save { .. })
    ));
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.net_confirm, None);

    // A plain answer is only a message.
    app.destination_allowed(
        &domain,
        "registry.example.org".into(),
        SaveStep::Write,
        answer(
            true,
            "allowed registry.example.org for this run",
            false,
            &[],
        ),
        false,
    );
    assert_eq!(app.net_confirm, None);
    assert_eq!(
        app.messages.front().map(String::as_str),
        Some("allowed registry.example.org for this run")
    );
}

#[test]
fn a_destination_allowed_for_the_run_says_so_instead_of_its_rule() {
    let mut app = app();
    app.domain.run_allowed = vec!["198.51.100.7:443".into(), "*.example.org".into()];
    let f = test_frame::frame_as_is(&mut app, 200, 40);
    assert!(f.contains("198.51.100.7:443 allowed for this run"), "{f}");
    assert!(
        f.contains("registry.example.org allowed for this run"),
        "{f}"
    );
    assert!(
        f.contains("10.99.0.1:18080 deny 10.0.0.0/8 (default)"),
        "{f}"
    );
    let e = entry([10, 99, 0, 1], 18080, None);
    assert!(
        allowed_now(&["10.99.0.1".into()], &e),
        "an address rule covers every port"
    );
    assert!(!allowed_now(&["10.99.0.1:80".into()], &e));
    let n = entry([0, 0, 0, 0], 53, Some("example.org"));
    assert!(
        !allowed_now(&["*.example.org".into()], &n),
        "a wildcard is strictly below"
    );
}
