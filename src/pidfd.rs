//! Process descriptors (issue #18): a process's exit is waited for on a pidfd (readable once
//! it exits) instead of being looked at; and a pidfd names one process, never a reused pid.

/// A pidfd of `pid` (readable once it exits: waited on instead of looked at, issue #18); None
/// when the kernel has no pidfd_open or the process is gone.
pub fn open(pid: u32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let pid = i32::try_from(pid).ok().filter(|p| *p > 0)?;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = i32::try_from(fd).ok().filter(|fd| *fd >= 0)?;
    // SAFETY: a fresh descriptor that nothing else owns.
    Some(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}
