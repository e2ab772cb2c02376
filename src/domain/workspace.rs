//! Agent Workspace: the canonical host project directory mounted at `/workspace`.

use super::layout::Layout;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

/// Where the sandbox sees the Agent Workspace.
pub const SANDBOX_WORKSPACE: &str = "/workspace";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workspace {
    /// Canonical workspace root: the Git top level when inside a repository, else the directory.
    pub root: PathBuf,
    /// The caller's directory relative to `root`, recreated inside the sandbox.
    pub relative_cwd: PathBuf,
}

impl Workspace {
    /// Resolves the workspace of `cwd`. The Git top level is found by looking for `.git` (a
    /// directory, or a file in worktrees and submodules) upwards, without running git: nothing
    /// from the repository's own configuration is executed on the host.
    pub fn resolve(cwd: &Path) -> anyhow::Result<Workspace> {
        let cwd = std::fs::canonicalize(cwd)
            .with_context(|| format!("resolving the workspace directory {}", cwd.display()))?;
        let mut root = cwd
            .ancestors()
            .find(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok())
            .unwrap_or(&cwd)
            .to_path_buf();
        // Inside a submodule, the workspace is its superproject: git in a submodule needs the
        // superproject's `.git/modules`, which is only visible when the superproject is mounted.
        while let Some(superproject) = superproject_of(&root) {
            root = superproject;
        }
        let relative_cwd = cwd
            .strip_prefix(&root)
            .unwrap_or(Path::new(""))
            .to_path_buf();
        Ok(Workspace { root, relative_cwd })
    }

    /// The working directory inside the sandbox that mirrors the caller's.
    pub fn sandbox_cwd(&self) -> PathBuf {
        Path::new(SANDBOX_WORKSPACE).join(&self.relative_cwd)
    }

    /// Refuses a workspace whose mount would expose the home directory, the whole file system or
    /// Lazaret's host configuration and state (SR-2, SR-3, SR-10).
    pub fn check_mountable(&self, layout: &Layout) -> anyhow::Result<()> {
        let root = &self.root;
        let what = "run lazaret from a project directory (or a Git repository) instead";
        if root == Path::new("/") {
            bail!("refusing to use / as the Agent Workspace: {what}");
        }
        let home = std::fs::canonicalize(layout.home()).unwrap_or(layout.home().to_path_buf());
        if home.starts_with(root) {
            bail!(
                "refusing to use {} as the Agent Workspace: it contains your home directory, \
                 which would be mounted read-write into the sandbox; {what}",
                root.display()
            );
        }
        let mut protected = vec![
            layout.storage_root(),
            layout.config_dir(),
            layout.state_dir(),
        ];
        if let Ok(rt) = layout.runtime_root() {
            protected.push(rt);
        }
        for p in protected {
            let p = std::fs::canonicalize(&p).unwrap_or(p);
            if p.starts_with(root) || root.starts_with(&p) {
                bail!(
                    "refusing to use {} as the Agent Workspace: it overlaps Lazaret's host \
                     state {}, which must never be mounted into the sandbox (SR-2); {what}",
                    root.display(),
                    p.display()
                );
            }
        }
        Ok(())
    }
}

/// The superproject of the submodule checked out at `dir`: `dir/.git` is a file pointing into
/// `<ancestor>/.git/modules/`.
fn superproject_of(dir: &Path) -> Option<PathBuf> {
    let meta = std::fs::symlink_metadata(dir.join(".git")).ok()?;
    if !meta.is_file() || meta.len() > 4096 {
        return None;
    }
    let text = std::fs::read_to_string(dir.join(".git")).ok()?;
    let gitdir = Path::new(text.trim_end().strip_prefix("gitdir: ")?);
    let gitdir = std::fs::canonicalize(dir.join(gitdir)).ok()?;
    let text = gitdir.to_string_lossy();
    let (prefix, _) = text.split_once("/.git/modules/")?;
    let superproject = PathBuf::from(prefix);
    (dir.starts_with(&superproject) && dir != superproject).then_some(superproject)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_top_level_and_relative_cwd() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let repo = std::fs::canonicalize(t.path())?.join("repo");
        std::fs::create_dir_all(repo.join(".git"))?;
        std::fs::create_dir_all(repo.join("a/b"))?;
        let ws = Workspace::resolve(&repo.join("a/b"))?;
        assert_eq!(ws.root, repo);
        assert_eq!(ws.sandbox_cwd(), Path::new("/workspace/a/b"));
        Ok(())
    }

    #[test]
    fn worktree_git_file_counts() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let wt = std::fs::canonicalize(t.path())?.join("wt");
        std::fs::create_dir_all(wt.join("src"))?;
        std::fs::write(wt.join(".git"), "gitdir: /elsewhere\n")?;
        assert_eq!(Workspace::resolve(&wt.join("src"))?.root, wt);
        Ok(())
    }

    #[test]
    fn a_submodule_belongs_to_its_superproject() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let top = std::fs::canonicalize(t.path())?.join("super");
        std::fs::create_dir_all(top.join(".git/modules/lib"))?;
        std::fs::create_dir_all(top.join("lib/src"))?;
        std::fs::write(top.join("lib/.git"), "gitdir: ../.git/modules/lib\n")?;
        let ws = Workspace::resolve(&top.join("lib/src"))?;
        assert_eq!(ws.root, top);
        assert_eq!(ws.relative_cwd, Path::new("lib/src"));
        Ok(())
    }

    #[test]
    fn plain_directory_is_its_own_workspace() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let d = std::fs::canonicalize(t.path())?;
        let ws = Workspace::resolve(&d)?;
        // tempdir may sit under a repository on a developer machine; then the top level wins.
        assert!(d.starts_with(&ws.root));
        Ok(())
    }
}
