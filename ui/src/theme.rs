//! Themes map semantic roles to colours. The default ships in `themes/default.toml`.

use serde::Deserialize;
use std::fmt;

const DEFAULT_THEME: &str = include_str!("../../themes/default.toml");

/// Semantic colour roles used by every panel; values are `#rrggbb` strings.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Theme {
    pub name: String,
    pub foreground: String,
    pub background: String,
    pub accent: String,
    pub warning: String,
    pub danger: String,
    pub muted: String,
}

#[derive(Debug)]
pub struct ThemeError(String);

impl fmt::Display for ThemeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ThemeError {}

impl Theme {
    /// The compiled-in default theme.
    pub fn default_theme() -> Result<Theme, ThemeError> {
        Theme::parse(DEFAULT_THEME)
    }

    /// Parses a theme file and checks every colour.
    pub fn parse(text: &str) -> Result<Theme, ThemeError> {
        let theme: Theme = toml::from_str(text).map_err(|e| ThemeError(e.to_string()))?;
        for (role, value) in [
            ("foreground", &theme.foreground),
            ("background", &theme.background),
            ("accent", &theme.accent),
            ("warning", &theme.warning),
            ("danger", &theme.danger),
            ("muted", &theme.muted),
        ] {
            let ok = value.len() == 7
                && value.starts_with('#')
                && value[1..].bytes().all(|b| b.is_ascii_hexdigit());
            if !ok {
                return Err(ThemeError(format!(
                    "theme {}: {role} = {value:?} is not a #rrggbb colour",
                    theme.name
                )));
            }
        }
        Ok(theme)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_theme_parses() {
        let t = Theme::default_theme().map_err(|e| e.to_string());
        assert_eq!(t.map(|t| t.name), Ok("default".to_owned()));
    }

    #[test]
    fn bad_colour_is_named() {
        let text = DEFAULT_THEME.replace("accent = \"#", "accent = \"#zz");
        let err = Theme::parse(&text)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("accent"), "{err}");
    }
}
