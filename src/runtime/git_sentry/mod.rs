//! Git Sentry (SR-4, spec §3.3): narrow protective mounts over the host repository's
//! integration files, so the sandbox cannot change what host Git executes, while `git status`,
//! `add`, `commit`, `branch`, `stash`… keep working inside. Nothing from the repository is run
//! on the host to plan them: `.git` files and directories are read directly, symlinks are read
//! with `symlink_metadata`/`read_link` and followed only where a rule below says so.
//!
//! **Protected** (for the workspace's repository, its linked worktrees' admin dirs and every
//! submodule repository under `<gitdir>/modules`, recursively, at most 256):
//! - `config` bound read-only; `config.worktree` too when present — and created empty first when
//!   the config mentions `extensions.worktreeConfig`, since git would read one the sandbox made.
//! - `hooks` hidden behind a tmpfs (host hooks invisible, sandbox-written ones vanish). A missing
//!   `hooks` is created (0755, as `git init` does) so the sandbox cannot create it. A symlinked
//!   `hooks`: the tmpfs goes on its target when the sandbox sees the target (mounts follow
//!   symlinks anyway); a target outside gets no mount (the sandbox cannot reach it); a dangling
//!   target the sandbox could create is created and hidden. The symlink itself sits in the
//!   writable `.git` and a mount cannot pin it, so it is reported in `replaceable_links` and a
//!   note (unless `core.hooksPath` makes the default hooks dir irrelevant).
//! - Symlinked `config` / `config.worktree` / `commondir` and a symlinked `.git` are
//!   **refused**: the sandbox could replace the symlink by a file of its own, so no mount
//!   protects them; the error says how to convert (a regular file with `[include]`, a
//!   `gitdir:` file).
//! - The repository's own Git directory is pinned by a read-write bind over itself: a mount
//!   point cannot be renamed or removed, so the sandbox cannot move `.git` away and put a
//!   directory with another `config` in its place (Linux lets a directory holding mount points
//!   be renamed; checked with a mount namespace, still to be confirmed under runsc). Linked
//!   worktrees' admin dirs (`worktrees/<name>`) are pinned likewise and their `commondir`
//!   pointers bound read-only.
//! - A workspace whose `.git` is a `gitdir:` file (linked worktree, separate git dir, submodule
//!   opened on its own): the file is bound read-only, and the Git directory `G` and its common
//!   dir `C` (from `G/commondir`) are mounted read-write at the paths git computes inside the
//!   sandbox from that file (the host path for an absolute `gitdir:`, `/workspace/<rel>`
//!   normalised for a relative one), unless the workspace mount already shows them there. A
//!   linked worktree's `.git` file is also shown read-only at its host path, where `G/gitdir`
//!   names it, or git inside would find the worktree "prunable" and may delete `G`. Such
//!   paths may not be `/`, a top-level system directory, or lie in `/proc`, `/sys`, `/dev`,
//!   `/run`, `/usr`, `/etc`, `/bin`, `/sbin`, `/lib*` or `/workspace`; the caller checks them
//!   against its other mounts. A `.git` *directory* holding a `commondir` file is planned the
//!   same way (without the read-only pointer). A submodule opened on its own is planned too, but
//!   its `core.worktree` (`../../../sub`) means `/sub` inside, so git fails there: a note says
//!   to launch from the superproject.
//!
//! **Still writable** under the Git directory, which is what makes git work inside: `objects/`,
//! `refs/`, `packed-refs`, `HEAD`, `index`, `logs/`, `info/` and the rest. The sandbox can
//! therefore damage history or stage anything, and it can create files and repositories the
//! host git may follow later (a new `<gitdir>/commondir`, a `.git` pointer, `config.worktree`,
//! `alternates`, a nested repository staged as a gitlink): [`guard`] refuses such control files
//! at start unless the developer's record ([`record`]) or the layout itself proves them, renames
//! planted ones aside while and after a session runs, and reports nested repositories. Lazaret's
//! own host-side git must still never trust repository configuration (`core.hooksPath`,
//! `core.fsmonitor`, filters…), and docs/git-sentry.md tells the developer the same.
//!
//! Editor configuration directories named by the profile are hidden behind tmpfs when they exist
//! as real directories; absent ones are not created and so not hidden.

pub mod control;
mod editor;
mod files;
pub mod guard;
mod hooks;
pub mod judge;
mod linked;
pub mod nested;
mod protect;
pub mod quarantine;
pub mod record;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_guard;
#[cfg(test)]
mod tests_layouts;
mod watch;

use super::mounts::{MountKind, SandboxMount};
use crate::domain::workspace::SANDBOX_WORKSPACE;
use anyhow::bail;
use std::path::{Path, PathBuf};

/// What the Git Sentry does for one workspace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GitSentry {
    /// Parents before children.
    pub mounts: Vec<SandboxMount>,
    /// One line each, for the user: what is protected and how, or why nothing is.
    pub notes: Vec<String>,
    /// False when the workspace is not a Git repository.
    pub is_repository: bool,
    /// Host paths of symlinks inside writable Git directories that host git follows and that no
    /// mount can pin (a symlinked `hooks`, `modules`): the sandbox could replace them. A caller
    /// may refuse, or check after the sandbox stops that each still is the same symlink.
    pub replaceable_links: Vec<PathBuf>,
}

/// Plans the Git Sentry mounts for the workspace at `workspace_root` (host path, canonical).
/// May create on the host what must exist to be protected: an absent `hooks` directory, an empty
/// `config.worktree`, the target of a dangling `hooks` symlink inside the sandbox's view.
pub fn plan(workspace_root: &Path, hide_editor_dirs: &[PathBuf]) -> anyhow::Result<GitSentry> {
    let mut p = Planner::new(workspace_root);
    let dotgit = workspace_root.join(".git");
    match std::fs::symlink_metadata(&dotgit) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => p.notes.push(format!(
            "{} is not a Git repository: Git Sentry adds no mounts; a repository created inside \
             the sandbox (git init) is renamed aside when the run ends and refused at the next \
             launch until you accept it (`lazaret git-sentry accept`)",
            workspace_root.display()
        )),
        Err(e) => bail!("cannot inspect {}: {e}", dotgit.display()),
        Ok(meta) => {
            p.out.is_repository = true;
            let ft = meta.file_type();
            if ft.is_dir() && std::fs::symlink_metadata(dotgit.join("commondir")).is_ok() {
                // A Git directory sharing another's common dir, like a linked worktree's.
                p.plan_linked(&dotgit, false)?;
            } else if ft.is_dir() {
                p.pin(&dotgit)?;
                let facts = p.protect_repository(&dotgit)?;
                p.config_notes(&dotgit, &facts);
                p.notes.push(format!(
                    "Git Sentry: {}/config is read-only and its hooks are hidden in the sandbox",
                    dotgit.display()
                ));
            } else if ft.is_file() {
                p.plan_linked(&dotgit, true)?;
            } else if ft.is_symlink() {
                let target = std::fs::read_link(&dotgit).unwrap_or_default();
                let resolved = std::fs::canonicalize(&dotgit).unwrap_or_else(|_| target.clone());
                bail!(
                    "{} is a symlink (to {}): the sandbox could replace it with a Git directory \
                     of its own, so Lazaret cannot protect this repository; replace it with an \
                     equivalent pointer file: `rm .git && echo 'gitdir: {}' > .git`",
                    dotgit.display(),
                    target.display(),
                    resolved.display()
                );
            } else {
                bail!(
                    "{} is neither a directory nor a `gitdir:` file: Lazaret cannot tell what \
                     repository this is; remove or repair it",
                    dotgit.display()
                );
            }
        }
    }
    if p.modules > 0 {
        let n = p.modules;
        p.notes.push(format!(
            "Git Sentry: {n} submodule repositories are protected the same way (against direct \
             writes; see docs/git-sentry.md)"
        ));
    }
    p.hide_editor_dirs(hide_editor_dirs)?;
    p.finish()
}

/// Only the editor directories' mounts: a workspace whose repository the sandbox sees through
/// the git boundary's private directory needs no protective mount of `.git`.
pub fn plan_editor_dirs(
    workspace_root: &Path,
    hide_editor_dirs: &[PathBuf],
) -> anyhow::Result<GitSentry> {
    let mut p = Planner::new(workspace_root);
    p.out.is_repository = true;
    p.hide_editor_dirs(hide_editor_dirs)?;
    p.finish()
}

/// A host directory tree the sandbox sees at a container path.
#[derive(Clone, Debug)]
struct View {
    host: PathBuf,
    container: PathBuf,
}

struct Planner {
    ws: PathBuf,
    /// The workspace first, then what Git Sentry mounts read-write.
    views: Vec<View>,
    out: GitSentry,
    notes: Vec<String>,
    /// Submodule repositories protected so far (capped).
    modules: usize,
}

impl Planner {
    fn new(ws: &Path) -> Planner {
        Planner {
            ws: ws.to_path_buf(),
            views: vec![View {
                host: ws.to_path_buf(),
                container: PathBuf::from(SANDBOX_WORKSPACE),
            }],
            out: GitSentry::default(),
            notes: Vec::new(),
            modules: 0,
        }
    }

    /// Every container path at which the sandbox sees host path `host`.
    fn container_paths(&self, host: &Path) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        for v in &self.views {
            if let Ok(rel) = host.strip_prefix(&v.host) {
                let c = v.container.join(rel);
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        out
    }

    fn bind_ro(&mut self, host: &Path, why: &str) {
        for c in self.container_paths(host) {
            self.out
                .mounts
                .push(SandboxMount::bind(host, &c, true, why));
        }
    }

    fn tmpfs(&mut self, host: &Path, why: &str) {
        for c in self.container_paths(host) {
            self.out.mounts.push(SandboxMount::tmpfs(&c, why));
        }
    }

    /// Pins directory `dir` and each directory between it and the root of every view showing
    /// it: a read-write bind of each over itself, so the sandbox cannot rename them away.
    fn pin(&mut self, dir: &Path) -> anyhow::Result<()> {
        for v in self.views.clone() {
            let Ok(rel) = dir.strip_prefix(&v.host) else {
                continue;
            };
            let mut prefix = PathBuf::new();
            for c in rel.components() {
                prefix.push(c);
                let host = v.host.join(&prefix);
                let meta = std::fs::symlink_metadata(&host)?;
                if !meta.is_dir() {
                    bail!("{} is not a directory", host.display());
                }
                self.out.mounts.push(SandboxMount::bind(
                    &host,
                    &v.container.join(&prefix),
                    false,
                    "Git Sentry: pinned (a mount point cannot be renamed or replaced)",
                ));
            }
        }
        Ok(())
    }

    /// Orders parents before children, drops duplicates, refuses two different mounts at one
    /// place.
    fn finish(mut self) -> anyhow::Result<GitSentry> {
        let mut mounts: Vec<SandboxMount> = Vec::new();
        for m in std::mem::take(&mut self.out.mounts) {
            match mounts.iter().find(|x| x.container == m.container) {
                Some(x) if x.kind == m.kind => {}
                Some(x) => bail!(
                    "Git Sentry planned two different mounts at {} ({} / {}): this repository \
                     layout is not supported",
                    m.container.display(),
                    describe(&x.kind),
                    describe(&m.kind)
                ),
                None => mounts.push(m),
            }
        }
        mounts.sort_by_key(|m| m.container.components().count());
        self.out.mounts = mounts;
        self.out.notes = self.notes;
        self.out.replaceable_links.dedup();
        Ok(self.out)
    }
}

fn describe(kind: &MountKind) -> String {
    match kind {
        MountKind::Bind { host, read_only } => {
            format!(
                "{} {}",
                host.display(),
                if *read_only { "ro" } else { "rw" }
            )
        }
        MountKind::Tmpfs => "tmpfs".into(),
    }
}
