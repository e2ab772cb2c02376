//! Nested repositories under the workspace: every `.git` entry below the top, at any depth,
//! found by a walk that opens directories fd-relative and never follows a symlink
//! (`state::listing::walk`), and does not enter `.git` directories. Host git run in such a
//! directory — and `git status` in the workspace when it is a submodule or a staged gitlink —
//! obeys the configuration inside, which the sandbox may have written.
//!
//! Nothing inside an entry is ever opened: an entry is known by its identity alone (file type,
//! device, inode). The developer's own entries, found before the sandbox starts, are hidden
//! from the sandbox by mounts (see `git_boundary::mounts`), so their contents cannot change; any
//! other identity at the end of a run is the sandbox's and is moved to a host-private quarantine
//! (see [`super::quarantine`]).

use serde::{Deserialize, Serialize};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long one walk may take before it stops and says so.
pub const WALK_LIMIT: Duration = Duration::from_secs(5);

/// One nested `.git` entry: its path relative to the workspace and its identity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Nested {
    pub path: PathBuf,
    /// `dir:<dev>:<ino>`, `file:…`, `link:…` or `other:…`.
    pub fingerprint: String,
}

impl Nested {
    /// A `.git` directory, not a pointer file or symlink.
    pub fn is_dir(&self) -> bool {
        self.fingerprint.starts_with("dir:")
    }

    pub fn is_file(&self) -> bool {
        self.fingerprint.starts_with("file:")
    }
}

/// What a walk found, and whether it was cut (by [`WALK_LIMIT`], the walk's depth bound, or an
/// unreadable directory): then entries may be missing and the caller says so.
#[derive(Debug, Default)]
pub struct Scan {
    pub found: Vec<Nested>,
    pub cut: bool,
}

fn fingerprint(st: &nix::sys::stat::FileStat) -> String {
    use nix::sys::stat::SFlag;
    let kind = match SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFDIR => "dir",
        SFlag::S_IFREG => "file",
        SFlag::S_IFLNK => "link",
        _ => "other",
    };
    format!("{kind}:{}:{}", st.st_dev, st.st_ino)
}

/// Walks `ws` for nested `.git` entries; `act` is called for each with the open directory that
/// holds it (for a rename relative to it), after its identity is taken.
pub fn walk(
    ws: &Path,
    limit: Duration,
    act: &mut dyn FnMut(&Nested, std::os::fd::BorrowedFd<'_>),
) -> Scan {
    let deadline = Instant::now() + limit;
    let mut out = Scan::default();
    let mut late = false;
    let partial = crate::state::listing::walk(ws, (), &mut |e, _| {
        if e.name == ".git" {
            // The workspace's own `.git` is not nested.
            if e.rel != Path::new(".git") {
                let n = Nested {
                    path: e.rel.to_path_buf(),
                    fingerprint: fingerprint(e.stat),
                };
                act(&n, e.parent.as_fd());
                out.found.push(n);
            }
            return None;
        }
        if Instant::now() >= deadline {
            late = true;
            return None;
        }
        Some(())
    });
    out.cut = partial || late;
    out.found.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The nested `.git` entries of `ws` (sorted), and whether the walk was cut.
pub fn scan(ws: &Path) -> Scan {
    walk(ws, WALK_LIMIT, &mut |_, _| {})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_git_entries_at_any_depth_by_identity_and_not_the_top_one() -> anyhow::Result<()>
    {
        let t = tempfile::tempdir()?;
        let ws = t.path();
        std::fs::create_dir_all(ws.join(".git/objects"))?;
        std::fs::create_dir_all(ws.join("a/b/.git"))?;
        std::fs::write(ws.join("a/b/.git/config"), "[core]\n")?;
        std::fs::create_dir_all(ws.join("c"))?;
        std::fs::write(ws.join("c/.git"), "gitdir: ../x\n")?;
        std::os::unix::fs::symlink(ws.join("a"), ws.join("loop"))?;
        let deep: PathBuf = (0..40).map(|i| format!("d{i}")).collect();
        std::fs::create_dir_all(ws.join(&deep).join(".git"))?;
        let s = scan(ws);
        let paths: Vec<&Path> = s.found.iter().map(|n| n.path.as_path()).collect();
        assert_eq!(
            paths,
            vec![
                Path::new("a/b/.git"),
                Path::new("c/.git"),
                deep.join(".git").as_path()
            ]
        );
        assert!(s.found[0].is_dir() && s.found[1].is_file());
        assert!(!s.cut);
        // A rewritten config is not looked at; a replaced directory is a new identity.
        let before = s.found[0].clone();
        std::fs::write(ws.join("a/b/.git/config"), "[core]\n\tfsmonitor = x\n")?;
        assert_eq!(scan(ws).found[0], before);
        std::fs::rename(ws.join("a/b/.git"), ws.join("a/b/old"))?;
        std::fs::create_dir(ws.join("a/b/.git"))?;
        assert_ne!(scan(ws).found[0], before);
        Ok(())
    }

    #[test]
    fn a_walk_out_of_time_says_it_was_cut() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        std::fs::create_dir_all(t.path().join("a/b/.git"))?;
        let s = walk(t.path(), Duration::ZERO, &mut |_, _| {});
        assert!(s.cut);
        Ok(())
    }
}
