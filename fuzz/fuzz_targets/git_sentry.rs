//! Git Sentry's reading of the workspace's git control files, which the sandbox can write:
//! `.git` (directory, `gitdir:` file or symlink), `commondir`, `config`, `config.worktree`,
//! worktree admin dirs, `modules/`, `alternates` — laid out from the input in a scratch
//! workspace, observed, then judged with and without an accepting record.
#![no_main]

use lazaret::runtime::git_sentry::control::observe;
use lazaret::runtime::git_sentry::judge::judge;
use lazaret::runtime::git_sentry::record::Record;
use lazaret_fuzz::Bytes;
use libfuzzer_sys::fuzz_target;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Where entries may be put, relative to the workspace.
const PLACES: &[&str] = &[
    ".git",
    ".git/HEAD",
    ".git/objects",
    ".git/config",
    ".git/commondir",
    ".git/config.worktree",
    ".git/objects/info/alternates",
    ".git/worktrees/w/gitdir",
    ".git/worktrees/w/commondir",
    ".git/worktrees/w/HEAD",
    ".git/worktrees/w/config.worktree",
    ".git/modules/m/HEAD",
    ".git/modules/m/objects",
    ".git/modules/m/config",
    ".git/modules/m/commondir",
    ".git/modules/m/modules/n/HEAD",
    "other/HEAD",
    "other/objects",
    "other/config",
    "other/commondir",
    "other/worktrees/x/gitdir",
    "other/worktrees/x/commondir",
    "sub/.git",
    "wt/.git",
];

/// A scratch directory of this process, emptied before each input: `$LAZARET_FUZZ_SCRATCH`
/// (scripts/fuzz makes one on a tmpfs and removes it), else one in the temporary directory.
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = match std::env::var_os("LAZARET_FUZZ_SCRATCH") {
            Some(dir) => PathBuf::from(dir),
            None => std::env::temp_dir().join(format!("lazaret-fuzz-{}", std::process::id())),
        };
        std::fs::create_dir_all(&dir).expect("scratch dir");
        std::fs::canonicalize(&dir).expect("canonical scratch dir")
    })
}

fuzz_target!(|data: &[u8]| {
    let ws = scratch().join("ws");
    let _ = std::fs::remove_dir_all(&ws);
    std::fs::create_dir_all(&ws).expect("workspace");

    let mut input = Bytes::new(data);
    for _ in 0..12 {
        if input.is_empty() {
            break;
        }
        let op = input.u8();
        let place = ws.join(PLACES[usize::from(op >> 2) % PLACES.len()]);
        let content = input.piece();
        if let Some(parent) = place.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = match op & 3 {
            0 => std::fs::create_dir_all(&place),
            1 => std::os::unix::fs::symlink(OsStr::from_bytes(content), &place),
            _ => std::fs::write(&place, content),
        };
    }

    let seen = observe(&ws);
    // Stable: the same layout observed again gives the same answer.
    assert_eq!(observe(&ws), seen);
    for (i, o) in seen.iter().enumerate() {
        assert!(
            seen[i + 1..].iter().all(|p| p.file.path != o.file.path),
            "{:?} observed twice",
            o.file.path
        );
    }
    // Without a record, whatever is not a plain .git directory or proven is a finding; with a
    // record accepting everything seen, only invalid layouts remain.
    let findings = judge(&seen, None);
    assert!(findings.len() <= seen.len());
    let files = seen.iter().map(|o| o.file.clone()).collect();
    let record = Record::new(&ws, files, Vec::new());
    let after = judge(&seen, Some(&record));
    assert!(after.iter().all(|f| f.invalid.is_some()));
    assert_eq!(
        after.len(),
        seen.iter().filter(|o| o.invalid.is_some()).count()
    );
});
