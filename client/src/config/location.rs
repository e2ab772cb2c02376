//! Where in a configuration text something is: byte offsets to `file:line:column`, and the
//! diagnostics (one per problem, each with its location) that a failed load reports.

use std::ops::Range;
use std::path::Path;

/// A configuration text and the name its diagnostics are reported under.
#[derive(Clone, Debug)]
pub struct Source {
    /// How the file is named in messages (`~/.config/lazaret/config.toml`).
    pub name: String,
    pub text: String,
}

impl Source {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Source {
        Source {
            name: name.into(),
            text: text.into(),
        }
    }

    /// 1-based line and column (in characters) of byte `offset`.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() + 1;
        (line, col)
    }

    /// `name:line:column` of the start of `span`.
    pub fn at(&self, span: &Range<usize>) -> String {
        let (line, col) = self.line_col(span.start);
        format!("{}:{line}:{col}", self.name)
    }

    /// A diagnostic at `span`.
    pub fn diag(&self, span: &Range<usize>, message: impl Into<String>) -> Diagnostic {
        let (line, column) = self.line_col(span.start);
        Diagnostic {
            location: format!("{}:{line}:{column}", self.name),
            line,
            column,
            message: message.into(),
        }
    }

    /// A diagnostic about the file as a whole.
    pub fn file_diag(&self, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            location: self.name.clone(),
            line: 0,
            column: 0,
            message: message.into(),
        }
    }
}

/// One problem in a configuration file: where it is, what is wrong and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// `file:line:column`, or just the file when the problem is the file itself.
    pub location: String,
    /// 1-based line and column (0 when the problem is the file itself).
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// Every problem found in a configuration file, one per line in its `Display`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub diagnostics: Vec<Diagnostic>,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// The diagnostics in file order (stable for problems at the same place).
    pub fn sorted(mut diagnostics: Vec<Diagnostic>) -> ConfigError {
        diagnostics.sort_by_key(|d| (d.line, d.column));
        ConfigError { diagnostics }
    }
}

impl From<Diagnostic> for ConfigError {
    fn from(d: Diagnostic) -> ConfigError {
        ConfigError {
            diagnostics: vec![d],
        }
    }
}

/// `path` with the home directory written as `~`, as developers type it.
pub fn display_path(path: &Path, home: &Path) -> String {
    match path.strip_prefix(home) {
        Ok(rest) if home != Path::new("/") => {
            if rest.as_os_str().is_empty() {
                "~".to_owned()
            } else {
                format!("~/{}", rest.display())
            }
        }
        _ => path.display().to_string(),
    }
}

/// A toml syntax or shape error (unknown key, wrong type, missing key) at its line, with what
/// to do and `doc`, the file that documents the format. Shared by every TOML file Lazaret reads.
pub fn toml_error(src: &Source, e: &toml::de::Error, doc: &str) -> ConfigError {
    let message = e
        .message()
        .trim_end()
        .lines()
        .collect::<Vec<_>>()
        .join(": ");
    let hint = if message.starts_with("unknown field") {
        format!("; check the spelling ({doc} lists every key)")
    } else if message.starts_with("missing field") {
        format!("; add it (see {doc})")
    } else if message.starts_with("invalid type") {
        format!("; {doc} gives the type of every key")
    } else {
        format!("; fix the TOML (see {doc} for the format)")
    };
    let diag = match e.span() {
        Some(span) => src.diag(&span, format!("{message}{hint}")),
        None => src.file_diag(format!("{message}{hint}")),
    };
    diag.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_become_lines_and_columns() {
        let s = Source::new("c.toml", "a = 1\nbé = 2\n\nx");
        assert_eq!(s.line_col(0), (1, 1));
        assert_eq!(s.line_col(4), (1, 5));
        assert_eq!(s.line_col(6), (2, 1));
        // 'é' is two bytes but one column.
        assert_eq!(s.line_col(9), (2, 3));
        assert_eq!(s.line_col(15), (4, 1));
        assert_eq!(s.at(&(6..7)), "c.toml:2:1");
        assert_eq!(s.line_col(1000), (4, 2));
    }

    #[test]
    fn home_is_abbreviated() {
        let home = Path::new("/home/dev");
        assert_eq!(
            display_path(Path::new("/home/dev/.config/lazaret/config.toml"), home),
            "~/.config/lazaret/config.toml"
        );
        assert_eq!(display_path(Path::new("/etc/x"), home), "/etc/x");
        assert_eq!(display_path(Path::new("/home/devx"), home), "/home/devx");
        assert_eq!(display_path(Path::new("/etc/x"), Path::new("/")), "/etc/x");
    }
}
