//! The Git Sentry Record: the repository layout the developer set up, kept host-side where no
//! sandbox can write (`<Storage Root>/git-sentry/<key>.json`, 0700 directory, one file per
//! Agent Workspace, shared by all its Agent Profiles' Domains: a sandbox of one profile writes
//! the same `.git` another profile's launch reads).
//!
//! It holds the git control files that redirect git or add configuration (see
//! [`super::control::Kind`]) as they were when trusted — at a launch that found nothing the host
//! had to take on trust, or when the developer ran `lazaret git-sentry accept` — and the nested
//! repositories seen under the workspace.

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Format version of the record file.
const VERSION: u32 = 1;
/// Largest record file read.
const RECORD_MAX: u64 = 4 << 20;

/// One git control file: where, what kind, its text (empty for a directory), what it points to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlFile {
    pub path: PathBuf,
    pub kind: super::control::Kind,
    pub content: String,
    pub target: Option<PathBuf>,
}

/// What the host trusts about one workspace's repository layout.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub version: u32,
    pub workspace: PathBuf,
    pub files: Vec<ControlFile>,
    /// Nested `.git` entries under the workspace, as last seen.
    pub nested: Vec<super::nested::Nested>,
    /// A run started and its end-of-run check has not run yet (set before the sandbox starts,
    /// cleared by the check): the next start neutralises what that run left.
    #[serde(default)]
    pub pending: bool,
}

impl Record {
    pub fn new(
        workspace: &Path,
        files: Vec<ControlFile>,
        nested: Vec<super::nested::Nested>,
    ) -> Record {
        Record {
            version: VERSION,
            workspace: workspace.to_path_buf(),
            files,
            nested,
            pending: false,
        }
    }

    /// The trusted entry at `path`, if any.
    pub fn file_at(&self, path: &Path) -> Option<&ControlFile> {
        self.files.iter().find(|f| f.path == path)
    }
}

/// Where records live: `<Storage Root>/git-sentry`.
pub fn store_dir(storage_root: &Path) -> PathBuf {
    storage_root.join("git-sentry")
}

/// The Storage Root of a Domain (`<Storage Root>/domains/<Domain ID>`).
pub fn storage_root_of(domain_root: &Path) -> PathBuf {
    domain_root
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| domain_root.to_path_buf())
}

/// The record file of `workspace` (canonical host path) in `store`.
pub fn record_path(store: &Path, workspace: &Path) -> PathBuf {
    let mut h = Sha256::new();
    h.update(b"lazaret.git-sentry.v1\0");
    h.update(workspace.as_os_str().as_bytes());
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    store.join(format!("{hex}.json"))
}

/// The record of `workspace`, or `None` when none was written yet.
pub fn load(store: &Path, workspace: &Path) -> anyhow::Result<Option<Record>> {
    let path = record_path(store, workspace);
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
    {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        other => {
            other.with_context(|| format!("opening the Git Sentry record {}", path.display()))?
        }
    };
    let mut text = String::new();
    file.take(RECORD_MAX)
        .read_to_string(&mut text)
        .with_context(|| format!("reading the Git Sentry record {}", path.display()))?;
    let record: Record = serde_json::from_str(&text).with_context(|| {
        format!(
            "the Git Sentry record {} is damaged: remove it and run `lazaret git-sentry accept` \
             in {} after checking the repository",
            path.display(),
            workspace.display()
        )
    })?;
    if record.version != VERSION || record.workspace != workspace {
        bail!(
            "the Git Sentry record {} is not this workspace's (or of another version): remove it \
             and run `lazaret git-sentry accept` in {}",
            path.display(),
            workspace.display()
        );
    }
    Ok(Some(record))
}

/// Writes `record` atomically (temporary file, then rename) into `store` (created 0700).
pub fn save(store: &Path, record: &Record) -> anyhow::Result<()> {
    crate::domain::layout::ensure_private_dir(store)?;
    let path = record_path(store, &record.workspace);
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    let text = serde_json::to_string_pretty(record)? + "\n";
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .and_then(|_| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("writing the Git Sentry record {}", path.display()));
    }
    Ok(())
}
