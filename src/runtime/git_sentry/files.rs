//! Reading the few small files of a Git directory the planner needs — strictly, without
//! following symlinks and without running git — and lexical path arithmetic.

use anyhow::{bail, Context};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

/// Largest `.git` file or `commondir` file accepted.
const SMALL_FILE_MAX: u64 = 4096;

/// Reads a small regular file (not a symlink: `O_NOFOLLOW`), at most 4 KiB, as UTF-8.
pub(super) fn read_small(path: &Path) -> anyhow::Result<String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| format!("opening {} (a symlink is not accepted)", path.display()))?;
    let meta = file
        .metadata()
        .with_context(|| format!("reading {}", path.display()))?;
    if !meta.is_file() {
        bail!("{} is not a regular file", path.display());
    }
    if meta.len() > SMALL_FILE_MAX {
        bail!(
            "{} is {} bytes long; a Git pointer file holds one short line \
             (at most {SMALL_FILE_MAX} bytes)",
            path.display(),
            meta.len()
        );
    }
    let mut text = String::new();
    file.take(SMALL_FILE_MAX + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("reading {} as UTF-8 text", path.display()))?;
    Ok(text)
}

/// One line, trailing newline optional, no other control characters.
fn one_line<'a>(text: &'a str, path: &Path) -> anyhow::Result<&'a str> {
    let line = text.strip_suffix('\n').unwrap_or(text);
    if line.chars().any(|c| c.is_control()) {
        bail!(
            "{} must hold exactly one line without control characters",
            path.display()
        );
    }
    Ok(line)
}

/// Parses a `.git` file: exactly `gitdir: <path>` on one line. Returns `<path>` as written.
pub(super) fn parse_gitdir_file(path: &Path) -> anyhow::Result<String> {
    let text = read_small(path)?;
    let line = one_line(&text, path)?;
    let Some(dir) = line.strip_prefix("gitdir: ") else {
        bail!(
            "{} is not a Git pointer file: its only line must read `gitdir: <path>`",
            path.display()
        );
    };
    if dir.trim().is_empty() || dir.trim() != dir {
        bail!(
            "{} names an empty path or one with surrounding blanks",
            path.display()
        );
    }
    Ok(dir.to_owned())
}

/// Parses a one-line file holding a path: a worktree's `commondir`, its `gitdir` back-pointer.
pub(super) fn parse_path_line(path: &Path) -> anyhow::Result<String> {
    let text = read_small(path)?;
    let line = one_line(&text, path)?;
    if line.trim().is_empty() {
        bail!(
            "{} is empty: it must name the common Git directory",
            path.display()
        );
    }
    Ok(line.to_owned())
}

/// Lexical normalisation of an absolute path: drops `.`, applies `..` (`/..` stays `/`). This is
/// what `realpath` computes where no component is a symlink — true of the sandbox paths Git
/// Sentry mounts at, which are directories it creates or mount points.
pub(super) fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// What the planner needs to know from a repository `config`. A deliberately small reader:
/// sections, `key = value` lines, `#`/`;` comments, double quotes. It only feeds notes and the
/// decision to protect `config.worktree`, which errs on the safe side.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct ConfigFacts {
    /// `core.worktree`, as written.
    pub worktree: Option<String>,
    /// `core.hooksPath`, as written.
    pub hooks_path: Option<String>,
    /// `extensions.worktreeConfig` may be on: the text mentions it at all.
    pub worktree_config: bool,
    /// `include.path` / `includeIf.*.path` values.
    pub includes: Vec<String>,
}

pub(super) fn config_facts(path: &Path) -> anyhow::Result<ConfigFacts> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut facts = ConfigFacts {
        worktree_config: text.to_ascii_lowercase().contains("worktreeconfig"),
        ..ConfigFacts::default()
    };
    let mut section = String::new();
    for raw in text.lines() {
        let mut line = raw.trim();
        if let Some(rest) = line.strip_prefix('[') {
            let Some(end) = rest.find(']') else { continue };
            let header = &rest[..end];
            section = header
                .split(|c: char| c.is_whitespace() || c == '.')
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            line = rest[end + 1..].trim();
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let value = config_value(value);
        match (section.as_str(), key.as_str()) {
            ("core", "worktree") => facts.worktree = Some(value),
            ("core", "hookspath") => facts.hooks_path = Some(value),
            ("include" | "includeif", "path") => facts.includes.push(value),
            _ => {}
        }
    }
    Ok(facts)
}

/// A value: quotes removed, `\"` and `\\` unescaped, an unquoted comment cut off.
fn config_value(raw: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = raw.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => {
                if let Some(n) = chars.next() {
                    out.push(match n {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                }
            }
            '#' | ';' if !quoted => break,
            c => out.push(c),
        }
    }
    out.trim_end().to_owned()
}
