//! `lazaret state inspect`: what a State Anchor's upper dir changes in the image's content at
//! its container path (its overlay lower dir), read from metadata only — never file contents.
//!
//! The upper dir is sandbox-controlled: it is walked fd-relative without following symlinks
//! (see [`super::listing`]), and names are reported raw (the human report escapes them).

use super::listing::{is_dir, walk_noting, Entry};
use super::unreadable::Unreadable;
use anyhow::{bail, Context};
use nix::sys::stat::{FileStat, SFlag};
use serde::{Deserialize, Serialize};
use std::ffi::{CStr, CString, OsStr};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// How an upper entry changes the merged view.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Not in the lower layer.
    Added,
    /// In the lower layer too: replaced, or (directories) owner or mode changed.
    Modified,
    /// A whiteout: hides the lower entry at this path.
    Deleted,
    /// An opaque directory: hides everything the lower layer has below it.
    OpaqueDir,
    /// In the upper layer; added or modified cannot be told (lower layer unavailable).
    Present,
}

/// File type of a changed entry.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// Device, FIFO or socket.
    Other,
    /// A deleted entry whose lower layer is unavailable.
    Unknown,
}

/// One changed path.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ChangeEntry {
    /// The path inside the container, e.g. "/usr/local/bin/tool" (non-UTF-8 bytes as U+FFFD).
    pub path: String,
    pub change: Change,
    pub kind: Kind,
    /// `st_size` of files and symlinks; 0 for directories. Deleted: of the hidden lower entry.
    pub size: u64,
    pub uid: u32,
    pub gid: u32,
    /// Permission bits in octal, e.g. "0755".
    pub mode: String,
    /// A symlink's target, raw (may hold control characters).
    pub link_target: Option<String>,
}

/// Counts of all changes (not only the listed ones).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Totals {
    pub added: u64,
    pub modified: u64,
    pub deleted: u64,
    pub opaque_dirs: u64,
    pub present: u64,
    /// Sum of `size` over added, modified and present entries.
    pub bytes: u64,
    /// The files the upper holds: entries that are neither directories nor whiteouts (the
    /// count `state list` shows for the anchor; see [`holds_file`]).
    #[serde(default)]
    pub files: u64,
}

/// The changes of one State Anchor.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Inspection {
    pub container: PathBuf,
    /// The anchor's current generation, filled in by the caller (None: old layout or unknown).
    #[serde(default)]
    pub generation: Option<u64>,
    /// False when no lower dir was given: entries are then `present`, not added or modified.
    pub lower_available: bool,
    /// In path order (depth-first, names in byte order), at most `limit` of them.
    pub changes: Vec<ChangeEntry>,
    /// More changes exist than `changes` lists (`totals` counts them all).
    pub truncated: bool,
    /// Some upper entries could not be read and are missing from the result.
    pub partial: bool,
    /// Which upper entries could not be read, and why (paths relative to the upper dir).
    #[serde(default)]
    pub unreadable: Unreadable,
    pub totals: Totals,
}

/// What the lower layer holds at a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counterpart {
    /// No lower layer given, or it could not be read there.
    Unknown,
    Absent,
    Present {
        mode: u32,
        size: u64,
        uid: u32,
        gid: u32,
    },
}

/// Metadata of one upper entry, as [`classify`] needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    /// `st_mode`: file type and permission bits.
    pub mode: u32,
    pub rdev: u64,
    pub uid: u32,
    pub gid: u32,
    /// Has `trusted.overlay.whiteout` or `user.overlay.whiteout` (a regular-file whiteout).
    pub whiteout_xattr: bool,
    /// Has `trusted.overlay.opaque` or `user.overlay.opaque` set to "y".
    pub opaque: bool,
}

/// Whether a file type and device number are an overlay whiteout: a character device 0:0.
pub fn is_whiteout(mode: u32, rdev: u64) -> bool {
    file_type(mode) == SFlag::S_IFCHR && rdev == 0
}

fn file_type(mode: u32) -> SFlag {
    SFlag::from_bits_truncate(mode & SFlag::S_IFMT.bits())
}

fn kind_of(mode: u32) -> Kind {
    match file_type(mode) {
        SFlag::S_IFREG => Kind::File,
        SFlag::S_IFDIR => Kind::Dir,
        SFlag::S_IFLNK => Kind::Symlink,
        _ => Kind::Other,
    }
}

/// How the upper entry `f` changes a lower layer holding `lower` at its path; None when it
/// changes nothing visible (a directory present in both with the same owner and mode, or any
/// non-opaque directory when the lower layer is unknown).
pub fn classify(f: &Facts, lower: &Counterpart) -> Option<Change> {
    let is_reg = file_type(f.mode) == SFlag::S_IFREG;
    if is_whiteout(f.mode, f.rdev) || (is_reg && f.whiteout_xattr) {
        return Some(Change::Deleted);
    }
    let dir = file_type(f.mode) == SFlag::S_IFDIR;
    match lower {
        Counterpart::Absent => Some(Change::Added),
        Counterpart::Unknown if dir && f.opaque => Some(Change::OpaqueDir),
        Counterpart::Unknown if dir => None,
        Counterpart::Unknown => Some(Change::Present),
        Counterpart::Present { mode, .. } if !dir || file_type(*mode) != SFlag::S_IFDIR => {
            Some(Change::Modified)
        }
        Counterpart::Present { .. } if f.opaque => Some(Change::OpaqueDir),
        Counterpart::Present { mode, uid, gid, .. } => {
            let same = (mode & 0o7777, *uid, *gid) == (f.mode & 0o7777, f.uid, f.gid);
            (!same).then_some(Change::Modified)
        }
    }
}

/// The lower layer below a directory of the upper, for its children.
#[derive(Clone, Debug)]
enum Lower {
    Unknown,
    /// Hidden (opaque) or missing: every child is added.
    Absent,
    /// The lower counterpart, a real directory.
    Dir(PathBuf),
}

fn counterpart(lower: &Lower, name: &OsStr) -> Counterpart {
    let Lower::Dir(dir) = lower else {
        return match lower {
            Lower::Absent => Counterpart::Absent,
            _ => Counterpart::Unknown,
        };
    };
    match std::fs::symlink_metadata(dir.join(name)) {
        Ok(m) => Counterpart::Present {
            mode: m.mode(),
            size: m.size(),
            uid: m.uid(),
            gid: m.gid(),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Counterpart::Absent,
        Err(_) => Counterpart::Unknown,
    }
}

/// Walks `upper` and classifies each entry against `lower` (the image's content at
/// `container_root`; None when unavailable) with [`classify`]; whiteouts and opaque
/// directories are recognised by device number 0:0 and by the `trusted.overlay.*` or
/// `user.overlay.*` xattrs (Lazaret mounts with `userxattr`). Lists at most `limit` changes.
/// A missing `upper` has no changes.
pub fn inspect(
    upper: &Path,
    lower: Option<&Path>,
    container_root: &Path,
    limit: usize,
) -> anyhow::Result<Inspection> {
    let mut out = Inspection {
        container: container_root.to_path_buf(),
        generation: None,
        lower_available: lower.is_some(),
        changes: Vec::new(),
        truncated: false,
        partial: false,
        unreadable: Unreadable::default(),
        totals: Totals::default(),
    };
    match std::fs::symlink_metadata(upper) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => bail!("{} is not a directory", upper.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e).with_context(|| format!("reading {}", upper.display())),
    }
    let root_lower = match lower {
        None => Lower::Unknown,
        Some(l) => match std::fs::symlink_metadata(l) {
            Ok(m) if m.is_dir() => Lower::Dir(l.to_path_buf()),
            Ok(_) => Lower::Absent,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Lower::Absent,
            Err(_) => Lower::Unknown,
        },
    };
    let mut unreadable = Unreadable::default();
    walk_noting(
        upper,
        root_lower,
        &mut |e, lower| {
            if holds_file(e) {
                out.totals.files += 1;
            }
            let (entry, next) = visit(e, lower, container_root);
            if let Some(entry) = entry {
                count(&mut out.totals, &entry);
                if out.changes.len() < limit {
                    out.changes.push(entry);
                } else {
                    out.truncated = true;
                }
            }
            next
        },
        &mut unreadable,
    );
    out.partial = !unreadable.is_empty();
    out.unreadable = unreadable;
    Ok(out)
}

/// Whether an upper entry is a file the anchor holds: not a directory, not a whiteout (a
/// character device 0:0, or an empty regular file with an overlay whiteout xattr). The one
/// definition `state list` and `state inspect` count by.
pub(crate) fn holds_file(e: &Entry) -> bool {
    let st = e.stat;
    if is_dir(st) || is_whiteout(st.st_mode, st.st_rdev) {
        return false;
    }
    !(file_type(st.st_mode) == SFlag::S_IFREG && st.st_size == 0 && whiteout_xattr(e))
}

/// The path of `e` for the `l*xattr` calls: through its open parent, not a path lookup.
fn proc_path(e: &Entry) -> PathBuf {
    Path::new(&format!("/proc/self/fd/{}", e.parent.as_raw_fd())).join(e.name)
}

/// Whether `e` has a regular-file whiteout's xattr.
fn whiteout_xattr(e: &Entry) -> bool {
    let path = proc_path(e);
    [c"trusted.overlay.whiteout", c"user.overlay.whiteout"]
        .iter()
        .any(|n| lgetxattr(&path, n).is_some())
}

/// The change of one entry (if any) and the lower context to descend with (directories).
fn visit(e: &Entry, lower: &Lower, container_root: &Path) -> (Option<ChangeEntry>, Option<Lower>) {
    let st = e.stat;
    let dir = is_dir(st);
    let proc_path = proc_path(e);
    let small_file = file_type(st.st_mode) == SFlag::S_IFREG && st.st_size == 0;
    let facts = Facts {
        mode: st.st_mode,
        rdev: st.st_rdev,
        uid: st.st_uid,
        gid: st.st_gid,
        whiteout_xattr: small_file && whiteout_xattr(e),
        opaque: dir
            && [c"trusted.overlay.opaque", c"user.overlay.opaque"]
                .iter()
                .any(|n| lgetxattr(&proc_path, n).as_deref() == Some(b"y")),
    };
    let there = counterpart(lower, e.name);
    let change = classify(&facts, &there);
    let next = dir.then(|| match (&there, lower) {
        (_, Lower::Absent) => Lower::Absent,
        _ if facts.opaque => Lower::Absent,
        (Counterpart::Present { mode, .. }, Lower::Dir(d))
            if file_type(*mode) == SFlag::S_IFDIR =>
        {
            Lower::Dir(d.join(e.name))
        }
        (Counterpart::Unknown, _) => Lower::Unknown,
        _ => Lower::Absent,
    });
    let entry = change.map(|change| describe(e, st, change, &there, container_root));
    (entry, next)
}

fn describe(
    e: &Entry,
    st: &FileStat,
    change: Change,
    there: &Counterpart,
    container_root: &Path,
) -> ChangeEntry {
    let (mode, size, uid, gid, kind) = match (change, there) {
        (
            Change::Deleted,
            Counterpart::Present {
                mode,
                size,
                uid,
                gid,
            },
        ) => {
            let size = if kind_of(*mode) == Kind::Dir {
                0
            } else {
                *size
            };
            (*mode, size, *uid, *gid, kind_of(*mode))
        }
        (Change::Deleted, _) => (st.st_mode, 0, st.st_uid, st.st_gid, Kind::Unknown),
        _ => {
            let size = if is_dir(st) {
                0
            } else {
                u64::try_from(st.st_size).unwrap_or(0)
            };
            (st.st_mode, size, st.st_uid, st.st_gid, kind_of(st.st_mode))
        }
    };
    let link_target = (change != Change::Deleted && kind == Kind::Symlink)
        .then(|| nix::fcntl::readlinkat(e.parent, e.name).ok())
        .flatten()
        .map(|t| t.to_string_lossy().into_owned());
    ChangeEntry {
        path: container_root.join(e.rel).to_string_lossy().into_owned(),
        change,
        kind,
        size,
        uid,
        gid,
        mode: format!("{:04o}", mode & 0o7777),
        link_target,
    }
}

fn count(t: &mut Totals, e: &ChangeEntry) {
    match e.change {
        Change::Added => t.added += 1,
        Change::Modified => t.modified += 1,
        Change::Deleted => t.deleted += 1,
        Change::OpaqueDir => t.opaque_dirs += 1,
        Change::Present => t.present += 1,
    }
    if matches!(e.change, Change::Added | Change::Modified | Change::Present) {
        t.bytes = t.bytes.saturating_add(e.size);
    }
}

/// The value of the extended attribute `name` of `path`'s last component, not following it;
/// None when absent or unreadable. Values longer than 64 bytes read as empty (still present).
fn lgetxattr(path: &Path, name: &CStr) -> Option<Vec<u8>> {
    let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut buf = [0u8; 64];
    // SAFETY: `c_path` and `name` are NUL-terminated strings that outlive the call, and `buf`
    // is valid for writes of `buf.len()` bytes; the kernel writes at most that many.
    let n = unsafe {
        libc::lgetxattr(
            c_path.as_ptr(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    match usize::try_from(n) {
        Ok(len) => buf.get(..len).map(<[u8]>::to_vec),
        Err(_) if std::io::Error::last_os_error().raw_os_error() == Some(libc::ERANGE) => {
            Some(Vec::new())
        }
        Err(_) => None,
    }
}

#[cfg(test)]
#[path = "inspect_tests.rs"]
mod tests;
