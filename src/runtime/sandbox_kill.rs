//! Stopping the Agent Sandbox's processes at once (issue #18): SIGKILL to the container's
//! process and everything below it (runsc's sandbox — the Sentry that runs every sandboxed
//! process — and its gofer), then waiting until they are gone. After this nothing of the
//! sandbox can write the workspace; `podman rm` then removes the stopped container (off the
//! developer's path).
//!
//! Every process is addressed through a pidfd opened while it is still the child of the process
//! found above it, so a pid reused meanwhile is never signalled.

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// A process of the tree, held by its pidfd.
struct Held {
    pid: i32,
    fd: OwnedFd,
}

fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    crate::pidfd::open(u32::try_from(pid).ok()?)
}

fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain anything: the fields follow its last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

fn children_of(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

/// `root` and its descendants, each held by a pidfd opened while its parent relation still held.
fn tree(root: i32) -> Vec<Held> {
    let Some(fd) = pidfd_open(root) else {
        return Vec::new();
    };
    let mut all = vec![Held { pid: root, fd }];
    let mut next = 0;
    while next < all.len() {
        let parent = all[next].pid;
        for child in children_of(parent) {
            let Some(fd) = pidfd_open(child) else {
                continue;
            };
            // Opened after the listing: still the same process only if still our child.
            if parent_of(child) == Some(parent) && all.len() < 256 {
                all.push(Held { pid: child, fd });
            }
        }
        next += 1;
    }
    all
}

fn exited(fd: &OwnedFd, wait: Duration) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut p, 1, ms) };
    n > 0
}

/// The container's process as podman knows it, and its monitor.
pub struct Container<'a> {
    /// `podman inspect`'s `.State.Pid`.
    pub pid: u32,
    /// Its conmon's pid: `pid` must still be conmon's child.
    pub conmon: i32,
    /// The container's ID: conmon's command line must name it (pids get reused).
    pub id: &'a str,
}

/// SIGKILLs the container's process and its descendants, the deepest first, and waits up to
/// `limit` until all have exited. Returns how many were killed; 0 when the process is gone or
/// is no longer the container's (a reused pid is left alone).
pub fn kill_tree(c: &Container<'_>, limit: Duration) -> usize {
    let Ok(root) = i32::try_from(c.pid) else {
        return 0;
    };
    let procs = tree(root);
    let conmon_names_it = std::fs::read(format!("/proc/{}/cmdline", c.conmon))
        .map(|cmd| String::from_utf8_lossy(&cmd).contains(c.id))
        .unwrap_or(false);
    if procs.is_empty() || parent_of(root) != Some(c.conmon) || !conmon_names_it {
        return 0;
    }
    for p in procs.iter().rev() {
        // SAFETY: a pidfd we own; no siginfo.
        let r = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                p.fd.as_raw_fd(),
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        };
        if r != 0 {
            tracing::debug!(pid = p.pid, "SIGKILL: {}", std::io::Error::last_os_error());
        }
    }
    let deadline = Instant::now() + limit;
    for p in &procs {
        let left = deadline.saturating_duration_since(Instant::now());
        if !exited(&p.fd, left) {
            tracing::warn!(pid = p.pid, "a sandbox process still runs after SIGKILL");
            break;
        }
    }
    procs.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// This process stands for conmon: its command line names the "container".
    fn me() -> (i32, String) {
        let cmd =
            std::fs::read(format!("/proc/{}/cmdline", std::process::id())).unwrap_or_default();
        let first = String::from_utf8_lossy(&cmd)
            .split('\0')
            .next()
            .unwrap_or("")
            .to_owned();
        (std::process::id() as i32, first)
    }

    #[test]
    fn a_process_tree_is_killed_and_waited_for() -> anyhow::Result<()> {
        // sh → sleep (a grandchild of the test): both go, and the wait sees them gone.
        let mut sh = Command::new("sh")
            .args(["-c", "sleep 300 & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()?;
        let mut line = String::new();
        if let Some(out) = sh.stdout.as_mut() {
            use std::io::BufRead;
            std::io::BufReader::new(out).read_line(&mut line)?;
        }
        let sleeper: i32 = line.trim().parse()?;
        let (conmon, id) = me();
        let c = Container {
            pid: sh.id(),
            conmon,
            id: &id,
        };
        assert_eq!(kill_tree(&c, Duration::from_secs(5)), 2, "sh and its sleep");
        assert!(!sh.wait()?.success());
        // The sleep is gone (a zombie until whoever inherited it reaps it).
        let state = std::fs::read_to_string(format!("/proc/{sleeper}/stat")).unwrap_or_default();
        assert!(state.is_empty() || state.contains(") Z "), "{state}");
        Ok(())
    }

    #[test]
    fn a_process_that_is_not_the_containers_is_left_alone() -> anyhow::Result<()> {
        let mut sleep = Command::new("sleep").arg("300").spawn()?;
        let (conmon, id) = me();
        // Not conmon's child (a reused pid), or conmon names another container.
        let other_parent = Container {
            pid: sleep.id(),
            conmon: 1,
            id: &id,
        };
        let other_id = Container {
            pid: sleep.id(),
            conmon,
            id: "d88246f1227d0817c5ce",
        };
        assert_eq!(kill_tree(&other_parent, Duration::from_secs(1)), 0);
        assert_eq!(kill_tree(&other_id, Duration::from_secs(1)), 0);
        assert!(sleep.try_wait()?.is_none(), "still running");
        sleep.kill()?;
        sleep.wait()?;
        Ok(())
    }
}
