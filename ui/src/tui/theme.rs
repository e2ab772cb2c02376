//! Themes: a style per semantic [`Role`]. Three are built in (`themes/*.toml`, compiled in);
//! a user's `<config dir>/themes/<name>.toml` adds one or replaces a built-in of the same name.
//! A role a file leaves out keeps the built-in dark theme's style. The format is in
//! `docs/tui-config.md`.

use super::settings::{show_path, toml_error};
use lazaret_client::config::location::{ConfigError, Diagnostic, Source};
use ratatui::style::{Color, Modifier, Style};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;
use toml::Spanned;

/// What a piece of the interface is; a theme gives each role a style.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    Text,
    Dim,
    Border,
    /// Border of the focused pane or panel.
    Focus,
    Title,
    Tab,
    TabActive,
    /// The status bar.
    Status,
    /// An escalation waiting for a decision.
    Pending,
    Approved,
    Denied,
    /// Failures and destructive actions.
    Danger,
    /// The selected list row; the pane an escalation came from.
    Highlight,
    Warning,
    /// Keys in the help overlay and hints.
    HelpKey,
}

const ROLES: usize = 15;

impl Role {
    /// Every role, in the order of the theme files.
    pub const ALL: [Role; ROLES] = [
        Role::Text,
        Role::Dim,
        Role::Border,
        Role::Focus,
        Role::Title,
        Role::Tab,
        Role::TabActive,
        Role::Status,
        Role::Pending,
        Role::Approved,
        Role::Denied,
        Role::Danger,
        Role::Highlight,
        Role::Warning,
        Role::HelpKey,
    ];

    /// The role's key under `[roles]`.
    pub fn key(self) -> &'static str {
        match self {
            Role::Text => "text",
            Role::Dim => "dim",
            Role::Border => "border",
            Role::Focus => "focus",
            Role::Title => "title",
            Role::Tab => "tab",
            Role::TabActive => "tab_active",
            Role::Status => "status",
            Role::Pending => "pending",
            Role::Approved => "approved",
            Role::Denied => "denied",
            Role::Danger => "danger",
            Role::Highlight => "highlight",
            Role::Warning => "warning",
            Role::HelpKey => "help_key",
        }
    }

    fn from_key(key: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.key() == key)
    }
}

/// A named set of styles, one per [`Role`].
#[derive(Clone, Debug)]
pub struct Theme {
    pub name: String,
    styles: [Style; ROLES],
}

const BUILTINS: [(&str, &str); 3] = [
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
];

const BUILTIN_NAMES: [&str; 3] = [BUILTINS[0].0, BUILTINS[1].0, BUILTINS[2].0];

impl Default for Theme {
    /// The built-in dark theme.
    fn default() -> Theme {
        Theme {
            name: "dark".to_owned(),
            styles: *dark_styles(),
        }
    }
}

impl Theme {
    /// The style of `role`.
    pub fn style(&self, role: Role) -> Style {
        self.styles[role as usize]
    }

    /// A built-in theme by name.
    pub fn builtin(name: &str) -> Option<Theme> {
        let (_, text) = BUILTINS.iter().find(|(n, _)| *n == name)?;
        Theme::parse(text, &builtin_file(name)).ok()
    }

    /// Names of the built-in themes.
    pub fn builtin_names() -> &'static [&'static str] {
        &BUILTIN_NAMES
    }

    /// `name` from `user_dir/<name>.toml` if that file exists (it overrides a built-in of the
    /// same name), else the built-in; the error says where it looked and lists the themes.
    pub fn load(name: &str, user_dir: &Path) -> Result<Theme, String> {
        Theme::find(name, user_dir)?.ok_or_else(|| not_found(name, user_dir))
    }

    /// Parses a theme file reported as `file`; roles it leaves out keep the dark theme's style.
    pub fn parse(text: &str, file: &str) -> Result<Theme, String> {
        parse_over(text, file, dark_styles()).map_err(|e| e.to_string())
    }

    /// Like [`Theme::load`], but `Ok(None)` when no theme has that name. The user's file is
    /// read under the trust rule of the host configuration (it decides how approvals look).
    pub(crate) fn find(name: &str, user_dir: &Path) -> Result<Option<Theme>, String> {
        if !valid_name(name) {
            return Ok(None);
        }
        let path = user_dir.join(format!("{name}.toml"));
        let shown = show_path(&path);
        match lazaret_client::config::trust::read_trusted(&path, &shown) {
            Err(e) => Err(format!("{e:#}")),
            Ok(Some(text)) => Theme::parse(&text, &shown).map(Some),
            Ok(None) => Ok(Theme::builtin(name)),
        }
    }
}

/// The message for a theme that is neither in `user_dir` nor built in.
pub(crate) fn not_found(name: &str, user_dir: &Path) -> String {
    let mut names: Vec<String> = BUILTIN_NAMES.iter().map(|n| (*n).to_owned()).collect();
    if let Ok(entries) = std::fs::read_dir(user_dir) {
        for e in entries.flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            if let Some(stem) = file.strip_suffix(".toml") {
                if valid_name(stem) && !names.iter().any(|n| n == stem) {
                    names.push(stem.to_owned());
                }
            }
        }
    }
    names[BUILTIN_NAMES.len()..].sort();
    let rule = if valid_name(name) {
        ""
    } else {
        " (a theme name is a file name: letters, digits, `-` and `_`)"
    };
    format!(
        "no theme {name:?}{rule}: looked for {} and the built-in themes; use one of {}, or create \
         that file (see docs/tui-config.md)",
        show_path(&user_dir.join(format!("{name}.toml"))),
        names.join(", ")
    )
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn builtin_file(name: &str) -> String {
    format!("<built-in>/themes/{name}.toml")
}

/// The dark theme's styles: the base every other theme inherits from.
fn dark_styles() -> &'static [Style; ROLES] {
    static DARK: OnceLock<[Style; ROLES]> = OnceLock::new();
    DARK.get_or_init(|| {
        parse_over(BUILTINS[0].1, &builtin_file("dark"), &[Style::new(); ROLES])
            .map(|t| t.styles)
            .unwrap_or([Style::new(); ROLES])
    })
}

/// A theme file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTheme {
    name: Option<Spanned<String>>,
    #[serde(default)]
    roles: BTreeMap<Spanned<String>, RawStyle>,
}

#[derive(Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a style table such as { fg = \"white\", bold = true }"
)]
struct RawStyle {
    fg: Option<Spanned<RawColor>>,
    bg: Option<Spanned<RawColor>>,
    bold: Option<bool>,
    dim: Option<bool>,
    italic: Option<bool>,
    underline: Option<bool>,
    reversed: Option<bool>,
}

/// A colour as written: a name / `#rrggbb` / `"42"`, or a bare index `42`.
enum RawColor {
    Text(String),
    Index(i64),
}

impl<'de> Deserialize<'de> for RawColor {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawColor, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RawColor;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a colour: a name such as \"red\", \"#rrggbb\", or 0 to 255")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawColor, E> {
                Ok(RawColor::Text(v.to_owned()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawColor, E> {
                Ok(RawColor::Index(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// Colour names: ANSI (`bright-*`) and ratatui (`light-*`, `gray`, `dark-gray`) spellings.
/// `white` is the bright white, as in ratatui; the normal ANSI white is `gray`.
const COLORS: [(&str, Color); 26] = [
    ("reset", Color::Reset),
    ("black", Color::Black),
    ("red", Color::Red),
    ("green", Color::Green),
    ("yellow", Color::Yellow),
    ("blue", Color::Blue),
    ("magenta", Color::Magenta),
    ("cyan", Color::Cyan),
    ("gray", Color::Gray),
    ("grey", Color::Gray),
    ("dark-gray", Color::DarkGray),
    ("bright-black", Color::DarkGray),
    ("light-red", Color::LightRed),
    ("bright-red", Color::LightRed),
    ("light-green", Color::LightGreen),
    ("bright-green", Color::LightGreen),
    ("light-yellow", Color::LightYellow),
    ("bright-yellow", Color::LightYellow),
    ("light-blue", Color::LightBlue),
    ("bright-blue", Color::LightBlue),
    ("light-magenta", Color::LightMagenta),
    ("bright-magenta", Color::LightMagenta),
    ("light-cyan", Color::LightCyan),
    ("bright-cyan", Color::LightCyan),
    ("white", Color::White),
    ("bright-white", Color::White),
];

/// A colour value; the error says what is accepted.
fn color(raw: &RawColor) -> Result<Color, String> {
    let hint = "use an ANSI name (black, red, green, yellow, blue, magenta, cyan, white, gray, \
                dark-gray, bright-red, …), \"#rrggbb\", 0 to 255, or \"reset\"";
    let index = |n: i64| {
        u8::try_from(n)
            .map(Color::Indexed)
            .map_err(|_| format!("colour index {n} is out of range; {hint}"))
    };
    let s = match raw {
        RawColor::Index(n) => return index(*n),
        RawColor::Text(s) => s.as_str(),
    };
    if let Some((_, c)) = COLORS.iter().find(|(n, _)| *n == s) {
        return Ok(*c);
    }
    if let Some(hex) = s.strip_prefix('#') {
        if hex.len() == 6 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
            let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0);
            return Ok(Color::Rgb(byte(0), byte(2), byte(4)));
        }
    }
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) {
        return index(s.parse().unwrap_or(i64::MAX));
    }
    Err(format!("unknown colour {s:?}; {hint}"))
}

fn style(src: &Source, raw: &RawStyle, diags: &mut Vec<Diagnostic>) -> Style {
    let mut st = Style::new();
    for (value, is_fg) in [(&raw.fg, true), (&raw.bg, false)] {
        let Some(v) = value else { continue };
        match color(v.get_ref()) {
            Ok(c) if is_fg => st = st.fg(c),
            Ok(c) => st = st.bg(c),
            Err(m) => diags.push(src.diag(&v.span(), m)),
        }
    }
    let mods = [
        (raw.bold, Modifier::BOLD),
        (raw.dim, Modifier::DIM),
        (raw.italic, Modifier::ITALIC),
        (raw.underline, Modifier::UNDERLINED),
        (raw.reversed, Modifier::REVERSED),
    ];
    for (on, m) in mods {
        if on == Some(true) {
            st = st.add_modifier(m);
        }
    }
    st
}

/// Parses `text` with `base` for the roles it leaves out.
fn parse_over(text: &str, file: &str, base: &[Style; ROLES]) -> Result<Theme, ConfigError> {
    let src = Source::new(file, text);
    let raw: RawTheme = toml::from_str(text).map_err(|e| toml_error(&src, &e))?;
    let mut diags = Vec::new();
    let mut styles = *base;
    for (key, raw_style) in &raw.roles {
        match Role::from_key(key.get_ref()) {
            Some(role) => styles[role as usize] = style(&src, raw_style, &mut diags),
            None => diags.push(src.diag(
                &key.span(),
                format!(
                    "unknown role {:?}; the roles are {}",
                    key.get_ref(),
                    Role::ALL.map(Role::key).join(", ")
                ),
            )),
        }
    }
    let name = match &raw.name {
        Some(n) if n.get_ref().trim().is_empty() => {
            diags.push(src.diag(&n.span(), "the theme name is empty; name the theme"));
            String::new()
        }
        Some(n) => n.get_ref().clone(),
        None => file_stem(file),
    };
    if !diags.is_empty() {
        return Err(ConfigError::sorted(diags));
    }
    Ok(Theme { name, styles })
}

/// `x` of `…/x.toml`: the name of a theme file without `name`.
fn file_stem(file: &str) -> String {
    let base = file.rsplit('/').next().unwrap_or(file);
    base.strip_suffix(".toml").unwrap_or(base).to_owned()
}

#[cfg(test)]
#[path = "theme_tests.rs"]
mod tests;
