//! Comparing the control files found now with the Git Sentry Record (no I/O): which ones the
//! host must not take on trust.

use super::control::{Kind, Observed};
use super::nested::Nested;
use super::record::{ControlFile, Record};

/// A control file the host does not trust.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub file: ControlFile,
    /// What the record holds at the same path (a changed file), if anything.
    pub was: Option<ControlFile>,
    /// Not a valid layout at all: `lazaret git-sentry accept` cannot accept it.
    pub invalid: Option<String>,
}

/// The control files in `now` that are invalid, or neither proven harmless by the layout nor
/// trusted by `record`. Without a record (the first launch of a workspace, or one used by a
/// Lazaret older than the record) only a plain `.git` directory is taken as the developer's:
/// the host cannot tell whether a sandbox ran there before.
pub fn judge(now: &[Observed], record: Option<&Record>) -> Vec<Finding> {
    let mut out = Vec::new();
    for o in now {
        let finding = |invalid: Option<String>| Finding {
            file: o.file.clone(),
            was: record.and_then(|r| r.file_at(&o.file.path)).cloned(),
            invalid,
        };
        if o.invalid.is_some() {
            out.push(finding(o.invalid.clone()));
            continue;
        }
        if o.proven.is_some() {
            continue;
        }
        let trusted = match record {
            Some(r) => r.files.contains(&o.file),
            None => o.file.kind == Kind::RepositoryDir,
        };
        if !trusted {
            out.push(finding(None));
        }
    }
    out
}

/// Nested `.git` entries in `now` that `before` did not list.
pub fn new_nested(now: &[Nested], before: &[Nested]) -> Vec<Nested> {
    now.iter()
        .filter(|n| !before.iter().any(|b| b.path == n.path))
        .cloned()
        .collect()
}

/// Nested `.git` entries whose fingerprint changed since `before` (config rewritten, pointer
/// redirected, a directory replaced by a file or symlink).
pub fn changed_nested(now: &[Nested], before: &[Nested]) -> Vec<Nested> {
    now.iter()
        .filter(|n| before.iter().any(|b| b.path == n.path && b != *n))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn file(path: &str, kind: Kind, content: &str) -> ControlFile {
        ControlFile {
            path: PathBuf::from(path),
            kind,
            content: content.into(),
            target: None,
        }
    }

    fn seen(f: ControlFile) -> Observed {
        Observed {
            file: f,
            proven: None,
            invalid: None,
        }
    }

    fn record(files: Vec<ControlFile>) -> Record {
        Record::new(Path::new("/w"), files, Vec::new())
    }

    #[test]
    fn without_a_record_only_a_plain_git_directory_is_trusted() {
        let dir = seen(file("/w/.git", Kind::RepositoryDir, ""));
        let cd = seen(file("/w/.git/commondir", Kind::Commondir, "../x\n"));
        let found = judge(&[dir, cd.clone()], None);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].file, cd.file);
        assert!(found[0].was.is_none() && found[0].invalid.is_none());
    }

    #[test]
    fn a_recorded_file_is_trusted_and_a_changed_one_is_not() {
        let ptr = file("/w/.git", Kind::GitdirPointer, "gitdir: /r/.git\n");
        let r = record(vec![ptr.clone()]);
        assert!(judge(&[seen(ptr.clone())], Some(&r)).is_empty());
        let changed = file("/w/.git", Kind::GitdirPointer, "gitdir: /home/u/.ssh\n");
        let found = judge(&[seen(changed)], Some(&r));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].was.as_ref(), Some(&ptr));
    }

    #[test]
    fn a_repository_that_appeared_in_a_recorded_non_repository_is_untrusted() {
        let r = record(Vec::new());
        let found = judge(&[seen(file("/w/.git", Kind::RepositoryDir, ""))], Some(&r));
        assert_eq!(found.len(), 1);
    }

    #[test]
    fn proven_files_need_no_record_and_invalid_ones_are_refused_even_when_recorded() {
        let mut ok = seen(file(
            "/w/.git/worktrees/a/commondir",
            Kind::Commondir,
            "../..\n",
        ));
        ok.proven = Some("own repository".into());
        assert!(judge(&[ok], Some(&record(Vec::new()))).is_empty());
        let bad_file = file("/w/.git/commondir", Kind::Commondir, "/home/u/.ssh\n");
        let mut bad = seen(bad_file.clone());
        bad.invalid = Some("not a Git directory".into());
        let found = judge(&[bad], Some(&record(vec![bad_file])));
        assert_eq!(found.len(), 1);
        assert!(found[0].invalid.is_some());
    }

    #[test]
    fn nested_entries_new_and_changed() {
        let n = |p: &str, f: &str| Nested {
            path: PathBuf::from(p),
            fingerprint: f.into(),
        };
        let before = vec![n("a/.git", "dir:1"), n("c/.git", "file:1")];
        let now = vec![
            n("a/.git", "dir:2"),
            n("b/.git", "dir:1"),
            n("c/.git", "file:1"),
        ];
        assert_eq!(new_nested(&now, &before), vec![n("b/.git", "dir:1")]);
        assert_eq!(changed_nested(&now, &before), vec![n("a/.git", "dir:2")]);
    }
}
