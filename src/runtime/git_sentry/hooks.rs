//! The default hooks directory: hidden behind a tmpfs, created when missing, and a symlinked one
//! followed to its target when the sandbox sees (or could create) that target.

use super::protect::create_dirs;
use super::Planner;
use anyhow::{bail, Context};
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

impl Planner {
    pub(super) fn protect_hooks(&mut self, dir: &Path, hooks_path_set: bool) -> anyhow::Result<()> {
        let hooks = dir.join("hooks");
        let why = "Git Sentry: hooks hidden (SR-4)";
        match std::fs::symlink_metadata(&hooks) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                create_dirs(&hooks)?;
                self.notes.push(format!(
                    "created the missing {} (empty, as git init does) and hid it, so the sandbox \
                     cannot add hooks there that host git would run",
                    hooks.display()
                ));
                self.tmpfs(&hooks, why);
            }
            Err(e) => bail!("cannot inspect {}: {e}", hooks.display()),
            Ok(m) if m.file_type().is_symlink() => self.hooks_symlink(&hooks, hooks_path_set)?,
            Ok(m) if m.is_dir() => self.tmpfs(&hooks, why),
            Ok(_) => bail!(
                "{} is not a directory: git runs no hooks from it, but Git Sentry cannot hide it; \
                 remove it and launch again",
                hooks.display()
            ),
        }
        Ok(())
    }

    fn hooks_symlink(&mut self, link: &Path, hooks_path_set: bool) -> anyhow::Result<()> {
        let target = std::fs::read_link(link)
            .with_context(|| format!("reading the symlink {}", link.display()))?;
        let full = link.parent().unwrap_or(Path::new("/")).join(&target);
        let why = "Git Sentry: target of the symlinked hooks hidden (SR-4)";
        self.out.replaceable_links.push(link.to_path_buf());
        let what = format!("{} is a symlink to {}", link.display(), target.display());
        match std::fs::canonicalize(&full) {
            Ok(real) => {
                if !std::fs::metadata(&real)?.is_dir() {
                    bail!(
                        "{what}, which is not a directory: Git Sentry cannot hide it; fix the \
                         symlink"
                    );
                }
                if self.container_paths(&real).is_empty() {
                    self.notes.push(format!(
                        "{what}, outside what the sandbox sees: nothing there to hide"
                    ));
                } else {
                    self.tmpfs(&real, why);
                    self.notes.push(format!(
                        "{what}: {} is hidden in the sandbox",
                        real.display()
                    ));
                }
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                let would = existing_prefix(&full, &what)?;
                if self.container_paths(&would).is_empty() {
                    self.notes.push(format!(
                        "{what}, which does not exist and lies outside what the sandbox sees \
                         (it cannot create it)"
                    ));
                } else {
                    create_dirs(&would)?;
                    self.tmpfs(&would, why);
                    self.notes.push(format!(
                        "{what}, which did not exist: created {} and hid it, so the sandbox \
                         cannot create hooks there",
                        would.display()
                    ));
                }
            }
            Err(e) => bail!("{what} that cannot be resolved: {e}"),
        }
        if !hooks_path_set {
            self.notes.push(format!(
                "the symlink {} itself lies in the writable Git directory and no mount can pin \
                 it: the sandbox could replace it with a hooks directory of its own; to close \
                 this, remove the symlink and set `git config core.hooksPath {}` instead",
                link.display(),
                full.display()
            ));
        }
        Ok(())
    }
}

/// The host directory a dangling symlink target `full` names: its longest existing ancestor,
/// resolved, joined with the rest, which must be plain names (what `mkdir -p` would create).
fn existing_prefix(full: &Path, what: &str) -> anyhow::Result<PathBuf> {
    for anc in full.ancestors().skip(1) {
        match std::fs::canonicalize(anc) {
            Ok(base) => {
                let rest = full.strip_prefix(anc).unwrap_or(full);
                if !rest.components().all(|c| matches!(c, Component::Normal(_))) {
                    bail!(
                        "{what}, a dangling path with `..` Git Sentry cannot judge; fix the \
                         symlink"
                    );
                }
                return Ok(base.join(rest));
            }
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => bail!("{what} that cannot be resolved: {e}"),
        }
    }
    bail!("{what} that cannot be resolved")
}
