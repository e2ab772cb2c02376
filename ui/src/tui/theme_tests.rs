use super::*;
use std::os::unix::fs::PermissionsExt;

fn write(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

#[test]
fn every_builtin_parses_and_defines_every_role() -> Result<(), String> {
    assert_eq!(Theme::builtin_names(), ["dark", "light", "high-contrast"]);
    for (name, text) in BUILTINS {
        let theme = Theme::parse(text, &builtin_file(name))?;
        assert_eq!(theme.name, name);
        let raw: RawTheme = toml::from_str(text).map_err(|e| e.to_string())?;
        for role in Role::ALL {
            assert!(
                raw.roles.keys().any(|k| k.get_ref() == role.key()),
                "{name} does not define {}",
                role.key()
            );
        }
        assert!(Theme::builtin(name).is_some());
    }
    assert!(Theme::builtin("nope").is_none());
    Ok(())
}

#[test]
fn styles_come_from_the_file() -> Result<(), String> {
    let dark = Theme::builtin("dark").ok_or("no dark")?;
    assert_eq!(
        dark.style(Role::Focus),
        Style::new()
            .fg(Color::Rgb(0x5f, 0xd7, 0xff))
            .add_modifier(Modifier::BOLD)
    );
    assert_eq!(
        dark.style(Role::Pending),
        Style::new()
            .fg(Color::Black)
            .bg(Color::Yellow)
            .add_modifier(Modifier::BOLD)
    );
    assert_eq!(dark.style(Role::Status).bg, Some(Color::Indexed(236)));
    Ok(())
}

#[test]
fn high_contrast_tells_states_apart_without_colour() -> Result<(), String> {
    let hc = Theme::builtin("high-contrast").ok_or("no high-contrast")?;
    let mods = |r: Role| hc.style(r).add_modifier;
    let states = [Role::Pending, Role::Approved, Role::Denied, Role::Text];
    for (i, a) in states.iter().enumerate() {
        for b in &states[i + 1..] {
            assert_ne!(mods(*a), mods(*b), "{a:?} and {b:?}");
        }
    }
    assert!(mods(Role::Focus).contains(Modifier::BOLD));
    for role in Role::ALL {
        assert!(!mods(role).contains(Modifier::DIM), "{role:?}");
        let fg = hc.style(role).fg;
        assert!(
            !matches!(fg, Some(Color::Gray | Color::DarkGray)),
            "{role:?}"
        );
    }
    Ok(())
}

#[test]
fn colours_in_every_spelling() -> Result<(), String> {
    let t = Theme::parse(
        "[roles]\ntext = { fg = \"bright-white\", bg = \"reset\" }\n\
         dim = { fg = 8 }\nborder = { fg = \"208\" }\ntitle = { fg = \"#A0b0C0\" }\n\
         tab = { fg = \"dark-gray\", italic = true, underline = true, dim = true }\n",
        "t.toml",
    )?;
    assert_eq!(t.name, "t");
    assert_eq!(
        t.style(Role::Text),
        Style::new().fg(Color::White).bg(Color::Reset)
    );
    assert_eq!(t.style(Role::Dim).fg, Some(Color::Indexed(8)));
    assert_eq!(t.style(Role::Border).fg, Some(Color::Indexed(208)));
    assert_eq!(t.style(Role::Title).fg, Some(Color::Rgb(0xa0, 0xb0, 0xc0)));
    let m = Modifier::ITALIC | Modifier::UNDERLINED | Modifier::DIM;
    assert_eq!(t.style(Role::Tab).add_modifier, m);
    Ok(())
}

#[test]
fn missing_roles_inherit_from_dark() -> Result<(), String> {
    let t = Theme::parse(
        "name = \"mine\"\n[roles]\nfocus = { fg = \"red\" }\n",
        "x.toml",
    )?;
    let dark = Theme::builtin("dark").ok_or("no dark")?;
    assert_eq!(t.name, "mine");
    assert_eq!(t.style(Role::Focus), Style::new().fg(Color::Red));
    assert_eq!(t.style(Role::Pending), dark.style(Role::Pending));
    assert_eq!(
        Theme::default().style(Role::Pending),
        dark.style(Role::Pending)
    );
    Ok(())
}

#[test]
fn errors_name_file_line_and_what_to_do() {
    let err = |text: &str| Theme::parse(text, "~/t.toml").err().unwrap_or_default();
    let e = err("name = \"x\"\n[roles]\ntext = { fg = \"white\" }\nfocsu = { bold = true }\n");
    assert!(
        e.starts_with("~/t.toml:4:1: unknown role \"focsu\"; the roles are text,"),
        "{e}"
    );
    let e = err("[roles]\n\ntext = { fg = \"wite\" }\n");
    assert!(
        e.starts_with("~/t.toml:3:15: unknown colour \"wite\"; use an ANSI name"),
        "{e}"
    );
    let e = err("[roles]\ntext = { fg = 256 }\nfocus = { bg = \"#12345\" }\n");
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 2, "{e}");
    assert!(lines[0].starts_with("~/t.toml:2:15: colour index 256 is out of range"));
    assert!(lines[1].starts_with("~/t.toml:3:16: unknown colour \"#12345\""));
    let e = err("[roles]\ntext = { fg = \"red\", blod = true }\n");
    assert!(e.starts_with("~/t.toml:2:22: unknown field `blod`"), "{e}");
    assert!(e.contains("check the spelling"), "{e}");
    let e = err("colours = 1\n");
    assert!(
        e.starts_with("~/t.toml:1:1: unknown field `colours`"),
        "{e}"
    );
    let e = err("[roles]\ntext = \"white\"\n");
    assert!(e.starts_with("~/t.toml:2:8: invalid type"), "{e}");
    assert!(e.contains("style table"), "{e}");
}

#[test]
fn a_user_theme_overrides_a_builtin_and_adds_names() -> Result<(), Box<dyn std::error::Error>> {
    let t = tempfile::tempdir()?;
    write(
        &t.path().join("dark.toml"),
        "[roles]\nfocus = { fg = \"magenta\" }\n",
    )?;
    write(&t.path().join("solar.toml"), "name = \"solar\"\n")?;
    let dark = Theme::load("dark", t.path())?;
    assert_eq!(dark.style(Role::Focus), Style::new().fg(Color::Magenta));
    assert_eq!(Theme::load("solar", t.path())?.name, "solar");
    assert_eq!(Theme::load("light", t.path())?.name, "light");
    let e = Theme::load("nope", t.path()).err().unwrap_or_default();
    assert!(e.contains("nope.toml"), "{e}");
    assert!(
        e.contains("use one of dark, light, high-contrast, solar"),
        "{e}"
    );
    let e = Theme::load("../dark", t.path()).err().unwrap_or_default();
    assert!(e.contains("a theme name is a file name"), "{e}");
    Ok(())
}

#[test]
fn a_broken_or_untrusted_user_theme_is_an_error() -> Result<(), Box<dyn std::error::Error>> {
    let t = tempfile::tempdir()?;
    let f = t.path().join("light.toml");
    write(&f, "[roles]\ntext = { fg = \"nope\" }\n")?;
    let e = Theme::load("light", t.path()).err().unwrap_or_default();
    assert!(e.contains("light.toml:2:15: unknown colour"), "{e}");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666))?;
    let e = Theme::load("light", t.path()).err().unwrap_or_default();
    assert!(e.contains("chmod go-w"), "{e}");
    Ok(())
}
