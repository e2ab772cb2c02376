//! The Git Sentry's checks of git control files (issue #13): before the Domain starts (refuse,
//! nothing started), at the end of every `lazaret run` (neutralise and tell), and the
//! developer's `lazaret git-sentry accept`.

use super::control::{self, Observed};
use super::judge::{changed_nested, judge, new_nested, Finding};
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
    // The nested repositories as the developer left them: the end of the run compares.
    let nested = nested::scan(ws).0;
    record::save(store, &Record::new(ws, files(&now), nested))
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
    let (mut nested, truncated) = nested::scan(ws);
    let changed = changed_nested(&nested, &rec.nested);
    for n in &changed {
        let dir = ws.join(&n.path);
        let file = if n.is_dir() && rec.nested.iter().any(|b| b.path == n.path && b.is_dir()) {
            dir.join("config")
        } else {
            dir.clone()
        };
        let top = dir.parent().unwrap_or(ws);
        out.messages.push(match rename_aside(&file) {
            Ok(new) => format!(
                "Git Sentry: the sandbox changed {} of the nested repository in {} during the \
                 run; host git there — and `git status` in the workspace when it is a submodule \
                 or a staged gitlink — would obey it. Renamed it to {}; after checking it, \
                 restore it with `mv -- {} {}`",
                file.display(),
                top.display(),
                new.display(),
                sq(&new),
                sq(&file)
            ),
            Err(_) if std::fs::symlink_metadata(&file).is_err() => continue,
            Err(e) => format!(
                "Git Sentry: the sandbox changed {} of the nested repository in {} during the \
                 run and it could not be renamed aside ({e:#}): do not run git in the workspace \
                 before you move it: `mv -- {} {}`",
                file.display(),
                top.display(),
                sq(&file),
                sq(&aside(&file))
            ),
        });
    }
    for n in new_nested(&nested, &rec.nested) {
        let dir = ws.join(&n.path);
        let top = dir.parent().unwrap_or(ws);
        out.messages.push(format!(
            "Git Sentry: a repository appeared at {} during the run; the sandbox may have written \
             its configuration, which host git obeys in {} — and `git status` in the workspace \
             when it is staged as a gitlink (filters, core.fsmonitor, core.pager… run \
             programs): do not run git there before checking it (`cat {}`), or remove it: \
             `rm -rf -- {}`",
            dir.display(),
            top.display(),
            sq(&if n.is_dir() {
                dir.join("config")
            } else {
                dir.clone()
            }),
            sq(&dir)
        ));
    }
    if !changed.is_empty() {
        nested = nested::scan(ws).0;
    }
    if truncated {
        tracing::info!(
            "Git Sentry: the nested-repository scan of {} stopped at its cap ({} levels, {} \
             directories)",
            ws.display(),
            nested::MAX_DEPTH,
            nested::MAX_DIRS
        );
    }
    if rec.nested != nested {
        rec.nested = nested;
        record::save(store, &rec)?;
    }
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
    let nested = nested::scan(ws).0;
    record::save(store, &Record::new(ws, files(&now), nested))?;
    Ok(accepted)
}
