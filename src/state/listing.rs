//! `lazaret state list`: every Domain under the Storage Root with its State Anchors and Ignored
//! Workspace State, and their disk usage.
//!
//! Reads only; never follows a symlink (directories are opened fd-relative with `O_NOFOLLOW`,
//! entries are `fstatat`ed with `AT_SYMLINK_NOFOLLOW`), so a symlink planted in an upper dir
//! cannot make Lazaret read host files. `lazaret state list` measures inside podman's user
//! namespace (see `super::ns::sizes`); entries that still cannot be read (a uid it does not map,
//! too deep trees) make a size `partial`, never an error, and are named with the reason.

use super::unreadable::Unreadable;
use crate::domain::DomainMetadata;
use nix::fcntl::{openat, OFlag};
use nix::sys::stat::{fstatat, FileStat, Mode, SFlag};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// One Domain on disk.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct DomainEntry {
    /// The Domain Root's directory name (the Domain ID when the Root is sound).
    pub domain_id: String,
    /// `"?"` when `domain.json` is missing or unreadable.
    pub profile: String,
    /// Empty when `domain.json` is missing or unreadable.
    pub workspace: PathBuf,
    pub active: bool,
    /// What holds it when active, e.g. "lifecycle lock held by pid 123".
    pub held_by: Option<String>,
    /// Why the Domain Root's metadata cannot be trusted, if it cannot.
    pub problem: Option<String>,
    /// Sorted by container path (unknown ones last), then by directory name.
    pub anchors: Vec<AnchorEntry>,
    /// Disk usage of `<Domain Root>/ignored`.
    pub ignored_state: SizeEntry,
}

/// One State Anchor directory `<Domain Root>/anchors/<name>`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct AnchorEntry {
    /// From `anchor.json`; None when it is missing (an anchor that predates it).
    pub container: Option<PathBuf>,
    pub name: String,
    /// The generation `current` points at; None for the old layout (`upper` directly inside).
    pub generation: Option<u64>,
    /// Disk usage of the whole anchor directory (every generation, work dirs included).
    pub size: SizeEntry,
}

/// Disk usage of a tree.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct SizeEntry {
    /// Allocated bytes (`st_blocks * 512`), hard links counted once, directories included.
    pub bytes: u64,
    /// Of a State Anchor: the files its current generation holds, counted as `state inspect`
    /// counts them (`totals.files`: neither directories nor whiteouts). Of other trees: the
    /// entries that are not directories.
    pub files: u64,
    /// Some entries could not be read (or were not counted): the real usage is higher.
    pub partial: bool,
    /// Which entries could not be read, and why (paths relative to the tree).
    #[serde(default)]
    pub unreadable: Unreadable,
}

/// Name of the lifecycle lock in a Domain's runtime dir (see `crate::domain::lock`).
const LOCK_FILE: &str = "lifecycle.lock";

/// Directories deeper than this below a walked root are not entered (the walk holds one
/// descriptor per level); what they hold makes the result partial.
pub const MAX_DEPTH: usize = 128;

/// [`list_unmeasured`] with the sizes measured here, as the calling user ([`measure_here`]).
pub fn list(
    storage_root: &Path,
    runtime_root: &Path,
    activity: &dyn Fn(&DomainMetadata) -> Option<String>,
) -> anyhow::Result<Vec<DomainEntry>> {
    let mut domains = list_unmeasured(storage_root, runtime_root, activity)?;
    measure_here(storage_root, &mut domains);
    Ok(domains)
}

/// The trees whose sizes a listing shows: each anchor directory (for [`anchor_size`]), then
/// each Domain's Ignored Workspace State (for [`tree_size`]), in listing order.
pub fn trees(storage_root: &Path, domains: &[DomainEntry]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let root = |d: &DomainEntry| storage_root.join("domains").join(&d.domain_id);
    let anchors = domains
        .iter()
        .flat_map(|d| {
            d.anchors
                .iter()
                .map(move |a| root(d).join("anchors").join(&a.name))
        })
        .collect();
    let ignored = domains.iter().map(|d| root(d).join("ignored")).collect();
    (anchors, ignored)
}

/// Fills in the sizes of `domains` from sizes measured for [`trees`], in its order.
pub fn fill_sizes(domains: &mut [DomainEntry], anchors: Vec<SizeEntry>, ignored: Vec<SizeEntry>) {
    let mut anchors = anchors.into_iter();
    for (d, ignored) in domains.iter_mut().zip(ignored) {
        for a in &mut d.anchors {
            a.size = anchors.next().unwrap_or_default();
        }
        d.ignored_state = ignored;
    }
}

/// Measures the sizes of `domains` as the calling user: directories of subordinate uids are
/// unreadable then (`lazaret state list` measures inside podman's user namespace instead).
pub fn measure_here(storage_root: &Path, domains: &mut [DomainEntry]) {
    let (anchors, ignored) = trees(storage_root, domains);
    let anchors = anchors.iter().map(|a| anchor_size(a)).collect();
    let ignored = ignored.iter().map(|i| tree_size(i)).collect();
    fill_sizes(domains, anchors, ignored);
}

/// Every Domain under `storage_root/domains` (sizes left empty: see [`list`]), sorted by workspace, profile, then Domain ID;
/// Domains whose `domain.json` is missing, unreadable or names another Domain come last,
/// with profile `"?"` (if unreadable) and `problem` set. `activity` says what holds a sound
/// Domain; besides, a lifecycle lock held in `runtime_root/<dir name>` always makes a Domain
/// active (checked through `/proc/locks`, without taking the lock). Non-directories are
/// skipped.
pub fn list_unmeasured(
    storage_root: &Path,
    runtime_root: &Path,
    activity: &dyn Fn(&DomainMetadata) -> Option<String>,
) -> anyhow::Result<Vec<DomainEntry>> {
    let domains = storage_root.join("domains");
    let entries = match std::fs::read_dir(&domains) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(anyhow::Error::new(e).context(format!("reading {}", domains.display())))
        }
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry?;
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let root = entry.path();
        let (meta, problem) = match read_metadata(&root) {
            Ok(m) if m.domain_id.as_str() == name => (Some(m), None),
            Ok(m) => {
                let p = format!("domain.json names another Domain ({})", m.domain_id);
                (Some(m), Some(p))
            }
            Err(e) => (None, Some(e)),
        };
        let held_by = meta
            .as_ref()
            .filter(|_| problem.is_none())
            .and_then(activity)
            .or_else(|| lock_holder(&runtime_root.join(&name).join(LOCK_FILE)));
        out.push(DomainEntry {
            domain_id: name,
            profile: meta
                .as_ref()
                .map_or_else(|| "?".into(), |m| m.profile.clone()),
            workspace: meta.map(|m| m.workspace).unwrap_or_default(),
            active: held_by.is_some(),
            held_by,
            problem,
            anchors: anchors(&root.join("anchors")),
            ignored_state: SizeEntry::default(),
        });
    }
    out.sort_by(|a, b| {
        (a.problem.is_some(), &a.workspace, &a.profile, &a.domain_id).cmp(&(
            b.problem.is_some(),
            &b.workspace,
            &b.profile,
            &b.domain_id,
        ))
    });
    Ok(out)
}

fn read_metadata(root: &Path) -> Result<DomainMetadata, String> {
    let text = std::fs::read_to_string(root.join("domain.json"))
        .map_err(|e| format!("domain.json cannot be read: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("domain.json is not valid: {e}"))
}

/// The anchor directories under `anchors_dir` (a Domain Root's `anchors`).
fn anchors(anchors_dir: &Path) -> Vec<AnchorEntry> {
    let Ok(entries) = std::fs::read_dir(anchors_dir) else {
        return Vec::new();
    };
    let mut out: Vec<AnchorEntry> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| {
            let dir = e.path();
            AnchorEntry {
                container: anchor_container(&dir),
                name: e.file_name().to_string_lossy().into_owned(),
                generation: current_upper(&dir).1,
                size: SizeEntry::default(),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        (a.container.is_none(), &a.container, &a.name).cmp(&(
            b.container.is_none(),
            &b.container,
            &b.name,
        ))
    });
    out
}

/// The container path recorded in `<anchor dir>/anchor.json` (`{"container": "/usr"}`).
pub fn anchor_container(anchor_dir: &Path) -> Option<PathBuf> {
    #[derive(Deserialize)]
    struct AnchorJson {
        container: PathBuf,
    }
    let text = std::fs::read_to_string(anchor_dir.join("anchor.json")).ok()?;
    let parsed: AnchorJson = serde_json::from_str(&text).ok()?;
    parsed.container.is_absolute().then_some(parsed.container)
}

/// The generation number of a `gen-<n>` name: n positive, decimal, without sign or leading
/// zeros (as `super::generations` writes it).
pub fn parse_generation(name: &OsStr) -> Option<u64> {
    let digits = name.to_str()?.strip_prefix("gen-")?;
    let n: u64 = digits.parse().ok()?;
    (n > 0 && n.to_string() == digits).then_some(n)
}

/// The current upper dir of an anchor and its generation: `<dir>/gen-<n>/upper` when `current`
/// is a symlink to exactly `gen-<n>` and that is a directory; otherwise the old layout's
/// `<dir>/upper` (which may not exist) and None.
pub fn current_upper(anchor_dir: &Path) -> (PathBuf, Option<u64>) {
    let pointed = std::fs::read_link(anchor_dir.join("current"))
        .ok()
        .and_then(|t| {
            let n = parse_generation(t.as_os_str())?;
            let gen = anchor_dir.join(&t);
            std::fs::symlink_metadata(&gen)
                .is_ok_and(|m| m.is_dir())
                .then_some((gen.join("upper"), n))
        });
    match pointed {
        Some((upper, n)) => (upper, Some(n)),
        None => (anchor_dir.join("upper"), None),
    }
}

/// Who holds the flock on `lock`, from `/proc/locks`: "lifecycle lock held by pid N".
/// Side-effect free (the lock is not taken). None when the file or `/proc/locks` is missing.
/// Waits (at most `limit` in all) until no Domain under `runtime_root` is being torn down or
/// started: its lifecycle lock held while no coordinator serves it (no status file). A
/// `lazaret run` returns before its Domain's teardown has finished; a listing right after it
/// should not report that Domain active for the half second the teardown still takes.
pub fn settle_teardowns(runtime_root: &Path, limit: std::time::Duration) {
    let deadline = std::time::Instant::now() + limit;
    let Ok(entries) = std::fs::read_dir(runtime_root) else {
        return;
    };
    for dir in entries.flatten().map(|e| e.path()) {
        while !dir.join("status.json").exists()
            && lock_holder(&dir.join(LOCK_FILE)).is_some()
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
    }
}

pub fn lock_holder(lock: &Path) -> Option<String> {
    let st = nix::sys::stat::lstat(lock).ok()?;
    let pid = proc_locks_holder(st.st_dev, st.st_ino)?;
    Some(format!("lifecycle lock held by pid {pid}"))
}

/// The pid in `/proc/locks` holding a lock on `(dev, ino)`. The kernel lists the file a page
/// per `read(2)`, resuming by record number, so a lock taken or dropped by another process
/// between two pages shifts the list and a held lock can be skipped. A miss counts only once
/// two whole listings in a row agree (the list held still) — at most five listings.
fn proc_locks_holder(dev: u64, ino: u64) -> Option<u32> {
    let mut previous: Option<String> = None;
    for _ in 0..5 {
        let text = std::fs::read_to_string("/proc/locks").ok()?;
        if let Some(pid) = parse_proc_locks(&text, dev, ino) {
            return Some(pid);
        }
        if previous.as_deref() == Some(text.as_str()) {
            return None;
        }
        previous = Some(text);
    }
    None
}

/// The pid holding a lock on inode `ino` of device `dev` in `/proc/locks` text. The device
/// must match too, except when both are anonymous (major 0: tmpfs, btrfs, overlay report
/// different numbers to `stat` and to `/proc/locks`). Waiters (`->`) are ignored.
pub fn parse_proc_locks(text: &str, dev: u64, ino: u64) -> Option<u32> {
    use nix::sys::stat::{major, minor};
    text.lines().filter(|l| !l.contains("->")).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (pid, id) = (fields.get(4)?, fields.get(5)?);
        let mut parts = id.split(':');
        let maj = u64::from_str_radix(parts.next()?, 16).ok()?;
        let min = u64::from_str_radix(parts.next()?, 16).ok()?;
        let inode: u64 = parts.next()?.parse().ok()?;
        let same_dev = (maj, min) == (major(dev), minor(dev)) || (maj == 0 && major(dev) == 0);
        (inode == ino && same_dev)
            .then(|| pid.parse().ok())
            .flatten()
    })
}

/// Disk usage of the tree at `dir` (see [`SizeEntry`]); a missing `dir` is empty, a
/// non-directory counts as one file. Never follows a symlink.
pub fn tree_size(dir: &Path) -> SizeEntry {
    tree_size_bounded(dir, usize::MAX)
}

/// [`tree_size`] that counts at most `max_entries` entries and is `partial` past them: for a
/// view refreshed every few seconds, which a tree of millions of files must not stall.
pub fn tree_size_bounded(dir: &Path, max_entries: usize) -> SizeEntry {
    measure(dir, max_entries, &|e| !is_dir(e.stat))
}

/// Disk usage of a State Anchor directory (every generation, work dirs included), and the files
/// its current generation holds as `state inspect` counts them ([`super::inspect::holds_file`]):
/// `state list` and `state inspect` give the same count (issue #32).
pub fn anchor_size(anchor_dir: &Path) -> SizeEntry {
    let (upper, _) = current_upper(anchor_dir);
    let upper = upper
        .strip_prefix(anchor_dir)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    measure(anchor_dir, usize::MAX, &|e| {
        e.rel.starts_with(&upper) && e.rel != upper && super::inspect::holds_file(e)
    })
}

/// Bytes of the tree at `dir`, and its entries that `counts` as files.
fn measure(dir: &Path, max_entries: usize, counts: &dyn Fn(&Entry) -> bool) -> SizeEntry {
    let mut size = SizeEntry::default();
    let root = match nix::sys::stat::lstat(dir) {
        Ok(st) => st,
        Err(nix::errno::Errno::ENOENT) => return size,
        Err(e) => {
            size.partial = true;
            size.unreadable.note(Path::new(""), format!("stat: {e}"));
            return size;
        }
    };
    size.bytes = allocated(&root);
    if !is_dir(&root) {
        size.files = 1;
        return size;
    }
    let mut seen = HashSet::new();
    let (mut entries, mut capped) = (0usize, false);
    let mut unreadable = Unreadable::default();
    walk_noting(
        dir,
        (),
        &mut |e, _| {
            entries += 1;
            if entries > max_entries {
                capped = true;
                return None;
            }
            let linked = !is_dir(e.stat) && e.stat.st_nlink > 1;
            if !linked || seen.insert((e.stat.st_dev, e.stat.st_ino)) {
                size.bytes = size.bytes.saturating_add(allocated(e.stat));
            }
            if counts(e) {
                size.files += 1;
            }
            is_dir(e.stat).then_some(())
        },
        &mut unreadable,
    );
    size.partial = capped || !unreadable.is_empty();
    size.unreadable = unreadable;
    size
}

fn allocated(st: &FileStat) -> u64 {
    u64::try_from(st.st_blocks).unwrap_or(0).saturating_mul(512)
}

/// Whether `st` is a directory.
pub(crate) fn is_dir(st: &FileStat) -> bool {
    SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits()) == SFlag::S_IFDIR
}

/// An entry met by [`walk`].
pub(crate) struct Entry<'a> {
    /// Its path relative to the walked root.
    pub rel: &'a Path,
    pub name: &'a OsStr,
    /// `fstatat(parent, name, AT_SYMLINK_NOFOLLOW)`.
    pub stat: &'a FileStat,
    /// The open directory holding it.
    pub parent: BorrowedFd<'a>,
}

struct Frame<T> {
    dir: File,
    /// Remaining names, in reverse name order (popped from the end).
    names: Vec<OsString>,
    rel: PathBuf,
    ctx: T,
}

/// Walks the tree below the directory `root` depth-first in name order, never following a
/// symlink. `visit` gets each entry and its directory's context, and returns the context to
/// descend into a directory with (None: do not descend; ignored for non-directories).
/// Returns whether some entries could not be read (then they are left out).
pub(crate) fn walk<T>(
    root: &Path,
    root_ctx: T,
    visit: &mut dyn FnMut(&Entry, &T) -> Option<T>,
) -> bool {
    let mut unreadable = Unreadable::default();
    walk_noting(root, root_ctx, visit, &mut unreadable);
    !unreadable.is_empty()
}

/// [`walk`] that notes in `unreadable` which entries could not be read, and why.
pub(crate) fn walk_noting<T>(
    root: &Path,
    root_ctx: T,
    visit: &mut dyn FnMut(&Entry, &T) -> Option<T>,
    unreadable: &mut Unreadable,
) {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let opened = OpenOptions::new().read(true).custom_flags(flags).open(root);
    let first = opened
        .map_err(|e| format!("open: {}", io_reason(&e)))
        .and_then(|d| frame(d, PathBuf::new(), root_ctx));
    let first = match first {
        Ok(f) => f,
        Err(why) => return unreadable.note(Path::new(""), why),
    };
    let mut stack = vec![first];
    loop {
        let depth = stack.len();
        let Some(top) = stack.last_mut() else {
            break;
        };
        let Some(name) = top.names.pop() else {
            stack.pop();
            continue;
        };
        let stat = match fstatat(
            top.dir.as_fd(),
            name.as_os_str(),
            nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
        ) {
            Ok(st) => st,
            Err(nix::errno::Errno::ENOENT) => continue, // removed while we walk
            Err(e) => {
                unreadable.note(&top.rel.join(&name), format!("stat: {e}"));
                continue;
            }
        };
        let rel = top.rel.join(&name);
        let entry = Entry {
            rel: &rel,
            name: &name,
            stat: &stat,
            parent: top.dir.as_fd(),
        };
        let Some(ctx) = visit(&entry, &top.ctx).filter(|_| is_dir(&stat)) else {
            continue;
        };
        if depth >= MAX_DEPTH {
            unreadable.note(&rel, format!("not entered: deeper than {MAX_DEPTH} levels"));
            continue;
        }
        let oflag = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let child = openat(top.dir.as_fd(), name.as_os_str(), oflag, Mode::empty())
            .map_err(|e| format!("open: {e}"));
        let at = rel.clone();
        match child.and_then(|fd| frame(File::from(fd), rel, ctx)) {
            Ok(f) => stack.push(f),
            Err(why) => unreadable.note(&at, why),
        }
    }
}

/// An I/O error as "EACCES: Permission denied" (nix's form), or its text without an errno.
fn io_reason(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(n) => nix::errno::Errno::from_raw(n).to_string(),
        None => e.to_string(),
    }
}

/// A frame for the open directory `dir`, its names read through `/proc/self/fd` (the open
/// directory itself, not a path lookup); why not when it cannot be read.
fn frame<T>(dir: File, rel: PathBuf, ctx: T) -> Result<Frame<T>, String> {
    let reason = |e: std::io::Error| format!("list: {}", io_reason(&e));
    let listing =
        std::fs::read_dir(format!("/proc/self/fd/{}", dir.as_raw_fd())).map_err(reason)?;
    let mut names = listing
        .map(|e| e.map(|e| e.file_name()))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(reason)?;
    names.sort_unstable_by(|a, b| b.cmp(a));
    Ok(Frame {
        dir,
        names,
        rel,
        ctx,
    })
}

#[cfg(test)]
#[path = "listing_tests.rs"]
mod tests;
