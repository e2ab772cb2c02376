//! Anticipated mount points: top-level ignored directories that do not exist yet (say
//! `node_modules/` before the first `npm install` inside). Without a mount point the sandbox
//! would create them in the host workspace; so Lazaret creates them, empty, before the launch.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Literal names taken as directories even without a trailing `/` in the ignore file: common
/// dependency, virtual-environment and build-output directories. `vendor` is left out on
/// purpose: Go projects often track it.
pub const WELL_KNOWN_DIRS: &[&str] = &[
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".gradle",
    ".next",
    "dist",
    "build",
];

/// Ignore files larger than this are not scanned for candidates (git still applies them).
const MAX_IGNORE_FILE: u64 = 1 << 20;

/// The top-level directory name a line of a root ignore file names, if it is a literal
/// candidate: no glob or escape characters (`*?[\`), not a comment or negation, no inner `/`
/// (one leading `/` anchor and one trailing `/` are allowed), and either ending in `/` or one
/// of [`WELL_KNOWN_DIRS`].
pub fn candidate(line: &str) -> Option<&str> {
    let line = line.trim_end_matches('\r').trim_end_matches(' ');
    if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
        return None;
    }
    if line.contains(['*', '?', '[', '\\']) {
        return None;
    }
    let name = line.strip_prefix('/').unwrap_or(line);
    let (name, dir_only) = match name.strip_suffix('/') {
        Some(n) => (n, true),
        None => (name, false),
    };
    if name.is_empty() || name.contains('/') || matches!(name, "." | ".." | ".git") {
        return None;
    }
    (dir_only || WELL_KNOWN_DIRS.contains(&name)).then_some(name)
}

/// Candidates from the workspace root's `.gitignore` and from `exclude` (the repository's
/// `info/exclude`), in file order, without duplicates, and only those absent on the host.
pub fn absent_candidates(workspace: &Path, exclude: Option<&Path>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let files = [
        Some(workspace.join(".gitignore")),
        exclude.map(Path::to_path_buf),
    ];
    for file in files.iter().flatten() {
        let Some(text) = read_ignore_file(file) else {
            continue;
        };
        for name in text.lines().filter_map(candidate) {
            let absent = matches!(
                std::fs::symlink_metadata(workspace.join(name)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound
            );
            if absent && !out.iter().any(|n| n == name) {
                out.push(name.to_owned());
            }
        }
    }
    out
}

/// Reads an ignore file if it is a regular file: no symlink is followed (git itself ignores a
/// symlinked `.gitignore`) and a FIFO planted by the sandbox cannot block the launch.
fn read_ignore_file(path: &Path) -> Option<String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.size() > MAX_IGNORE_FILE {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_IGNORE_FILE).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::candidate;

    #[test]
    fn literal_candidates() {
        assert_eq!(candidate("node_modules"), Some("node_modules"));
        assert_eq!(candidate("/target"), Some("target"));
        assert_eq!(candidate("/out/"), Some("out"));
        assert_eq!(candidate("cache/  "), Some("cache"));
        assert_eq!(candidate("build\r"), Some("build"));
        for no in [
            "",
            "# node_modules/",
            "!node_modules/",
            "*.log",
            ".env",
            "a/b/",
            "/a/b",
            "[ab]/",
            "x?/",
            "\\#x/",
            "/",
            "//",
            "../",
            "./",
            ".git/",
            "out",
            "vendor",
            "node_modules//",
        ] {
            assert_eq!(candidate(no), None, "{no:?}");
        }
    }
}
