//! A workspace whose `.git` is a `gitdir:` pointer file: a linked worktree, a repository with a
//! separate Git directory, or a submodule opened on its own. Git inside the sandbox follows the
//! pointer from `/workspace`, so the Git directory `G` and its common dir `C` must be visible at
//! the paths it computes there.

use super::files::{normalise, parse_gitdir_file, parse_path_line};
use super::{Planner, View};
use crate::domain::workspace::SANDBOX_WORKSPACE;
use anyhow::{bail, Context};
use std::ffi::OsStr;
use std::io::ErrorKind;
use std::path::{Component, Path};

/// Top-level directories of the sandbox's own system: a Git directory may not be mounted there.
const TOP_LEVEL: &[&str] = &[
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "media",
    "mnt",
    "opt",
    "proc",
    "root",
    "run",
    "sbin",
    "srv",
    "sys",
    "tmp",
    "usr",
    "var",
    "workspace",
];
/// … nor anywhere inside these (kernel file systems, runtime state, the image's programs).
const INSIDE: &[&str] = &[
    "bin",
    "dev",
    "etc",
    "proc",
    "run",
    "sbin",
    "sys",
    "usr",
    "workspace",
];

impl Planner {
    /// `dotgit` is a `gitdir:` file (`pointer`) or a Git directory with a `commondir` file.
    pub(super) fn plan_linked(&mut self, dotgit: &Path, pointer: bool) -> anyhow::Result<()> {
        let declared = if pointer {
            parse_gitdir_file(dotgit)?
        } else {
            ".git".to_owned()
        };
        // Git resolves a relative `gitdir:` against the directory holding the file: the
        // workspace root on the host, `/workspace` inside.
        let g = std::fs::canonicalize(self.ws.join(&declared)).with_context(|| {
            format!(
                "{} points to {declared}, which cannot be resolved",
                dotgit.display()
            )
        })?;
        if !g.is_dir() || std::fs::symlink_metadata(g.join("HEAD")).is_err() {
            bail!(
                "{} points to {}, which is not a Git directory (no HEAD)",
                dotgit.display(),
                g.display()
            );
        }
        let g_in = normalise(&Path::new(SANDBOX_WORKSPACE).join(&declared));
        let commondir = g.join("commondir");
        let (c, c_in) = match std::fs::symlink_metadata(&commondir) {
            Err(e) if e.kind() == ErrorKind::NotFound => (g.clone(), g_in.clone()),
            Err(e) => bail!("cannot inspect {}: {e}", commondir.display()),
            Ok(_) => {
                let rel = parse_path_line(&commondir)?;
                let c = std::fs::canonicalize(g.join(&rel)).with_context(|| {
                    format!(
                        "{} points to {rel}, which cannot be resolved",
                        commondir.display()
                    )
                })?;
                (c, normalise(&g_in.join(&rel)))
            }
        };
        for dir in [&c, &g] {
            if dir.as_path() == Path::new("/") || self.ws.starts_with(dir) {
                bail!(
                    "the Git directory {} of {} contains the workspace itself: Lazaret cannot \
                     mount it into the sandbox without exposing the workspace a second time",
                    dir.display(),
                    dotgit.display()
                );
            }
        }
        self.reach(&c, &c_in, dotgit)?;
        self.reach(&g, &g_in, dotgit)?;

        if pointer {
            self.bind_ro(dotgit, "Git Sentry: the workspace's .git pointer read-only");
        }
        self.pin(&c)?;
        self.pin(&g)?;
        let facts = self.protect_repository(&c)?;
        if g != c {
            self.bind_ro(&commondir, "Git Sentry: the worktree's commondir read-only");
            if pointer {
                self.show_back_pointer(&g, dotgit)?;
            }
            self.protect_config_worktree(&g, facts.worktree_config)?;
            self.protect_modules(&g)?;
        }
        self.config_notes(&c, &facts);
        self.notes.push(format!(
            "Git Sentry: {}/config is read-only and its hooks are hidden in the sandbox",
            c.display()
        ));
        if let Some(wt) = &facts.worktree {
            let w_in = normalise(&g_in.join(wt));
            if w_in != Path::new(SANDBOX_WORKSPACE) {
                self.notes.push(format!(
                    "{}/config sets core.worktree = {wt}, which inside the sandbox means {}, not \
                     /workspace: git commands in the sandbox will fail; run Lazaret from the \
                     superproject (the directory holding the .git directory) instead",
                    c.display(),
                    w_in.display()
                ));
            }
        }
        Ok(())
    }

    /// A linked worktree's admin dir names the worktree's `.git` file by its host path
    /// (`G/gitdir`). Inside, that path does not exist, so `git worktree prune` (or `gc` after
    /// months) would delete this very worktree's admin dir: show the file, read-only, there too.
    fn show_back_pointer(&mut self, g: &Path, dotgit: &Path) -> anyhow::Result<()> {
        let file = g.join("gitdir");
        let Ok(text) = parse_path_line(&file) else {
            return Ok(()); // absent or odd: git itself repairs or reports it
        };
        let inside = normalise(Path::new(&text));
        if !Path::new(&text).is_absolute()
            || std::fs::canonicalize(&inside).ok().as_deref() != Some(dotgit)
            || self.views.iter().any(|v| inside.starts_with(&v.container))
            || forbidden_place(&inside).is_some()
        {
            return Ok(());
        }
        self.out.mounts.push(super::SandboxMount::bind(
            dotgit,
            &inside,
            true,
            "Git Sentry: the worktree's .git file at its host path, so git does not prune it",
        ));
        Ok(())
    }

    /// Makes host directory `host` visible at `inside`, where git in the sandbox will look for
    /// it: nothing to do when a view already shows it there; otherwise a read-write bind, after
    /// refusing places where it would hide something else.
    fn reach(&mut self, host: &Path, inside: &Path, dotgit: &Path) -> anyhow::Result<()> {
        let mut views = self.views.clone();
        views.sort_by_key(|v| std::cmp::Reverse(v.container.components().count()));
        for v in views {
            if let Ok(rel) = inside.strip_prefix(&v.container) {
                let seen = v.host.join(rel);
                if seen == host {
                    return Ok(());
                }
                bail!(
                    "following {}, git inside the sandbox looks for the Git directory {} at {}, \
                     where the sandbox shows {} instead: this layout is not supported; use a \
                     `gitdir:` path that stays inside the workspace, or an absolute one",
                    dotgit.display(),
                    host.display(),
                    inside.display(),
                    seen.display()
                );
            }
        }
        if let Some(why) = forbidden_place(inside) {
            bail!(
                "following {}, git inside the sandbox looks for the Git directory {} at {}, {why}: \
                 Git Sentry will not mount it there, so this layout is unsupported; move the \
                 repository (e.g. under your home directory) or run Lazaret from the main worktree",
                dotgit.display(),
                host.display(),
                inside.display()
            );
        }
        self.out.mounts.push(super::SandboxMount::bind(
            host,
            inside,
            false,
            "Git Sentry: the repository's Git directory, where git looks for it",
        ));
        self.views.push(View {
            host: host.to_path_buf(),
            container: inside.to_path_buf(),
        });
        self.notes.push(format!(
            "the repository's Git directory {} is mounted read-write at {} so git works in this \
             worktree (the sandbox sees that host path)",
            host.display(),
            inside.display()
        ));
        Ok(())
    }
}

/// Why `inside` (absolute, normalised) may not receive a mount, if it may not.
fn forbidden_place(inside: &Path) -> Option<String> {
    let names: Vec<&OsStr> = inside
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    let Some(first) = names.first() else {
        return Some("the sandbox's root directory".into());
    };
    let first = first.to_str().unwrap_or("");
    let lib = first.starts_with("lib");
    if names.len() == 1 && (TOP_LEVEL.contains(&first) || lib) {
        return Some("a top-level system directory".into());
    }
    if names.len() > 1 && (INSIDE.contains(&first) || lib) {
        return Some(format!("inside the sandbox's system directory /{first}"));
    }
    None
}
