//! The denials panel's selection and what it asks before acting. Offline: no coordinator; the
//! answers a coordinator would send are handed in directly.

use super::super::app::{App, Focus};
use super::super::test_frame::{self, offline_app};
use super::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use lazaret_protocol::messages::ClientMessage;
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

fn held(target: &str, protocol: &str, since: u64, deadline: u64) -> HeldEntry {
    HeldEntry {
        target: target.into(),
        protocol: protocol.into(),
        since,
        deadline,
        count: 2,
    }
}

/// The app with two held entries (sent by its coordinator, as a link event) and a link that
/// records what the panel asks of the coordinator.
fn app_holding() -> (App, lazaret_client::link::LinkProbe) {
    let mut app = app();
    app.clock = Some(1_000);
    let domain = app.current_plan().domain_id();
    app.domain_denials
        .insert(domain.clone(), app.denials.clone());
    let (link, probe) =
        lazaret_client::link::DomainLink::unconnected(app.current_plan().address.clone());
    app.links.insert(&domain, std::sync::Arc::new(link));
    app.link_event(
        &domain,
        lazaret_client::link::LinkEvent::Held(vec![
            held("203.0.113.7:443", "tcp", 990, 1_012),
            held("pkg.example.net", "dns", 995, 1_055),
        ]),
    );
    app.follow_focus();
    // As `ctrl-b w` leaves it: the first held row selected.
    app.denial_selected = 0;
    (app, probe)
}

#[test]
fn held_rows_come_first_and_the_selection_covers_them() {
    let (mut app, _probe) = app_holding();
    let rows: Vec<String> = app.denial_rows().iter().map(Row::target).collect();
    assert_eq!(
        rows,
        [
            "203.0.113.7:443",
            "pkg.example.net",
            "198.51.100.7:443",
            "registry.example.org",
            "10.99.0.1:18080"
        ]
    );
    assert!(matches!(app.selected_row(), Some(Row::Held(_))));
    assert_eq!(app.selected_denial(), None, "a held row is no denial");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    assert_eq!(
        app.selected_denial().map(target_of).as_deref(),
        Some("198.51.100.7:443")
    );
    // The filter is for the denials: held rows stay.
    key(&mut app, KeyCode::Char('/'));
    for c in "10.99".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.denial_rows().len(), 3);
    let f = test_frame::frame_as_is(&mut app, 160, 40);
    assert!(
        f.contains("    ? 203.0.113.7:443 tcp  held 12s left"),
        "{f}"
    );
    assert!(f.contains("? pkg.example.net dns  held 55s left"), "{f}");
    assert!(f.contains("Network denials (1 of 3) · 2 held"), "{f}");
    assert!(f.contains("2 held"), "the tab bar counts them: {f}");
}

#[test]
fn a_allows_a_held_row_for_this_run_and_d_refuses_it() {
    let (mut app, mut probe) = app_holding();
    key(&mut app, KeyCode::Char('a'));
    assert_eq!(
        probe.next_request(),
        Some(ClientMessage::AllowDestination {
            target: "203.0.113.7:443".into(),
            private: false,
            save: SaveStep::No,
        })
    );
    assert_eq!(
        app.messages.front().map(String::as_str),
        Some("allowing 203.0.113.7:443 …")
    );
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Char('d'));
    assert_eq!(
        probe.next_request(),
        Some(ClientMessage::DenyDestination {
            target: "pkg.example.net".into()
        })
    );
    // `d` on a denial row refuses it for the run too.
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Char('d'));
    assert_eq!(
        probe.next_request(),
        Some(ClientMessage::DenyDestination {
            target: "198.51.100.7:443".into()
        })
    );
    // An auto-repeated key decides nothing.
    app.key(&KeyEvent::new_with_kind(
        KeyCode::Char('d'),
        KeyModifiers::NONE,
        crossterm::event::KeyEventKind::Repeat,
    ));
    assert_eq!(probe.next_request(), None);

    // The coordinator's answer shows in the message line.
    let domain = app.current_plan().domain_id();
    app.link_event(
        &domain,
        lazaret_client::link::LinkEvent::DestinationDenied {
            target: "198.51.100.7:443".into(),
            answer: answer(true, "refused 198.51.100.7:443 for this run", false, &[]),
        },
    );
    assert_eq!(
        app.messages.front().map(String::as_str),
        Some("refused 198.51.100.7:443 for this run")
    );
}

#[test]
fn a_selected_row_that_goes_away_is_never_replaced_by_another_under_the_key() {
    let (mut app, mut probe) = app_holding();
    let domain = app.current_plan().domain_id();
    key(&mut app, KeyCode::Down);
    assert_eq!(
        app.selected_row().map(|r| r.target()).as_deref(),
        Some("pkg.example.net")
    );
    // A held row before it goes: the selection stays on its row.
    let one_left = vec![held("pkg.example.net", "dns", 995, 1_055)];
    app.link_event(
        &domain,
        lazaret_client::link::LinkEvent::Held(one_left.clone()),
    );
    app.follow_focus();
    assert_eq!(
        app.selected_row().map(|r| r.target()).as_deref(),
        Some("pkg.example.net")
    );
    // Its own row goes (its time ran out): the next key only says so.
    app.link_event(&domain, lazaret_client::link::LinkEvent::Held(Vec::new()));
    app.follow_focus();
    assert!(app.domain_held.is_empty() && app.held.is_empty());
    key(&mut app, KeyCode::Char('a'));
    assert_eq!(probe.next_request(), None, "nothing acted on another row");
    assert!(app
        .messages
        .front()
        .is_some_and(|m| m.contains("went away")));
    // Looked again: the key acts.
    key(&mut app, KeyCode::Char('a'));
    assert!(matches!(
        probe.next_request(),
        Some(ClientMessage::AllowDestination { .. })
    ));

    // A row decided here going away is no surprise.
    app.link_event(&domain, lazaret_client::link::LinkEvent::Held(one_left));
    app.follow_focus();
    app.denial_selected = 0;
    key(&mut app, KeyCode::Char('d'));
    assert!(probe.next_request().is_some());
    app.link_event(&domain, lazaret_client::link::LinkEvent::Held(Vec::new()));
    app.follow_focus();
    assert!(!app.denial_moved);
}

#[test]
fn a_hostile_held_name_is_escaped_in_the_panel_the_status_line_and_the_alert() {
    let mut app = app();
    app.clock = Some(1_000);
    app.settings.alerts.notify = super::super::alerts::Notify::Osc9;
    let domain = app.current_plan().domain_id();
    let hostile = "evil\x1b]52\x07\n\u{202e}.x";
    app.link_event(
        &domain,
        lazaret_client::link::LinkEvent::Held(vec![held(hostile, "dns", 999, 1_030)]),
    );
    app.follow_focus();
    let f = test_frame::frame_as_is(&mut app, 200, 40);
    assert!(
        !f.contains('\u{1b}') && !f.contains('\u{7}') && !f.contains('\u{202e}'),
        "{f}"
    );
    assert!(
        f.contains(r"▶   ? evil\u{1b}]52\u{7}\n\u{202e}.x dns  held 30s left"),
        "{f}"
    );
    let sent = app.send_alerts(super::super::app_activity::now_ms());
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].kind, "held");
    let bytes = String::from_utf8(app.host_bytes.clone()).unwrap_or_default();
    assert_eq!(
        bytes,
        "\x1b]9;Lazaret: network: the sandbox waits for a destination — a allow, d deny in \
         the denials panel\x07",
        "the host terminal never gets the sandbox's name unless it is plain"
    );
    let status = app.messages.front().cloned().unwrap_or_default();
    assert!(
        status.starts_with(r"network: the sandbox waits for evil\u{1b}]52"),
        "{status}"
    );
    assert!(
        status.ends_with("ctrl-b w, then a allows · d denies"),
        "{status}"
    );
    assert!(!status.contains('\u{1b}') && !status.contains('\n'));
    app.host_bytes.clear();
    assert!(
        app.send_alerts(super::super::app_activity::now_ms())
            .is_empty(),
        "once"
    );
}

#[test]
fn a_held_entry_is_noticed_with_the_panels_hidden() {
    let (mut app, _probe) = app_holding();
    app.focus = Focus::Panes;
    let f = test_frame::frame(&mut app, 160, 30);
    assert!(!f.contains("held 12s left"), "no panel: {f}");
    assert!(
        f.lines().next().is_some_and(|l| l.contains("2 held")),
        "{f}"
    );
    let sent = app.send_alerts(super::super::app_activity::now_ms());
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].text(),
        "Lazaret: network: the sandbox waits for 203.0.113.7:443 (and 1 more) — a allow, d \
         deny in the denials panel"
    );
    // `ctrl-b w` shows the panel with the first held row selected.
    app.denial_selected = 3;
    key(&mut app, KeyCode::Char('b'));
    app.key(&KeyEvent::new(KeyCode::Char('b'), KeyModifiers::CONTROL));
    key(&mut app, KeyCode::Char('w'));
    assert_eq!(app.focus, Focus::Denials);
    assert!(app.panels);
    assert_eq!(
        app.selected_row().map(|r| r.target()).as_deref(),
        Some("203.0.113.7:443")
    );
}

#[test]
fn a_allows_the_narrow_form_and_w_every_port() {
    use super::allow_form;
    assert_eq!(
        allow_form("registry.example.org", "dns", false),
        "registry.example.org:443"
    );
    assert_eq!(
        allow_form("registry.example.org", "dns", true),
        "registry.example.org"
    );
    assert_eq!(
        allow_form("203.0.113.7:8443", "tcp", false),
        "203.0.113.7:8443"
    );
    assert_eq!(allow_form("203.0.113.7:8443", "udp", true), "203.0.113.7");
}
