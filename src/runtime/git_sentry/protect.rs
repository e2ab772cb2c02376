//! Protections of one Git directory: `config`, `config.worktree`, `hooks`, linked worktrees'
//! admin dirs, and the submodule repositories under `modules/`.

use super::files::{config_facts, ConfigFacts};
use super::Planner;
use anyhow::{bail, Context};
use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Most submodule repositories (at all depths) or linked worktrees protected: each costs mounts.
pub(super) const MAX_REPOSITORIES: usize = 256;
/// Deepest directory nesting followed under `modules/` (submodule names may contain `/`).
const MAX_MODULE_DEPTH: usize = 32;

impl Planner {
    /// Protects the common Git directory `dir` (holding `config` and `hooks`) and everything
    /// below it that host git reads to decide what to run. Returns what its config says.
    pub(super) fn protect_repository(&mut self, dir: &Path) -> anyhow::Result<ConfigFacts> {
        let facts = self.protect_config(dir)?;
        self.protect_config_worktree(dir, facts.worktree_config)?;
        self.protect_hooks(dir, facts.hooks_path.is_some())?;
        self.protect_worktrees(dir, facts.worktree_config)?;
        self.protect_modules(dir)?;
        Ok(facts)
    }

    /// Notes about settings of the workspace repository's config that the mounts leave in force.
    pub(super) fn config_notes(&mut self, dir: &Path, facts: &ConfigFacts) {
        let config = dir.join("config");
        if let Some(hp) = &facts.hooks_path {
            self.notes.push(format!(
                "{} sets core.hooksPath = {hp}: host git runs hooks from there, not from hooks/; \
                 the sandbox cannot change the setting, but if that directory lies inside the \
                 workspace the sandbox can write hooks into it",
                config.display()
            ));
        }
        for inc in &facts.includes {
            self.notes.push(format!(
                "{} includes {inc}: Git Sentry does not protect included files; if it lies inside \
                 the workspace the sandbox can change settings host git reads",
                config.display()
            ));
        }
    }

    fn protect_config(&mut self, dir: &Path) -> anyhow::Result<ConfigFacts> {
        let config = dir.join("config");
        match std::fs::symlink_metadata(&config) {
            Err(e) if e.kind() == ErrorKind::NotFound => bail!(
                "{} is missing: the repository {} looks broken; Git Sentry protects it by binding \
                 it read-only and cannot protect a file that does not exist (the sandbox could \
                 create one host git would obey); restore it (`git init` in the worktree writes a \
                 default one without touching history)",
                config.display(),
                dir.display()
            ),
            Err(e) => bail!("cannot inspect {}: {e}", config.display()),
            Ok(m) if m.file_type().is_symlink() => bail!(refused_symlink(&config)),
            Ok(m) if !m.is_file() => bail!("{} is not a regular file", config.display()),
            Ok(_) => {}
        }
        self.bind_ro(&config, "Git Sentry: repository config read-only (SR-4)");
        config_facts(&config)
    }

    /// `config.worktree`: read-only when present; created empty first when git may read one.
    pub(super) fn protect_config_worktree(
        &mut self,
        dir: &Path,
        worktree_config: bool,
    ) -> anyhow::Result<()> {
        let path = dir.join("config.worktree");
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                if !worktree_config {
                    return Ok(());
                }
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o644)
                    .open(&path)
                    .with_context(|| format!("creating the empty {}", path.display()))?;
                self.notes.push(format!(
                    "created the empty {} (the repository enables extensions.worktreeConfig) so \
                     the sandbox cannot create one host git would read",
                    path.display()
                ));
            }
            Err(e) => bail!("cannot inspect {}: {e}", path.display()),
            Ok(m) if m.file_type().is_symlink() => bail!(refused_symlink(&path)),
            Ok(m) if !m.is_file() => bail!("{} is not a regular file", path.display()),
            Ok(_) => {}
        }
        self.bind_ro(&path, "Git Sentry: per-worktree config read-only (SR-4)");
        Ok(())
    }

    /// Linked worktrees' admin dirs `worktrees/<name>`: pinned, `commondir` read-only (host git
    /// in that worktree takes its config from where it points), `config.worktree` protected.
    fn protect_worktrees(&mut self, dir: &Path, worktree_config: bool) -> anyhow::Result<()> {
        let wts = dir.join("worktrees");
        if !self.real_dir_or_note(&wts)? {
            return Ok(());
        }
        self.pin(&wts)?;
        let entries = sorted_entries(&wts)?;
        if entries.len() > MAX_REPOSITORIES {
            bail!(
                "{} holds {} linked worktrees; Git Sentry protects each with its own mounts and \
                 refuses more than {MAX_REPOSITORIES}: prune stale ones (`git worktree prune`)",
                wts.display(),
                entries.len()
            );
        }
        for admin in entries {
            if !self.real_dir_or_note(&admin)? {
                continue;
            }
            self.pin(&admin)?;
            let commondir = admin.join("commondir");
            match std::fs::symlink_metadata(&commondir) {
                Ok(m) if m.file_type().is_symlink() => bail!(refused_symlink(&commondir)),
                Ok(m) if m.is_file() => {
                    self.bind_ro(&commondir, "Git Sentry: worktree's commondir read-only")
                }
                _ => {}
            }
            self.protect_config_worktree(&admin, worktree_config)?;
        }
        Ok(())
    }

    /// Submodule repositories under `dir/modules`, at any depth (names may contain `/`); a
    /// directory holding `HEAD` is one, and gets the protections of a repository.
    pub(super) fn protect_modules(&mut self, dir: &Path) -> anyhow::Result<()> {
        let modules = dir.join("modules");
        if self.real_dir_or_note(&modules)? {
            // Pinned like the Git directory: a directory holding mounts can still be renamed
            // (seen under runsc), and a rebuilt one would hold unprotected config and hooks.
            self.pin(&modules)?;
            self.walk_modules(&modules, 0)?;
        }
        Ok(())
    }

    fn walk_modules(&mut self, dir: &Path, depth: usize) -> anyhow::Result<()> {
        if depth > MAX_MODULE_DEPTH {
            bail!(
                "{} is nested more than {MAX_MODULE_DEPTH} directories deep under a modules/ \
                 directory: Git Sentry refuses such a layout",
                dir.display()
            );
        }
        for sub in sorted_entries(dir)? {
            if !self.real_dir_or_note(&sub)? {
                continue;
            }
            if std::fs::symlink_metadata(sub.join("HEAD")).is_ok() {
                self.modules += 1;
                if self.modules > MAX_REPOSITORIES {
                    bail!(
                        "more than {MAX_REPOSITORIES} submodule repositories (the next is {}): \
                         Git Sentry protects each with its own mounts and refuses this many (the \
                         sandbox would start slowly or not at all); remove unused ones from the \
                         modules/ directory of the repository",
                        sub.display()
                    );
                }
                self.pin(&sub)?;
                self.protect_repository(&sub)?;
            } else {
                self.pin(&sub)?;
                self.walk_modules(&sub, depth + 1)?;
            }
        }
        Ok(())
    }

    /// True for a real directory; false (with a note for a symlink) otherwise.
    fn real_dir_or_note(&mut self, path: &Path) -> anyhow::Result<bool> {
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
            Err(e) => bail!("cannot inspect {}: {e}", path.display()),
            Ok(m) if m.file_type().is_symlink() => {
                self.out.replaceable_links.push(path.to_path_buf());
                self.notes.push(format!(
                    "{} is a symlink: Git Sentry does not follow it, so what it points to is not \
                     protected",
                    path.display()
                ));
                Ok(false)
            }
            Ok(m) => Ok(m.is_dir()),
        }
    }
}

fn refused_symlink(path: &Path) -> String {
    let target = std::fs::read_link(path).unwrap_or_default();
    format!(
        "{} is a symlink (to {}): the sandbox could replace the symlink with a file of its own, \
         which no mount can prevent, so Lazaret refuses this repository; make it a regular file \
         (a shared .git/config can be kept with a regular one holding `[include] path = {}`)",
        path.display(),
        target.display(),
        target.display()
    )
}

/// `mkdir -p` with mode 0755 (subject to the umask, as with git).
pub(super) fn create_dirs(path: &Path) -> anyhow::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(path)
        .with_context(|| format!("creating {}", path.display()))
}

fn sorted_entries(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        out.push(
            e.with_context(|| format!("listing {}", dir.display()))?
                .path(),
        );
    }
    out.sort();
    Ok(out)
}
