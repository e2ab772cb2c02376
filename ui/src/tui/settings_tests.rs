use super::*;
use crate::tui::theme::Role;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::os::unix::fs::PermissionsExt;

fn parse(text: &str) -> Result<Settings, String> {
    Settings::parse(text, "~/tui.toml", Path::new("/nonexistent/themes"))
}

fn err(text: &str) -> String {
    parse(text).err().unwrap_or_default()
}

fn ch(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

fn key(s: &str) -> KeySpec {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn write(path: &Path, text: &str, mode: u32) -> std::io::Result<()> {
    std::fs::write(path, text)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[test]
fn an_empty_or_absent_file_gives_the_defaults() -> Result<(), Box<dyn std::error::Error>> {
    let s = parse("")?;
    assert_eq!(s.theme.name, "dark");
    assert_eq!(s.scrollback, 5000);
    assert!(s.panels);
    assert_eq!(s.keymap, Keymap::default());
    let t = tempfile::tempdir()?;
    let s = Settings::load(t.path())?;
    assert_eq!((s.theme.name.as_str(), s.scrollback), ("dark", 5000));
    let d = Settings::default();
    assert_eq!(
        (d.scrollback, d.panels, d.theme.name.as_str()),
        (5000, true, "dark")
    );
    Ok(())
}

#[test]
fn values_override_the_defaults() -> Result<(), String> {
    let s = parse(
        "theme = \"light\"\nscrollback = 0\npanels = false\n[keys]\nprefix = \"ctrl-a\"\n\
         split-right = \"|\"\nsplit-down = \"-\"\n[keys.panel]\napprove = \"enter\"\n",
    )?;
    assert_eq!(s.theme.name, "light");
    assert_eq!(s.scrollback, 0);
    assert!(!s.panels);
    let km = &s.keymap;
    assert!(km.is_prefix(&KeyEvent::new(KeyCode::Char('a'), KeyModifiers::CONTROL)));
    assert_eq!(km.after_prefix(&ch('|')), Some(Action::SplitRight));
    assert_eq!(km.after_prefix(&ch('%')), None);
    assert_eq!(km.after_prefix(&ch('-')), Some(Action::SplitDown));
    assert_eq!(km.keys(Action::SendPrefix), [key("ctrl-a")]);
    let enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(km.in_panel(&enter), Some(PanelAction::Approve));
    assert_eq!(km.in_panel(&ch('y')), None);
    assert_eq!(km.in_panel(&ch('e')), Some(PanelAction::Edit));
    assert_eq!(parse("scrollback = 100000\n")?.scrollback, 100_000);
    Ok(())
}

#[test]
fn a_binding_may_be_a_list_or_empty() -> Result<(), String> {
    let s = parse("[keys]\nfocus-left = [\"h\", \"alt-left\", \"h\"]\nzoom = []\n")?;
    assert_eq!(
        s.keymap.keys(Action::FocusLeft),
        [key("h"), key("alt-left")]
    );
    assert!(s.keymap.keys(Action::Zoom).is_empty());
    assert_eq!(s.keymap.after_prefix(&ch('z')), None);
    Ok(())
}

#[test]
fn a_key_bound_twice_names_both_actions() {
    let e = err("[keys]\nsplit-right = \"h\"\n");
    assert_eq!(
        e,
        "~/tui.toml:2:15: `ctrl-b h` is bound to both split-right and focus-left (by default); \
         bind one of them to another key"
    );
    let e = err("[keys]\nzoom = \"m\"\nquit = [\"q\", \"m\"]\n");
    assert!(
        e.starts_with("~/tui.toml:3:14: `ctrl-b m` is bound to both zoom and quit"),
        "{e}"
    );
    // Moving the default away first resolves it.
    assert!(parse("[keys]\nsplit-right = \"h\"\nfocus-left = \"left\"\n").is_ok());
    let e = err("[keys.panel]\nedit = \"d\"\n");
    assert!(
        e.starts_with("~/tui.toml:2:8: `d` in the escalations panel is bound to both"),
        "{e}"
    );
    assert!(e.contains("edit and deny (by default)"), "{e}");
    // The new prefix is send-prefix's key; binding it to something else too is a conflict.
    let e = err("[keys]\nprefix = \"ctrl-a\"\nnew-pane = \"ctrl-a\"\n");
    assert!(
        e.contains("both new-pane and send-prefix (by default)"),
        "{e}"
    );
    // The after-prefix keys and the panel keys are separate.
    assert!(parse("[keys.panel]\ndeny = \"x\"\n").is_ok());
}

#[test]
fn bad_values_are_located_and_explained() {
    let e = err("[keys]\nprefix = \"ctrl-\"\n");
    assert!(
        e.starts_with("~/tui.toml:2:10: unknown key \"ctrl-\"; write one character"),
        "{e}"
    );
    let e = err("[keys]\nzoom = [\"z\", \"zz\"]\n");
    assert!(e.starts_with("~/tui.toml:2:14: unknown key \"zz\""), "{e}");
    let e = err("[keys]\nprefix = [\"ctrl-a\"]\n");
    assert!(
        e.starts_with("~/tui.toml:2:10: prefix takes one key"),
        "{e}"
    );
    let e = err("scrollback = 100001\n");
    assert_eq!(
        e,
        "~/tui.toml:1:14: scrollback is 100001; use 0 to 100000 lines"
    );
    assert!(err("scrollback = -1\n").starts_with("~/tui.toml:1:14: scrollback is -1"));
    let e = err("[keys]\npanel = \"a\"\n");
    assert!(
        e.starts_with("~/tui.toml:2:9: panel must be a table"),
        "{e}"
    );
    let e = err("[keys]\nzoom = 1\n");
    assert!(e.starts_with("~/tui.toml:2:8: invalid type"), "{e}");
    assert!(e.contains("a list of keys"), "{e}");
    let e = err("[keys.zoom]\nx = \"y\"\n");
    assert!(e.contains("expected a key or a list of keys"), "{e}");
}

#[test]
fn unknown_keys_and_actions_are_errors() {
    let e = err("\n[keys]\nsplit-left = \"%\"\n");
    assert!(
        e.starts_with("~/tui.toml:3:1: unknown action \"split-left\" in [keys]"),
        "{e}"
    );
    assert!(e.contains("split-right"), "{e}");
    let e = err("[keys.panel]\naccept = \"a\"\n");
    assert!(
        e.starts_with("~/tui.toml:2:1: unknown panel action \"accept\""),
        "{e}"
    );
    assert!(e.contains("approve, edit, deny, up, down, back"), "{e}");
    let e = err("panels = true\nthemes = \"x\"\n");
    assert!(
        e.starts_with("~/tui.toml:2:1: unknown field `themes`"),
        "{e}"
    );
    assert!(e.contains("docs/tui-config.md"), "{e}");
    // Every problem is reported, in file order.
    let e = err("[keys]\nzoom = \"nope\"\nfoo = \"x\"\n");
    assert_eq!(e.lines().count(), 2, "{e}");
    assert!(
        e.lines()
            .nth(1)
            .unwrap_or_default()
            .starts_with("~/tui.toml:3:1:"),
        "{e}"
    );
}

#[test]
fn themes_come_from_the_themes_dir_first() -> Result<(), Box<dyn std::error::Error>> {
    let t = tempfile::tempdir()?;
    let themes = t.path().join("themes");
    std::fs::create_dir(&themes)?;
    write(
        &themes.join("dark.toml"),
        "[roles]\nfocus = { fg = \"red\" }\n",
        0o600,
    )?;
    write(&themes.join("mine.toml"), "name = \"mine\"\n", 0o600)?;
    // No theme named: the user's dark.toml overrides the built-in dark.
    let s = Settings::load(t.path())?;
    assert_eq!(
        s.theme.style(Role::Focus).fg,
        Some(ratatui::style::Color::Red)
    );
    write(&t.path().join("tui.toml"), "theme = \"mine\"\n", 0o600)?;
    assert_eq!(Settings::load(t.path())?.theme.name, "mine");
    write(
        &t.path().join("tui.toml"),
        "theme = \"high-contrast\"\n",
        0o600,
    )?;
    assert_eq!(Settings::load(t.path())?.theme.name, "high-contrast");
    write(&t.path().join("tui.toml"), "\ntheme = \"nope\"\n", 0o600)?;
    let e = Settings::load(t.path()).err().unwrap_or_default();
    assert!(
        e.contains("tui.toml:2:9: no theme \"nope\": looked for"),
        "{e}"
    );
    assert!(
        e.contains("use one of dark, light, high-contrast, mine"),
        "{e}"
    );
    write(
        &themes.join("mine.toml"),
        "[roles]\nwarning = { fg = \"x\" }\n",
        0o600,
    )?;
    write(&t.path().join("tui.toml"), "theme = \"mine\"\n", 0o600)?;
    let e = Settings::load(t.path()).err().unwrap_or_default();
    assert!(e.contains("mine.toml:2:18: unknown colour \"x\""), "{e}");
    Ok(())
}

#[test]
fn the_file_must_be_trusted() -> Result<(), Box<dyn std::error::Error>> {
    let t = tempfile::tempdir()?;
    let f = t.path().join("tui.toml");
    write(&f, "panels = false\n", 0o620)?;
    let e = Settings::load(t.path()).err().unwrap_or_default();
    assert!(e.contains("tui.toml: has mode 620"), "{e}");
    assert!(e.contains("chmod go-w"), "{e}");
    write(&f, "panels = false\n", 0o644)?;
    assert!(!Settings::load(t.path())?.panels);
    Ok(())
}

#[test]
fn help_rows_reflect_overrides() -> Result<(), String> {
    let s = parse("[keys]\nprefix = \"ctrl-a\"\nsplit-right = [\"|\", \"v\"]\nhelp = \"f1\"\n")?;
    let help = s.keymap.help();
    let row = |d: &str| help.iter().find(|r| r.1 == d).map(|r| r.0.clone());
    assert_eq!(
        row(Action::SplitRight.description()).as_deref(),
        Some("ctrl-a |, ctrl-a v")
    );
    assert_eq!(
        row(Action::Help.description()).as_deref(),
        Some("ctrl-a f1")
    );
    assert_eq!(
        row(Action::NewPane.description()).as_deref(),
        Some("ctrl-a c")
    );
    assert_eq!(
        row(Action::SendPrefix.description()).as_deref(),
        Some("ctrl-a ctrl-a")
    );
    Ok(())
}

#[test]
fn the_examples_in_the_docs_are_valid() -> Result<(), String> {
    let doc = include_str!("../../../docs/tui-config.md");
    let blocks: Vec<&str> = doc
        .split("```toml\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .collect();
    assert_eq!(blocks.len(), 3);
    let s = parse(blocks[0])?;
    assert_eq!(s.keymap.keys(Action::FocusLeft), [key("h"), key("left")]);
    assert_eq!(s.alerts, AlertSettings::default());
    let a = parse(blocks[1])?.alerts;
    assert!(a.bell && a.notify == Notify::Osc9 && a.command[0] == "notify-send");
    let t = Theme::parse(blocks[2], "mine.toml")?;
    assert_eq!(t.name, "mine");
    Ok(())
}

#[test]
fn alerts_are_off_unless_the_file_turns_them_on_and_bad_ones_are_explained() -> Result<(), String> {
    assert_eq!(parse("")?.alerts, AlertSettings::default());
    let s = parse(
        "[alerts]\nbell = true\nnotify = \"osc777\"\ncommand = [\"notify-send\", \"Lazaret\"]\n",
    )?;
    assert!(s.alerts.bell);
    assert_eq!(s.alerts.notify, Notify::Osc777);
    assert_eq!(s.alerts.command, ["notify-send", "Lazaret"]);
    let e = err("[alerts]\nnotify = \"desktop\"\n");
    assert!(
        e.starts_with(
            "~/tui.toml:2:10: notify is \"desktop\"; use \"osc9\", \"osc777\" or \"none\""
        ),
        "{e}"
    );
    let e = err("[alerts]\ncommand = []\n");
    assert!(e.contains("command is the argv of a host program"), "{e}");
    let e = err("[alerts]\nsound = true\n");
    assert!(e.contains("unknown field `sound`"), "{e}");
    Ok(())
}
