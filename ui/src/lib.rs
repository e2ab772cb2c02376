//! Lazaret's terminal user interface (`lazaret tui`). For now: the theme, whose default is
//! compiled in from `themes/default.toml`; panes and panels arrive with the TUI issue.

mod theme;

pub use theme::{Theme, ThemeError};
