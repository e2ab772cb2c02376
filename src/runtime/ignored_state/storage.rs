//! The Domain-scoped storage behind Ignored Workspace State: `<Domain Root>/ignored/<P>`.
//!
//! The sandbox writes inside the directories bound from here, so it can plant symlinks in them
//! (say `sub -> ~/.ssh`). Podman resolves a bind source by path, following symlinks; so before
//! an entry is offered as a source, every component of it is opened or created relative to its
//! parent's file descriptor with `O_NOFOLLOW`, and a symlink anywhere on the way is refused,
//! never followed. (A walk one component at a time does what `openat2(RESOLVE_NO_SYMLINKS |
//! RESOLVE_BENEATH)` would, and also creates what is missing, on every kernel.) This runs
//! before the sandbox starts, so nothing inside can change storage between the check and the
//! mount.

use crate::domain::layout::ensure_private_dir;
use anyhow::{anyhow, bail, Context};
use nix::errno::Errno;
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::sys::stat::{fchmod, fstat, fstatat, mkdirat, FileStat, Mode, SFlag};
use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

/// What an Ignored Workspace State entry is, decided by the host path's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Dir,
    File,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Dir => "directory",
            Kind::File => "regular file",
        }
    }
}

/// The storage root, opened without following a symlink and checked to be the user's.
pub struct Storage {
    path: PathBuf,
    root: OwnedFd,
}

impl Storage {
    /// Creates `path` (0700) when missing and opens it; refuses a symlink, a non-directory, or
    /// a directory owned by someone else or open to others.
    pub fn open(path: &Path) -> anyhow::Result<Storage> {
        ensure_private_dir(path)?;
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let root = nix::fcntl::open(path, flags, Mode::empty()).map_err(|e| {
            anyhow!(
                "opening Ignored Workspace State storage {}: {e}",
                path.display()
            )
        })?;
        let st = fstat(root.as_fd()).context("checking Ignored Workspace State storage")?;
        let uid = nix::unistd::getuid().as_raw();
        if file_type(&st) != SFlag::S_IFDIR || st.st_uid != uid {
            bail!(
                "Ignored Workspace State storage {} is not a directory owned by you (uid {uid}): \
                 remove it and launch again",
                path.display()
            );
        }
        Ok(Storage {
            path: path.to_path_buf(),
            root,
        })
    }

    /// Makes sure `<storage>/<rel>` exists as a `kind` reached through real directories only,
    /// creating what is missing (directories 0755, an empty file 0644) and keeping what exists.
    /// Returns its path, fit to be a bind source until the sandbox starts.
    pub fn prepare(&self, rel: &Path, kind: Kind) -> anyhow::Result<PathBuf> {
        let mut names: Vec<&OsStr> = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(name) => names.push(name),
                _ => bail!("invalid Ignored Workspace State path {}", rel.display()),
            }
        }
        let Some((leaf, parents)) = names.split_last() else {
            bail!("empty Ignored Workspace State path");
        };
        let mut shown = self.path.clone();
        let mut dir: Option<OwnedFd> = None;
        for name in parents {
            shown.push(name);
            let parent = dir.as_ref().map_or(self.root.as_fd(), AsFd::as_fd);
            let next = open_or_create_dir(parent, name, &shown, rel, Kind::Dir)?;
            dir = Some(next);
        }
        shown.push(leaf);
        let parent = dir.as_ref().map_or(self.root.as_fd(), AsFd::as_fd);
        match kind {
            Kind::Dir => drop(open_or_create_dir(parent, leaf, &shown, rel, kind)?),
            Kind::File => ensure_file(parent, leaf, &shown, rel)?,
        }
        Ok(shown)
    }
}

fn file_type(st: &FileStat) -> SFlag {
    SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits())
}

fn type_name(t: SFlag) -> &'static str {
    match t {
        SFlag::S_IFDIR => "directory",
        SFlag::S_IFREG => "regular file",
        SFlag::S_IFLNK => "symlink",
        SFlag::S_IFIFO => "FIFO",
        SFlag::S_IFSOCK => "socket",
        _ => "device",
    }
}

fn symlink_error(shown: &Path) -> anyhow::Error {
    anyhow!(
        "Ignored Workspace State entry {} is a symlink; refusing to mount it — remove it",
        shown.display()
    )
}

/// What is at `name` in `dir` when it is not what was wanted.
fn mismatch(
    dir: BorrowedFd,
    name: &OsStr,
    shown: &Path,
    rel: &Path,
    wanted: Kind,
) -> anyhow::Error {
    let st = match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(e) => {
            return anyhow!(
                "checking Ignored Workspace State entry {}: {e}",
                shown.display()
            )
        }
    };
    let found = file_type(&st);
    if found == SFlag::S_IFLNK {
        return symlink_error(shown);
    }
    anyhow!(
        "Ignored Workspace State entry {} is a {}, but a {} is needed there for the ignored \
         workspace path {}: remove {} (its Domain-scoped content is lost) and launch again",
        shown.display(),
        type_name(found),
        wanted.name(),
        rel.display(),
        shown.display()
    )
}

fn open_or_create_dir(
    dir: BorrowedFd,
    name: &OsStr,
    shown: &Path,
    rel: &Path,
    wanted: Kind,
) -> anyhow::Result<OwnedFd> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    // Twice at most: a directory created here is opened on the second pass.
    for _ in 0..2 {
        match openat(dir, name, flags, Mode::empty()) {
            Ok(fd) => return Ok(fd),
            Err(Errno::ENOENT) => match mkdirat(dir, name, Mode::from_bits_truncate(0o755)) {
                Ok(()) => {
                    let fd = openat(dir, name, flags, Mode::empty()).map_err(|e| {
                        anyhow!(
                            "opening Ignored Workspace State entry {}: {e}",
                            shown.display()
                        )
                    })?;
                    fchmod(fd.as_fd(), Mode::from_bits_truncate(0o755))
                        .map_err(|e| anyhow!("setting the mode of {}: {e}", shown.display()))?;
                    return Ok(fd);
                }
                Err(Errno::EEXIST) => continue,
                Err(e) => bail!(
                    "creating Ignored Workspace State entry {}: {e}",
                    shown.display()
                ),
            },
            Err(Errno::ELOOP) | Err(Errno::ENOTDIR) => {
                return Err(mismatch(dir, name, shown, rel, wanted))
            }
            Err(e) => bail!(
                "opening Ignored Workspace State entry {}: {e}",
                shown.display()
            ),
        }
    }
    Err(mismatch(dir, name, shown, rel, wanted))
}

fn ensure_file(dir: BorrowedFd, name: &OsStr, shown: &Path, rel: &Path) -> anyhow::Result<()> {
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    match openat(dir, name, flags, Mode::from_bits_truncate(0o644)) {
        Ok(fd) => fchmod(fd.as_fd(), Mode::from_bits_truncate(0o644))
            .map_err(|e| anyhow!("setting the mode of {}: {e}", shown.display())),
        Err(Errno::EEXIST) => {
            let st = fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW).map_err(|e| {
                anyhow!(
                    "checking Ignored Workspace State entry {}: {e}",
                    shown.display()
                )
            })?;
            if file_type(&st) == SFlag::S_IFREG {
                Ok(())
            } else {
                Err(mismatch(dir, name, shown, rel, Kind::File))
            }
        }
        Err(e) => bail!(
            "creating Ignored Workspace State entry {}: {e}",
            shown.display()
        ),
    }
}
