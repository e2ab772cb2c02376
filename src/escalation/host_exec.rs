//! Running an approved escalation on the host: an argument vector without a shell, started from
//! the resolved executable (see `executable`), in the working directory held as a directory fd
//! (see `workdir`; the child `fchdir`s to it), with the hardened environment (see `git_env`),
//! a timeout, output caps, and a kill switch for when its session goes away (OR-3).

use std::ffi::OsString;
use std::io::Read;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the kill switch and the deadline are looked at while the command runs.
const LOOK: Duration = Duration::from_millis(50);

/// Output kept per stream; the rest is dropped and the result says `truncated`.
pub const OUTPUT_CAP: usize = 1024 * 1024;

/// How a host command ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// Exit status (128 + signal for a signal death).
    Exited(i32),
    TimedOut,
    Cancelled,
    /// It could not be started.
    Failed(String),
}

#[derive(Debug)]
pub struct HostRun {
    pub ended: Ended,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub truncated: bool,
}

/// What to run: `argv` started from `program` (its resolved executable), in the directory
/// `cwd`, with exactly the environment `env`.
pub struct Launch<'a> {
    pub program: &'a Path,
    pub argv: &'a [String],
    pub cwd: BorrowedFd<'a>,
    pub env: &'a [(OsString, OsString)],
}

/// Runs `l` until it ends, `timeout` passes or `cancel` is set.
pub fn run(l: &Launch<'_>, timeout: Duration, cancel: &Arc<AtomicBool>) -> HostRun {
    let shown = l.argv.first().cloned().unwrap_or_default();
    let mut cmd = Command::new(l.program);
    cmd.arg0(&shown)
        .args(l.argv.iter().skip(1))
        .env_clear()
        .envs(l.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let dir = l.cwd.as_raw_fd();
    // SAFETY: fchdir is async-signal-safe and touches no memory of the parent; `dir` stays
    // open (it is borrowed for the whole call) until the child has exec'd.
    unsafe {
        cmd.pre_exec(move || {
            if libc::fchdir(dir) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return HostRun {
                ended: Ended::Failed(format!("cannot run {}: {e}", l.program.display())),
                stdout: Vec::new(),
                stderr: Vec::new(),
                truncated: false,
            }
        }
    };
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let mut truncated = false;
            if let Some(mut p) = pipe {
                let mut buf = [0u8; 16 * 1024];
                while let Ok(n) = p.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let room = OUTPUT_CAP.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                    truncated |= n > room;
                }
            }
            (kept, truncated)
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + timeout;
    let pgid = nix::unistd::Pid::from_raw(-(child.id() as i32));
    // The command's exit is waited for on a pidfd (readable at its exit: no 2 ms lag, no
    // wake-ups while a long command runs); the kill switch and the deadline are looked at
    // every [`LOOK`]. Without pidfds, every 2 ms as before.
    let exit_fd = crate::pidfd::open(child.id());
    let ended = loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                use std::os::unix::process::ExitStatusExt;
                let code = status
                    .code()
                    .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
                break Ended::Exited(code);
            }
            Ok(None) => {}
            Err(e) => break Ended::Failed(format!("waiting for {shown}: {e}")),
        }
        let stop = if cancel.load(Ordering::SeqCst) {
            Some(Ended::Cancelled)
        } else if Instant::now() > deadline {
            Some(Ended::TimedOut)
        } else {
            None
        };
        if let Some(why) = stop {
            // The whole process group: the command and anything it started.
            let _ = nix::sys::signal::kill(pgid, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
            break why;
        }
        match &exit_fd {
            Some(fd) => {
                use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
                use std::os::fd::AsFd;
                let wait = LOOK.min(deadline.saturating_duration_since(Instant::now()));
                let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
                let _ = poll(
                    &mut fds,
                    PollTimeout::try_from(wait).unwrap_or(PollTimeout::MAX),
                );
            }
            None => std::thread::sleep(Duration::from_millis(2)),
        }
    };
    let (stdout, t1) = out.join().unwrap_or_default();
    let (stderr, t2) = err.join().unwrap_or_default();
    HostRun {
        ended,
        stdout,
        stderr,
        truncated: t1 || t2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn go(argv: &[&str], timeout: Duration, cancel: bool) -> HostRun {
        let dir = std::fs::File::open(std::env::temp_dir()).ok();
        let Some(dir) = dir else {
            return HostRun {
                ended: Ended::Failed("no temp dir".into()),
                stdout: Vec::new(),
                stderr: Vec::new(),
                truncated: false,
            };
        };
        let argv = v(argv);
        let program =
            crate::escalation::executable::find(&argv[0], std::env::var_os("PATH").as_deref())
                .unwrap_or_else(|_| std::path::PathBuf::from(&argv[0]));
        let env: Vec<(OsString, OsString)> = vec![("PATH".into(), "/usr/bin:/bin".into())];
        let l = Launch {
            program: &program,
            argv: &argv,
            cwd: dir.as_fd(),
            env: &env,
        };
        run(&l, timeout, &Arc::new(AtomicBool::new(cancel)))
    }

    use std::os::fd::AsFd;

    #[test]
    fn status_output_timeout_and_cancel() {
        let r = go(
            &["sh", "-c", "echo out; echo err >&2; exit 3"],
            Duration::from_secs(10),
            false,
        );
        assert_eq!(
            (r.ended, r.stdout, r.stderr),
            (Ended::Exited(3), b"out\n".to_vec(), b"err\n".to_vec())
        );
        let r = go(&["sleep", "10"], Duration::from_millis(100), false);
        assert_eq!(r.ended, Ended::TimedOut);
        let r = go(&["sleep", "10"], Duration::from_secs(10), true);
        assert_eq!(r.ended, Ended::Cancelled);
        let r = go(&["/nonexistent/x"], Duration::from_secs(1), false);
        assert!(matches!(r.ended, Ended::Failed(_)));
        let r = go(
            &["head", "-c", "2000000", "/dev/zero"],
            Duration::from_secs(10),
            false,
        );
        assert!(r.truncated && r.stdout.len() == OUTPUT_CAP);
    }

    #[test]
    fn the_child_runs_in_the_held_directory_with_exactly_the_given_environment() {
        let r = go(
            &["sh", "-c", "pwd -P; env | sort"],
            Duration::from_secs(10),
            false,
        );
        let out = String::from_utf8_lossy(&r.stdout).into_owned();
        let tmp = std::fs::canonicalize(std::env::temp_dir()).unwrap_or_default();
        let mut lines = out.lines();
        assert_eq!(lines.next(), Some(tmp.display().to_string().as_str()));
        // sh adds PWD (and may add SHLVL/_); nothing of the test's own environment passes.
        let names: Vec<&str> = lines.filter_map(|l| l.split('=').next()).collect();
        assert!(names.contains(&"PATH"), "{out}");
        assert!(
            !names.contains(&"HOME") && !names.contains(&"CARGO"),
            "{out}"
        );
    }
}
