//! Submodules host git could enter (SR-4). `diff.ignoreSubmodules=all` keeps `git status` and
//! `git diff` out of submodules, but a `.gitmodules` entry `ignore = none` — a file the sandbox
//! writes — overrides it for that submodule, and git then runs `git status` inside it with *its*
//! configuration. So before host git runs, every gitlink of the protected repository's index
//! whose working tree is populated must point, through its `.git` file, at a module Git
//! directory the Git Sentry protected when the Domain started; an embedded repository (a `.git`
//! directory), a pointer elsewhere, or a path through a symlink denies the request.

use super::repository::Protected;
use super::workdir;
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::sys::stat::{fstatat, Mode, SFlag};
use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

/// Checks the gitlinks of `p`'s index, listing them with `git` (the resolved executable) run
/// with the hardened `env`.
pub fn check(p: &Protected, git: &Path, env: &[(OsString, OsString)]) -> Result<(), String> {
    let out = Command::new(git)
        .args(["ls-files", "--stage", "-z"])
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(&p.work_tree)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("cannot list the repository's submodules: {e}"))?;
    if !out.status.success() {
        return Err("cannot list the repository's submodules (git ls-files failed)".into());
    }
    for entry in out.stdout.split(|b| *b == 0) {
        let Some(path) = gitlink_path(entry) else {
            continue;
        };
        check_one(p, &path)?;
    }
    Ok(())
}

/// The path of an `ls-files --stage` entry that is a gitlink (mode 160000).
fn gitlink_path(entry: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(entry).ok()?;
    let (meta, path) = text.split_once('\t')?;
    meta.starts_with("160000 ").then(|| path.to_owned())
}

fn check_one(p: &Protected, path: &str) -> Result<(), String> {
    let unprotected = |why: &str| {
        Err(format!(
            "the submodule at {path:?} {why}: git would enter it and use a configuration the \
             sandbox can write"
        ))
    };
    let dir = match workdir::open(&p.work_tree, &format!("/workspace/{path}")) {
        Ok(d) => d,
        // Not checked out: git does not enter it.
        Err(_) if !p.work_tree.join(path).exists() => return Ok(()),
        Err(_) => return unprotected("is reached through a symlink"),
    };
    let kind = match fstatat(&dir.fd, ".git", AtFlags::AT_SYMLINK_NOFOLLOW) {
        Err(_) => return Ok(()),
        Ok(st) => SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT,
    };
    if kind != SFlag::S_IFREG {
        return unprotected("has its own .git directory (an embedded repository)");
    }
    let mut text = String::new();
    openat(
        &dir.fd,
        ".git",
        OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map(std::fs::File::from)
    .ok()
    .and_then(|f| f.take(4096).read_to_string(&mut text).ok());
    let target = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("gitdir:"))
        .map(|t| dir.host_path.join(t.trim()))
        .and_then(|t| std::fs::canonicalize(t).ok());
    match target {
        Some(t) if p.modules.contains(&t) => Ok(()),
        _ => unprotected("points to a Git directory the Git Sentry does not protect"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_gitlink_entries_are_taken() {
        assert_eq!(
            gitlink_path(b"160000 0123 0\tlibs/x"),
            Some("libs/x".into())
        );
        assert_eq!(gitlink_path(b"100644 0123 0\tsrc/160000 a"), None);
        assert_eq!(gitlink_path(b""), None);
    }
}
