//! Fail closed unless the Agent Sandbox really runs under gVisor (SR-1): the container's OCI
//! runtime must be Lazaret's runsc wrapper, the process hosting it must be runsc's sandbox, and
//! the kernel seen inside must be gVisor's.

use anyhow::{bail, Context};
use std::path::Path;

/// `/proc/version` inside gVisor (it emulates a Linux 4.4.0 kernel with this fixed build string).
pub const GVISOR_PROC_VERSION: &str = "Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016";

/// Exit status of the prelude when the kernel inside is not gVisor's.
pub const NOT_GVISOR_EXIT: i32 = 125;

/// A POSIX-sh prelude for `podman exec`: it reads `/proc/version` with shell builtins (no extra
/// process) and execs the real command only under gVisor — through the Escalation Client's
/// `--keep-terminal`, which leaves the session's terminal where `/dev/tty` finds it, once the
/// prelude has made `/dev/tty` that symlink (gVisor's own device fails with `EIO`; issue #16,
/// [`lazaret_protocol::access::TERMINAL_FD`]).
pub fn exec_prelude() -> Vec<String> {
    let client = crate::escalation::mailbox::SANDBOX_CLIENT;
    let target = lazaret_protocol::access::DEV_TTY_TARGET;
    let script = format!(
        "read -r v < /proc/version; case \"$v\" in \"{GVISOR_PROC_VERSION}\"*) \
         [ -L /dev/tty ] || ln -sf {target} /dev/tty 2>/dev/null; \
         [ -x {client} ] && exec {client} --keep-terminal \"$@\"; exec \"$@\";; esac; \
         echo \"lazaret: refusing to run: the kernel inside the Agent Sandbox is not gVisor's ($v)\" >&2; \
         exit {NOT_GVISOR_EXIT}"
    );
    vec!["/bin/sh".into(), "-c".into(), script, "lazaret".into()]
}

/// What `podman inspect` says of a started container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspected {
    pub runtime: String,
    pub pid: u32,
    pub conmon_pid: i32,
    /// The container's full ID (runsc's container ID).
    pub id: String,
}

/// `podman inspect --format` giving one [`Inspected`] line per container.
pub const INSPECT_FORMAT: &str = "{{.OCIRuntime}} {{.State.Pid}} {{.State.ConmonPid}} {{.Id}}";

impl Inspected {
    /// Parses one line of [`INSPECT_FORMAT`] (the runtime path may not contain spaces).
    pub fn parse(line: &str) -> Option<Inspected> {
        let mut parts = line.split_whitespace();
        let runtime = parts.next()?.to_owned();
        let pid = parts.next()?.parse().ok()?;
        let conmon_pid = parts.next()?.parse().ok()?;
        let id = parts.next()?.to_owned();
        parts.next().is_none().then_some(Inspected {
            runtime,
            pid,
            conmon_pid,
            id,
        })
    }
}

/// Host-side checks of the started sandbox: its OCI runtime is the wrapper and its process is
/// runsc's sandbox; refuses to go on otherwise.
pub fn verify_sandbox(sandbox: &Inspected, wrapper: &Path) -> anyhow::Result<()> {
    let step = "checking that the Agent Sandbox runs under gVisor";
    if Path::new(&sandbox.runtime) != wrapper {
        bail!(
            "{step}: the container's OCI runtime is {:?}, not {} — refusing to go on",
            sandbox.runtime,
            wrapper.display()
        );
    }
    // The recorded process is the wrapper's PID namespace init; the Sentry is its child (SR-12).
    let pid = super::sandbox_namespaces::sandbox_process(sandbox.pid, wrapper);
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
        .with_context(|| format!("{step}: reading the command line of pid {pid}"))?;
    let argv0 = cmdline.split(|b| *b == 0).next().unwrap_or_default();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
    let is_runsc_exe = exe.file_name().is_some_and(|n| n == "runsc");
    if argv0 != b"runsc-sandbox" || !is_runsc_exe {
        bail!(
            "{step}: the container's process {pid} is {:?} ({}), not runsc's sandbox — refusing to go on",
            String::from_utf8_lossy(argv0),
            exe.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inspect_lines_parse_strictly() {
        assert_eq!(
            Inspected::parse("/usr/local/bin/lazaret-runsc 123 120 598b4a79f786"),
            Some(Inspected {
                runtime: "/usr/local/bin/lazaret-runsc".into(),
                pid: 123,
                conmon_pid: 120,
                id: "598b4a79f786".into(),
            })
        );
        assert_eq!(Inspected::parse("runc 1 2"), None);
        assert_eq!(Inspected::parse("runc 1 2 3 4"), None);
        assert_eq!(Inspected::parse("runc x 2 3"), None);
    }

    #[test]
    fn a_sandbox_not_on_the_wrapper_is_refused() {
        let runc = Inspected {
            runtime: "runc".into(),
            pid: std::process::id(),
            conmon_pid: 0,
            id: "c".into(),
        };
        let err = verify_sandbox(&runc, Path::new("/usr/local/bin/lazaret-runsc"));
        assert!(err.is_err_and(|e| e.to_string().contains("refusing to go on")));
    }

    #[test]
    fn a_process_that_is_not_runsc_is_refused() {
        let me = Inspected {
            runtime: "/w".into(),
            pid: std::process::id(),
            conmon_pid: 0,
            id: "c".into(),
        };
        let err = verify_sandbox(&me, Path::new("/w"));
        assert!(err.is_err_and(|e| e.to_string().contains("not runsc's sandbox")));
    }
}
