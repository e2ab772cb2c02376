//! The program an escalation runs (SR-8): argv[0] resolved on the host, never by the sandbox,
//! to the canonical path of the executable. Rules compare resolved executables, so
//! `/usr/bin/git` is git and `env git` is env; the command is started from that path, so what
//! was matched is what runs.
//!
//! Resolution: a name without `/` is looked up in the coordinator's `PATH` (the host's, as the
//! developer started Lazaret), skipping empty and relative entries (they would mean the working
//! directory, which the sandbox writes); an absolute path is taken as is; a relative path with a
//! `/` (`./build.sh`) is refused. The first regular file with an execute bit wins, and symlinks
//! are resolved to the file itself.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A resolved program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Executable {
    /// The canonical path of the executable file.
    pub path: PathBuf,
    /// It is git (the file is named `git`, or it is the file `git` resolves to).
    pub is_git: bool,
    /// It lies in the workspace: the sandbox wrote it.
    pub in_workspace: bool,
}

/// Resolves argv[0] through `path_var` (a `PATH` value); `workspace` is the host workspace.
pub fn resolve(
    program: &str,
    path_var: Option<&OsStr>,
    workspace: &Path,
) -> Result<Executable, String> {
    let path = find(program, path_var)?;
    let is_git = path.file_name() == Some(OsStr::new("git"))
        || (program != "git" && find("git", path_var).ok().as_ref() == Some(&path));
    Ok(Executable {
        in_workspace: path.starts_with(workspace),
        is_git,
        path,
    })
}

/// The canonical path of the executable `program` names.
pub fn find(program: &str, path_var: Option<&OsStr>) -> Result<PathBuf, String> {
    if program.is_empty() {
        return Err("the program name is empty".into());
    }
    if program.contains('/') {
        let p = Path::new(program);
        if !p.is_absolute() {
            return Err(format!(
                "{program:?} is a path relative to the working directory, which the sandbox \
                 writes; ask for the program by name or by absolute host path"
            ));
        }
        return executable_file(p)
            .ok_or_else(|| format!("{program} is not an executable file on the host"));
    }
    let dirs = path_var.map(std::env::split_paths).into_iter().flatten();
    for dir in dirs.filter(|d| d.is_absolute()) {
        if let Some(found) = executable_file(&dir.join(program)) {
            return Ok(found);
        }
    }
    Err(format!("{program} is not found on the host's PATH"))
}

/// `p` canonicalised, when it is a regular file with an execute bit.
fn executable_file(p: &Path) -> Option<PathBuf> {
    let meta = std::fs::metadata(p).ok()?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return None;
    }
    std::fs::canonicalize(p).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn exe(dir: &Path, name: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").ok();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).ok();
        p
    }

    #[test]
    fn names_are_looked_up_in_absolute_path_entries_and_canonicalised() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let root = std::fs::canonicalize(t.path())?;
        let (bin, sbin, ws) = (root.join("bin"), root.join("sbin"), root.join("ws"));
        for d in [&bin, &sbin, &ws] {
            std::fs::create_dir(d)?;
        }
        let git = exe(&bin, "git");
        symlink(&git, sbin.join("g"))?;
        std::fs::write(sbin.join("noexec"), "")?;
        let path = std::env::join_paths([Path::new(""), Path::new("rel"), &sbin, &bin])?;
        let r = |p: &str| resolve(p, Some(&path), &ws).map_err(anyhow::Error::msg);
        assert_eq!(r("git")?.path, git);
        assert!(r("git")?.is_git);
        // Another spelling of the same file is git too.
        assert!(r("g")?.is_git && r("g")?.path == git);
        assert!(r(&git.display().to_string())?.is_git);
        assert!(r("noexec").is_err());
        assert!(r("./git").is_err());
        assert!(r("missing").is_err());
        assert!(r("").is_err());
        // A program in the workspace is flagged.
        let own = exe(&ws, "tool");
        assert!(r(&own.display().to_string())?.in_workspace);
        assert!(!r("git")?.in_workspace);
        // env is env, whatever it runs.
        let env = exe(&bin, "env");
        assert_eq!(r("env")?.path, env);
        assert!(!r("env")?.is_git);
        Ok(())
    }
}
