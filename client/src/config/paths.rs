//! Lexical path rules of the configuration: normalising the paths it names, `~/` expansion,
//! containment, and canonicalising a path that may not exist yet.

use std::path::{Component, Path, PathBuf};

/// Normalises an absolute path: collapses `//` and `/./`, strips a trailing `/`. Refuses a
/// relative path, `..` (meaning depends on symlinks) and NUL.
pub fn normalize_absolute(s: &str) -> Result<PathBuf, String> {
    if s.contains('\0') {
        return Err(format!("{s:?} contains a NUL byte"));
    }
    if !s.starts_with('/') {
        return Err(format!("{s:?} is not an absolute path: start it with /"));
    }
    let mut out = PathBuf::from("/");
    for c in Path::new(s).components() {
        match c {
            Component::RootDir | Component::CurDir => {}
            Component::Normal(n) => out.push(n),
            Component::ParentDir | Component::Prefix(_) => {
                return Err(format!(
                    "{s:?} contains \"..\": write the path without it (no symlinks are resolved)"
                ));
            }
        }
    }
    Ok(out)
}

/// Normalises a relative path (e.g. workspace-relative): collapses `//` and `./`, strips a
/// trailing `/`. Refuses an absolute or empty path, `..` and NUL.
pub fn normalize_relative(s: &str) -> Result<PathBuf, String> {
    if s.contains('\0') {
        return Err(format!("{s:?} contains a NUL byte"));
    }
    if s.starts_with('/') {
        return Err(format!(
            "{s:?} is absolute: write it relative to the workspace root (e.g. \".vscode\")"
        ));
    }
    let mut out = PathBuf::new();
    for c in Path::new(s).components() {
        match c {
            Component::CurDir => {}
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::ParentDir | Component::Prefix(_) => {
                return Err(format!(
                    "{s:?} contains \"..\": name a path inside the workspace"
                ));
            }
        }
    }
    if out.as_os_str().is_empty() {
        return Err(format!(
            "{s:?} names the workspace root itself: name a directory inside it"
        ));
    }
    Ok(out)
}

/// Expands a leading `~` or `~/` with `home`, then normalises like [`normalize_absolute`].
pub fn expand_home(s: &str, home: &Path) -> Result<PathBuf, String> {
    let expanded = if s == "~" {
        home.display().to_string()
    } else if let Some(rest) = s.strip_prefix("~/") {
        format!("{}/{rest}", home.display())
    } else if s.starts_with('~') {
        return Err(format!(
            "{s:?}: only \"~/\" (your own home directory) is expanded; write the path in full"
        ));
    } else {
        s.to_owned()
    };
    normalize_absolute(&expanded).map_err(|e| {
        if expanded == s {
            e
        } else {
            format!("{e} (after expanding ~ to {})", home.display())
        }
    })
}

/// Whether `inner` is `outer` or beneath it (component-wise: `/usrx` is not under `/usr`).
pub fn is_within(inner: &Path, outer: &Path) -> bool {
    inner.starts_with(outer)
}

/// Whether either path is, or is beneath, the other.
pub fn overlaps(a: &Path, b: &Path) -> bool {
    is_within(a, b) || is_within(b, a)
}

/// `path` with symlinks resolved as far as it exists: the longest existing ancestor is
/// canonicalised and the missing rest appended. Relative paths are returned as given.
pub fn canonical_best_effort(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let mut missing = Vec::new();
    let mut cur = path;
    while let Some(parent) = cur.parent() {
        if let Some(name) = cur.file_name() {
            missing.push(name.to_owned());
        }
        if let Ok(mut p) = std::fs::canonicalize(parent) {
            for name in missing.iter().rev() {
                p.push(name);
            }
            return p;
        }
        cur = parent;
    }
    path.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_paths_are_normalised() {
        assert_eq!(
            normalize_absolute("/usr//local/./bin/"),
            Ok(PathBuf::from("/usr/local/bin"))
        );
        assert_eq!(normalize_absolute("/"), Ok(PathBuf::from("/")));
        assert!(normalize_absolute("usr").is_err());
        assert!(normalize_absolute("").is_err());
        assert!(normalize_absolute("/usr/../etc").is_err());
        assert!(normalize_absolute("/a\0b").is_err());
    }

    #[test]
    fn relative_paths_are_normalised() {
        assert_eq!(
            normalize_relative("./.vscode/"),
            Ok(PathBuf::from(".vscode"))
        );
        assert!(normalize_relative("/x").is_err());
        assert!(normalize_relative("../x").is_err());
        assert!(normalize_relative(".").is_err());
        assert!(normalize_relative("").is_err());
    }

    #[test]
    fn home_is_expanded() {
        let home = Path::new("/home/dev");
        assert_eq!(
            expand_home("~/.cache/pip/", home),
            Ok(PathBuf::from("/home/dev/.cache/pip"))
        );
        assert_eq!(expand_home("~", home), Ok(PathBuf::from("/home/dev")));
        assert!(expand_home("~other/x", home).is_err());
        assert!(expand_home("rel", home).is_err());
    }

    #[test]
    fn containment_is_by_component() {
        assert!(is_within(Path::new("/usr/local"), Path::new("/usr")));
        assert!(is_within(Path::new("/usr"), Path::new("/usr")));
        assert!(!is_within(Path::new("/usrx"), Path::new("/usr")));
        assert!(overlaps(Path::new("/usr"), Path::new("/usr/local")));
    }

    #[test]
    fn canonical_of_missing_path_resolves_existing_ancestor() -> std::io::Result<()> {
        let t = tempfile::tempdir()?;
        let real = t.path().join("real");
        std::fs::create_dir(&real)?;
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&real, &link)?;
        let got = canonical_best_effort(&link.join("a/b"));
        assert_eq!(got, std::fs::canonicalize(&real)?.join("a/b"));
        Ok(())
    }
}
