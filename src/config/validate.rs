//! Semantic validation of one profile table into an [`AgentProfile`]: every rule of
//! `docs/config.md`, each violation reported at the line of the value that breaks it. Unset
//! fields come from the `extends` parent when there is one, else from the defaults.

use super::commands;
use super::file::RawProfile;
use super::host_paths::HostPaths;
use super::location::{Diagnostic, Source};
use super::network;
use super::storage;
use crate::profile::AgentProfile;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::PathBuf;
use toml::Spanned;

/// Longest profile name (it becomes part of Domain IDs and container names).
pub const MAX_NAME_LEN: usize = 40;

/// Editor configuration directories hidden by default (spec §3.3).
pub const DEFAULT_HIDDEN_EDITOR_DIRS: [&str; 2] = [".vscode", ".idea"];

/// A value and where it was written; `span` is `None` for a value inherited through `extends`.
#[derive(Clone, Debug)]
pub struct Placed<T> {
    pub value: T,
    pub span: Option<Range<usize>>,
}

impl<T> Placed<T> {
    pub fn here(value: T, span: Range<usize>) -> Placed<T> {
        Placed {
            value,
            span: Some(span),
        }
    }

    pub fn inherited(value: T) -> Placed<T> {
        Placed { value, span: None }
    }
}

/// The state of validating one profile: where to report, what to protect, what went wrong.
pub struct Check<'a> {
    pub src: &'a Source,
    pub host: &'a HostPaths,
    /// Where problems of inherited values are reported: the `extends` value.
    pub inherited_at: Range<usize>,
    pub diags: Vec<Diagnostic>,
}

impl Check<'_> {
    /// Records a problem at `span` (an inherited value's problem at the `extends` key).
    pub fn error(&mut self, span: Option<&Range<usize>>, message: impl Into<String>) {
        let message = message.into();
        let d = match span {
            Some(s) => self.src.diag(s, message),
            None => self.src.diag(
                &self.inherited_at,
                format!("{message} (in the value inherited through `extends`)"),
            ),
        };
        self.diags.push(d);
    }

    /// "line N" of `span`, for messages naming a second location.
    pub fn line_of(&self, span: Option<&Range<usize>>) -> String {
        match span {
            Some(s) => format!("line {}", self.src.line_col(s.start).0),
            None => "inherited through `extends`".to_owned(),
        }
    }
}

/// Whether `name` is a valid profile name: `[a-z0-9][a-z0-9_-]{0,39}`.
pub fn is_valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_NAME_LEN
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-')
}

fn name_problem(name: &str) -> Option<String> {
    (!is_valid_name(name)).then(|| {
        format!(
            "profile name {name:?} is not allowed: use 1 to {MAX_NAME_LEN} lowercase letters, \
             digits, '-' or '_', starting with a letter or digit (e.g. [profiles.my-agent])"
        )
    })
}

/// Validates `raw` (the table `[profiles.NAME]` of `src`) on top of `parent`. Problems are
/// appended to `diags`; the profile is returned only when it has none.
pub fn profile(
    src: &Source,
    host: &HostPaths,
    name: &Spanned<String>,
    raw: &RawProfile,
    parent: Option<&AgentProfile>,
    diags: &mut Vec<Diagnostic>,
) -> Option<AgentProfile> {
    let inherited_at = raw
        .extends
        .as_ref()
        .map_or_else(|| name.span(), Spanned::span);
    let mut c = Check {
        src,
        host,
        inherited_at,
        diags: Vec::new(),
    };
    if let Some(problem) = name_problem(name.get_ref()) {
        c.error(Some(&name.span()), problem);
    }

    let description = match &raw.description {
        Some(d) => {
            if d.get_ref().contains(['\n', '\r', '\0']) {
                c.error(
                    Some(&d.span()),
                    "description must be one line: `lazaret profile list` shows it in a table",
                );
            }
            d.get_ref().clone()
        }
        None => parent.map(|p| p.description.clone()).unwrap_or_default(),
    };

    let image = match &raw.image {
        Some(i) => {
            let s = i.get_ref();
            if s.trim().is_empty() {
                c.error(
                    Some(&i.span()),
                    format!(
                        "image is empty: name a container image, e.g. image = \"{}\"",
                        crate::profile::DEFAULT_BASE_IMAGE
                    ),
                );
            } else if s.chars().any(|ch| ch.is_whitespace() || ch.is_control()) {
                c.error(
                    Some(&i.span()),
                    format!("image {s:?} contains whitespace or control characters: write the image reference alone"),
                );
            }
            s.clone()
        }
        None => match parent {
            Some(p) => p.image.clone(),
            None => {
                c.error(
                    Some(&name.span()),
                    format!(
                        "profile `{}` has no image: add image = \"{}\" (or extends = \"shell\" to \
                         start from a built-in profile)",
                        name.get_ref(),
                        crate::profile::DEFAULT_BASE_IMAGE
                    ),
                );
                String::new()
            }
        },
    };

    let command = match &raw.command {
        Some(cmd) => commands::argv(&mut c, "command", cmd),
        None => match parent {
            Some(p) => p.command.clone(),
            None => {
                c.error(
                    Some(&name.span()),
                    format!(
                        "profile `{}` has no command: add e.g. command = [\"bash\", \"-l\"] (the \
                         command `lazaret run` starts when given none)",
                        name.get_ref()
                    ),
                );
                Vec::new()
            }
        },
    };

    let env = match &raw.env {
        Some(e) => env(&mut c, e),
        None => parent.map(|p| p.env.clone()).unwrap_or_default(),
    };

    let persistent = match &raw.persistent {
        Some(p) => storage::persistent(&mut c, p),
        None => parent
            .map(|p| {
                p.persistent
                    .iter()
                    .cloned()
                    .map(Placed::inherited)
                    .collect()
            })
            .unwrap_or_default(),
    };
    let volumes = match &raw.volumes {
        Some(v) => storage::volumes(&mut c, v),
        None => parent
            .map(|p| p.volumes.iter().cloned().map(Placed::inherited).collect())
            .unwrap_or_default(),
    };
    storage::volumes_vs_persistent(&mut c, &volumes, &persistent);

    let hide_editor_dirs = match &raw.hide_editor_dirs {
        Some(h) => storage::hide_editor_dirs(&mut c, h),
        None => match parent {
            Some(p) => p.hide_editor_dirs.clone(),
            None => DEFAULT_HIDDEN_EDITOR_DIRS
                .iter()
                .map(PathBuf::from)
                .collect(),
        },
    };

    let network = match &raw.network {
        Some(n) => network::policy(&mut c, n),
        None => parent.map(|p| p.network.clone()).unwrap_or_default(),
    };

    let auto_approve = match &raw.auto_approve {
        Some(rules) => rules
            .iter()
            .map(|r| commands::auto_approve(&mut c, r))
            .collect(),
        None => parent.map(|p| p.auto_approve.clone()).unwrap_or_default(),
    };

    let setup = match &raw.setup {
        Some(s) => Some(commands::setup(&mut c, s)),
        None => parent.and_then(|p| p.setup.clone()),
    };

    let login = match &raw.login {
        Some(l) => super::login::check(&mut c, l),
        None => parent.and_then(|p| p.login.clone()),
    };

    let isolate_ignored = raw
        .isolate_ignored
        .or(parent.map(|p| p.isolate_ignored))
        .unwrap_or(true);

    let inherited = parent.map(|p| p.terminal).unwrap_or_default();
    // Each setting the profile leaves out is its parent's.
    let set = |field: fn(&super::file::RawTerminal) -> Option<bool>, parent: bool| {
        raw.terminal.as_ref().and_then(field).unwrap_or(parent)
    };
    let terminal = crate::profile::TerminalAccess {
        clipboard: set(|t| t.clipboard, inherited.clipboard),
        notifications: set(|t| t.notifications, inherited.notifications),
        hyperlinks: set(|t| t.hyperlinks, inherited.hyperlinks),
        echo_queries: set(|t| t.echo_queries, inherited.echo_queries),
    };

    let idle_after_secs = match raw.activity.as_ref().and_then(|a| a.idle_after.as_ref()) {
        Some(v) => match u64::try_from(*v.get_ref()) {
            Ok(secs) if (1..=MAX_IDLE_AFTER_SECS).contains(&secs) => Some(secs),
            _ => {
                c.error(
                    Some(&v.span()),
                    format!(
                        "idle_after is {}; use 1 to {MAX_IDLE_AFTER_SECS} seconds without output \
                         after which a session counts as idle",
                        v.get_ref()
                    ),
                );
                None
            }
        },
        None => parent.and_then(|p| p.idle_after_secs),
    };

    let linger_secs = match &raw.linger {
        Some(v) => duration(&mut c, v, super::linger::secs),
        None => parent.and_then(|p| p.linger_secs),
    };
    let idle_stop_secs = match &raw.idle_stop {
        Some(v) => duration(&mut c, v, super::idle_stop::secs),
        None => parent.and_then(|p| p.idle_stop_secs),
    };

    let limits = limits(&mut c, raw, parent);

    let failed = !c.diags.is_empty();
    diags.append(&mut c.diags);
    if failed {
        return None;
    }
    Some(AgentProfile {
        name: name.get_ref().clone(),
        description,
        image,
        command,
        env,
        persistent: persistent.into_iter().map(|p| p.value).collect(),
        volumes: volumes.into_iter().map(|v| v.value).collect(),
        network,
        isolate_ignored,
        hide_editor_dirs,
        auto_approve,
        setup,
        login,
        terminal,
        idle_after_secs,
        linger_secs,
        idle_stop_secs,
        limits,
        image_paste: raw
            .terminal
            .as_ref()
            .and_then(|t| t.image_paste)
            .or(parent.and_then(|p| p.image_paste)),
        trust_host_cas: raw.trust_host_cas.or(parent.and_then(|p| p.trust_host_cas)),
    })
}

/// `memory`, `pids`, `cpus`, `disk` (issue #19): each key set replaces the `extends` profile's.
/// Seconds of a duration key (`linger`, `idle_stop`) as written, its problem reported at it;
/// None when invalid.
fn duration(
    c: &mut Check<'_>,
    v: &toml::Spanned<super::duration::RawDuration>,
    secs: fn(&super::duration::RawDuration) -> Result<u64, String>,
) -> Option<u64> {
    secs(v.get_ref())
        .map_err(|e| c.error(Some(&v.span()), e))
        .ok()
}

fn limits(
    c: &mut Check<'_>,
    raw: &RawProfile,
    parent: Option<&AgentProfile>,
) -> super::limits::ResourceLimits {
    use super::limits as l;
    let inherited = parent.map(|p| p.limits).unwrap_or_default();
    let mut one = |span: std::ops::Range<usize>, r: Result<u64, String>| match r {
        Ok(v) => Some(v),
        Err(e) => {
            c.error(Some(&span), e);
            None
        }
    };
    l::ResourceLimits {
        memory: match &raw.memory {
            Some(v) => one(v.span(), l::memory(v.get_ref())),
            None => inherited.memory,
        },
        pids: match &raw.pids {
            Some(v) => one(v.span(), l::pids(*v.get_ref())),
            None => inherited.pids,
        },
        cpus_milli: match &raw.cpus {
            Some(v) => one(v.span(), l::cpus(v.get_ref())),
            None => inherited.cpus_milli,
        },
        disk: match &raw.disk {
            Some(v) => one(v.span(), l::disk(v.get_ref())),
            None => inherited.disk,
        },
    }
}

/// Largest `idle_after` accepted (a day).
pub const MAX_IDLE_AFTER_SECS: u64 = 86_400;

fn is_shell_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

fn env(
    c: &mut Check<'_>,
    raw: &BTreeMap<Spanned<String>, Spanned<String>>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (k, v) in raw {
        let key = k.get_ref();
        if !is_shell_identifier(key) {
            c.error(
                Some(&k.span()),
                format!(
                    "environment variable name {key:?} is not a shell identifier: use letters, \
                     digits and '_', not starting with a digit"
                ),
            );
        } else if key.starts_with("LAZARET_") {
            c.error(
                Some(&k.span()),
                format!(
                    "environment variable {key} is refused: names starting with LAZARET_ are \
                     reserved for Lazaret itself; rename it"
                ),
            );
        }
        if v.get_ref().contains('\0') {
            c.error(
                Some(&v.span()),
                format!("the value of {key} contains a NUL byte, which no environment can hold"),
            );
        }
        out.insert(key.clone(), v.get_ref().clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["shell", "a", "0", "my-agent_2", &"a".repeat(40)] {
            assert!(is_valid_name(ok), "{ok}");
        }
        for bad in ["", "-a", "_a", "A", "a.b", "a b", "é", &"a".repeat(41)] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn shell_identifiers() {
        assert!(is_shell_identifier("FOO_1"));
        assert!(is_shell_identifier("_x"));
        assert!(!is_shell_identifier("1X"));
        assert!(!is_shell_identifier("A-B"));
        assert!(!is_shell_identifier(""));
    }
}
