//! Ignored Workspace State (spec §3.3, SR-13, FR-4, FR-9, DX-2): Git-ignored workspace paths
//! are presented inside the sandbox from Domain-scoped storage instead of the host content, so
//! agent-written dependency trees, virtual environments and build outputs never reach host
//! tools, and host ignored files (`.env`, …) are not exposed. Described for users in
//! `docs/ignored-state.md`.
//!
//! How one launch is planned ([`plan`]):
//! 1. **Git decides what is ignored.** Host git lists the untracked ignored paths
//!    (`ls-files --others --ignored --exclude-standard --directory`, wholly ignored directories
//!    collapsed into one entry), hardened so nothing from the repository runs (no fsmonitor
//!    hook, no hooks, no pager, `GIT_*` variables removed, system config skipped, the work tree
//!    pinned, a timeout). The developer's global configuration stays in effect: its
//!    `core.excludesFile` belongs to the effective rules. Each entry is then confirmed with
//!    `check-ignore`, which drops directories git lists only because everything in them is
//!    ignored (their ignored children are listed on their own). Not a repository: nothing.
//! 2. **Cap**: more than [`MAX_ENTRIES`] paths is an error (add a directory pattern, or turn
//!    isolation off with `isolate_ignored = false`, FR-9).
//! 3. **Anticipated mount points**: literal top-level directory patterns of the root
//!    `.gitignore` and `info/exclude` (ending in `/`, or a well-known name such as
//!    `node_modules`) that git confirms and that do not exist yet are created empty on the
//!    host, so the sandbox's `npm install` lands in storage, not in the host workspace.
//! 4. Ignored paths first created while the sandbox runs land in the host workspace for that
//!    run; from the next launch on, rule 1 finds them and hides their host content.
//! 5. **Storage**: `<Domain Root>/ignored/<P>`, a directory or an empty file after the host
//!    path's type (host symlinks and special files are left alone), created fd-relative
//!    without following any symlink (see `storage.rs`). Host content is never copied in. Entries
//!    persist across launches (FR-4, DX-2) and are bound read-write at `/workspace/<P>`.

pub mod anticipate;
pub mod git;
mod storage;
#[cfg(test)]
mod tests;

pub use anticipate::WELL_KNOWN_DIRS;

use super::mounts::SandboxMount;
use crate::domain::workspace::SANDBOX_WORKSPACE;
use anyhow::bail;
use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use storage::{Kind, Storage};

/// More ignored paths than this is refused: each is a mount of the sandbox.
pub const MAX_ENTRIES: usize = 512;

/// How long git may take to list the ignored paths.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(20);

/// What Ignored Workspace State presents for one launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IgnoredState {
    /// Binds of `<storage>/<P>` at `/workspace/<P>`, parents before children.
    pub mounts: Vec<SandboxMount>,
    /// One line each, for the user: created mount points, skipped paths, no repository.
    pub notes: Vec<String>,
    /// Workspace-relative directories created empty on the host as mount points this launch.
    pub created_mount_points: Vec<PathBuf>,
    /// False when the workspace is not a Git repository (then nothing is ignored).
    pub is_repository: bool,
}

/// Knobs of [`plan`]; tests change them.
struct Options<'a> {
    cap: usize,
    timeout: Duration,
    /// `HOME` of the git child (tests only, for hermetic runs).
    git_home: Option<&'a Path>,
}

/// Finds the workspace's ignored paths and prepares their Domain-scoped storage under
/// `storage` (`<Domain Root>/ignored`, created 0700 when missing), returning the mounts that
/// present it. `workspace_root` is the canonical host workspace, seen as `/workspace` inside.
pub fn plan(workspace_root: &Path, storage: &Path) -> anyhow::Result<IgnoredState> {
    let options = Options {
        cap: MAX_ENTRIES,
        timeout: GIT_TIMEOUT,
        git_home: None,
    };
    plan_with(workspace_root, storage, &options)
}

fn plan_with(ws: &Path, storage: &Path, options: &Options) -> anyhow::Result<IgnoredState> {
    let mut out = IgnoredState::default();
    if std::fs::symlink_metadata(ws.join(".git")).is_err() {
        out.notes.push(format!(
            "{} is not a Git repository: no path is ignored, so Ignored Workspace State is empty",
            ws.display()
        ));
        return Ok(out);
    }
    let git = git::Git {
        workspace: ws,
        timeout: options.timeout,
        home: options.git_home,
    };
    let listed = match git.list_ignored()? {
        git::Listing::Entries(entries) => entries,
        git::Listing::NotARepository(why) => {
            out.notes.push(format!(
                "{} is not a Git repository ({why}): Ignored Workspace State is empty",
                ws.display()
            ));
            return Ok(out);
        }
    };
    out.is_repository = true;

    let exclude = git::info_exclude(ws);
    let candidates = anticipate::absent_candidates(ws, exclude.as_deref());
    let mut asked = listed.clone();
    asked.extend(candidates.iter().map(|c| format!("{c}/").into_bytes()));
    let confirmed: HashSet<Vec<u8>> = git.check_ignore(&asked)?.into_iter().collect();
    let is_confirmed = |raw: &[u8]| confirmed.contains(raw);

    let mut entries: Vec<PathBuf> = Vec::new();
    for raw in listed.iter().filter(|raw| is_confirmed(raw)) {
        entries.push(relative(raw)?);
    }
    let anticipated: Vec<&String> = candidates
        .iter()
        .filter(|c| is_confirmed(format!("{c}/").as_bytes()))
        .collect();
    for c in &anticipated {
        entries.push(relative(c.as_bytes())?);
    }
    let entries = outermost(entries);
    if entries.len() > options.cap {
        let first: Vec<String> = entries
            .iter()
            .take(5)
            .map(|p| p.display().to_string())
            .collect();
        bail!(
            "{} Git-ignored paths in {} (first: {}, …): more than {} cannot each get \
             Ignored Workspace State; add a directory pattern to .gitignore that covers them, \
             or turn isolation off with `isolate_ignored = false` in the profile",
            entries.len(),
            ws.display(),
            first.join(", "),
            options.cap
        );
    }

    for c in anticipated {
        let host = ws.join(c);
        let mut builder = std::fs::DirBuilder::new();
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o755);
        match builder.create(&host) {
            Ok(()) => {
                out.notes.push(format!(
                    "created empty mount point {c}/ for Ignored Workspace State"
                ));
                out.created_mount_points.push(PathBuf::from(c));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => out.notes.push(format!(
                "could not create mount point {c}/ for Ignored Workspace State ({e}): what \
                 the sandbox puts there this run reaches the host workspace"
            )),
        }
    }

    let storage = Storage::open(storage)?;
    for rel in entries {
        let host = ws.join(&rel);
        let kind = match std::fs::symlink_metadata(&host) {
            Ok(m) if m.is_dir() => Kind::Dir,
            Ok(m) if m.is_file() => Kind::File,
            Ok(m) if m.file_type().is_symlink() => {
                out.notes.push(format!(
                    "symlinked ignored path {} left as is: a symlink's target is only visible \
                     inside if it lies inside the workspace, where its own status applies",
                    rel.display()
                ));
                continue;
            }
            Ok(_) => {
                out.notes.push(format!(
                    "ignored path {} is not a regular file or directory (FIFO, socket or \
                     device): left as is",
                    rel.display()
                ));
                continue;
            }
            // Gone since git listed it (or never created): nothing to hide.
            Err(_) => continue,
        };
        let source = storage.prepare(&rel, kind)?;
        let target = Path::new(SANDBOX_WORKSPACE).join(&rel);
        let why = format!("Ignored Workspace State: {}", rel.display());
        out.mounts
            .push(SandboxMount::bind(&source, &target, false, &why));
    }
    Ok(out)
}

/// A git entry as a workspace-relative path: git's trailing `/` stripped; anything absolute,
/// empty, `.`/`..`, non-UTF-8, or holding a comma or newline (which podman's mount syntax
/// cannot carry) is refused by name.
pub fn relative(raw: &[u8]) -> anyhow::Result<PathBuf> {
    let shown = String::from_utf8_lossy(raw).into_owned();
    let trimmed = raw.strip_suffix(b"/").unwrap_or(raw);
    let valid = !trimmed.is_empty()
        && trimmed
            .split(|b| *b == b'/')
            .all(|c| !c.is_empty() && c != b"." && c != b"..");
    if !valid {
        bail!("git listed an invalid ignored path {shown:?}");
    }
    if std::str::from_utf8(trimmed).is_err() || trimmed.contains(&b',') || trimmed.contains(&b'\n')
    {
        bail!(
            "the Git-ignored path {shown:?} is not valid UTF-8 or contains a comma or newline, \
             which cannot be mounted into the sandbox: rename it, or turn isolation off with \
             `isolate_ignored = false` in the profile"
        );
    }
    Ok(PathBuf::from(OsStr::from_bytes(trimmed)))
}

/// Sorted, without duplicates, and without any path lying inside another kept one.
pub fn outermost(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    // Component-wise order puts a directory right before what lies inside it.
    paths.sort();
    paths.dedup();
    let mut kept: Vec<PathBuf> = Vec::new();
    for p in paths {
        if !kept.last().is_some_and(|k| p.starts_with(k)) {
            kept.push(p);
        }
    }
    kept
}
