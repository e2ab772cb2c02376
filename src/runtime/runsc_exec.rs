//! A coordinator-owned Client Session's command started in the Agent Sandbox by runsc itself.
//!
//! `podman exec -it` puts two relays between a session's terminal and the coordinator: conmon
//! holds the pseudo-terminal and copies it to an attach socket, and the `podman` client copies
//! that to its own stdio. `runsc exec` run with the coordinator's PTY replica as its stdio hands
//! that descriptor to the Sentry, which reads and writes it itself (runsc's `exec` takes a
//! terminal on stdin as the process's TTY): no process copies the bytes any more, and a key
//! crosses two fewer processes each way.
//!
//! runsc must run where Podman ran it: in the rootless user and mount namespaces, which it
//! enters through the sandbox's conmon with `nsenter`, with the same global flags the trusted
//! wrapper adds and the state directory runsc picked at `create`. The process gets what
//! `podman exec` would give it — the container's user, capabilities, `no_new_privs`,
//! environment and working directory from the container's spec, plus the request's
//! environment and directory — and runs behind the same gVisor check ([`super::gvisor`]).

use super::runsc_wrapper::{default_root, find_runsc, state_paths, RUNSC_FLAGS};
use super::sandbox::ExecRequest;
use std::path::{Path, PathBuf};

/// Where `nsenter` (util-linux) is looked for; a fixed path, never `$PATH`.
pub const NSENTER_CANDIDATES: [&str; 2] = ["/usr/bin/nsenter", "/bin/nsenter"];

/// How to start commands in one running sandbox with runsc directly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunscExec {
    pub nsenter: PathBuf,
    pub runsc: PathBuf,
    /// runsc's state directory (`--root`).
    pub root: PathBuf,
    /// The sandbox container's full ID (Podman's and runsc's).
    pub container_id: String,
    /// The sandbox's conmon: its namespaces are the ones Podman ran runsc in.
    pub conmon_pid: i32,
}

impl RunscExec {
    /// Finds what direct exec needs for the running sandbox `container_id` whose conmon is
    /// `conmon_pid`; the error says what is missing (the caller then uses `podman exec`).
    pub fn locate(container_id: &str, conmon_pid: i32) -> Result<RunscExec, String> {
        let found = |candidates: &[&str]| {
            candidates
                .iter()
                .map(Path::new)
                .find(|p| p.is_file())
                .map(Path::to_path_buf)
        };
        let nsenter = found(&NSENTER_CANDIDATES).ok_or("nsenter (util-linux) is not installed")?;
        let runsc = find_runsc(std::env::var_os("LAZARET_RUNSC").as_deref())
            .ok_or("runsc is not installed")?;
        let root = default_root(std::env::var_os("XDG_RUNTIME_DIR").as_deref());
        let direct = RunscExec::checked(nsenter, runsc, root, container_id, conmon_pid)?;
        if !state_paths(&direct.root, container_id).0.is_file() {
            return Err(format!(
                "runsc keeps no state for the sandbox in {}",
                direct.root.display()
            ));
        }
        if !direct.usable() {
            return Err(format!(
                "process {conmon_pid} is not the sandbox's conmon any more"
            ));
        }
        Ok(direct)
    }

    /// The pure checks of [`RunscExec::locate`]: a container ID is what Podman prints (64
    /// hexadecimal digits), so it can never be read as a flag or a path.
    pub fn checked(
        nsenter: PathBuf,
        runsc: PathBuf,
        root: PathBuf,
        container_id: &str,
        conmon_pid: i32,
    ) -> Result<RunscExec, String> {
        if !is_container_id(container_id) {
            return Err(format!("{container_id:?} is not a container ID"));
        }
        if conmon_pid <= 0 {
            return Err("the sandbox has no conmon process".into());
        }
        Ok(RunscExec {
            nsenter,
            runsc,
            root,
            container_id: container_id.to_owned(),
            conmon_pid,
        })
    }

    /// Whether the recorded conmon still runs this sandbox (a pid can be reused).
    pub fn usable(&self) -> bool {
        std::fs::read(format!("/proc/{}/cmdline", self.conmon_pid))
            .is_ok_and(|c| conmon_runs(&c, &self.container_id))
    }

    /// The program to run: `nsenter`, with [`RunscExec::args`].
    pub fn program(&self) -> String {
        self.nsenter.display().to_string()
    }

    /// `nsenter` arguments that run `req` in the sandbox under runsc (pure). Only terminal
    /// requests are meant for this path: runsc gives the process a TTY when its stdin is one.
    pub fn args(&self, req: &ExecRequest) -> Vec<String> {
        let mut a: Vec<String> = vec![
            format!("--target={}", self.conmon_pid),
            "--user".into(),
            "--mount".into(),
            "--preserve-credentials".into(),
            "--".into(),
            self.runsc.display().to_string(),
        ];
        a.extend(RUNSC_FLAGS.iter().map(|f| f.to_string()));
        a.push(format!("--root={}", self.root.display()));
        a.push("exec".into());
        a.push(format!("--cwd={}", req.workdir));
        if let Some(term) = &req.term {
            a.push(format!("--env=TERM={term}"));
        }
        for (k, v) in &req.env {
            a.push(format!("--env={k}={v}"));
        }
        a.push(self.container_id.clone());
        a.extend(super::gvisor::exec_prelude());
        a.extend(req.command.iter().cloned());
        a
    }
}

/// The file in the Domain's runtime dir (host-private) where the coordinator says which
/// sandbox and conmon a `lazaret run` may enter with runsc directly (issue #18).
pub const PUBLISHED: &str = "direct-exec";

/// Tells the Domain's CLIs how to reach the sandbox directly: `<container ID> <conmon pid>`.
pub fn publish(runtime_dir: &Path, direct: Option<&RunscExec>) {
    let path = runtime_dir.join(PUBLISHED);
    let Some(d) = direct else {
        let _ = std::fs::remove_file(&path);
        return;
    };
    let tmp = runtime_dir.join(format!(".{PUBLISHED}.tmp"));
    let written = std::fs::write(&tmp, format!("{} {}\n", d.container_id, d.conmon_pid))
        .and_then(|_| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        tracing::warn!("publishing the sandbox for direct exec: {e}");
    }
}

/// Whether `id` is a container ID as Podman prints it (64 lowercase hexadecimal digits), so it
/// can never be read as a flag or a path.
pub fn is_container_id(id: &str) -> bool {
    id.len() == 64 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Withdraws what [`publish`] wrote (the sandbox stops).
pub fn withdraw(runtime_dir: &Path) {
    let _ = std::fs::remove_file(runtime_dir.join(PUBLISHED));
}

/// What the coordinator published, checked as [`RunscExec::locate`] checks (a stale file names
/// a conmon that no longer runs that sandbox); the error says why not.
pub fn published(runtime_dir: &Path) -> Result<RunscExec, String> {
    let text = std::fs::read_to_string(runtime_dir.join(PUBLISHED))
        .map_err(|e| format!("the coordinator published no sandbox for direct exec ({e})"))?;
    let mut words = text.split_whitespace();
    let (Some(id), Some(pid), None) = (words.next(), words.next(), words.next()) else {
        return Err(format!("malformed direct-exec record {text:?}"));
    };
    let pid = pid
        .parse()
        .map_err(|_| format!("malformed direct-exec record {text:?}"))?;
    RunscExec::locate(id, pid)
}

/// Whether a conmon command line (NUL-separated) is the one of `container_id`'s conmon
/// (`-c ID`).
fn conmon_runs(cmdline: &[u8], container_id: &str) -> bool {
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    let is_conmon = args
        .first()
        .and_then(|a0| Path::new(std::str::from_utf8(a0).ok()?).file_name())
        .is_some_and(|n| n == "conmon");
    is_conmon
        && args
            .windows(2)
            .any(|w| w[0] == b"-c" && w[1] == container_id.as_bytes())
}

#[cfg(test)]
#[path = "runsc_exec_tests.rs"]
mod tests;
