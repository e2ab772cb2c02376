//! The working directory of an escalation (SR-14): the sandbox's `/workspace/<p>` resolved once,
//! when the request is accepted, to a directory fd opened component by component beneath the
//! host workspace with `O_DIRECTORY | O_NOFOLLOW` (a symlink anywhere on the way is refused).
//! The host command `fchdir`s to that fd, so swapping a directory for a symlink while the
//! developer decides cannot move the command: it runs in the directory that was shown (even if
//! renamed meanwhile) or not at all.
//!
//! On the way down it notes the first repository the sandbox may have made: a `.git` entry of
//! any type, or a directory that looks like a bare Git directory (`HEAD`, `objects/`, `refs/`),
//! below the workspace root. Git would discover it from there; its configuration is the
//! sandbox's.

use nix::fcntl::{openat, OFlag};
use nix::sys::stat::{fstatat, Mode, SFlag};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

/// An opened working directory.
#[derive(Debug)]
pub struct WorkDir {
    pub fd: OwnedFd,
    /// Its host path when it was opened (what the developer is shown).
    pub host_path: PathBuf,
    /// The first repository between the workspace root (excluded) and the directory (included)
    /// that is not the workspace's own: its path relative to the workspace.
    pub nested_repository: Option<String>,
}

/// Opens `sandbox_cwd` (`/workspace` or below) beneath `workspace` (canonical host path).
pub fn open(workspace: &Path, sandbox_cwd: &str) -> Result<WorkDir, String> {
    let rel = Path::new(sandbox_cwd)
        .strip_prefix(crate::domain::workspace::SANDBOX_WORKSPACE)
        .map_err(|_| {
            format!("the working directory {sandbox_cwd} is outside /workspace: only the workspace maps to the host")
        })?;
    let dir_flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let mut fd = nix::fcntl::open(workspace, dir_flags, Mode::empty())
        .map_err(|e| format!("opening the workspace {}: {e}", workspace.display()))?;
    let mut host_path = workspace.to_path_buf();
    let mut walked = PathBuf::new();
    let mut nested_repository = None;
    for comp in rel.components() {
        let name = match comp {
            std::path::Component::Normal(n) => n,
            std::path::Component::CurDir => continue,
            _ => {
                return Err(format!(
                    "the working directory {sandbox_cwd} leads outside the workspace on the host"
                ))
            }
        };
        let next = openat(&fd, name, dir_flags | OFlag::O_NOFOLLOW, Mode::empty()).map_err(
            |e| match e {
                nix::errno::Errno::ELOOP | nix::errno::Errno::ENOTDIR => format!(
                    "the working directory {sandbox_cwd} is not a plain directory on the host \
                     ({} is a symlink or not a directory): escalations never follow symlinks in \
                     the workspace",
                    walked.join(name).display()
                ),
                e => {
                    format!("the working directory {sandbox_cwd} does not exist on the host ({e})")
                }
            },
        )?;
        fd = next;
        host_path.push(name);
        walked.push(name);
        if nested_repository.is_none() && looks_like_a_repository(fd.as_fd()) {
            nested_repository = Some(walked.display().to_string());
        }
    }
    Ok(WorkDir {
        fd,
        host_path,
        nested_repository,
    })
}

/// The directory `dir` holds a `.git` entry (any type) or is laid out like a Git directory.
fn looks_like_a_repository(dir: BorrowedFd<'_>) -> bool {
    let kind = |name: &str| {
        fstatat(dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
            .ok()
            .map(|st| SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT)
    };
    kind(".git").is_some()
        || (kind("HEAD").is_some()
            && kind("objects") == Some(SFlag::S_IFDIR)
            && kind("refs") == Some(SFlag::S_IFDIR))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_beneath_the_workspace_without_following_symlinks() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let ws = std::fs::canonicalize(t.path())?.join("ws");
        std::fs::create_dir_all(ws.join("a/b"))?;
        std::fs::create_dir_all(ws.join(".git"))?;
        std::os::unix::fs::symlink("/etc", ws.join("out"))?;
        std::os::unix::fs::symlink("a", ws.join("inner"))?;
        let w = open(&ws, "/workspace/a/b").map_err(anyhow::Error::msg)?;
        assert_eq!(w.host_path, ws.join("a/b"));
        assert_eq!(w.nested_repository, None);
        assert_eq!(
            open(&ws, "/workspace")
                .map_err(anyhow::Error::msg)?
                .host_path,
            ws
        );
        assert!(open(&ws, "/tmp").is_err());
        assert!(open(&ws, "/workspace/out").is_err_and(|e| e.contains("symlink")));
        assert!(open(&ws, "/workspace/inner/b").is_err_and(|e| e.contains("symlink")));
        assert!(open(&ws, "/workspace/../etc").is_err());
        assert!(open(&ws, "/workspace/missing").is_err());
        Ok(())
    }

    #[test]
    fn the_held_directory_does_not_move_when_its_path_is_swapped() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let root = std::fs::canonicalize(t.path())?;
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join("d"))?;
        std::fs::create_dir_all(root.join("target"))?;
        let w = open(&ws, "/workspace/d").map_err(anyhow::Error::msg)?;
        std::fs::rename(ws.join("d"), ws.join("d.orig"))?;
        std::os::unix::fs::symlink(root.join("target"), ws.join("d"))?;
        nix::sys::stat::mkdirat(&w.fd, "made-here", Mode::from_bits_truncate(0o755))?;
        assert!(ws.join("d.orig/made-here").is_dir());
        assert!(!root.join("target/made-here").exists());
        Ok(())
    }

    #[test]
    fn nested_repositories_on_the_way_are_found() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let ws = std::fs::canonicalize(t.path())?.join("ws");
        std::fs::create_dir_all(ws.join(".git"))?;
        std::fs::create_dir_all(ws.join("x/.git"))?;
        std::fs::create_dir_all(ws.join("x/y"))?;
        std::fs::create_dir_all(ws.join("f/deep"))?;
        std::fs::write(ws.join("f/.git"), "gitdir: ../.evil\n")?;
        std::os::unix::fs::symlink("/nowhere", ws.join("f/deep/.git"))?;
        std::fs::create_dir_all(ws.join("bare/objects"))?;
        std::fs::create_dir_all(ws.join("bare/refs"))?;
        std::fs::write(ws.join("bare/HEAD"), "ref: refs/heads/main\n")?;
        std::fs::create_dir_all(ws.join("clean/sub"))?;
        let nested = |cwd: &str| open(&ws, cwd).ok().and_then(|w| w.nested_repository);
        assert_eq!(nested("/workspace"), None);
        assert_eq!(nested("/workspace/clean/sub"), None);
        assert_eq!(nested("/workspace/x"), Some("x".into()));
        assert_eq!(nested("/workspace/x/y"), Some("x".into()));
        assert_eq!(nested("/workspace/f/deep"), Some("f".into()));
        assert_eq!(nested("/workspace/bare"), Some("bare".into()));
        Ok(())
    }
}
