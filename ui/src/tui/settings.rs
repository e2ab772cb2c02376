//! `<config dir>/tui.toml`: the TUI's theme, scrollback, panels and keys. The file is optional
//! (absent: defaults) and read under the host configuration's trust rule
//! ([`lazaret_client::config::trust::read_trusted`]: a regular file of yours that group and others
//! cannot write). Errors are `FILE:LINE:COLUMN: what; what to do`. Format: `docs/tui-config.md`.

use super::alerts::{AlertSettings, Notify};
use super::keymap::{Action, KeySpec, Keymap, PanelAction};
use super::theme::{self, Theme};
use lazaret_client::config::location::{display_path, ConfigError, Diagnostic, Source};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use toml::Spanned;

/// The settings file's name inside the Lazaret config dir.
pub const SETTINGS_FILE_NAME: &str = "tui.toml";
/// The user themes' directory inside the Lazaret config dir.
pub const THEMES_DIR_NAME: &str = "themes";
/// How far back a pane may scroll when the file does not say.
pub const DEFAULT_SCROLLBACK: usize = 5000;
/// Largest `scrollback` accepted.
pub const MAX_SCROLLBACK: usize = 100_000;

/// The TUI settings, defaults filled in.
#[derive(Clone, Debug)]
pub struct Settings {
    pub theme: Theme,
    /// How many lines back a pane may scroll (scroll mode, mouse wheel); the coordinator keeps
    /// 5,000 lines of each session, so larger values scroll as far as that.
    pub scrollback: usize,
    /// Whether the side panels are shown at start.
    pub panels: bool,
    pub keymap: Keymap,
    /// `[alerts]`: what the TUI does outside itself when a pane starts needing you.
    pub alerts: AlertSettings,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            theme: Theme::default(),
            scrollback: DEFAULT_SCROLLBACK,
            panels: true,
            keymap: Keymap::default(),
            alerts: AlertSettings::default(),
        }
    }
}

impl Settings {
    /// Reads `dir/tui.toml` (dir = the Lazaret config dir) and `dir/themes/`; errors
    /// `FILE:LINE:COLUMN: what; what to do`.
    pub fn load(dir: &Path) -> Result<Settings, String> {
        let path = dir.join(SETTINGS_FILE_NAME);
        let shown = show_path(&path);
        let text = lazaret_client::config::trust::read_trusted(&path, &shown)
            .map_err(|e| format!("{e:#}"))?
            .unwrap_or_default();
        Settings::parse(&text, &shown, &dir.join(THEMES_DIR_NAME))
    }

    /// Parses settings text reported as `file`; themes are looked up in `themes_dir` first.
    pub fn parse(text: &str, file: &str, themes_dir: &Path) -> Result<Settings, String> {
        let src = Source::new(file, text);
        let raw: RawSettings =
            toml::from_str(text).map_err(|e| toml_error(&src, &e).to_string())?;
        let mut b = Builder {
            src: &src,
            diags: Vec::new(),
            keymap: Keymap::default(),
        };
        let mut s = Settings::default();
        if let Some(n) = &raw.scrollback {
            match usize::try_from(*n.get_ref()) {
                Ok(v) if v <= MAX_SCROLLBACK => s.scrollback = v,
                _ => b.diag(
                    &n.span(),
                    format!(
                        "scrollback is {}; use 0 to {MAX_SCROLLBACK} lines",
                        n.get_ref()
                    ),
                ),
            }
        }
        s.panels = raw.panels.unwrap_or(true);
        if let Some(a) = &raw.alerts {
            s.alerts = b.alerts(a);
        }
        b.keys(&raw.keys);
        let mut theme_error = None;
        let name = raw.theme.as_ref().map_or("dark", |t| t.get_ref().as_str());
        match Theme::find(name, themes_dir) {
            Ok(Some(t)) => s.theme = t,
            Ok(None) => match &raw.theme {
                Some(t) => b.diag(&t.span(), theme::not_found(name, themes_dir)),
                None => theme_error = Some(theme::not_found(name, themes_dir)),
            },
            Err(e) => theme_error = Some(e),
        }
        s.keymap = b.keymap;
        let mut lines: Vec<String> = Vec::new();
        if !b.diags.is_empty() {
            lines.push(ConfigError::sorted(b.diags).to_string());
        }
        lines.extend(theme_error);
        if lines.is_empty() {
            Ok(s)
        } else {
            Err(lines.join("\n"))
        }
    }
}

/// `tui.toml` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSettings {
    theme: Option<Spanned<String>>,
    scrollback: Option<Spanned<i64>>,
    panels: Option<bool>,
    #[serde(default)]
    keys: BTreeMap<Spanned<String>, Spanned<RawKeys>>,
    alerts: Option<RawAlerts>,
}

/// `[alerts]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAlerts {
    bell: Option<bool>,
    notify: Option<Spanned<String>>,
    command: Option<Spanned<Vec<String>>>,
}

/// A value under `[keys]`: one key, a list of keys, or the `[keys.panel]` table.
enum RawKeys {
    One(String),
    Many(Vec<Spanned<String>>),
    Table(BTreeMap<Spanned<String>, Spanned<RawKeys>>),
}

impl<'de> Deserialize<'de> for RawKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawKeys, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key such as \"ctrl-b\" or a list of keys such as [\"h\", \"left\"]")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawKeys, E> {
                Ok(RawKeys::One(v.to_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawKeys, A::Error> {
                let mut v = Vec::new();
                while let Some(k) = seq.next_element()? {
                    v.push(k);
                }
                Ok(RawKeys::Many(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawKeys, A::Error> {
                let mut t = BTreeMap::new();
                while let Some((k, v)) = map.next_entry()? {
                    t.insert(k, v);
                }
                Ok(RawKeys::Table(t))
            }
        }
        d.deserialize_any(V)
    }
}

/// A key the file binds, where it is written.
type Written<A> = (A, KeySpec, Range<usize>);

struct Builder<'a> {
    src: &'a Source,
    diags: Vec<Diagnostic>,
    keymap: Keymap,
}

impl Builder<'_> {
    fn diag(&mut self, span: &Range<usize>, message: String) {
        self.diags.push(self.src.diag(span, message));
    }

    fn alerts(&mut self, raw: &RawAlerts) -> AlertSettings {
        let mut a = AlertSettings {
            bell: raw.bell.unwrap_or(false),
            ..AlertSettings::default()
        };
        if let Some(n) = &raw.notify {
            match Notify::parse(n.get_ref()) {
                Some(v) => a.notify = v,
                None => self.diag(
                    &n.span(),
                    format!(
                        "notify is {:?}; use \"osc9\", \"osc777\" or \"none\"",
                        n.get_ref()
                    ),
                ),
            }
        }
        if let Some(c) = &raw.command {
            let argv = c.get_ref();
            if argv.first().is_none_or(|p| p.is_empty()) || argv.iter().any(|a| a.contains('\0')) {
                self.diag(
                    &c.span(),
                    "command is the argv of a host program, e.g. [\"notify-send\", \"Lazaret\"]; \
                     its first element names the program"
                        .to_owned(),
                );
            } else {
                a.command = argv.clone();
            }
        }
        a
    }

    /// Applies `[keys]` and `[keys.panel]` to the default keymap, then refuses shared keys.
    fn keys(&mut self, keys: &BTreeMap<Spanned<String>, Spanned<RawKeys>>) {
        let mut prefix_span = None;
        let mut written: Vec<Written<Action>> = Vec::new();
        let mut panel_written: Vec<Written<PanelAction>> = Vec::new();
        for (name, value) in in_file_order(keys) {
            match name.get_ref().as_str() {
                "prefix" => match value.get_ref() {
                    RawKeys::One(s) => match s.parse::<KeySpec>() {
                        Ok(k) => {
                            self.keymap.set_prefix(k);
                            prefix_span = Some(value.span());
                        }
                        Err(e) => self.diag(&value.span(), e),
                    },
                    _ => self.diag(
                        &value.span(),
                        "prefix takes one key; write e.g. prefix = \"ctrl-a\"".to_owned(),
                    ),
                },
                "panel" => match value.get_ref() {
                    RawKeys::Table(t) => {
                        for (pname, pvalue) in in_file_order(t) {
                            let Some(a) = PanelAction::from_name(pname.get_ref()) else {
                                let names = PanelAction::ALL.map(PanelAction::name).join(", ");
                                self.diag(
                                    &pname.span(),
                                    format!(
                                        "unknown panel action {:?} in [keys.panel]; the panel \
                                         actions are {names}",
                                        pname.get_ref()
                                    ),
                                );
                                continue;
                            };
                            let ks = self.key_list(pvalue);
                            self.keymap.bind_panel(a, ks.iter().map(|k| k.0).collect());
                            panel_written.extend(ks.into_iter().map(|(k, s)| (a, k, s)));
                        }
                    }
                    _ => self.diag(
                        &value.span(),
                        "panel must be a table of escalations-panel keys; write [keys.panel] \
                         with e.g. approve = \"a\""
                            .to_owned(),
                    ),
                },
                other => {
                    let Some(a) = Action::from_name(other) else {
                        let names = Action::ALL.map(Action::name).join(", ");
                        self.diag(
                            &name.span(),
                            format!(
                                "unknown action {other:?} in [keys]; the actions are {names} \
                                 (plus prefix and the [keys.panel] table)"
                            ),
                        );
                        continue;
                    };
                    let ks = self.key_list(value);
                    self.keymap.bind(a, ks.iter().map(|k| k.0).collect());
                    written.extend(ks.into_iter().map(|(k, s)| (a, k, s)));
                }
            }
        }
        let prefix = self.keymap.prefix().to_string();
        let fallback = prefix_span.unwrap_or(0..0);
        let after: Vec<_> = Action::ALL
            .iter()
            .map(|&a| (a, a.name(), self.keymap.keys(a).to_vec()))
            .collect();
        self.conflicts(&after, &written, &fallback, |k| format!("`{prefix} {k}`"));
        let panel: Vec<_> = PanelAction::ALL
            .iter()
            .map(|&a| (a, a.name(), self.keymap.panel_keys(a).to_vec()))
            .collect();
        self.conflicts(&panel, &panel_written, &fallback, |k| {
            format!("`{k}` in the escalations panel")
        });
    }

    /// The keys of one binding (`"h"` or `["h", "left"]`), each with its span.
    fn key_list(&mut self, value: &Spanned<RawKeys>) -> Vec<(KeySpec, Range<usize>)> {
        let items: Vec<(&str, Range<usize>)> = match value.get_ref() {
            RawKeys::One(s) => vec![(s.as_str(), value.span())],
            RawKeys::Many(v) => v.iter().map(|s| (s.get_ref().as_str(), s.span())).collect(),
            RawKeys::Table(_) => {
                self.diag(
                    &value.span(),
                    "expected a key or a list of keys, e.g. \"h\" or [\"h\", \"left\"]".to_owned(),
                );
                return Vec::new();
            }
        };
        let mut out = Vec::new();
        for (s, span) in items {
            match s.parse::<KeySpec>() {
                Ok(k) => out.push((k, span)),
                Err(e) => self.diag(&span, e),
            }
        }
        out
    }

    /// One error per key shared by two actions, at the file's binding of it.
    fn conflicts<A: Copy + PartialEq>(
        &mut self,
        table: &[(A, &str, Vec<KeySpec>)],
        written: &[Written<A>],
        fallback: &Range<usize>,
        show: impl Fn(&KeySpec) -> String,
    ) {
        for (i, (a, a_name, a_keys)) in table.iter().enumerate() {
            for (b, b_name, b_keys) in &table[i + 1..] {
                for k in a_keys.iter().filter(|k| b_keys.contains(k)) {
                    let span = written
                        .iter()
                        .filter(|(x, wk, _)| wk == k && (x == a || x == b))
                        .map(|w| w.2.clone())
                        .max_by_key(|s| s.start)
                        .unwrap_or_else(|| fallback.clone());
                    let note = |x: &A, name: &str| {
                        if written.iter().any(|w| w.0 == *x) {
                            name.to_owned()
                        } else {
                            format!("{name} (by default)")
                        }
                    };
                    self.diag(
                        &span,
                        format!(
                            "{} is bound to both {} and {}; bind one of them to another key",
                            show(k),
                            note(a, a_name),
                            note(b, b_name)
                        ),
                    );
                }
            }
        }
    }
}

fn in_file_order<V>(m: &BTreeMap<Spanned<String>, V>) -> Vec<(&Spanned<String>, &V)> {
    let mut v: Vec<_> = m.iter().collect();
    v.sort_by_key(|(k, _)| k.span().start);
    v
}

/// A toml syntax or shape error at its line, with what to do.
pub(crate) fn toml_error(src: &Source, e: &toml::de::Error) -> ConfigError {
    lazaret_client::config::location::toml_error(src, e, "docs/tui-config.md")
}

/// `path` with `$HOME` written as `~`, for messages.
pub(crate) fn show_path(path: &Path) -> String {
    match std::env::var_os("HOME").map(std::path::PathBuf::from) {
        Some(home) if home.is_absolute() => display_path(path, &home),
        _ => path.display().to_string(),
    }
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
