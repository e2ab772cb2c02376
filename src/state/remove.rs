//! Fd-relative, symlink-safe recursive removal (protocol notes "Crash-consistent reset"): the
//! trees removed were written by the sandbox, so a path-based walk could be led outside them
//! by a planted symlink or a rename race. Every step is relative to an open directory fd, a
//! symlink is unlinked and never followed, each opened dir is checked to be the inode that was
//! stat'ed, and a mount point (another device) is refused rather than emptied.
//!
//! The walk is iterative and holds one directory fd at a time: going back up reopens `..` and
//! checks its device and inode, so a deep tree neither exhausts the stack nor the fd limit.

use anyhow::{bail, Context};
use nix::errno::Errno;
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::sys::stat::{fchmod, fstat, fstatat, FileStat, Mode, SFlag};
use nix::unistd::{unlinkat, UnlinkatFlags};
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, IntoRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// Deepest directory nesting removed; beyond it the removal stops with an error.
pub const MAX_DEPTH: usize = 4096;

/// A directory being emptied: its name in its parent, identity, and entries left to remove.
struct Frame {
    name: OsString,
    dev: u64,
    ino: u64,
    pending: Vec<OsString>,
}

/// Removes the entry `name` (file, symlink, or directory tree) inside the directory `parent`,
/// fd-relatively: directories are opened with `O_DIRECTORY|O_NOFOLLOW` and emptied with
/// `unlinkat`; a symlink is unlinked, never followed; a directory on another device than
/// `parent` is refused (a mount point: not ours to delete); nesting deeper than [`MAX_DEPTH`]
/// is an error. A directory lacking owner `rwx` is chmod'ed `u+rwx` through its fd first (tools
/// leave 0500 dirs). Nothing is assumed about ownership. A missing `name` is not an error.
pub fn remove_tree_at(parent: BorrowedFd<'_>, name: &OsStr) -> anyhow::Result<()> {
    check_component(name)?;
    let st = match fstatat(parent, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Err(Errno::ENOENT) => return Ok(()),
        r => r.with_context(|| format!("examining {}", shown(&[], name)))?,
    };
    if !is_dir(&st) {
        return unlink(parent, name, UnlinkatFlags::NoRemoveDir, &[]);
    }
    let parent_dev = fstat(parent)
        .context("examining the parent directory")?
        .st_dev;
    let mut cur = enter(parent, name, &st, parent_dev, &[])?;
    let mut stack = vec![Frame {
        name: name.to_owned(),
        dev: st.st_dev,
        ino: st.st_ino,
        pending: list_dir(cur.as_fd()).with_context(|| format!("listing {}", shown(&[], name)))?,
    }];
    while let Some(top) = stack.last_mut() {
        let dev = top.dev;
        if let Some(child) = top.pending.pop() {
            let st = match fstatat(cur.as_fd(), child.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
                Err(Errno::ENOENT) => continue,
                r => r.with_context(|| format!("examining {}", shown(&stack, &child)))?,
            };
            if !is_dir(&st) {
                unlink(cur.as_fd(), &child, UnlinkatFlags::NoRemoveDir, &stack)?;
                continue;
            }
            if stack.len() >= MAX_DEPTH {
                bail!(
                    "{} is nested deeper than {MAX_DEPTH} directories: not removed",
                    shown(&stack, &child)
                );
            }
            let fd = enter(cur.as_fd(), &child, &st, dev, &stack)?;
            let pending = list_dir(fd.as_fd())
                .with_context(|| format!("listing {}", shown(&stack, &child)))?;
            cur = fd;
            stack.push(Frame {
                name: child,
                dev: st.st_dev,
                ino: st.st_ino,
                pending,
            });
            continue;
        }
        // `top` is empty: climb to its parent, then remove it there.
        let Some(done) = stack.pop() else { break };
        let Some(up) = stack.last() else {
            return unlink(parent, &done.name, UnlinkatFlags::RemoveDir, &[]);
        };
        let fd = openat(cur.as_fd(), "..", dir_flags(), Mode::empty())
            .with_context(|| format!("returning to {}", shown(&stack, OsStr::new(""))))?;
        let st = fstat(fd.as_fd())?;
        if (st.st_dev, st.st_ino) != (up.dev, up.ino) {
            bail!(
                "{} was moved while being removed: stopped",
                shown(&stack, &done.name)
            );
        }
        cur = fd;
        unlink(cur.as_fd(), &done.name, UnlinkatFlags::RemoveDir, &stack)?;
    }
    Ok(())
}

/// The names in the directory `dir` (without `.` and `..`), read through a fresh open file
/// description so `dir`'s own offset is left alone. (libc's `readdir`: nix's `dir` feature is
/// not enabled.)
pub fn list_dir(dir: BorrowedFd<'_>) -> anyhow::Result<Vec<OsString>> {
    /// Closes the stream (and with it the fd it took over) on every path out.
    struct Stream(*mut libc::DIR);
    impl Drop for Stream {
        fn drop(&mut self) {
            // SAFETY: `self.0` came from a successful `fdopendir` and is closed only here.
            unsafe { libc::closedir(self.0) };
        }
    }
    let fd = openat(dir, ".", dir_flags(), Mode::empty())?;
    // SAFETY: `fd` is an open directory fd; on success the stream owns it (hence
    // `into_raw_fd`), on failure it is still ours and closed by `OwnedFd`'s drop.
    let ptr = unsafe { libc::fdopendir(fd.as_raw_fd()) };
    if ptr.is_null() {
        return Err(Errno::last().into());
    }
    let _ = fd.into_raw_fd();
    let stream = Stream(ptr);
    let mut names = Vec::new();
    loop {
        Errno::clear();
        // SAFETY: `stream.0` is a live stream; the entry is read before the next call.
        let entry = unsafe { libc::readdir(stream.0) };
        if entry.is_null() {
            match Errno::last_raw() {
                0 => return Ok(names),
                e => return Err(Errno::from_raw(e).into()),
            }
        }
        // SAFETY: a non-null entry holds a NUL-terminated name within `d_name`.
        let name = unsafe { std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()) }.to_bytes();
        if name != b"." && name != b".." {
            names.push(OsStr::from_bytes(name).to_owned());
        }
    }
}

/// Read-only directory opening that never follows a symlink.
pub(crate) fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

fn is_dir(st: &FileStat) -> bool {
    SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR
}

/// `name` must be one entry of the parent: anything else would escape the fd-relative walk.
fn check_component(name: &OsStr) -> anyhow::Result<()> {
    let b = name.as_bytes();
    if b.is_empty() || b == b"." || b == b".." || b.contains(&b'/') {
        bail!("refusing to remove {name:?}: not a single directory entry");
    }
    Ok(())
}

/// Opens the subdirectory `name` of `parent`, which was stat'ed as `st`: refuses another
/// device, checks the opened inode is that one, and makes it owner-`rwx` when it is not.
fn enter(
    parent: BorrowedFd<'_>,
    name: &OsStr,
    st: &FileStat,
    parent_dev: u64,
    stack: &[Frame],
) -> anyhow::Result<OwnedFd> {
    let what = || shown(stack, name);
    if st.st_dev != parent_dev {
        bail!(
            "{} is on another file system (a mount point?): not removed",
            what()
        );
    }
    let fd = match openat(parent, name, dir_flags(), Mode::empty()) {
        Err(Errno::EACCES) => {
            open_unreadable(parent, name).with_context(|| format!("opening {}", what()))?
        }
        r => r.with_context(|| format!("opening {}", what()))?,
    };
    let now = fstat(fd.as_fd()).with_context(|| format!("examining {}", what()))?;
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) {
        bail!("{} was replaced while being removed: stopped", what());
    }
    let mode = now.st_mode & 0o7777;
    if mode & 0o700 != 0o700 {
        // Not the owner is fine: access may come from a capability (root of the namespace).
        match fchmod(fd.as_fd(), Mode::from_bits_truncate(mode | 0o700)) {
            Ok(()) | Err(Errno::EPERM) => {}
            Err(e) => return Err(e).with_context(|| format!("making {} writable", what())),
        }
    }
    Ok(fd)
}

/// A directory without read permission: opened as `O_PATH` (no permission needed on it),
/// made owner-`rwx` through its `/proc/self/fd` link (fchmod refuses `O_PATH` fds), then
/// reopened readable as `.` relative to that fd — the same inode throughout.
fn open_unreadable(parent: BorrowedFd<'_>, name: &OsStr) -> anyhow::Result<OwnedFd> {
    let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let path_fd = openat(parent, name, flags, Mode::empty())?;
    let mode = fstat(path_fd.as_fd())?.st_mode & 0o7777;
    let link = PathBuf::from(format!("/proc/self/fd/{}", path_fd.as_raw_fd()));
    std::fs::set_permissions(&link, std::fs::Permissions::from_mode(mode | 0o700))?;
    Ok(openat(path_fd.as_fd(), ".", dir_flags(), Mode::empty())?)
}

fn unlink(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    flags: UnlinkatFlags,
    stack: &[Frame],
) -> anyhow::Result<()> {
    match unlinkat(dir, name, flags) {
        Ok(()) | Err(Errno::ENOENT) => Ok(()),
        Err(e) => Err(e).with_context(|| format!("removing {}", shown(stack, name))),
    }
}

/// The path of `name` below the removed entry, for messages.
fn shown(stack: &[Frame], name: &OsStr) -> String {
    let mut p: PathBuf = stack.iter().map(|f| f.name.as_os_str()).collect();
    p.push(name);
    p.display().to_string()
}

#[cfg(test)]
#[path = "remove_tests.rs"]
mod tests;
