//! Running an approved escalation on the host: an argument vector without a shell, in the host
//! directory matching the sandbox's `/workspace/...` cwd, with a timeout, output caps, and a
//! kill switch for when its session goes away (OR-3). Git gets hardened settings.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// What actually ran (git gets its hardening options).
    pub ran_argv: Vec<String>,
}

/// Maps the sandbox's `cwd` (`/workspace` or below) to the host workspace; anything else, or a
/// path that leaves the workspace through `..` or a symlink, is refused with a reason.
pub fn host_cwd(workspace: &Path, sandbox_cwd: &str) -> Result<PathBuf, String> {
    let rel = Path::new(sandbox_cwd)
        .strip_prefix(crate::domain::workspace::SANDBOX_WORKSPACE)
        .map_err(|_| {
            format!("the working directory {sandbox_cwd} is outside /workspace: only the workspace maps to the host")
        })?;
    let joined = workspace.join(rel);
    let real = std::fs::canonicalize(&joined).map_err(|e| {
        format!("the working directory {sandbox_cwd} does not exist on the host ({e})")
    })?;
    if !real.starts_with(workspace) {
        return Err(format!(
            "the working directory {sandbox_cwd} leads outside the workspace on the host"
        ));
    }
    Ok(real)
}

/// Git run for an escalation ignores the repository's hooks and fsmonitor and the system
/// configuration: the sandbox can write files git would otherwise execute.
pub fn hardened(argv: &[String]) -> Vec<String> {
    let mut out = argv.to_vec();
    if argv.first().map(String::as_str) == Some("git") {
        let opts = [
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
        ];
        for (i, o) in opts.iter().enumerate() {
            out.insert(1 + i, (*o).to_owned());
        }
    }
    out
}

/// Runs `argv` in `cwd` until it ends, `timeout` passes or `cancel` is set.
pub fn run(argv: &[String], cwd: &Path, timeout: Duration, cancel: &Arc<AtomicBool>) -> HostRun {
    let ran_argv = hardened(argv);
    let mut cmd = Command::new(&ran_argv[0]);
    cmd.args(&ran_argv[1..])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("LAZARET_LOG")
        .process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return HostRun {
                ended: Ended::Failed(format!("cannot run {}: {e}", ran_argv[0])),
                stdout: Vec::new(),
                stderr: Vec::new(),
                truncated: false,
                ran_argv,
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
            Err(e) => break Ended::Failed(format!("waiting for {}: {e}", ran_argv[0])),
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
        std::thread::sleep(Duration::from_millis(2));
    };
    let (stdout, t1) = out.join().unwrap_or_default();
    let (stderr, t2) = err.join().unwrap_or_default();
    HostRun {
        ended,
        stdout,
        stderr,
        truncated: t1 || t2,
        ran_argv,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn cwd_maps_inside_the_workspace_only() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let ws = std::fs::canonicalize(t.path())?.join("ws");
        std::fs::create_dir_all(ws.join("sub"))?;
        std::os::unix::fs::symlink("/etc", ws.join("out"))?;
        assert_eq!(host_cwd(&ws, "/workspace/sub").ok(), Some(ws.join("sub")));
        assert_eq!(host_cwd(&ws, "/workspace").ok(), Some(ws.clone()));
        assert!(host_cwd(&ws, "/tmp").is_err());
        assert!(host_cwd(&ws, "/workspace/out").is_err());
        assert!(host_cwd(&ws, "/workspace/../etc").is_err());
        Ok(())
    }

    #[test]
    fn git_is_hardened_and_others_are_not() {
        assert_eq!(
            hardened(&v(&["git", "status"])),
            v(&[
                "git",
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "core.fsmonitor=false",
                "status"
            ])
        );
        assert_eq!(hardened(&v(&["ls", "-l"])), v(&["ls", "-l"]));
    }

    #[test]
    fn status_output_timeout_and_cancel() {
        let cwd = std::env::temp_dir();
        let never = Arc::new(AtomicBool::new(false));
        let r = run(
            &v(&["sh", "-c", "echo out; echo err >&2; exit 3"]),
            &cwd,
            Duration::from_secs(10),
            &never,
        );
        assert_eq!(
            (r.ended, r.stdout, r.stderr),
            (Ended::Exited(3), b"out\n".to_vec(), b"err\n".to_vec())
        );
        let r = run(
            &v(&["sleep", "10"]),
            &cwd,
            Duration::from_millis(100),
            &never,
        );
        assert_eq!(r.ended, Ended::TimedOut);
        let cancel = Arc::new(AtomicBool::new(true));
        let r = run(&v(&["sleep", "10"]), &cwd, Duration::from_secs(10), &cancel);
        assert_eq!(r.ended, Ended::Cancelled);
        let r = run(
            &v(&["/nonexistent/x"]),
            &cwd,
            Duration::from_secs(1),
            &never,
        );
        assert!(matches!(r.ended, Ended::Failed(_)));
        let r = run(
            &v(&["head", "-c", "2000000", "/dev/zero"]),
            &cwd,
            Duration::from_secs(10),
            &never,
        );
        assert!(r.truncated && r.stdout.len() == OUTPUT_CAP);
    }
}
