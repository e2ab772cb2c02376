//! Output of `lazaret state`: the human reports of `list` and `inspect`, and the JSON
//! envelopes of all four verbs (schema version [`VERSION`], documented in `docs/state.md`).
//!
//! Every path, name and target shown to a human goes through [`visible`]: names inside an
//! upper dir are chosen by the sandbox and may hold escape sequences.

use super::inspect::{Change, ChangeEntry, Inspection, Kind};
use super::listing::{AnchorEntry, DomainEntry, SizeEntry};
use super::unreadable::Unreadable;
use crate::terminal::escape::visible;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use unicode_width::UnicodeWidthStr;

/// The `version` of every JSON envelope; raised only by an incompatible change.
pub const VERSION: u32 = 1;

/// Which Domain a verb worked on.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct DomainRef {
    pub domain_id: String,
    pub profile: String,
    pub workspace: PathBuf,
}

/// `lazaret state list --json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ListEnvelope {
    pub version: u32,
    pub domains: Vec<DomainEntry>,
}

/// `lazaret state inspect --json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct InspectEnvelope {
    pub version: u32,
    pub domain: DomainRef,
    pub anchors: Vec<Inspection>,
}

/// One problem `verify` found.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Problem {
    /// The anchor's container path (or directory name); None for the Domain Root itself.
    pub anchor: Option<PathBuf>,
    pub problem: String,
}

/// `lazaret state verify --json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct VerifyEnvelope {
    pub version: u32,
    pub domain: DomainRef,
    pub ok: bool,
    pub problems: Vec<Problem>,
}

/// `lazaret state reset --json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ResetEnvelope {
    pub version: u32,
    pub domain: DomainRef,
    /// Container paths of the anchors reset.
    pub reset: Vec<String>,
    /// Each reset anchor's new current generation.
    pub generation: BTreeMap<String, u64>,
}

/// `p` as [`visible`] shows it (non-UTF-8 bytes as U+FFFD).
fn shown(p: &Path) -> String {
    visible(&p.to_string_lossy())
}

/// `s` padded with spaces to `width` terminal columns.
fn pad(s: &str, width: usize) -> String {
    format!("{s}{}", " ".repeat(width.saturating_sub(s.width())))
}

/// Binary units with one decimal: "512 B", "4.0 KiB", "12.3 MiB".
pub fn bytes_text(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// `n` with thousands separators: "1,204".
pub fn count_text(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// "12.3 MiB (1,204 files)", marked when some entries could not be read or were not counted.
pub fn size_text(s: &SizeEntry) -> String {
    let files = if s.files == 1 { "file" } else { "files" };
    let more = match s.unreadable.count {
        _ if !s.partial => String::new(),
        0 => "; more: some entries not counted".into(),
        1 => "; more: 1 entry unreadable".into(),
        n => format!("; more: {} entries unreadable", count_text(n)),
    };
    format!(
        "{} ({} {files}{more})",
        bytes_text(s.bytes),
        count_text(s.files)
    )
}

/// One line per listed unreadable entry ("<indent><below>/<path>: <why>"), then how many more.
fn unreadable_text(u: &Unreadable, below: &Path, indent: &str) -> String {
    let mut out = String::new();
    for e in &u.entries {
        let path = if e.path == "." {
            below.to_path_buf()
        } else {
            below.join(&e.path)
        };
        let _ = writeln!(out, "{indent}{}: {}", shown(&path), visible(&e.reason));
    }
    let listed = u.entries.len() as u64;
    if u.count > listed {
        let _ = writeln!(out, "{indent}… {} more", count_text(u.count - listed));
    }
    out
}

fn anchor_label(a: &AnchorEntry) -> String {
    match &a.container {
        Some(c) => shown(c),
        None => format!("? ({})", visible(&a.name)),
    }
}

/// The `lazaret state list` table: one header line per Domain, then its anchors and its
/// Ignored Workspace State, indented.
pub fn list_text(domains: &[DomainEntry]) -> String {
    if domains.is_empty() {
        return "No Domains yet: a Domain is created the first time `lazaret run` starts a \
                profile in a workspace.\n"
            .into();
    }
    let rows: Vec<[String; 4]> = domains
        .iter()
        .map(|d| {
            let active = match (&d.held_by, d.active) {
                (Some(h), _) => format!("yes: {}", visible(h)),
                (None, true) => "yes".into(),
                (None, false) => "no".into(),
            };
            let ws = if d.workspace.as_os_str().is_empty() {
                "?".into()
            } else {
                shown(&d.workspace)
            };
            [ws, visible(&d.profile), visible(&d.domain_id), active]
        })
        .collect();
    let head = ["WORKSPACE", "PROFILE", "DOMAIN", "ACTIVE"];
    let widths: Vec<usize> = (0..3)
        .map(|i| {
            rows.iter()
                .map(|r| r[i].width())
                .chain([head[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: [&str; 4]| {
        let first: Vec<String> = (0..3).map(|i| pad(cells[i], widths[i])).collect();
        format!("{}  {}\n", first.join("  "), cells[3])
    };
    let mut out = line(head);
    for (d, r) in domains.iter().zip(&rows) {
        out.push_str(&line([&r[0], &r[1], &r[2], &r[3]]));
        if let Some(p) = &d.problem {
            let _ = writeln!(out, "    problem: {}", visible(p));
        }
        let mut sub: Vec<[String; 3]> = d
            .anchors
            .iter()
            .map(|a| {
                let gen = a
                    .generation
                    .map_or_else(|| "old layout".into(), |g| format!("gen {g}"));
                [anchor_label(a), gen, size_text(&a.size)]
            })
            .collect();
        sub.push([
            "ignored state".into(),
            String::new(),
            size_text(&d.ignored_state),
        ]);
        let w0 = sub.iter().map(|s| s[0].width()).max().unwrap_or(0);
        let w1 = sub.iter().map(|s| s[1].width()).max().unwrap_or(0);
        let unreadable = d
            .anchors
            .iter()
            .map(|a| (&a.size.unreadable, PathBuf::from("anchors").join(&a.name)))
            .chain([(&d.ignored_state.unreadable, PathBuf::from("ignored"))]);
        for ([label, gen, size], (u, below)) in sub.iter().zip(unreadable) {
            let _ = writeln!(out, "    {}  {}  {size}", pad(label, w0), pad(gen, w1));
            out.push_str(&unreadable_text(u, &below, "      unreadable: "));
        }
    }
    out
}

const GROUPS: [(Change, &str); 5] = [
    (Change::Added, "added"),
    (Change::Modified, "modified"),
    (Change::Deleted, "deleted"),
    (
        Change::OpaqueDir,
        "opaque dirs (the image's content below is hidden)",
    ),
    (
        Change::Present,
        "present (added or modified: the image was not available)",
    ),
];

fn kind_text(k: Kind) -> &'static str {
    match k {
        Kind::File => "file",
        Kind::Dir => "dir",
        Kind::Symlink => "symlink",
        Kind::Other => "other",
        Kind::Unknown => "?",
    }
}

fn summary(i: &Inspection) -> String {
    let t = &i.totals;
    let parts: Vec<String> = [
        (t.added, "added"),
        (t.modified, "modified"),
        (t.deleted, "deleted"),
        (t.opaque_dirs, "opaque dirs"),
        (t.present, "present"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{} {what}", count_text(*n)))
    .collect();
    if parts.is_empty() {
        return "no changes".into();
    }
    let files = if t.files == 1 { "file" } else { "files" };
    format!(
        "{}; {} {files}, {} in files",
        parts.join(", "),
        count_text(t.files),
        bytes_text(t.bytes)
    )
}

fn change_row(c: &ChangeEntry) -> [String; 5] {
    let path = match &c.link_target {
        Some(t) => format!("{} -> {}", visible(&c.path), visible(t)),
        None => visible(&c.path),
    };
    let size = match c.kind {
        Kind::Dir | Kind::Unknown => "-".into(),
        _ => bytes_text(c.size),
    };
    let owner = format!("{}:{}", c.uid, c.gid);
    [path, kind_text(c.kind).into(), size, owner, c.mode.clone()]
}

/// The `lazaret state inspect` report: per anchor, a summary line, then its listed changes
/// grouped (added, modified, deleted, opaque dirs, present) with kind, size, uid:gid and mode.
pub fn inspect_text(domain: &DomainRef, anchors: &[Inspection]) -> String {
    let mut out = format!(
        "Domain {}: profile {}, workspace {}\n",
        visible(&domain.domain_id),
        visible(&domain.profile),
        shown(&domain.workspace)
    );
    if anchors.is_empty() {
        out.push_str("\nNo State Anchors.\n");
    }
    for i in anchors {
        let gen = i
            .generation
            .map(|g| format!(" (gen {g})"))
            .unwrap_or_default();
        let _ = writeln!(out, "\n{}{gen}: {}", shown(&i.container), summary(i));
        let rows: Vec<(Change, [String; 5])> = i
            .changes
            .iter()
            .map(|c| (c.change, change_row(c)))
            .collect();
        let widths: Vec<usize> = (0..4)
            .map(|k| rows.iter().map(|(_, r)| r[k].width()).max().unwrap_or(0))
            .collect();
        for (change, title) in GROUPS {
            let group: Vec<&[String; 5]> = rows
                .iter()
                .filter(|(c, _)| *c == change)
                .map(|(_, r)| r)
                .collect();
            if group.is_empty() {
                continue;
            }
            let _ = writeln!(out, "  {title}");
            for r in group {
                let cells: Vec<String> = (0..4).map(|k| pad(&r[k], widths[k])).collect();
                let _ = writeln!(out, "    {}  {}", cells.join("  "), r[4]);
            }
        }
        let listed = i.changes.len() as u64;
        let t = &i.totals;
        let total = t.added + t.modified + t.deleted + t.opaque_dirs + t.present;
        if i.truncated && total > listed {
            let _ = writeln!(
                out,
                "  … {} more not listed (raise --limit, or use --json)",
                count_text(total - listed)
            );
        }
        if i.partial {
            out.push_str("  some entries could not be read: the list is incomplete\n");
            out.push_str(&unreadable_text(&i.unreadable, &i.container, "    "));
        }
    }
    out
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
