//! Crash-consistent generations of a State Anchor's upper dir (OR-5, SR-14; protocol notes
//! "Crash-consistent reset"). Layout of `<Domain Root>/anchors/<name>/`:
//!
//! ```text
//! anchor.json              {"container": "/usr"}  (written atomically: tmp + rename)
//! gen-<n>/upper gen-<n>/work                      (n = 1, 2, …)
//! current -> gen-<n>       (one component: the commit point of a reset is its rename)
//! gen-<n>.tmp/ current.tmp (leftovers of an interrupted reset)
//! ```
//!
//! A reset builds an empty generation aside, then atomically repoints `current`, then removes
//! the rest: a crash leaves either the old generation or the new empty one current, never a
//! mix. Every operation is relative to the anchor dir's fd and follows no symlink: the only
//! link read is `current`, as text, and the generation it names is opened with `O_NOFOLLOW`.

use super::remove::{dir_flags, list_dir, remove_tree_at};
use anyhow::{bail, Context};
use nix::errno::Errno;
use nix::fcntl::{openat, readlinkat, renameat, renameat2, AtFlags, OFlag, RenameFlags};
use nix::sys::signal::{kill, Signal};
use nix::sys::stat::{fstatat, mkdirat, Mode, SFlag};
use nix::unistd::{fsync, symlinkat, Pid};
use serde::{Deserialize, Serialize};
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

const CURRENT: &str = "current";
const CURRENT_TMP: &str = "current.tmp";
const META: &str = "anchor.json";
const META_TMP: &str = "anchor.json.tmp";
const UPPER: &str = "upper";
const WORK: &str = "work";
/// The environment variable naming the [`Step`] at which [`fault_from_env`] kills the process.
pub const KILL_AT_ENV: &str = "LAZARET_TEST_KILL_AT";

/// A State Anchor's directory (the `<name>` dir), opened once: every later operation is
/// relative to this fd, so a symlink swapped in for a path component cannot redirect it.
#[derive(Debug)]
pub struct AnchorDir {
    fd: OwnedFd,
    path: PathBuf,
}

/// The steps of a reset, in order; each is passed to the fault hook just before it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    CreateTmp,
    RenameTmp,
    LinkTmp,
    Commit,
    Collect,
}

impl Step {
    pub const ALL: [Step; 5] = [
        Step::CreateTmp,
        Step::RenameTmp,
        Step::LinkTmp,
        Step::Commit,
        Step::Collect,
    ];

    /// The name used in [`KILL_AT_ENV`].
    pub fn name(self) -> &'static str {
        ["create-tmp", "rename-tmp", "link-tmp", "commit", "collect"][self as usize]
    }

    pub fn from_name(name: &str) -> Option<Step> {
        Step::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// A fault hook from the environment: when `LAZARET_TEST_KILL_AT=<step name>` is set, kills
/// this process with SIGKILL just before that step (the fault-injection test's real kill).
/// Otherwise a no-op.
pub fn fault_from_env() -> Box<dyn Fn(Step)> {
    let at = std::env::var(KILL_AT_ENV)
        .ok()
        .and_then(|v| Step::from_name(&v));
    match at {
        Some(at) => Box::new(move |step| {
            if step == at {
                let _ = kill(Pid::this(), Signal::SIGKILL);
                std::process::abort();
            }
        }),
        None => Box::new(|_| {}),
    }
}

#[derive(Serialize, Deserialize)]
struct Meta {
    container: PathBuf,
}

impl AnchorDir {
    /// Opens `dir` with `O_DIRECTORY|O_NOFOLLOW` (refuses a symlinked anchor dir), creating it
    /// (0700) when `create`; its parent must exist.
    pub fn open(dir: &Path, create: bool) -> anyhow::Result<AnchorDir> {
        if create {
            match nix::unistd::mkdir(dir, Mode::from_bits_truncate(0o700)) {
                Ok(()) | Err(Errno::EEXIST) => {}
                Err(e) => return Err(e).with_context(|| format!("creating {}", dir.display())),
            }
        }
        let fd = nix::fcntl::open(dir, dir_flags(), Mode::empty()).with_context(|| {
            format!(
                "opening the State Anchor dir {} (it must be a directory, not a symlink)",
                dir.display()
            )
        })?;
        Ok(AnchorDir {
            fd,
            path: dir.to_path_buf(),
        })
    }

    /// The anchor dir's path, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Brings the dir to a valid state and returns the current generation:
    /// - a valid `current` (a symlink whose target is exactly `gen-<n>`, a directory holding
    ///   `upper` and `work` directories) is kept; a missing `work` alone is recreated (it holds
    ///   nothing of the user's, and the upper must not be lost for it);
    /// - else the old layout (`upper` directly in the dir) is moved into a new generation;
    /// - else a fresh empty generation (max existing n + 1) is created and committed;
    ///
    /// then `*.tmp` entries and every other `gen-<m>` are removed.
    pub fn recover(&self) -> anyhow::Result<u64> {
        let n = match self.valid_current(true)? {
            Some(n) => n,
            None if kind(self.fd.as_fd(), UPPER)? == Some(SFlag::S_IFDIR) => self.migrate()?,
            None => self.new_generation(&|_| {})?,
        };
        self.collect(n)?;
        Ok(n)
    }

    /// The current generation, if `current` is valid; changes nothing.
    pub fn current_generation(&self) -> anyhow::Result<Option<u64>> {
        self.valid_current(false)
    }

    /// The current generation's `upper` and `work` paths (after [`AnchorDir::recover`]). They
    /// name `gen-<n>` itself, not `current`, so a mount keeps its generation whatever happens
    /// to the link.
    pub fn current_paths(&self) -> anyhow::Result<(PathBuf, PathBuf)> {
        let Some(n) = self.valid_current(false)? else {
            bail!(
                "State Anchor dir {} has no valid current generation",
                self.path.display()
            );
        };
        let g = self.path.join(gen_name(n));
        Ok((g.join(UPPER), g.join(WORK)))
    }

    /// Reset: a new empty generation becomes current (the commit point is the rename of
    /// `current.tmp` over `current`), then the old ones are removed. The dir is recovered
    /// first. `fault` sees each [`Step`] before it runs (fault-injection tests stop there).
    pub fn reset(&self, fault: &dyn Fn(Step)) -> anyhow::Result<u64> {
        self.recover()?;
        let n = self.new_generation(fault)?;
        fault(Step::Collect);
        self.collect(n)?;
        Ok(n)
    }

    /// Structural check without changing anything: the problems found (empty = fine).
    pub fn verify(&self) -> Vec<String> {
        let mut problems = Vec::new();
        match self.container() {
            Ok(Some(_)) => {}
            Ok(None) => problems.push(format!("{META} is missing")),
            Err(e) => problems.push(format!("{e:#}")),
        }
        let current = match self
            .read_current()
            .unwrap_or_else(|e| Err(format!("{e:#}")))
        {
            Ok(n) => Some(n),
            Err(problem) => {
                problems.push(problem);
                None
            }
        };
        if let Some(n) = current {
            self.check_gen(n, &mut problems);
        }
        let names = list_dir(self.fd.as_fd()).unwrap_or_else(|e| {
            problems.push(format!("listing {}: {e:#}", self.path.display()));
            Vec::new()
        });
        for name in names {
            let shown = name.to_string_lossy();
            if shown.ends_with(".tmp") {
                problems.push(format!("leftover of an interrupted operation: {shown}"));
            } else if let Some(m) = parse_gen(&name) {
                if Some(m) != current {
                    problems.push(format!("generation {shown} is not current"));
                }
            } else if name == UPPER || name == WORK {
                problems.push(format!("`{shown}` of the old layout (not migrated yet)"));
            } else if name != CURRENT && name != META {
                problems.push(format!("unexpected entry {shown}"));
            }
        }
        problems
    }

    /// The container path this anchor persists, from `anchor.json` (None when missing).
    pub fn container(&self) -> anyhow::Result<Option<PathBuf>> {
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let fd = match openat(self.fd.as_fd(), META, flags, Mode::empty()) {
            Err(Errno::ENOENT) => return Ok(None),
            r => r.with_context(|| format!("opening {META} (a symlink?)"))?,
        };
        let mut text = String::new();
        std::fs::File::from(fd)
            .read_to_string(&mut text)
            .with_context(|| format!("reading {META}"))?;
        let meta: Meta = serde_json::from_str(&text).with_context(|| format!("parsing {META}"))?;
        if !meta.container.is_absolute() {
            bail!(
                "{META}: {} is not an absolute path",
                meta.container.display()
            );
        }
        Ok(Some(meta.container))
    }

    /// Writes `anchor.json` atomically (tmp, fsync, rename, fsync of the dir).
    pub fn write_container(&self, container: &Path) -> anyhow::Result<()> {
        if !container.is_absolute() {
            bail!("{} is not an absolute path", container.display());
        }
        let json = serde_json::to_string(&Meta {
            container: container.to_path_buf(),
        })?;
        remove_tree_at(self.fd.as_fd(), OsStr::new(META_TMP))?;
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW;
        let flags = flags | OFlag::O_CLOEXEC;
        let fd = openat(self.fd.as_fd(), META_TMP, flags, mode(0o600))
            .with_context(|| format!("creating {META_TMP}"))?;
        let mut file = std::fs::File::from(fd);
        file.write_all(format!("{json}\n").as_bytes())?;
        file.sync_all()?;
        renameat(self.fd.as_fd(), META_TMP, self.fd.as_fd(), META)
            .with_context(|| format!("renaming {META_TMP}"))?;
        Ok(fsync(self.fd.as_fd())?)
    }

    /// `n` when `current` is valid; with `repair`, a missing `work` is recreated first.
    fn valid_current(&self, repair: bool) -> anyhow::Result<Option<u64>> {
        let Ok(n) = self.read_current()? else {
            return Ok(None);
        };
        let g = match open_dir(self.fd.as_fd(), &gen_name(n)) {
            Err(Errno::ENOENT | Errno::ELOOP | Errno::ENOTDIR) => return Ok(None),
            r => r.with_context(|| format!("opening {}", gen_name(n)))?,
        };
        let dir = Some(SFlag::S_IFDIR);
        if kind(g.as_fd(), UPPER)? != dir {
            return Ok(None);
        }
        match kind(g.as_fd(), WORK)? {
            k if k == dir => Ok(Some(n)),
            None if repair => {
                mkdirat(g.as_fd(), WORK, mode(0o700)).context("recreating work")?;
                fsync(g.as_fd())?;
                Ok(Some(n))
            }
            _ => Ok(None),
        }
    }

    /// The generation `current` names (it may not exist), else what is wrong with `current`.
    fn read_current(&self) -> anyhow::Result<Result<u64, String>> {
        match readlinkat(self.fd.as_fd(), CURRENT) {
            Ok(t) => {
                Ok(parse_gen(&t).ok_or(format!("`{CURRENT}` points to {t:?}, not to a gen-<n>")))
            }
            Err(Errno::ENOENT) => Ok(Err(format!("`{CURRENT}` is missing"))),
            Err(Errno::EINVAL) => Ok(Err(format!("`{CURRENT}` is not a symlink"))),
            Err(e) => Err(e).with_context(|| format!("reading `{CURRENT}`")),
        }
    }

    /// Old layout → `gen-<n>`. `current` is committed while the generation still lacks its
    /// upper (so it stays invalid), and moving `upper` in is the last step: at every instant
    /// either `upper` is still at the top (recovery migrates again) or the generation is whole.
    fn migrate(&self) -> anyhow::Result<u64> {
        let n = self.next_number()?;
        let name = gen_name(n);
        let top = self.fd.as_fd();
        mkdirat(top, name.as_str(), mode(0o700)).with_context(|| format!("creating {name}"))?;
        let g = open_dir(top, &name)?;
        if kind(top, WORK)? == Some(SFlag::S_IFDIR) {
            renameat(top, WORK, g.as_fd(), WORK).context("moving work")?;
        } else {
            remove_tree_at(top, OsStr::new(WORK))?;
            mkdirat(g.as_fd(), WORK, mode(0o700)).context("creating work")?;
        }
        fsync(g.as_fd())?;
        fsync(top)?;
        self.commit(n, &|_| {})?;
        renameat(top, UPPER, g.as_fd(), UPPER).context("moving upper")?;
        fsync(g.as_fd())?;
        fsync(top)?;
        Ok(n)
    }

    /// Steps CreateTmp to Commit: `gen-<n>` is built as `gen-<n>.tmp`, renamed into place
    /// (never over an existing one), then made current.
    fn new_generation(&self, fault: &dyn Fn(Step)) -> anyhow::Result<u64> {
        let n = self.next_number()?;
        let (name, tmp) = (gen_name(n), format!("{}.tmp", gen_name(n)));
        let top = self.fd.as_fd();
        fault(Step::CreateTmp);
        mkdirat(top, tmp.as_str(), mode(0o700)).with_context(|| format!("creating {tmp}"))?;
        let t = open_dir(top, &tmp)?;
        for (sub, m) in [(UPPER, 0o755), (WORK, 0o700)] {
            mkdirat(t.as_fd(), sub, mode(m)).with_context(|| format!("creating {tmp}/{sub}"))?;
            fsync(open_dir(t.as_fd(), sub)?)?;
        }
        fsync(t.as_fd())?;
        fault(Step::RenameTmp);
        rename_noreplace(top, &tmp, &name)?;
        fsync(top)?;
        self.commit(n, fault)?;
        Ok(n)
    }

    /// Steps LinkTmp and Commit: `current.tmp -> gen-<n>` renamed over `current`.
    fn commit(&self, n: u64, fault: &dyn Fn(Step)) -> anyhow::Result<()> {
        let top = self.fd.as_fd();
        fault(Step::LinkTmp);
        remove_tree_at(top, OsStr::new(CURRENT_TMP))?;
        symlinkat(gen_name(n).as_str(), top, CURRENT_TMP).context("creating current.tmp")?;
        fault(Step::Commit);
        if kind(top, CURRENT)? == Some(SFlag::S_IFDIR) {
            // Not ours (a link never is a directory), and a rename cannot replace it.
            remove_tree_at(top, OsStr::new(CURRENT))?;
        }
        renameat(top, CURRENT_TMP, top, CURRENT).context("committing current")?;
        Ok(fsync(top)?)
    }

    /// Removes `*.tmp` leftovers and every generation but `keep`.
    fn collect(&self, keep: u64) -> anyhow::Result<()> {
        let top = self.fd.as_fd();
        for name in list_dir(top)? {
            let stale = match parse_gen(&name) {
                Some(m) => m != keep,
                None => name.to_string_lossy().ends_with(".tmp"),
            };
            if stale {
                remove_tree_at(top, &name)
                    .with_context(|| format!("removing {}", self.path.join(&name).display()))?;
            }
        }
        Ok(fsync(top)?)
    }

    /// One more than any generation number in use (entries, leftovers, `current`'s target).
    fn next_number(&self) -> anyhow::Result<u64> {
        let mut max = self.read_current()?.unwrap_or(0);
        for name in list_dir(self.fd.as_fd())? {
            let text = name.to_string_lossy();
            let base = text.strip_suffix(".tmp").unwrap_or(&text);
            if let Some(n) = parse_gen(OsStr::new(base)) {
                max = max.max(n);
            }
        }
        max.checked_add(1).context("generation numbers exhausted")
    }

    /// Reports what is wrong with the generation `current` names.
    fn check_gen(&self, n: u64, problems: &mut Vec<String>) {
        let name = gen_name(n);
        let mut check = |dir: BorrowedFd<'_>, shown: String, entry: &str| {
            let problem = match kind(dir, entry) {
                Ok(Some(SFlag::S_IFDIR)) => return true,
                Ok(None) => format!("{shown} is missing"),
                Ok(Some(SFlag::S_IFLNK)) => format!("{shown} is a symlink, not a directory"),
                Ok(Some(_)) => format!("{shown} is not a directory"),
                Err(e) => format!("{e:#}"),
            };
            problems.push(problem);
            false
        };
        if !check(self.fd.as_fd(), format!("`{CURRENT}` target {name}"), &name) {
            return;
        }
        match open_dir(self.fd.as_fd(), &name) {
            Ok(g) => {
                for sub in [UPPER, WORK] {
                    check(g.as_fd(), format!("{name}/{sub}"), sub);
                }
            }
            Err(e) => problems.push(format!("opening {name}: {e}")),
        }
    }
}

/// `gen-<n>` → n, for a positive decimal n without leading zeros (one spelling per number).
fn parse_gen(name: &OsStr) -> Option<u64> {
    let digits = name.to_str()?.strip_prefix("gen-")?;
    if digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn gen_name(n: u64) -> String {
    format!("gen-{n}")
}

fn mode(bits: u32) -> Mode {
    Mode::from_bits_truncate(bits)
}

/// The file type of `name` in `dir`, without following a symlink (None when missing).
fn kind(dir: BorrowedFd<'_>, name: &str) -> anyhow::Result<Option<SFlag>> {
    match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT)),
        Err(Errno::ENOENT) => Ok(None),
        Err(e) => Err(e).with_context(|| format!("examining {name}")),
    }
}

/// Opens the directory `name` of `dir` read-only, refusing a symlink.
fn open_dir(dir: BorrowedFd<'_>, name: &str) -> nix::Result<OwnedFd> {
    openat(dir, name, dir_flags(), Mode::empty())
}

/// `renameat2(RENAME_NOREPLACE)`; where the file system lacks it (EINVAL), a checked plain
/// rename (only this process creates generation numbers above the existing ones).
fn rename_noreplace(dir: BorrowedFd<'_>, from: &str, to: &str) -> anyhow::Result<()> {
    match renameat2(dir, from, dir, to, RenameFlags::RENAME_NOREPLACE) {
        Err(Errno::EINVAL) => {
            if fstatat(dir, to, AtFlags::AT_SYMLINK_NOFOLLOW).is_ok() {
                bail!("{to} already exists");
            }
            renameat(dir, from, dir, to).with_context(|| format!("renaming {from} to {to}"))
        }
        r => r.with_context(|| format!("renaming {from} to {to}")),
    }
}

#[cfg(test)]
#[path = "generations_tests.rs"]
mod tests;
