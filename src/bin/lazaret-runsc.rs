//! `lazaret-runsc`: the OCI runtime Podman runs for the Agent Sandbox. It execs the real runsc
//! with the flags this host needs (see `lazaret::runtime::runsc_wrapper`); a `create` runs with
//! the sandbox in its own PID and cgroup namespaces (see `lazaret::runtime::sandbox_namespaces`).

use lazaret::runtime::runsc_wrapper::{create_call, find_runsc, rewrite_args};
use lazaret::runtime::sandbox_namespaces;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let Some(runsc) = find_runsc(std::env::var_os("LAZARET_RUNSC").as_deref()) else {
        lazaret::say!("lazaret-runsc: runsc not found (install it: scripts/setup)");
        return ExitCode::from(127);
    };
    let runsc_args = rewrite_args(&args);
    if let Some(call) = create_call(&args, std::env::var_os("XDG_RUNTIME_DIR").as_deref()) {
        return match sandbox_namespaces::create(&runsc, &runsc_args, &call) {
            Ok(code) => ExitCode::from(code),
            Err(e) => {
                lazaret::say!("lazaret-runsc: creating the Agent Sandbox: {e:#}");
                ExitCode::from(1)
            }
        };
    }
    let err = Command::new(&runsc).args(runsc_args).exec();
    lazaret::say!("lazaret-runsc: cannot run {}: {err}", runsc.display());
    ExitCode::from(126)
}
