//! Keys: a tmux-style prefix (`ctrl-b`) followed by one key for an [`Action`], and plain keys
//! inside the escalations panel ([`PanelAction`]). Key specs are written as users type them
//! (`ctrl-b`, `alt-left`, `%`, `shift-tab`, `f1`, `pageup`); see `docs/tui-config.md`.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::fmt;
use std::str::FromStr;

/// Declares an action enum with `ALL` (help order) and, per variant, its name in `tui.toml`,
/// its default keys (space-separated; none for `send-prefix`: the prefix) and its help text.
macro_rules! actions {
    ($(#[$m:meta])* $T:ident { $($V:ident = $name:literal, $keys:literal, $help:literal;)* }) => {
        $(#[$m])*
        pub enum $T { $($V,)* }

        impl $T {
            /// Every action, in help order.
            pub const ALL: [$T; [$($name),*].len()] = [$($T::$V),*];

            fn info(self) -> (&'static str, &'static str, &'static str) {
                match self { $($T::$V => ($name, $keys, $help),)* }
            }

            /// The kebab-case name used in `tui.toml`.
            pub fn name(self) -> &'static str {
                self.info().0
            }

            /// One line for the help overlay.
            pub fn description(self) -> &'static str {
                self.info().2
            }

            /// The action `name` denotes in `tui.toml`.
            pub fn from_name(name: &str) -> Option<$T> {
                $T::ALL.into_iter().find(|a| a.name() == name)
            }

            fn default_keys(self) -> Vec<KeySpec> {
                self.info().1.split(' ').filter_map(|k| k.parse().ok()).collect()
            }
        }
    };
}

actions! {
    /// What a key after the prefix does.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize)]
    #[serde(rename_all = "kebab-case")]
    Action {
        NewPane = "new-pane", "c", "New pane in this tab (splits the longer side)";
        SplitRight = "split-right", "%", "Split: new pane on the right";
        SplitDown = "split-down", "\"", "Split: new pane below";
        NewTab = "new-tab", "t", "New tab";
        NewPaneElsewhere = "new-pane-elsewhere", "N", "New tab with a pane in another workspace and/or profile";
        NextTab = "next-tab", "n", "Next tab";
        PrevTab = "prev-tab", "p", "Previous tab";
        FocusLeft = "focus-left", "left h", "Focus the pane on the left";
        FocusRight = "focus-right", "right l", "Focus the pane on the right";
        FocusUp = "focus-up", "up k", "Focus the pane above";
        FocusDown = "focus-down", "down j", "Focus the pane below";
        FocusNext = "focus-next", "o", "Focus the next pane";
        NextNeed = "next-need", "u", "Focus the next pane that needs you (escalation, bell, notification)";
        Zoom = "zoom", "z", "Zoom the focused pane (again: unzoom)";
        ClosePane = "close-pane", "x", "Close the focused pane";
        Escalations = "escalations", "a", "Escalations panel (approve / edit / deny)";
        Denials = "denials", "w", "Network denials panel";
        DomainState = "domain-state", "i", "Domain state panel";
        SessionPicker = "session-picker", "s", "Pick a session of any running Domain and show it in a new tab";
        Detach = "detach", "d", "Detach: leave the TUI; every session keeps running";
        TogglePanels = "toggle-panels", "b", "Show or hide the side panels";
        ScrollUp = "scroll-up", "[ pageup", "Scroll the focused pane up a page";
        ScrollDown = "scroll-down", "] pagedown", "Scroll the focused pane down a page";
        CopyMode = "copy-mode", "y", "Copy mode: v marks, y copies to the host clipboard, Esc leaves";
        Help = "help", "?", "This help";
        Quit = "quit", "q", "Quit the TUI (asks: end its sessions or detach)";
        SendPrefix = "send-prefix", "", "Send the prefix key to the focused pane";
    }
}

actions! {
    /// Keys inside the escalations panel (no prefix needed there).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    PanelAction {
        Approve = "approve", "a y", "Escalations: approve the selected request";
        Edit = "edit", "e", "Escalations: edit the command, then approve";
        Deny = "deny", "d n", "Escalations: deny the selected request";
        Up = "up", "up k", "Escalations: select the previous request";
        Down = "down", "down j", "Escalations: select the next request";
        Back = "back", "esc", "Escalations: back to the panes";
    }
}

/// One key with its modifiers, normalised so that it compares equal to the events terminals
/// send: SHIFT is dropped for characters (`%` arrives as shift-`%`), `ctrl-` letters are lower
/// case, and shift-tab is `BackTab`. Only ctrl, alt and shift count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeySpec {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

/// Key names other than single characters, as parsed and displayed (first spelling shown).
const NAMES: [(&str, KeyCode); 20] = [
    ("space", KeyCode::Char(' ')),
    ("esc", KeyCode::Esc),
    ("escape", KeyCode::Esc),
    ("enter", KeyCode::Enter),
    ("return", KeyCode::Enter),
    ("tab", KeyCode::Tab),
    ("backspace", KeyCode::Backspace),
    ("delete", KeyCode::Delete),
    ("del", KeyCode::Delete),
    ("insert", KeyCode::Insert),
    ("home", KeyCode::Home),
    ("end", KeyCode::End),
    ("pageup", KeyCode::PageUp),
    ("pgup", KeyCode::PageUp),
    ("pagedown", KeyCode::PageDown),
    ("pgdn", KeyCode::PageDown),
    ("up", KeyCode::Up),
    ("down", KeyCode::Down),
    ("left", KeyCode::Left),
    ("right", KeyCode::Right),
];

impl KeySpec {
    /// `code` with `mods`, normalised.
    pub fn new(code: KeyCode, mods: KeyModifiers) -> KeySpec {
        let mut mods = mods & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        let code = match code {
            KeyCode::Char(c) if mods.contains(KeyModifiers::CONTROL) => {
                KeyCode::Char(c.to_ascii_lowercase())
            }
            KeyCode::Char(c) if mods.contains(KeyModifiers::SHIFT) => {
                KeyCode::Char(c.to_ascii_uppercase())
            }
            KeyCode::Tab if mods.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
            other => other,
        };
        if matches!(code, KeyCode::Char(_) | KeyCode::BackTab) {
            mods.remove(KeyModifiers::SHIFT);
        }
        KeySpec { code, mods }
    }

    /// A key without modifiers.
    pub fn plain(code: KeyCode) -> KeySpec {
        KeySpec::new(code, KeyModifiers::NONE)
    }

    /// The key of a terminal event.
    pub fn from_event(key: &KeyEvent) -> KeySpec {
        KeySpec::new(key.code, key.modifiers)
    }

    /// Whether `key` is a press (or repeat) of this key.
    pub fn matches(&self, key: &KeyEvent) -> bool {
        key.kind != KeyEventKind::Release
            && KeySpec::new(self.code, self.mods) == KeySpec::from_event(key)
    }
}

impl FromStr for KeySpec {
    type Err = String;

    /// Parses `ctrl-b`, `alt-left`, `%`, `"`, `shift-tab`, `f1`, `space`, `esc`, `pageup`, ….
    fn from_str(s: &str) -> Result<KeySpec, String> {
        let hint = "write one character or a key name (space, esc, enter, tab, backspace, \
                    delete, insert, home, end, pageup, pagedown, up, down, left, right, f1-f24), \
                    optionally after ctrl-, alt- and shift- (e.g. ctrl-b, alt-left, shift-tab)";
        let mut mods = KeyModifiers::NONE;
        let mut rest = s;
        loop {
            let lower = rest.to_ascii_lowercase();
            let found = [
                ("ctrl-", KeyModifiers::CONTROL),
                ("alt-", KeyModifiers::ALT),
                ("shift-", KeyModifiers::SHIFT),
            ]
            .into_iter()
            .find(|(p, _)| lower.starts_with(p) && lower.len() > p.len());
            let Some((p, m)) = found else { break };
            mods |= m;
            rest = &rest[p.len()..];
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) if !c.is_control() => KeyCode::Char(c),
            _ => {
                let lower = rest.to_ascii_lowercase();
                let f = lower
                    .strip_prefix('f')
                    .and_then(|n| n.parse::<u8>().ok())
                    .filter(|n| (1..=24).contains(n));
                match (NAMES.iter().find(|(n, _)| *n == lower), f) {
                    (Some((_, code)), _) => *code,
                    (None, Some(n)) => KeyCode::F(n),
                    (None, None) => return Err(format!("unknown key {s:?}; {hint}")),
                }
            }
        };
        Ok(KeySpec::new(code, mods))
    }
}

impl fmt::Display for KeySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = KeySpec::new(self.code, self.mods);
        for (m, name) in [
            (KeyModifiers::CONTROL, "ctrl-"),
            (KeyModifiers::ALT, "alt-"),
            (KeyModifiers::SHIFT, "shift-"),
        ] {
            if k.mods.contains(m) {
                f.write_str(name)?;
            }
        }
        match k.code {
            KeyCode::BackTab => f.write_str("shift-tab"),
            KeyCode::F(n) => write!(f, "f{n}"),
            KeyCode::Char(c) if c != ' ' => write!(f, "{c}"),
            code => match NAMES.iter().find(|(_, c)| *c == code) {
                Some((name, _)) => f.write_str(name),
                None => write!(f, "{}", format!("{code:?}").to_ascii_lowercase()),
            },
        }
    }
}

/// The prefix, the keys after it, and the escalations panel's keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keymap {
    prefix: KeySpec,
    /// One entry per [`Action`], in [`Action::ALL`] order.
    bindings: Vec<(Action, Vec<KeySpec>)>,
    /// One entry per [`PanelAction`], in [`PanelAction::ALL`] order.
    panel: Vec<(PanelAction, Vec<KeySpec>)>,
}

impl Default for Keymap {
    /// tmux habits, prefix `ctrl-b`; the table is in `docs/tui-config.md`.
    fn default() -> Keymap {
        let prefix = KeySpec::new(KeyCode::Char('b'), KeyModifiers::CONTROL);
        let keys = |a: Action| match a {
            Action::SendPrefix => vec![prefix],
            a => a.default_keys(),
        };
        Keymap {
            prefix,
            bindings: Action::ALL.iter().map(|&a| (a, keys(a))).collect(),
            panel: PanelAction::ALL
                .iter()
                .map(|&a| (a, a.default_keys()))
                .collect(),
        }
    }
}

impl Keymap {
    /// The prefix key.
    pub fn prefix(&self) -> &KeySpec {
        &self.prefix
    }

    /// Whether `key` is the prefix.
    pub fn is_prefix(&self, key: &KeyEvent) -> bool {
        self.prefix.matches(key)
    }

    /// The action bound to `key` pressed after the prefix.
    pub fn after_prefix(&self, key: &KeyEvent) -> Option<Action> {
        let (a, _) = self
            .bindings
            .iter()
            .find(|(_, ks)| ks.iter().any(|k| k.matches(key)))?;
        Some(*a)
    }

    /// The escalations panel's action for `key`.
    pub fn in_panel(&self, key: &KeyEvent) -> Option<PanelAction> {
        let (a, _) = self
            .panel
            .iter()
            .find(|(_, ks)| ks.iter().any(|k| k.matches(key)))?;
        Some(*a)
    }

    /// The keys bound to `action` after the prefix.
    pub fn keys(&self, action: Action) -> &[KeySpec] {
        let found = self.bindings.iter().find(|(a, _)| *a == action);
        found.map_or(&[], |(_, ks)| ks.as_slice())
    }

    /// The panel keys bound to `action`.
    pub fn panel_keys(&self, action: PanelAction) -> &[KeySpec] {
        let found = self.panel.iter().find(|(a, _)| *a == action);
        found.map_or(&[], |(_, ks)| ks.as_slice())
    }

    /// Sets the prefix; `send-prefix` follows it while it is bound to the old prefix alone.
    pub fn set_prefix(&mut self, key: KeySpec) {
        let old = self.prefix;
        self.prefix = KeySpec::new(key.code, key.mods);
        if self.keys(Action::SendPrefix) == [old] {
            self.bind(Action::SendPrefix, vec![self.prefix]);
        }
    }

    /// Replaces the keys of `action` (none: unbound); duplicates are dropped.
    pub fn bind(&mut self, action: Action, keys: Vec<KeySpec>) {
        if let Some((_, ks)) = self.bindings.iter_mut().find(|(a, _)| *a == action) {
            *ks = dedup(keys);
        }
    }

    /// Replaces the panel keys of `action` (none: unbound); duplicates are dropped.
    pub fn bind_panel(&mut self, action: PanelAction, keys: Vec<KeySpec>) {
        if let Some((_, ks)) = self.panel.iter_mut().find(|(a, _)| *a == action) {
            *ks = dedup(keys);
        }
    }

    /// Rows for the help overlay: (keys as the user types them, e.g. "ctrl-b %", description),
    /// the prefix actions in [`Action::ALL`] order, then the panel's; unbound actions left out.
    pub fn help(&self) -> Vec<(String, String)> {
        let prefixed = self.bindings.iter().map(|(a, ks)| {
            let keys: Vec<String> = ks.iter().map(|k| format!("{} {k}", self.prefix)).collect();
            (keys, a.description())
        });
        let panel = self.panel.iter().map(|(a, ks)| {
            let keys: Vec<String> = ks.iter().map(KeySpec::to_string).collect();
            (keys, a.description())
        });
        prefixed
            .chain(panel)
            .filter(|(keys, _)| !keys.is_empty())
            .map(|(keys, d)| (keys.join(", "), d.to_owned()))
            .collect()
    }
}

fn dedup(keys: Vec<KeySpec>) -> Vec<KeySpec> {
    let mut out: Vec<KeySpec> = Vec::with_capacity(keys.len());
    for k in keys {
        let k = KeySpec::new(k.code, k.mods);
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

#[cfg(test)]
#[path = "keymap_tests.rs"]
mod tests;
