//! Fail closed unless the Agent Sandbox really runs under gVisor (SR-1): the container's OCI
//! runtime must be Lazaret's runsc wrapper, the process hosting it must be runsc's sandbox, and
//! the kernel seen inside must be gVisor's.

use super::podman::Podman;
use anyhow::{bail, Context};
use std::path::Path;

/// `/proc/version` inside gVisor (it emulates a Linux 4.4.0 kernel with this fixed build string).
pub const GVISOR_PROC_VERSION: &str = "Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016";

/// Exit status of the prelude when the kernel inside is not gVisor's.
pub const NOT_GVISOR_EXIT: i32 = 125;

/// A POSIX-sh prelude for `podman exec`: it reads `/proc/version` with shell builtins (no extra
/// process) and execs the real command only under gVisor.
pub fn exec_prelude() -> Vec<String> {
    let script = format!(
        "read -r v < /proc/version; case \"$v\" in \"{GVISOR_PROC_VERSION}\"*) exec \"$@\";; esac; \
         echo \"lazaret: refusing to run: the kernel inside the Agent Sandbox is not gVisor's ($v)\" >&2; \
         exit {NOT_GVISOR_EXIT}"
    );
    vec!["/bin/sh".into(), "-c".into(), script, "lazaret".into()]
}

/// Host-side checks of a started sandbox container.
pub fn verify_container(podman: &Podman, name: &str, wrapper: &Path) -> anyhow::Result<()> {
    let step = "checking that the Agent Sandbox runs under gVisor";
    let out = podman.run(
        step,
        [
            "inspect",
            "--format",
            "{{.OCIRuntime}} {{.State.Pid}}",
            name,
        ],
    )?;
    let (runtime, pid) = out
        .trim()
        .rsplit_once(' ')
        .with_context(|| format!("{step}: unexpected podman inspect output {out:?}"))?;
    if Path::new(runtime) != wrapper {
        bail!(
            "{step}: the container's OCI runtime is {runtime:?}, not {} — refusing to go on",
            wrapper.display()
        );
    }
    let pid: u32 = pid
        .parse()
        .with_context(|| format!("{step}: container pid {pid:?}"))?;
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
