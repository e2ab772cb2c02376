//! The Git Sentry's checks of git control files (issue #13): before the Domain starts (refuse,
//! nothing started), at the end of every `lazaret run` (neutralise and tell), and the
//! developer's `lazaret git-sentry accept`.

use super::control::{self, Observed};
use super::judge::{judge, Finding};
use super::nested;
use super::quarantine::rename_aside;
use super::record::{self, Record};
use crate::domain::Domain;
use anyhow::bail;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Where the records of `domain`'s Storage Root live.
pub fn store_of(domain: &Domain) -> PathBuf {
    record::store_dir(&record::storage_root_of(&domain.root))
}

/// `'text'` for a POSIX shell.
fn sq(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

fn line(f: &Finding) -> String {
    let mut s = format!("{}: {}", f.file.path.display(), f.file.kind.describe());
    if let Some(t) = &f.file.target {
        let _ = write!(s, ", pointing to {}", t.display());
    } else if !f.file.content.is_empty() {
        let _ = write!(s, ", reading {:?}", f.file.content.trim_end());
    }
    if let Some(was) = &f.was {
        let _ = write!(s, " (recorded as {:?})", was.content.trim_end());
    }
    if let Some(why) = &f.invalid {
        let _ = write!(s, "; not a valid layout, so it cannot be accepted: {why}");
    }
    s
}

/// Refuses to start when the workspace's repository holds a control file that is invalid or
/// neither proven harmless nor in the record; otherwise records the layout as now trusted.
/// Runs before anything of the Domain is started or created.
pub fn before_start(ws: &Path, store: &Path) -> anyhow::Result<()> {
    let now = control::observe(ws);
    let rec = record::load(store, ws)?;
    let findings = judge(&now, rec.as_ref());
    if !findings.is_empty() {
        bail!("{}", refusal(ws, &findings, rec.is_none()));
    }
    if rec.is_none() {
        refuse_below_recorded(ws, store)?;
    }
    // A run that ended without its end-of-run check (killed): its nested repositories are
    // neutralised now, before anything of the sandbox starts again.
    if let Some(r) = rec.as_ref().filter(|r| r.pending) {
        for m in neutralise_nested(ws, &known(&r.nested)).0 {
            tracing::warn!("{m}");
        }
    }
    // The nested repositories as the developer left them: hidden from the sandbox while it
    // runs, and every other one is neutralised at the end.
    let mut rec = Record::new(ws, files(&now), nested::scan(ws).found);
    rec.pending = true;
    record::save(store, &rec)
}

/// A workspace never launched before that lies inside one that was: a repository the sandbox
/// of that workspace may have made (its configuration the sandbox's) would become a trusted
/// workspace. Refused until the developer accepts it.
fn refuse_below_recorded(ws: &Path, store: &Path) -> anyhow::Result<()> {
    let Some(outer) = ws
        .ancestors()
        .skip(1)
        .find(|a| record::record_path(store, a).exists())
    else {
        return Ok(());
    };
    bail!(
        "Git Sentry refuses to start the sandbox (nothing was started): {} lies inside the \
         workspace {}, where an Agent Sandbox has run, and Lazaret has never started here: the \
         repository here may be one that sandbox made, with a configuration it wrote. Check \
         it (`cat {}`), then run `lazaret git-sentry accept` in {} to use it as a workspace",
        ws.display(),
        outer.display(),
        sq(&ws.join(".git").join("config")),
        ws.display()
    )
}

/// The identities of `entries`.
fn known(entries: &[nested::Nested]) -> std::collections::BTreeSet<String> {
    entries.iter().map(|n| n.fingerprint.clone()).collect()
}

/// Where nested repositories the sandbox made are moved: inside the host's own `.git`
/// directory, which the sandbox never sees (a Domain-private one is mounted there instead), or
/// the Git Sentry's store when the workspace has none.
fn quarantine_dir(ws: &Path) -> PathBuf {
    let dotgit = ws.join(".git");
    match std::fs::symlink_metadata(&dotgit) {
        Ok(m) if m.is_dir() => dotgit.join("lazaret-quarantine"),
        _ => crate::domain::layout::Layout::from_env()
            .map(|l| l.storage_root().join("git-sentry").join("quarantine"))
            .unwrap_or_else(|_| dotgit.with_file_name(".lazaret-quarantine")),
    }
}

/// Moves every nested `.git` entry of `ws` whose identity is not in `keep` to the quarantine,
/// reading nothing inside it. Returns one message each, and the entries left.
pub fn neutralise_nested(
    ws: &Path,
    keep: &std::collections::BTreeSet<String>,
) -> (Vec<String>, Vec<nested::Nested>) {
    let q = quarantine_dir(ws);
    let mut msgs = Vec::new();
    let mut moved = Vec::new();
    let scan = nested::walk(ws, nested::WALK_LIMIT, &mut |n, parent| {
        if keep.contains(&n.fingerprint) {
            return;
        }
        let at = ws.join(&n.path);
        msgs.push(
            match super::quarantine::move_nested(parent, std::ffi::OsStr::new(".git"), &at, &q) {
                Ok(new) => {
                    moved.push(n.path.clone());
                    format!(
                        "Git Sentry: the sandbox made the repository {} — host git there (and \
                         `git status` in the workspace, were it a submodule) would obey a \
                         configuration the sandbox wrote. Moved it to {}; nothing is lost. To \
                         look at it safely: `ls -la {}`",
                        crate::runtime::git_boundary::printable(&at.display().to_string()),
                        new.display(),
                        sq(&new)
                    )
                }
                Err(e) => format!(
                    "Git Sentry: the sandbox made the repository {} and it could not be moved \
                     away ({e:#}): do not run git in the workspace before you remove it",
                    crate::runtime::git_boundary::printable(&at.display().to_string())
                ),
            },
        );
    });
    if scan.cut {
        msgs.push(format!(
            "Git Sentry: the search for repositories the sandbox made in {} was cut short (more \
             than {} s, or deeper than {} levels): some may remain; do not run git in its \
             deepest directories before checking them",
            ws.display(),
            nested::WALK_LIMIT.as_secs(),
            crate::state::listing::MAX_DEPTH
        ));
    }
    let left = scan
        .found
        .into_iter()
        .filter(|n| !moved.contains(&n.path))
        .collect();
    (msgs, left)
}

fn files(now: &[Observed]) -> Vec<record::ControlFile> {
    now.iter().map(|o| o.file.clone()).collect()
}

fn refusal(ws: &Path, findings: &[Finding], first: bool) -> String {
    let mut s = format!(
        "Git Sentry refuses to start the sandbox (nothing was started): the repository of {} \
         holds git control files that redirect git or add configuration and that Lazaret has not \
         recorded as yours (SR-4, docs/git-sentry.md):",
        ws.display()
    );
    for f in findings {
        let _ = write!(s, "\n  - {}", line(f));
    }
    if first {
        s.push_str(
            "\nLazaret has no record of this repository's layout yet (its first launch, or one \
             by an older Lazaret), so it takes nothing but a plain .git directory on trust.",
        );
    }
    s.push_str(
        "\nUntil this is resolved, host git in this repository may follow these files: do not run \
         git there. If the sandbox planted them (it can write .git through /workspace), move \
         them aside — nothing is lost and host git stops reading them:",
    );
    for f in findings {
        let _ = write!(
            s,
            "\n    mv -- {} {}",
            sq(&f.file.path),
            sq(&aside(&f.file.path))
        );
    }
    if findings.iter().all(|f| f.invalid.is_none()) {
        let _ = write!(
            s,
            "\nIf you set this up yourself, accept it: run `lazaret git-sentry accept` in {}.",
            ws.display()
        );
    }
    s
}

fn aside(p: &Path) -> PathBuf {
    let mut s = p.as_os_str().to_os_string();
    s.push(super::quarantine::SUFFIX.trim_end_matches('-'));
    PathBuf::from(s)
}

/// Renames aside every control file of `ws` that `rec` does not trust and the layout does not
/// prove harmless; one message each. A file already gone (another session's check got there
/// first) is skipped. `running`: a `.git` directory that appeared is left for the end of the
/// run (the agent may be using the repository it just created).
fn neutralise(ws: &Path, rec: &Record, running: bool) -> Vec<String> {
    let mut out = Vec::new();
    for f in judge(&control::observe(ws), Some(rec)) {
        if running && f.file.kind == super::control::Kind::RepositoryDir {
            continue;
        }
        let what = line(&f);
        out.push(match rename_aside(&f.file.path) {
            Ok(new) => format!(
                "Git Sentry: the sandbox changed a git control file during the run — {what}. \
                 Renamed it to {} so host git no longer reads it. If you made it yourself: \
                 `mv -- {} {}` and then `lazaret git-sentry accept`",
                new.display(),
                sq(&new),
                sq(&f.file.path)
            ),
            Err(_) if std::fs::symlink_metadata(&f.file.path).is_err() => continue,
            Err(e) => format!(
                "Git Sentry: the sandbox changed a git control file during the run — {what}. \
                 It could not be renamed aside ({e:#}): do not run git in {} before you \
                 remove it: `mv -- {} {}`",
                ws.display(),
                sq(&f.file.path),
                sq(&aside(&f.file.path))
            ),
        });
    }
    out
}

/// While a session runs: planted control files are renamed aside at once (host git run
/// meanwhile — another terminal, a shell prompt — would follow them), looked for when inotify
/// says a directory that holds control files changed (see [`super::watch`]). Returns the
/// messages once `stop` is set (which ends it at once). Without a record there is nothing to
/// compare with.
pub fn watch(ws: &Path, store: &Path, stop: &crate::wake::WakeFlag) -> Vec<String> {
    let Ok(Some(rec)) = record::load(store, ws) else {
        return Vec::new();
    };
    super::watch::run(ws, stop, || {
        let found = neutralise(ws, &rec, true);
        for m in &found {
            tracing::warn!("{m}");
        }
        found
    })
}

/// The end-of-run check where no terminal is left to tell (a coordinator-owned session, a
/// lingering Domain's teardown): what it finds goes to the log.
pub fn after_run_logged(domain: &Domain) {
    match after_run(&domain.workspace.root, &store_of(domain)) {
        Ok(report) => report.messages.iter().for_each(|m| tracing::warn!("{m}")),
        Err(e) => tracing::warn!("Git Sentry end-of-run check: {e:#}"),
    }
}

/// What the end-of-run check did, one message per line for the developer.
#[derive(Debug, Default)]
pub struct AfterRun {
    pub messages: Vec<String>,
}

/// After a run: control files that are new or changed since the record (the sandbox may create
/// them while it runs; no mount can pin a missing file) are renamed aside; nested repositories
/// that appeared are reported. Without a record there is nothing to compare with.
pub fn after_run(ws: &Path, store: &Path) -> anyhow::Result<AfterRun> {
    let mut out = AfterRun::default();
    let Some(mut rec) = record::load(store, ws)? else {
        return Ok(out);
    };
    out.messages = neutralise(ws, &rec, false);
    let (msgs, left) = neutralise_nested(ws, &known(&rec.nested));
    out.messages.extend(msgs);
    rec.nested = left;
    rec.pending = false;
    record::save(store, &rec)?;
    Ok(out)
}

/// `lazaret git-sentry accept`: records the current layout as the developer's. Invalid layouts
/// cannot be accepted. Returns what was newly accepted, one line each.
pub fn accept(ws: &Path, store: &Path) -> anyhow::Result<Vec<String>> {
    let now = control::observe(ws);
    let invalid: Vec<&Observed> = now.iter().filter(|o| o.invalid.is_some()).collect();
    if !invalid.is_empty() {
        let mut s = String::from(
            "these git control files are not a valid layout and cannot be accepted; move them \
             aside and try again:",
        );
        for o in invalid {
            let _ = write!(
                s,
                "\n  - {}: {}\n    mv -- {} {}",
                o.file.path.display(),
                o.invalid.as_deref().unwrap_or(""),
                sq(&o.file.path),
                sq(&aside(&o.file.path))
            );
        }
        bail!("{s}");
    }
    let rec = record::load(store, ws)?;
    let accepted: Vec<String> = judge(&now, rec.as_ref()).iter().map(line).collect();
    let nested = nested::scan(ws).found;
    record::save(store, &Record::new(ws, files(&now), nested))?;
    Ok(accepted)
}
