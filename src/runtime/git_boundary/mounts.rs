//! What the sandbox sees of git (issue #30): a Domain-private git directory at
//! `/workspace/.git`, never the host's. The host repository's objects are shown read-only
//! (the private directory borrows them through `objects/info/alternates`); its configuration,
//! hooks, index, references and sequencer state are not shown at all. The developer's own
//! nested repositories in the worktree are hidden (a `.git` directory behind an empty tmpfs, a
//! `.git` file bound read-only), so the sandbox cannot change what host git obeys there.

use super::host_side::HostRepo;
use crate::domain::workspace::SANDBOX_WORKSPACE;
use crate::domain::Domain;
use crate::runtime::git_sentry::nested::Nested;
use crate::runtime::mounts::SandboxMount;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

/// Lazaret's git area inside the sandbox.
pub const SANDBOX_AREA: &str = "/run/lazaret/git";
/// The host repository's objects, read-only, inside.
pub const SANDBOX_OBJECTS: &str = "/run/lazaret/git/objects";
/// The private directory inside when the workspace's `.git` is a `gitdir:` file.
pub const SANDBOX_DIR_ELSEWHERE: &str = "/run/lazaret/git/dir";
/// Most nested repositories of the developer's hidden with a mount each.
pub const MAX_NESTED: usize = 512;

/// The host repository of a workspace, as the boundary uses it.
#[derive(Clone, Debug)]
pub struct HostLayout {
    /// The workspace's `.git` is a directory (else a `gitdir:` file).
    pub dotgit_is_dir: bool,
    pub repo: HostRepo,
    /// The common Git directory (`commondir`), whose `objects` the sandbox borrows.
    pub common_dir: PathBuf,
}

impl HostLayout {
    /// The host repository of `ws`, read from the host's own files (which the sandbox cannot
    /// write); `None` when `ws` has no `.git`.
    pub fn discover(ws: &Path) -> anyhow::Result<Option<HostLayout>> {
        let dotgit = ws.join(".git");
        let meta = match std::fs::symlink_metadata(&dotgit) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            other => other.with_context(|| format!("inspecting {}", dotgit.display()))?,
        };
        if !meta.is_dir() && !meta.is_file() {
            // A symlink: the Git Sentry's plan refuses it with the fix.
            return Ok(None);
        }
        let p = crate::escalation::repository::discover(ws).map_err(anyhow::Error::msg)?;
        let common_dir = match std::fs::read_to_string(p.git_dir.join("commondir")) {
            Ok(c) => std::fs::canonicalize(p.git_dir.join(c.trim()))
                .with_context(|| format!("the commondir of {}", p.git_dir.display()))?,
            Err(_) => p.git_dir.clone(),
        };
        if !common_dir.join("objects").is_dir() {
            bail!(
                "{} has no objects directory: the repository looks broken",
                common_dir.display()
            );
        }
        Ok(Some(HostLayout {
            dotgit_is_dir: meta.is_dir(),
            repo: HostRepo {
                git_dir: p.git_dir,
                work_tree: ws.to_path_buf(),
            },
            common_dir,
        }))
    }

    /// Where the private directory is inside.
    pub fn sandbox_dir(&self) -> String {
        if self.dotgit_is_dir {
            format!("{SANDBOX_WORKSPACE}/.git")
        } else {
            SANDBOX_DIR_ELSEWHERE.to_owned()
        }
    }
}

/// The Domain-private git directory on the host (never opened by the host after creation).
pub fn private_dir(domain: &Domain) -> PathBuf {
    domain.root.join("git")
}

/// The boundary's host-private state (the base, its lock, the pointer file).
pub fn state_dir(domain: &Domain) -> PathBuf {
    domain.root.join("git-boundary")
}

/// The mounts for `domain` whose workspace has the host repository `layout`; `developers`:
/// the nested `.git` entries present before the sandbox starts. Returns the mounts and notes.
pub fn plan(
    domain: &Domain,
    layout: &HostLayout,
    developers: &[Nested],
) -> anyhow::Result<(Vec<SandboxMount>, Vec<String>)> {
    let private = private_dir(domain);
    make_dir(&private)?;
    let state = state_dir(domain);
    crate::domain::layout::ensure_private_dir(&state)?;
    let ws = Path::new(SANDBOX_WORKSPACE);
    let mut mounts = vec![SandboxMount::bind(
        &layout.common_dir.join("objects"),
        Path::new(SANDBOX_OBJECTS),
        true,
        "git boundary: the host repository's objects, read-only",
    )];
    if layout.dotgit_is_dir {
        mounts.push(SandboxMount::bind(
            &private,
            &ws.join(".git"),
            false,
            "git boundary: the Domain-private git directory",
        ));
    } else {
        let pointer = state.join("pointer");
        std::fs::write(&pointer, format!("gitdir: {SANDBOX_DIR_ELSEWHERE}\n"))
            .with_context(|| format!("writing {}", pointer.display()))?;
        mounts.push(SandboxMount::bind(
            &private,
            Path::new(SANDBOX_DIR_ELSEWHERE),
            false,
            "git boundary: the Domain-private git directory",
        ));
        mounts.push(SandboxMount::bind(
            &pointer,
            &ws.join(".git"),
            true,
            "git boundary: .git points at the Domain-private git directory",
        ));
    }
    // Your git directories are never the sandbox's to see, even when they lie in the worktree
    // (`gitdir: .realgit`): there they would be files it could rewrite, and host git — the
    // boundary's, an escalation's, yours — reads them as your repository.
    let dirs: std::collections::BTreeSet<&PathBuf> =
        [&layout.repo.git_dir, &layout.common_dir].into();
    for dir in dirs {
        if let Ok(rel) = dir.strip_prefix(&domain.workspace.root) {
            if rel != Path::new(".git") && !rel.as_os_str().is_empty() {
                mounts.push(SandboxMount::tmpfs(
                    &ws.join(rel),
                    "git boundary: your Git directory inside the worktree, hidden",
                ));
            }
        }
    }
    let mut notes = vec![format!(
        "git boundary: the sandbox has its own git directory; commits and branches cross to {} \
         through the boundary, and nothing the sandbox writes under .git is read on the host",
        layout.repo.git_dir.display()
    )];
    let hidden: Vec<&Nested> = developers
        .iter()
        .filter(|n| !n.fingerprint.starts_with("link:"))
        .collect();
    if hidden.len() > MAX_NESTED {
        bail!(
            "the workspace holds {} nested Git repositories; Lazaret hides each from the sandbox \
             with a mount of its own and refuses more than {MAX_NESTED}",
            hidden.len()
        );
    }
    for n in hidden {
        let at = ws.join(&n.path);
        if n.is_dir() {
            mounts.push(SandboxMount::tmpfs(
                &at,
                "git boundary: a nested repository of yours, hidden",
            ));
        } else if n.is_file() {
            let host = domain.workspace.root.join(&n.path);
            mounts.push(SandboxMount::bind(
                &host,
                &at,
                true,
                "git boundary: a nested repository's .git file of yours, read-only",
            ));
        }
    }
    if !developers.is_empty() {
        notes.push(format!(
            "git boundary: {} nested repositories of yours are hidden from the sandbox",
            developers.len()
        ));
    }
    Ok((mounts, notes))
}

/// Creates `dir` (0700) when missing; never follows a symlink there.
fn make_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => bail!("{} is not a directory", dir.display()),
        Err(_) => std::fs::DirBuilder::new()
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("creating {}", dir.display())),
    }
}
