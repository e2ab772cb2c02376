//! The Escalation Mailbox's request dir on a file system of its own (SR-7, SR-14; FR-7): a
//! tmpfs of [`REQ_FS_BYTES`] and [`REQ_FS_INODES`], so that nothing the sandbox writes into
//! `req/` can take more than that from the host — not even a file it keeps open after the sweep
//! removed its name and then writes through the descriptor (the sweep cannot bound that; the
//! write fails with `ENOSPC` at the cap).
//!
//! A rootless user cannot mount on the host, so the tmpfs is mounted inside podman's rootless
//! user+mount namespace (where podman resolves bind sources, as for the State Anchors) at the
//! request dir's own path, before the sandbox starts. The host's directory underneath stays
//! empty. The coordinator reaches the tmpfs through a directory fd: the mount helper
//! (`podman unshare lazaret __state-anchor`) mounts, prints its pid and waits; the coordinator
//! opens `/proc/<pid>/root/<req dir>` (`O_DIRECTORY|O_NOFOLLOW`), checks with `fstatfs` that it
//! is a tmpfs of exactly this size and inode count, then lets the helper exit. The fd keeps
//! the coordinator's view valid for the whole run. At teardown and in recovery the tmpfs is
//! detached (every mount stacked there: recovery never assumes a mount vanished); a new mount
//! likewise first detaches whatever an interrupted run left.

use crate::runtime::podman::Podman;
use crate::runtime::state_anchor_ns::NsRequest;
use anyhow::{bail, Context};
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use std::io::{BufRead, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// Bytes the request dir may hold, held-open deleted files included (its tmpfs `size=`).
/// Above the sweep's [`super::mailbox::MAX_HELD_BYTES`], so records are never squeezed out
/// between two polls by what the sweep keeps.
pub const REQ_FS_BYTES: u64 = 8 * 1024 * 1024;
/// Files and directories the request dir may hold at once (its tmpfs `nr_inodes=`; the root
/// takes one). Above the sweep's [`super::mailbox::MAX_RECORDS`].
pub const REQ_FS_INODES: u64 = 2048;

/// The tmpfs mount options (owner: the namespace's root, i.e. the developer on the host).
pub fn mount_options() -> String {
    format!("size={REQ_FS_BYTES},nr_inodes={REQ_FS_INODES},mode=0700")
}

/// The request dir of the Domain whose runtime dir is `runtime_dir`.
pub fn req_path(runtime_dir: &Path) -> PathBuf {
    super::mailbox::Mailbox::at(runtime_dir).req
}

/// What `fstatfs` says about a file system, the facts checked here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FsFacts {
    pub is_tmpfs: bool,
    pub bytes: u64,
    pub inodes: u64,
}

/// Whether `facts` describe the request dir's tmpfs (pure).
pub fn check(facts: FsFacts) -> Result<(), String> {
    if !facts.is_tmpfs {
        return Err("not a tmpfs".to_owned());
    }
    if facts.bytes != REQ_FS_BYTES || facts.inodes != REQ_FS_INODES {
        return Err(format!(
            "a tmpfs of {} bytes and {} inodes, not {REQ_FS_BYTES} and {REQ_FS_INODES}",
            facts.bytes, facts.inodes
        ));
    }
    Ok(())
}

/// [`check`] of the file system of `dir`.
pub fn verify(dir: BorrowedFd<'_>) -> anyhow::Result<()> {
    let st = nix::sys::statfs::fstatfs(dir).context("fstatfs of the request dir")?;
    let facts = FsFacts {
        is_tmpfs: st.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC,
        bytes: st.blocks().saturating_mul(st.block_size() as u64),
        inodes: st.files(),
    };
    check(facts).map_err(|e| anyhow::anyhow!("the request dir is {e}"))
}

/// Host side: mounts the request dir's tmpfs in podman's namespace and returns a directory fd
/// of it, verified. The host dir `req` must exist (made by [`super::mailbox::Mailbox::prepare`]).
pub fn mount(podman: &Podman, runtime_dir: &Path) -> anyhow::Result<OwnedFd> {
    let step = "mounting the Escalation Mailbox's request dir";
    let target = req_path(runtime_dir);
    let json = serde_json::to_string(&NsRequest::MailboxMount {
        target: target.clone(),
    })?;
    let exe = crate::runtime::state_anchor::lazaret_binary()?;
    let mut child = podman
        .command([
            std::ffi::OsStr::new("unshare"),
            exe.as_os_str(),
            std::ffi::OsStr::new("__state-anchor"),
            std::ffi::OsStr::new(&json),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("{step}: cannot run podman (see `lazaret doctor`)"))?;
    let mut line = String::new();
    if let Some(out) = child.stdout.as_mut() {
        std::io::BufReader::new(out)
            .read_line(&mut line)
            .with_context(|| format!("{step}: reading the helper's answer"))?;
    }
    let opened = line
        .trim()
        .parse::<u32>()
        .map_err(|_| anyhow::anyhow!("the helper said {line:?}"))
        .and_then(|pid| open_in(pid, &target));
    // The helper exits once its stdin closes; the fd (if any) keeps the view.
    drop(child.stdin.take());
    let out = child
        .wait_with_output()
        .with_context(|| format!("{step}: waiting for the helper"))?;
    let dir = match opened {
        Ok(dir) => dir,
        Err(e) => bail!(
            "{step}: {e:#} ({}). The sandbox is not started without it: rootless podman must \
             be able to mount a tmpfs in its user namespace (check with `podman unshare mount \
             -t tmpfs none <dir>`; see `lazaret doctor`)",
            crate::runtime::podman::describe_failure(&out)
        ),
    };
    if !out.status.success() {
        bail!("{step}: {}", crate::runtime::podman::describe_failure(&out));
    }
    Ok(dir)
}

/// Opens `target` as the process `pid` sees it (its root: podman's mount namespace) and
/// verifies it is the request dir's tmpfs.
fn open_in(pid: u32, target: &Path) -> anyhow::Result<OwnedFd> {
    let rel = target.strip_prefix("/").unwrap_or(target);
    let path = PathBuf::from(format!("/proc/{pid}/root")).join(rel);
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = nix::fcntl::open(&path, flags, Mode::empty())
        .with_context(|| format!("opening {}", path.display()))?;
    verify(fd.as_fd()).with_context(|| format!("checking {}", path.display()))?;
    Ok(fd)
}

/// Namespace side: a fresh tmpfs at `target` (whatever an interrupted run left there detached
/// first), then this process's pid on stdout, then wait until stdin closes.
pub fn ns_mount_and_hold(target: &Path) -> anyhow::Result<i32> {
    crate::runtime::state_anchor_ns::detach_all(target)?;
    let flags = nix::mount::MsFlags::MS_NODEV
        | nix::mount::MsFlags::MS_NOSUID
        | nix::mount::MsFlags::MS_NOEXEC;
    nix::mount::mount(
        Some("lazaret-mailbox"),
        target,
        Some("tmpfs"),
        flags,
        Some(mount_options().as_str()),
    )
    .with_context(|| format!("mounting a tmpfs at {}", target.display()))?;
    let dir = nix::fcntl::open(
        target,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?;
    verify(dir.as_fd())?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{}", std::process::id())?;
    stdout.flush()?;
    // Until Lazaret has opened the dir through /proc/<pid>/root (or gave up).
    let mut rest = Vec::new();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut rest);
    Ok(0)
}

/// Namespace side: detaches every mount at `target`.
pub fn ns_unmount(target: &Path) -> anyhow::Result<()> {
    crate::runtime::state_anchor_ns::detach_all(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_tmpfs_of_exactly_this_size_and_inode_count_is_the_request_dir() {
        let right = FsFacts {
            is_tmpfs: true,
            bytes: REQ_FS_BYTES,
            inodes: REQ_FS_INODES,
        };
        assert_eq!(check(right), Ok(()));
        for wrong in [
            FsFacts {
                is_tmpfs: false,
                ..right
            },
            FsFacts {
                bytes: REQ_FS_BYTES * 2,
                ..right
            },
            FsFacts {
                inodes: REQ_FS_INODES + 1,
                ..right
            },
        ] {
            assert!(check(wrong).is_err(), "{wrong:?}");
        }
        assert!(mount_options().contains("nr_inodes=2048"));
    }

    #[test]
    fn a_plain_directory_is_not_taken_for_the_request_dir() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let dir = std::fs::File::open(t.path())?;
        assert!(verify(dir.as_fd()).is_err());
        Ok(())
    }
}
