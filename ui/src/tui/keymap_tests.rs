use super::*;

fn ev(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, mods)
}

fn ch(c: char) -> KeyEvent {
    ev(KeyCode::Char(c), KeyModifiers::NONE)
}

fn spec(s: &str) -> KeySpec {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

#[test]
fn key_specs_parse_and_display_as_typed() {
    for s in [
        "ctrl-b",
        "alt-left",
        "%",
        "\"",
        "shift-tab",
        "f1",
        "f12",
        "space",
        "esc",
        "enter",
        "pageup",
        "pagedown",
        "ctrl-alt-x",
        "A",
        "-",
        "ctrl--",
        "tab",
        "backspace",
        "home",
        "é",
    ] {
        assert_eq!(spec(s).to_string(), s);
    }
    assert_eq!(spec("CTRL-B"), spec("ctrl-b"));
    assert_eq!(spec("ctrl-B"), spec("ctrl-b"));
    assert_eq!(spec("shift-a"), spec("A"));
    assert_eq!(spec("escape").to_string(), "esc");
    assert_eq!(spec("pgup").to_string(), "pageup");
    assert_eq!(spec(" ").to_string(), "space");
    assert_eq!(spec("shift-%"), spec("%"));
}

#[test]
fn bad_key_specs_say_what_to_write() {
    for s in ["", "ctrl-", "foo", "f25", "f0", "hyper-x", "ctrl-foo", "\t"] {
        let e = s.parse::<KeySpec>().err().unwrap_or_default();
        assert!(e.starts_with("unknown key"), "{s:?}: {e}");
        assert!(e.contains("ctrl-b"), "{e}");
    }
}

#[test]
fn events_match_ignoring_shift_on_characters() {
    let km = Keymap::default();
    assert!(km.is_prefix(&ev(KeyCode::Char('b'), KeyModifiers::CONTROL)));
    assert!(!km.is_prefix(&ch('b')));
    let mut release = ev(KeyCode::Char('b'), KeyModifiers::CONTROL);
    release.kind = KeyEventKind::Release;
    assert!(!km.is_prefix(&release));
    let shifted = |c| ev(KeyCode::Char(c), KeyModifiers::SHIFT);
    assert_eq!(km.after_prefix(&shifted('%')), Some(Action::SplitRight));
    assert_eq!(km.after_prefix(&ch('%')), Some(Action::SplitRight));
    assert_eq!(km.after_prefix(&shifted('"')), Some(Action::SplitDown));
    assert_eq!(km.after_prefix(&shifted('?')), Some(Action::Help));
    assert_eq!(
        spec("shift-tab"),
        KeySpec::from_event(&ev(KeyCode::BackTab, KeyModifiers::SHIFT))
    );
    assert_eq!(
        spec("shift-tab"),
        KeySpec::from_event(&ev(KeyCode::Tab, KeyModifiers::SHIFT))
    );
    // SUPER and friends do not count.
    assert_eq!(
        km.after_prefix(&ev(KeyCode::Char('z'), KeyModifiers::SUPER)),
        Some(Action::Zoom)
    );
    // But ctrl does.
    assert_eq!(
        km.after_prefix(&ev(KeyCode::Char('z'), KeyModifiers::CONTROL)),
        None
    );
}

#[test]
fn default_bindings_follow_tmux() {
    let km = Keymap::default();
    let cases = [
        (ch('c'), Action::NewPane),
        (ch('t'), Action::NewTab),
        (ch('n'), Action::NextTab),
        (ch('p'), Action::PrevTab),
        (ch('h'), Action::FocusLeft),
        (ev(KeyCode::Left, KeyModifiers::NONE), Action::FocusLeft),
        (ch('l'), Action::FocusRight),
        (ch('k'), Action::FocusUp),
        (ch('j'), Action::FocusDown),
        (ev(KeyCode::Down, KeyModifiers::NONE), Action::FocusDown),
        (ch('o'), Action::FocusNext),
        (ch('z'), Action::Zoom),
        (ch('x'), Action::ClosePane),
        (ch('a'), Action::Escalations),
        (ch('w'), Action::Denials),
        (ch('i'), Action::DomainState),
        (ch('s'), Action::SessionPicker),
        (ch('d'), Action::Detach),
        (ch('b'), Action::TogglePanels),
        (ch('['), Action::ScrollUp),
        (ev(KeyCode::PageUp, KeyModifiers::NONE), Action::ScrollUp),
        (ch(']'), Action::ScrollDown),
        (
            ev(KeyCode::PageDown, KeyModifiers::NONE),
            Action::ScrollDown,
        ),
        (ch('q'), Action::Quit),
        (ch('y'), Action::CopyMode),
        (
            ev(KeyCode::Char('b'), KeyModifiers::CONTROL),
            Action::SendPrefix,
        ),
    ];
    for (e, a) in cases {
        assert_eq!(km.after_prefix(&e), Some(a), "{e:?}");
    }
    assert_eq!(km.after_prefix(&ch('m')), None);
    let panel = [
        (ch('a'), PanelAction::Approve),
        (ch('y'), PanelAction::Approve),
        (ch('e'), PanelAction::Edit),
        (ch('d'), PanelAction::Deny),
        (ch('n'), PanelAction::Deny),
        (ch('k'), PanelAction::Up),
        (ev(KeyCode::Up, KeyModifiers::NONE), PanelAction::Up),
        (ch('j'), PanelAction::Down),
        (ev(KeyCode::Esc, KeyModifiers::NONE), PanelAction::Back),
    ];
    for (e, a) in panel {
        assert_eq!(km.in_panel(&e), Some(a), "{e:?}");
    }
    assert_eq!(km.in_panel(&ch('x')), None);
}

#[test]
fn every_action_has_a_distinct_name_and_a_default_key() {
    let km = Keymap::default();
    for a in Action::ALL {
        assert_eq!(Action::from_name(a.name()), Some(a));
        assert!(!km.keys(a).is_empty(), "{a:?}");
        let from_serde: Result<Action, _> =
            toml::from_str::<BTreeMapOf>(&format!("a = \"{}\"", a.name())).map(|m| m.a);
        assert_eq!(from_serde.ok(), Some(a));
    }
    for a in PanelAction::ALL {
        assert_eq!(PanelAction::from_name(a.name()), Some(a));
        assert!(!km.panel_keys(a).is_empty(), "{a:?}");
    }
}

#[derive(serde::Deserialize)]
struct BTreeMapOf {
    a: Action,
}

#[test]
fn help_rows_are_typed_keys_in_a_stable_order() {
    let mut km = Keymap::default();
    let help = km.help();
    assert_eq!(help.len(), Action::ALL.len() + PanelAction::ALL.len());
    assert_eq!(help[0].0, "ctrl-b c");
    assert_eq!(help[1].0, "ctrl-b %");
    assert_eq!(help[2].0, "ctrl-b \"");
    assert_eq!(help[4].0, "ctrl-b N");
    assert_eq!(help[7].0, "ctrl-b left, ctrl-b h");
    assert_eq!(
        help[26],
        (
            "ctrl-b ctrl-b".to_owned(),
            Action::SendPrefix.description().to_owned()
        )
    );
    assert_eq!(help[27].0, "a, y");
    assert_eq!(help[32].0, "esc");
    km.set_prefix(spec("ctrl-a"));
    km.bind(Action::Zoom, vec![]);
    let help = km.help();
    assert_eq!(help.len(), Action::ALL.len() + PanelAction::ALL.len() - 1);
    assert_eq!(help[0].0, "ctrl-a c");
    assert!(help.iter().any(|r| r.0 == "ctrl-a ctrl-a"));
}

#[test]
fn send_prefix_follows_the_prefix_unless_rebound() {
    let mut km = Keymap::default();
    km.set_prefix(spec("ctrl-a"));
    assert_eq!(km.keys(Action::SendPrefix), [spec("ctrl-a")]);
    km.bind(Action::SendPrefix, vec![spec("a"), spec("a")]);
    km.set_prefix(spec("ctrl-x"));
    assert_eq!(km.keys(Action::SendPrefix), [spec("a")]);
    assert_eq!(km.prefix(), &spec("ctrl-x"));
}

#[test]
fn every_default_key_string_parses() {
    for a in Action::ALL.into_iter().filter(|a| *a != Action::SendPrefix) {
        assert_eq!(
            a.info().1.split(' ').count(),
            a.default_keys().len(),
            "{a:?}"
        );
    }
    for a in PanelAction::ALL {
        assert_eq!(
            a.info().1.split(' ').count(),
            a.default_keys().len(),
            "{a:?}"
        );
    }
}
