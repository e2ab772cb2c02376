//! The Git repository escalated git may run in (SR-4): the workspace's own repository as the
//! Git Sentry protected it when the Domain started — its `.git` directory pinned by a mount, its
//! `config` bound read-only in the sandbox (a `.git` file and the linked layout it names: the
//! file, `commondir` and configs bound read-only). Host git is pinned to it (`GIT_DIR`,
//! `GIT_WORK_TREE`), so it never discovers a repository the sandbox made. A workspace without
//! `.git` at that moment has no protected repository: a repository created inside later has a
//! configuration the sandbox wrote.

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The protected repository of a workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Protected {
    /// The Git directory host git is pinned to (`GIT_DIR`).
    pub git_dir: PathBuf,
    /// The workspace root (`GIT_WORK_TREE`).
    pub work_tree: PathBuf,
    /// Device and inode of the workspace's `.git` when the Domain started.
    dotgit: (u64, u64),
    /// `<git_dir>/commondir` existed then (a linked layout; the Git Sentry binds it read-only).
    had_commondir: bool,
    /// The submodule Git directories under `<git_dir>/modules` then (canonical): the Git Sentry
    /// made their configs read-only. One made later is the sandbox's.
    pub modules: Vec<PathBuf>,
}

/// Why the workspace has no protected repository, for the developer.
pub fn not_protected(workspace: &Path, why: &str) -> String {
    format!(
        "the workspace {} is not a Git repository the Git Sentry protects ({why}); host git runs \
         only in the workspace's own repository as it was when the Domain started, because any \
         other repository's configuration was written by the sandbox",
        workspace.display()
    )
}

/// Finds the protected repository of `workspace` (canonical host path). Call it when the
/// Domain starts, before any session of it runs.
pub fn discover(workspace: &Path) -> Result<Protected, String> {
    let dotgit = workspace.join(".git");
    let meta = std::fs::symlink_metadata(&dotgit).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => not_protected(workspace, "it has no .git"),
        _ => not_protected(workspace, &format!("cannot inspect .git: {e}")),
    })?;
    let git_dir = if meta.is_dir() {
        dotgit.clone()
    } else if meta.is_file() {
        pointed_git_dir(workspace, &dotgit)?
    } else {
        return Err(not_protected(
            workspace,
            ".git is neither a directory nor a file",
        ));
    };
    let git_dir = std::fs::canonicalize(&git_dir)
        .map_err(|e| not_protected(workspace, &format!("{}: {e}", git_dir.display())))?;
    let mut modules = Vec::new();
    collect_modules(&git_dir.join("modules"), &mut modules, &mut 0);
    // A linked worktree's submodules live in the common directory.
    if let Some(common) = std::fs::read_to_string(git_dir.join("commondir"))
        .ok()
        .and_then(|c| std::fs::canonicalize(git_dir.join(c.trim())).ok())
        .filter(|c| *c != git_dir)
    {
        collect_modules(&common.join("modules"), &mut modules, &mut 0);
    }
    Ok(Protected {
        modules,
        had_commondir: std::fs::symlink_metadata(git_dir.join("commondir")).is_ok(),
        git_dir,
        work_tree: workspace.to_path_buf(),
        dotgit: (meta.dev(), meta.ino()),
    })
}

/// Module Git directories (directories holding `HEAD`) under `dir`, at most 1024 looked at.
fn collect_modules(dir: &Path, out: &mut Vec<PathBuf>, seen: &mut usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        *seen += 1;
        if *seen > 1024 {
            return;
        }
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = e.path();
        if std::fs::symlink_metadata(path.join("HEAD")).is_ok() {
            if let Ok(c) = std::fs::canonicalize(&path) {
                out.push(c);
            }
            collect_modules(&path.join("modules"), out, seen);
        } else {
            // A name with slashes: `modules/libs/x`.
            collect_modules(&path, out, seen);
        }
    }
}

/// The Git directory a `gitdir:` file names (relative to the workspace when relative).
fn pointed_git_dir(workspace: &Path, file: &Path) -> Result<PathBuf, String> {
    let mut text = String::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(4096).read_to_string(&mut text))
        .map_err(|e| not_protected(workspace, &format!("reading .git: {e}")))?;
    let target = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("gitdir:"))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| not_protected(workspace, ".git is a file without a gitdir: line"))?;
    Ok(workspace.join(target))
}

impl Protected {
    /// Checks, before host git runs, that the repository is still the one the Git Sentry
    /// protects: the same `.git`, and no `commondir` redirect the sandbox added.
    pub fn still_protected(&self) -> Result<(), String> {
        let ws = &self.work_tree;
        let meta = std::fs::symlink_metadata(ws.join(".git"))
            .map_err(|e| not_protected(ws, &format!(".git changed: {e}")))?;
        if (meta.dev(), meta.ino()) != self.dotgit {
            return Err(not_protected(
                ws,
                ".git was replaced since the Domain started",
            ));
        }
        if !self.had_commondir && std::fs::symlink_metadata(self.git_dir.join("commondir")).is_ok()
        {
            return Err(not_protected(
                ws,
                "a commondir file appeared in its Git directory, redirecting git to another \
                 configuration; remove it (and check .git for other changes) before escalating git",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_a_gitdir_file_or_nothing() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let root = std::fs::canonicalize(t.path())?;
        let (plain, linked, none) = (root.join("plain"), root.join("linked"), root.join("none"));
        std::fs::create_dir_all(plain.join(".git"))?;
        std::fs::create_dir_all(root.join("store/wt"))?;
        std::fs::create_dir_all(&linked)?;
        std::fs::write(linked.join(".git"), "gitdir: ../store/wt\n")?;
        std::fs::create_dir_all(&none)?;
        let p = discover(&plain).map_err(anyhow::Error::msg)?;
        assert_eq!(p.git_dir, plain.join(".git"));
        assert_eq!(p.still_protected(), Ok(()));
        let l = discover(&linked).map_err(anyhow::Error::msg)?;
        assert_eq!(l.git_dir, root.join("store/wt"));
        assert!(discover(&none).is_err_and(|e| e.contains("no .git")));
        // Created later (git init inside): not the protected one.
        std::fs::write(p.git_dir.join("commondir"), "../../elsewhere")?;
        assert!(p.still_protected().is_err_and(|e| e.contains("commondir")));
        std::fs::remove_file(p.git_dir.join("commondir"))?;
        std::fs::rename(plain.join(".git"), plain.join("old"))?;
        std::fs::create_dir(plain.join(".git"))?;
        assert!(p.still_protected().is_err_and(|e| e.contains("replaced")));
        std::os::unix::fs::symlink("/", none.join(".git"))?;
        assert!(discover(&none).is_err());
        Ok(())
    }

    #[test]
    fn module_git_directories_present_at_the_start_are_remembered() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let ws = std::fs::canonicalize(t.path())?;
        let m = ws.join(".git/modules");
        for d in ["a", "a/modules/b", "libs/x"] {
            std::fs::create_dir_all(m.join(d).join("objects/00"))?;
            std::fs::write(m.join(d).join("HEAD"), "ref: refs/heads/main\n")?;
        }
        let p = discover(&ws).map_err(anyhow::Error::msg)?;
        let mut got = p.modules.clone();
        got.sort();
        assert_eq!(got, [m.join("a"), m.join("a/modules/b"), m.join("libs/x")]);
        // A linked worktree: its common directory's modules.
        let wt = ws.join("wt");
        std::fs::create_dir_all(ws.join(".git/worktrees/wt"))?;
        std::fs::write(ws.join(".git/worktrees/wt/commondir"), "../..\n")?;
        std::fs::create_dir_all(&wt)?;
        std::fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", ws.join(".git/worktrees/wt").display()),
        )?;
        let l = discover(&wt).map_err(anyhow::Error::msg)?;
        assert_eq!(l.modules.len(), 3);
        Ok(())
    }
}
