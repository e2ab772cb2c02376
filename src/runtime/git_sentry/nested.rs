//! Nested repositories under the workspace: every `.git` entry below the top, found by a
//! bounded walk (no symlinks followed, `.git` directories not entered), each with a fingerprint
//! of what host git obeys there (the `config` of a `.git` directory, the text of a `.git` file,
//! the target of a `.git` symlink). Host git run in such a directory — and `git status` in the
//! workspace itself when it is a submodule or a staged gitlink — obeys that configuration.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::VecDeque;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Deepest directory level looked at below the workspace.
pub const MAX_DEPTH: usize = 6;
/// Most directories listed by one walk (20 000 took 1.9 s in a debug build on a cold tree;
/// this bounds the check to a few hundred milliseconds).
pub const MAX_DIRS: usize = 5_000;
/// Largest nested `config` fingerprinted in full.
const CONFIG_MAX: u64 = 1 << 20;

/// One nested `.git` entry: its path relative to the workspace and its fingerprint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Nested {
    pub path: PathBuf,
    pub fingerprint: String,
}

impl Nested {
    /// A `.git` directory (its `config` is what changes), not a pointer file or symlink.
    pub fn is_dir(&self) -> bool {
        self.fingerprint.starts_with("dir:")
    }
}

/// The nested `.git` entries (sorted), and whether the walk stopped at a cap.
pub fn scan(ws: &Path) -> (Vec<Nested>, bool) {
    let mut found = Vec::new();
    let mut queue = VecDeque::from([(PathBuf::new(), 0usize)]);
    let mut listed = 0usize;
    let mut truncated = false;
    while let Some((rel, depth)) = queue.pop_front() {
        if listed >= MAX_DIRS {
            truncated = true;
            break;
        }
        listed += 1;
        let Ok(entries) = std::fs::read_dir(ws.join(&rel)) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            let child = rel.join(e.file_name());
            if e.file_name() == ".git" {
                if !rel.as_os_str().is_empty() {
                    found.push(Nested {
                        fingerprint: fingerprint(&ws.join(&child)),
                        path: child,
                    });
                }
                continue;
            }
            if ft.is_dir() {
                if depth + 1 < MAX_DEPTH {
                    queue.push_back((child, depth + 1));
                } else {
                    truncated = true;
                }
            }
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    (found, truncated)
}

fn hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `link:<target>`, `file:<sha256>`, `dir:<sha256 of config>` (`dir:none`, `dir:link:…`).
fn fingerprint(dotgit: &Path) -> String {
    let Ok(meta) = std::fs::symlink_metadata(dotgit) else {
        return "gone".into();
    };
    if meta.file_type().is_symlink() {
        let t = std::fs::read_link(dotgit).unwrap_or_default();
        return format!("link:{}", t.display());
    }
    if meta.is_dir() {
        let config = dotgit.join("config");
        if let Ok(t) = std::fs::read_link(&config) {
            return format!("dir:link:{}", t.display());
        }
        return format!(
            "dir:{}",
            read_hash(&config).unwrap_or_else(|| "none".into())
        );
    }
    format!(
        "file:{}",
        read_hash(dotgit).unwrap_or_else(|| "unreadable".into())
    )
}

fn read_hash(path: &Path) -> Option<String> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return Some("not-a-file".into());
    }
    let mut bytes = Vec::new();
    f.take(CONFIG_MAX).read_to_end(&mut bytes).ok()?;
    Some(hash(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_git_entries_and_not_the_top_one() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let ws = t.path();
        std::fs::create_dir_all(ws.join(".git/objects"))?;
        std::fs::create_dir_all(ws.join("a/b/.git"))?;
        std::fs::write(ws.join("a/b/.git/config"), "[core]\n")?;
        std::fs::create_dir_all(ws.join("c"))?;
        std::fs::write(ws.join("c/.git"), "gitdir: ../x\n")?;
        std::os::unix::fs::symlink(ws.join("a"), ws.join("loop"))?;
        let (found, truncated) = scan(ws);
        let paths: Vec<&Path> = found.iter().map(|n| n.path.as_path()).collect();
        assert_eq!(paths, vec![Path::new("a/b/.git"), Path::new("c/.git")]);
        assert!(found[0].is_dir() && !found[1].is_dir());
        assert!(!truncated);
        // A changed config changes the fingerprint.
        std::fs::write(ws.join("a/b/.git/config"), "[core]\n\tfsmonitor = x\n")?;
        assert_ne!(scan(ws).0[0], found[0]);
        Ok(())
    }

    #[test]
    fn stops_at_the_depth_cap_and_says_so() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let deep: PathBuf = (0..MAX_DEPTH + 2).map(|i| format!("d{i}")).collect();
        std::fs::create_dir_all(t.path().join(&deep).join(".git"))?;
        let (found, truncated) = scan(t.path());
        assert!(found.is_empty());
        assert!(truncated);
        Ok(())
    }
}
