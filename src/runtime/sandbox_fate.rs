//! Whether the Agent Sandbox outlived a command that ended with a failure status, and if not,
//! why it stopped (issue #19).
//!
//! When the sandbox dies under a running command (its `runsc-sandbox` process killed, the
//! memory bound reached), `runsc exec` ends with runsc's own fatal status (128) and prints
//! runsc's error (`urpc method "containerManager.WaitPID" failed`) — which reads like the
//! command's status. The CLI asks here before it passes that status on: when the sandbox's
//! process has exited, Podman records why (the wrapper's init exits with [`MEMORY_LIMIT_EXIT`]
//! when the memory bound killed the sandbox, 128 + N when a signal did).
//!
//! The sandbox is its `runsc-sandbox` process (the Sentry), whose host pid runsc's state holds;
//! once it exited, podman's cleanup may already have marked that state stopped or deleted it
//! (`runsc delete`), which says the same.
//! Its control socket is no witness: the ptrace platform's stub processes hold copies of it and
//! outlive a killed Sentry for a moment, so a connection can still be accepted into the backlog.
//! Only a status of 128 (runsc's own fatal status) is looked into, so a command's ordinary
//! failures cost nothing.

use super::limits::MEMORY_LIMIT_EXIT;
use super::podman::Podman;
use super::runsc_exec::RunscExec;
use super::runsc_wrapper::state_paths;
use std::time::{Duration, Instant};

/// How long Podman gets to record the stopped sandbox's exit (conmon writes it once the
/// wrapper's init has reaped the sandbox).
const RECORD_WAIT: Duration = Duration::from_secs(3);

/// The status `runsc exec` ends with when runsc itself failed (its `Fatalf`), e.g. because the
/// sandbox went away under it.
pub const RUNSC_FATAL: i32 = 128;

/// What became of the sandbox a command ran in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    /// It still runs (or whether it does cannot be told): the status is the command's.
    Running,
    /// It stopped; the text says why, for "the Agent Sandbox stopped …: {why}".
    Stopped(String),
}

/// How long a sandbox process that looks alive gets to be seen exiting: runsc exec's connection
/// ends while the killed Sentry closes its descriptors, a moment before it is a zombie.
const EXIT_GRACE: Duration = Duration::from_millis(300);

/// Where runsc keeps the state of the Domain's sandbox: its `--root` and the container's ID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub root: std::path::PathBuf,
    pub container_id: String,
}

impl Target {
    pub fn of(direct: &RunscExec) -> Target {
        Target {
            root: direct.root.clone(),
            container_id: direct.container_id.clone(),
        }
    }

    /// The sandbox the coordinator published in `runtime_dir` for direct exec, whether or not
    /// direct exec can be used any more (a `lazaret run` that came through `podman exec`
    /// asks too); None without a well-formed record.
    pub fn published(runtime_dir: &std::path::Path) -> Option<Target> {
        let text = std::fs::read_to_string(runtime_dir.join(super::runsc_exec::PUBLISHED)).ok()?;
        let id = text.split_whitespace().next()?;
        super::runsc_exec::is_container_id(id).then(|| Target {
            root: super::runsc_wrapper::default_root(
                std::env::var_os("XDG_RUNTIME_DIR").as_deref(),
            ),
            container_id: id.to_owned(),
        })
    }
}

/// What runsc's state says of the sandbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// No state any more (podman's cleanup after the sandbox exited has `runsc delete`d it),
    /// or the state says it stopped.
    Gone,
    /// The host pid of its `runsc-sandbox` process (the trusted wrapper rewrote runsc's pids
    /// to host pids).
    Sandbox(u32),
    /// The state cannot be read or understood: nothing is concluded.
    Unknown,
}

/// What runsc's state file for the sandbox `target` says.
pub fn recorded(target: &Target) -> Recorded {
    let (state, _) = state_paths(&target.root, &target.container_id);
    match std::fs::read(state) {
        Ok(text) => of_state(&text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Recorded::Gone,
        Err(_) => Recorded::Unknown,
    }
}

/// [`recorded`] of a runsc state file's text.
pub fn of_state(text: &[u8]) -> Recorded {
    let Ok(state) = serde_json::from_slice::<serde_json::Value>(text) else {
        return Recorded::Unknown;
    };
    if state.get("status").and_then(|s| s.as_str()) == Some("stopped") {
        return Recorded::Gone;
    }
    state
        .get("sandbox")
        .and_then(|s| s.get("pid"))
        .and_then(serde_json::Value::as_u64)
        .and_then(|p| u32::try_from(p).ok())
        .filter(|p| *p > 0)
        .map_or(Recorded::Unknown, Recorded::Sandbox)
}

/// Whether the sandbox process `pid` has exited (or exits within `grace`): gone, a zombie, a
/// reused pid that is not `runsc-sandbox` any more, or its pidfd readable in time.
pub fn exited(pid: u32, grace: Duration) -> bool {
    let Some(fd) = crate::pidfd::open(pid) else {
        return true;
    };
    let argv0 = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    if argv0.split(|b| *b == 0).next() != Some(b"runsc-sandbox".as_slice()) {
        return true;
    }
    let mut fds = [nix::poll::PollFd::new(
        std::os::fd::AsFd::as_fd(&fd),
        nix::poll::PollFlags::POLLIN,
    )];
    let ms = u16::try_from(grace.as_millis()).unwrap_or(u16::MAX);
    matches!(nix::poll::poll(&mut fds, ms), Ok(n) if n > 0)
}

/// Looks after a command of the sandbox `container` (Podman's name) ended with `code`:
/// [`Fate::Running`] unless the sandbox process of `target` has exited; then what Podman
/// recorded. Costs nothing after a status of 0, a state-file read otherwise (and up to 300 ms
/// of grace after runsc's own 128, only while the Sentry is exiting).
pub fn after_command(target: &Target, container: &str, memory: Option<u64>, code: i32) -> Fate {
    if code == 0 {
        return Fate::Running;
    }
    // runsc's own failure may race the Sentry's exit; any other status comes from a command
    // (or an exec tool: nsenter, podman) that started after the sandbox was gone, if it is.
    let grace = if code == RUNSC_FATAL {
        EXIT_GRACE
    } else {
        Duration::ZERO
    };
    let seen = recorded(target);
    let gone = match seen {
        Recorded::Gone => true,
        Recorded::Sandbox(pid) => exited(pid, grace),
        Recorded::Unknown => false,
    };
    tracing::info!(
        ?seen,
        gone,
        "asked whether the Agent Sandbox outlived the command"
    );
    if !gone {
        return Fate::Running;
    }
    let podman = Podman::default();
    let deadline = Instant::now() + RECORD_WAIT;
    loop {
        let recorded = podman
            .output(
                "looking at the stopped Agent Sandbox",
                [
                    "container",
                    "inspect",
                    "--format",
                    "{{.State.Status}} {{.State.ExitCode}}",
                    container,
                ],
            )
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
        if let Some(why) = recorded.as_deref().and_then(|r| stopped_because(r, memory)) {
            return Fate::Stopped(why);
        }
        if Instant::now() >= deadline {
            return Fate::Stopped("its runsc-sandbox process is gone".into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Why the sandbox stopped, from Podman's `STATUS EXITCODE` of its container; `None` while it
/// is recorded as running. `memory` is the profile's bound, for the message.
pub fn stopped_because(recorded: &str, memory: Option<u64>) -> Option<String> {
    let mut words = recorded.split_whitespace();
    let (status, code) = (words.next()?, words.next()?);
    if matches!(status, "running" | "paused" | "created" | "initialized") {
        return None;
    }
    let code: i64 = code.parse().ok()?;
    Some(describe_exit(code, memory))
}

/// The sandbox's exit status in words.
pub fn describe_exit(code: i64, memory: Option<u64>) -> String {
    if code == i64::from(MEMORY_LIMIT_EXIT) {
        return match memory {
            Some(m) => format!(
                "it went over the profile's memory limit ({}) and was stopped",
                crate::config::limits::describe_bytes(m)
            ),
            None => "it went over the profile's memory limit and was stopped".into(),
        };
    }
    match code {
        129..=159 => format!(
            "its runsc-sandbox process was killed by signal {}{}",
            code - 128,
            signal_name(code - 128)
        ),
        _ => format!("it exited with status {code}"),
    }
}

fn signal_name(n: i64) -> &'static str {
    match n {
        9 => " (SIGKILL)",
        15 => " (SIGTERM)",
        6 => " (SIGABRT)",
        11 => " (SIGSEGV)",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_sandbox_has_no_reason_yet() {
        assert_eq!(stopped_because("running 0\n", None), None);
        assert_eq!(stopped_because("", None), None);
        assert_eq!(stopped_because("exited notanumber", None), None);
    }

    #[test]
    fn the_memory_bound_is_named_with_its_size() {
        let why = stopped_because("exited 251\n", Some(512 << 20)).unwrap_or_default();
        assert!(why.contains("memory limit (512 MiB)"), "{why}");
        let why = stopped_because("stopped 251", None).unwrap_or_default();
        assert!(why.contains("memory limit"), "{why}");
    }

    #[test]
    fn a_killed_sandbox_names_the_signal() {
        let why = stopped_because("exited 137", None).unwrap_or_default();
        assert_eq!(
            why,
            "its runsc-sandbox process was killed by signal 9 (SIGKILL)"
        );
        assert_eq!(describe_exit(3, None), "it exited with status 3");
    }

    #[test]
    fn runsc_s_state_names_the_sandbox_or_says_it_is_gone() {
        let state =
            br#"{"id":"x","status":"running","goferPid":9564,"sandbox":{"id":"x","pid":9568}}"#;
        assert_eq!(of_state(state), Recorded::Sandbox(9568));
        let stopped = br#"{"id":"x","status":"stopped","sandbox":{"id":"x","pid":9568}}"#;
        assert_eq!(of_state(stopped), Recorded::Gone);
        assert_eq!(of_state(br#"{"sandbox":{"pid":0}}"#), Recorded::Unknown);
        assert_eq!(of_state(br#"{"sandbox":{"pid":-3}}"#), Recorded::Unknown);
        assert_eq!(of_state(b"not json"), Recorded::Unknown);
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let target = Target {
            root: dir.path().to_path_buf(),
            container_id: "a".repeat(64),
        };
        // runsc deleted its state (podman's cleanup ran after the sandbox exited).
        assert_eq!(recorded(&target), Recorded::Gone);
    }

    #[test]
    fn a_process_that_is_not_runsc_sandbox_counts_as_gone() {
        // This test's own process is alive but is no Sentry: a reused pid.
        assert!(exited(std::process::id(), Duration::ZERO));
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let pid = child.id();
        let _ = child.kill();
        let _ = child.wait();
        assert!(exited(pid, Duration::ZERO));
    }
}
