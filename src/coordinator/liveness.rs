//! Whether a host process still runs, as the coordinator observes it: `kill(pid, 0)` and its
//! state in `/proc` (a zombie still answers `kill`). Cheap enough for a tick: no podman process
//! (a `podman ps` costs ~100 ms of CPU on these machines and showed in the TUI's keystroke tail).

/// True while `pid` names a process that has not exited.
pub fn process_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
        && !matches!(state_of(&stat), Some("Z") | Some("X"))
}

/// The state field of a `/proc/<pid>/stat` line (after the command's closing parenthesis: the
/// command may itself contain ')').
fn state_of(stat: &str) -> Option<&str> {
    stat.rsplit(')').next()?.split_whitespace().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_nonsense_pids_do_not() {
        assert!(process_alive(std::process::id()));
        assert!(!process_alive(0));
        assert!(!process_alive(u32::MAX));
    }

    #[test]
    fn a_reaped_child_is_gone_and_a_zombie_is_not_alive() {
        let mut child = match std::process::Command::new("true").spawn() {
            Ok(c) => c,
            Err(e) => panic!("spawning true: {e}"),
        };
        let pid = child.id();
        // Not reaped yet: a zombie once it exited.
        for _ in 0..200 {
            if !process_alive(pid) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(
            !process_alive(pid),
            "an exited, unreaped child counts as gone"
        );
        let _ = child.wait();
        assert!(!process_alive(pid));
    }

    #[test]
    fn a_pidfd_becomes_readable_when_its_process_exits() {
        use std::os::fd::AsRawFd;
        let mut child = match std::process::Command::new("sleep").arg("0.2").spawn() {
            Ok(c) => c,
            Err(e) => panic!("spawning sleep: {e}"),
        };
        let fd = crate::pidfd::open(child.id()).expect("a pidfd");
        let readable = |ms: i32| {
            let mut p = libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut p, 1, ms) > 0 }
        };
        assert!(!readable(0), "still running");
        assert!(readable(5000), "exited");
        let _ = child.wait();
        assert!(crate::pidfd::open(0).is_none());
    }

    #[test]
    fn the_state_is_read_after_the_last_parenthesis() {
        assert_eq!(state_of("12 (a) b) Z 1 2"), Some("Z"));
        assert_eq!(state_of(""), None);
    }
}
