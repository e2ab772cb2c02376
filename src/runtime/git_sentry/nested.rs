//! Nested repositories under the workspace: every `.git` entry below the top, found by a
//! bounded walk (no symlinks followed, `.git` directories not entered). Host git run in such a
//! directory obeys that repository's own configuration, which the sandbox may have written.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// Deepest directory level looked at below the workspace.
pub const MAX_DEPTH: usize = 6;
/// Most directories listed by one walk (20 000 took 1.9 s in a debug build on a cold tree;
/// this bounds the end-of-run check to a few hundred milliseconds).
pub const MAX_DIRS: usize = 5_000;

/// The nested `.git` entries (relative paths, sorted), and whether the walk stopped at a cap.
pub fn scan(ws: &Path) -> (Vec<PathBuf>, bool) {
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
                    found.push(child);
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
    found.sort();
    (found, truncated)
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
        std::fs::create_dir_all(ws.join("c"))?;
        std::fs::write(ws.join("c/.git"), "gitdir: ../x\n")?;
        std::os::unix::fs::symlink(ws.join("a"), ws.join("loop"))?;
        let (found, truncated) = scan(ws);
        assert_eq!(
            found,
            vec![PathBuf::from("a/b/.git"), PathBuf::from("c/.git")]
        );
        assert!(!truncated);
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
