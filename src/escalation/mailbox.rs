//! The Escalation Mailbox on the host (spec §3.6, SR-7, SR-10, SR-14): host-private,
//! Domain-scoped dirs in the coordinator's runtime dir; `req/` is bound read-write into the
//! sandbox, `res/` read-only.
//!
//! `req/` is hostile input: anything in the sandbox can put anything there, as fast as it
//! likes. Every poll [`Mailbox::sweep`]s it through one directory fd: each entry is examined
//! with `fstatat(AT_SYMLINK_NOFOLLOW)` and classified by [`classify`] (sans-IO); whatever is
//! not a well-formed record — dot-names other than the client's young temporary files,
//! non-UTF-8 or foreign names, directories, symlinks, FIFOs, sockets, devices, hardlinked or
//! oversize files — is removed with `unlinkat` (a directory fd-relatively, without following
//! anything: [`crate::state::remove::remove_tree_at`]). Records beyond [`MAX_RECORDS`] or
//! [`MAX_HELD_BYTES`] are removed too, so what the mailbox holds between two polls stays under
//! the cap. A record is read once through a descriptor opened relative to the same directory
//! fd without following symlinks, checked again on the descriptor, then removed; what it says
//! is trusted only after the signature checks out.
//!
//! The sweep bounds what the dir holds between polls, not what a sandbox process writes
//! through a file it keeps open after the sweep removed its name: that is bounded by the
//! request dir's own size-limited tmpfs ([`super::mailbox_fs`]), which the coordinator reads
//! through a directory fd ([`Mailbox::reading_through`]).

use super::removed_files::RemovedFiles;
use crate::domain::layout::ensure_private_dir;
use lazaret_protocol::escalation::{request_id_is_valid, MAX_REQUEST_BYTES};
use nix::errno::Errno;
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::sys::stat::{fstat, fstatat, FileStat, Mode, SFlag};
use nix::unistd::{unlinkat, UnlinkatFlags};
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the sandbox sees the mailbox and the Escalation Client.
pub const SANDBOX_MAILBOX: &str = "/run/lazaret/mailbox";
pub const SANDBOX_CLIENT: &str = "/run/lazaret/bin/lazaret-escalate";
/// The Escalation Client again, as the image-paste shim for agents that read the clipboard
/// with these tools (last on `PATH`: an image's own tools come first).
pub const SANDBOX_CLIPBOARD_SHIMS: [&str; 2] =
    ["/run/lazaret/bin/xclip", "/run/lazaret/bin/wl-paste"];

/// `PATH` of commands run in the sandbox: the usual one, then the Escalation Client's dir.
pub const SANDBOX_PATH: &str =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/run/lazaret/bin";

/// What a session's command needs to ask for Host Escalation: its Domain and session, and the
/// session's signing secret (given to this session's processes only).
pub fn session_env(
    domain: &lazaret_protocol::DomainId,
    session: &lazaret_protocol::SessionId,
    anchor: &lazaret_protocol::SessionAnchor,
) -> Vec<(String, String)> {
    vec![
        ("PATH".to_owned(), SANDBOX_PATH.to_owned()),
        ("LAZARET_DOMAIN".to_owned(), domain.as_str().to_owned()),
        ("LAZARET_SESSION".to_owned(), session.as_str().to_owned()),
        (
            "LAZARET_SESSION_ANCHOR".to_owned(),
            String::from(anchor.clone()),
        ),
        ("LAZARET_MAILBOX".to_owned(), SANDBOX_MAILBOX.to_owned()),
    ]
}

/// Most request records kept from one poll to the next; more are removed unread.
pub const MAX_RECORDS: usize = 64;
/// Most bytes of records (and client temporary files) kept in `req/` between two polls.
pub const MAX_HELD_BYTES: u64 = 1024 * 1024;
/// Most entries removed in one poll (the rest go in the next ones), so that a flood delays
/// well-formed records by a bounded time instead of starving them.
pub const SWEEP_BUDGET: usize = 4096;
/// How long the client's temporary file `.<id>.tmp` may exist before its rename.
pub const TMP_GRACE: Duration = Duration::from_secs(5);

/// What one entry of `req/` is, as far as its name and `fstatat` (no symlink followed) say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryFacts {
    pub kind: EntryKind,
    pub size: u64,
    pub nlink: u64,
    /// Since its last modification (zero if in the future).
    pub age: Duration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    Regular,
    Directory,
    Symlink,
    /// FIFO, socket, character or block device.
    Special,
}

/// What the sweep does with an entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `<request_id>.json`: a request record to take (named by the request ID it must carry).
    Record,
    /// `.<request_id>.tmp`: the client is writing it; kept for [`TMP_GRACE`].
    InFlight,
    /// Removed, for this reason (logged).
    Junk(&'static str),
}

/// Classifies one entry of `req/` (pure: its name and what `fstatat` said).
pub fn classify(name: &[u8], facts: &EntryFacts) -> Verdict {
    let Ok(name) = std::str::from_utf8(name) else {
        return Verdict::Junk("a name that is not UTF-8");
    };
    let record = name.strip_suffix(".json").is_some_and(request_id_is_valid);
    let tmp = name
        .strip_prefix('.')
        .and_then(|n| n.strip_suffix(".tmp"))
        .is_some_and(request_id_is_valid);
    if !record && !tmp {
        return Verdict::Junk("a name that is neither <request id>.json nor .<request id>.tmp");
    }
    match facts.kind {
        EntryKind::Regular => {}
        EntryKind::Directory => return Verdict::Junk("a directory"),
        EntryKind::Symlink => return Verdict::Junk("a symlink"),
        EntryKind::Special => return Verdict::Junk("not a regular file (FIFO, socket, device)"),
    }
    if facts.nlink != 1 {
        return Verdict::Junk("a hardlinked file");
    }
    if facts.size > MAX_REQUEST_BYTES as u64 {
        return Verdict::Junk("over the size a request may have");
    }
    if record {
        Verdict::Record
    } else if facts.age <= TMP_GRACE {
        Verdict::InFlight
    } else {
        Verdict::Junk("a temporary file never renamed into place")
    }
}

/// What one sweep of `req/` found and did.
#[derive(Debug, Default)]
pub struct Sweep {
    /// Request records to take, oldest first.
    pub records: Vec<String>,
    /// Entries removed (junk, or over the caps).
    pub removed: usize,
    /// Entries left for the next poll (over [`SWEEP_BUDGET`]).
    pub deferred: usize,
    /// Bytes of the records and temporary files kept.
    pub held_bytes: u64,
    /// Why entries were removed, with how many each (for one log line per poll).
    pub reasons: Vec<(&'static str, usize)>,
    /// The first [`NAMED_PER_SWEEP`] entries removed, by name (lossy UTF-8) and reason: logged
    /// one by one, the rest only counted, so a flood cannot flood the host's log either.
    pub named: Vec<(String, &'static str)>,
}

/// Entries removed in one sweep that are logged by name.
pub const NAMED_PER_SWEEP: usize = 16;

impl Sweep {
    fn note(&mut self, name: &OsStr, why: &'static str) {
        self.removed += 1;
        if self.named.len() < NAMED_PER_SWEEP {
            self.named.push((name.to_string_lossy().into_owned(), why));
        }
        match self.reasons.iter_mut().find(|(r, _)| *r == why) {
            Some((_, n)) => *n += 1,
            None => self.reasons.push((why, 1)),
        }
    }
}

fn facts_of(st: &FileStat) -> EntryFacts {
    let fmt = SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT;
    let kind = if fmt == SFlag::S_IFREG {
        EntryKind::Regular
    } else if fmt == SFlag::S_IFDIR {
        EntryKind::Directory
    } else if fmt == SFlag::S_IFLNK {
        EntryKind::Symlink
    } else {
        EntryKind::Special
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mtime = Duration::new(
        u64::try_from(st.st_mtime).unwrap_or(0),
        u32::try_from(st.st_mtime_nsec).unwrap_or(0),
    );
    EntryFacts {
        kind,
        size: u64::try_from(st.st_size).unwrap_or(u64::MAX),
        nlink: st.st_nlink,
        age: now.saturating_sub(mtime),
    }
}

/// Read-only directory opening that never follows a symlink.
fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

/// Removes `name` from `dir` without following it: a file, symlink or special file is
/// unlinked, a directory removed fd-relatively with everything in it.
/// A regular file is emptied first and kept in `removed` (emptied again at later sweeps).
fn remove_entry(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    kind: EntryKind,
    removed: &mut RemovedFiles,
) -> anyhow::Result<()> {
    if kind == EntryKind::Directory {
        return crate::state::remove::remove_tree_at(dir, name);
    }
    if kind == EntryKind::Regular {
        if let Some(fd) = empty_file(dir, name) {
            removed.keep(fd, std::time::Instant::now());
        }
    }
    match unlinkat(dir, name, UnlinkatFlags::NoRemoveDir) {
        Ok(()) | Err(Errno::ENOENT) => Ok(()),
        // Swapped for a directory since it was examined: remove that instead.
        Err(Errno::EISDIR) => crate::state::remove::remove_tree_at(dir, name),
        Err(e) => Err(e.into()),
    }
}

/// Empties the regular file `name` before it is unlinked (best effort). runsc keeps files the
/// host removed open in its dentry cache (about a thousand per mount) until a lookup inside
/// or eviction; emptied, they pin an inode each but no pages of the request dir's tmpfs, so
/// files the sandbox wrote and closed do not keep that space from later requests. Opened
/// write-only without following a symlink, without blocking (a FIFO swapped in), and checked
/// on the descriptor to be a regular file; a file the coordinator may not write is left as it is.
/// Returns the descriptor of the emptied file.
fn empty_file(dir: BorrowedFd<'_>, name: &OsStr) -> Option<OwnedFd> {
    let flags = OFlag::O_WRONLY
        | OFlag::O_NOFOLLOW
        | OFlag::O_NONBLOCK
        | OFlag::O_NOCTTY
        | OFlag::O_CLOEXEC;
    let fd = openat(dir, name, flags, Mode::empty()).ok()?;
    if !fstat(fd.as_fd()).is_ok_and(|st| facts_of(&st).kind == EntryKind::Regular) {
        return None;
    }
    let _ = nix::unistd::ftruncate(&fd, 0);
    Some(fd)
}

#[derive(Clone, Debug)]
pub struct Mailbox {
    pub req: PathBuf,
    pub res: PathBuf,
    /// The request dir as the coordinator reads it: its own tmpfs in podman's namespace
    /// ([`super::mailbox_fs`]); `None` only for a plain dir (unit tests), opened by path.
    req_dir: Option<std::sync::Arc<OwnedFd>>,
    /// Files removed lately, emptied again at each sweep ([`RemovedFiles`]).
    removed: std::sync::Arc<std::sync::Mutex<RemovedFiles>>,
}

impl Mailbox {
    /// The Domain's mailbox under its runtime dir (as [`Mailbox::prepare`] made it).
    pub fn at(runtime_dir: &Path) -> Mailbox {
        let root = runtime_dir.join("mailbox");
        Mailbox {
            req: root.join("req"),
            res: root.join("res"),
            req_dir: None,
            removed: Default::default(),
        }
    }

    /// The same mailbox, its request dir read through `dir` (the verified fd of its tmpfs,
    /// from [`super::mailbox_fs::mount`]).
    pub fn reading_through(mut self, dir: OwnedFd) -> Mailbox {
        self.req_dir = Some(std::sync::Arc::new(dir));
        self
    }

    /// The request dir, open: the tmpfs fd when there is one, else the dir by path.
    pub fn open_req(&self) -> anyhow::Result<OwnedFd> {
        match &self.req_dir {
            Some(dir) => Ok(dir.try_clone()?),
            None => open_dir(&self.req),
        }
    }

    /// The Domain's mailbox under its runtime dir, created host-private and emptied of
    /// everything an earlier sandbox left (fd-relatively, nothing followed).
    pub fn prepare(runtime_dir: &Path) -> anyhow::Result<Mailbox> {
        let root = runtime_dir.join("mailbox");
        let mb = Mailbox::at(runtime_dir);
        for d in [&root, &mb.req, &mb.res] {
            ensure_private_dir(d)?;
        }
        for d in [&mb.req, &mb.res] {
            let fd = open_dir(d)?;
            for name in crate::state::remove::list_dir(fd.as_fd())? {
                crate::state::remove::remove_tree_at(fd.as_fd(), &name)?;
            }
        }
        Ok(mb)
    }

    /// One poll's look at `req/`: removes junk and whatever is over the caps (at most
    /// [`SWEEP_BUDGET`] entries), and names the records to take.
    pub fn sweep(&self) -> anyhow::Result<Sweep> {
        let dir = self.open_req()?;
        let mut removed = self.removed();
        removed.empty_again(std::time::Instant::now());
        Ok(sweep_dir(dir.as_fd(), SWEEP_BUDGET, &mut removed))
    }

    fn removed(&self) -> std::sync::MutexGuard<'_, RemovedFiles> {
        self.removed.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads the record `name` once and removes it: opened relative to the request dir
    /// without following a symlink, and on the open descriptor a regular file with one link,
    /// at most `max` bytes. Whatever it is, it is gone afterwards.
    pub fn take(&self, name: &str, max: usize) -> Result<Vec<u8>, String> {
        let dir = self
            .open_req()
            .map_err(|e| format!("cannot open the request dir: {e}"))?;
        let result = read_record(dir.as_fd(), OsStr::new(name), max);
        let kind = match fstatat(dir.as_fd(), name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => facts_of(&st).kind,
            Err(_) => return result,
        };
        if let Err(e) = remove_entry(dir.as_fd(), OsStr::new(name), kind, &mut self.removed()) {
            tracing::warn!(record = name, "removing an escalation record: {e:#}");
        }
        result
    }

    /// Delivers a result by atomic rename.
    pub fn deliver(&self, request_id: &str, bytes: &[u8]) -> std::io::Result<()> {
        let tmp = self.res.join(format!(".{request_id}.tmp"));
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, self.res.join(format!("{request_id}.json")))
    }

    /// Removes results older than `age` (their clients have read them or given up).
    pub fn forget_old_results(&self, age: std::time::Duration) {
        for e in std::fs::read_dir(&self.res).into_iter().flatten().flatten() {
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|d| d > age);
            if old {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Opens a mailbox dir (host-private, made by [`Mailbox::prepare`]) without following a symlink.
fn open_dir(path: &Path) -> anyhow::Result<OwnedFd> {
    Ok(nix::fcntl::open(path, dir_flags(), Mode::empty())?)
}

/// [`Mailbox::sweep`] on an open directory, removing at most `budget` entries.
fn sweep_dir(dir: BorrowedFd<'_>, budget: usize, removed: &mut RemovedFiles) -> Sweep {
    let mut out = Sweep::default();
    let names = match crate::state::remove::list_dir(dir) {
        Ok(n) => n,
        Err(e) => {
            tracing::error!("listing the escalation request dir: {e:#}");
            return out;
        }
    };
    let mut records: Vec<(Duration, OsString, u64)> = Vec::new();
    for name in names {
        if out.removed >= budget {
            out.deferred += 1;
            continue;
        }
        let st = match fstatat(dir, name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(_) => continue,
        };
        let facts = facts_of(&st);
        let verdict = classify(name.as_bytes(), &facts);
        let why = match verdict {
            Verdict::Junk(why) => why,
            _ if out.held_bytes + facts.size > MAX_HELD_BYTES => "over the mailbox's byte cap",
            Verdict::Record if records.len() >= MAX_RECORDS => "over the mailbox's record cap",
            Verdict::Record => {
                out.held_bytes += facts.size;
                records.push((facts.age, name, facts.size));
                continue;
            }
            Verdict::InFlight => {
                out.held_bytes += facts.size;
                continue;
            }
        };
        match remove_entry(dir, &name, facts.kind, removed) {
            Ok(()) => out.note(&name, why),
            Err(e) => {
                out.note(&name, why);
                tracing::warn!("removing junk from the escalation request dir: {e:#}");
            }
        }
    }
    // Oldest first: a flood of fresh records does not push an older one out of turn.
    records.sort_by_key(|r| std::cmp::Reverse(r.0));
    out.records = records
        .into_iter()
        .filter_map(|(_, n, _)| n.into_string().ok())
        .collect();
    out
}

/// Reads `name` in `dir` once: no symlink followed, no blocking open (FIFO), then on the
/// descriptor a regular file with one link and at most `max` bytes.
fn read_record(dir: BorrowedFd<'_>, name: &OsStr, max: usize) -> Result<Vec<u8>, String> {
    let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    let fd = match openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::ELOOP) => return Err("a symlink".to_owned()),
        Err(e) => return Err(format!("cannot open: {e}")),
    };
    let facts = match fstat(fd.as_fd()) {
        Ok(st) => facts_of(&st),
        Err(e) => return Err(format!("cannot inspect: {e}")),
    };
    if facts.kind != EntryKind::Regular {
        return Err("not a regular file".to_owned());
    }
    if facts.nlink != 1 {
        return Err("a hardlinked file".to_owned());
    }
    if facts.size > max as u64 {
        return Err(format!("{} bytes, over {max}", facts.size));
    }
    let mut bytes = Vec::new();
    match std::fs::File::from(fd)
        .take(max as u64 + 1)
        .read_to_end(&mut bytes)
    {
        Ok(_) if bytes.len() > max => Err(format!("over {max} bytes")),
        Ok(_) => Ok(bytes),
        Err(e) => Err(format!("cannot read: {e}")),
    }
}

#[cfg(test)]
#[path = "mailbox_tests.rs"]
mod tests;
