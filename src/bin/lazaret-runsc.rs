//! `lazaret-runsc`: the OCI runtime Podman runs for the Agent Sandbox. It execs the real runsc
//! with the flags this host needs (see `lazaret::runtime::runsc_wrapper`).

use lazaret::runtime::runsc_wrapper::{find_runsc, rewrite_args};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let Some(runsc) = find_runsc(std::env::var_os("LAZARET_RUNSC").as_deref()) else {
        eprintln!("lazaret-runsc: runsc not found (install it: scripts/setup)");
        return ExitCode::from(127);
    };
    let err = Command::new(&runsc).args(rewrite_args(&args)).exec();
    eprintln!("lazaret-runsc: cannot run {}: {err}", runsc.display());
    ExitCode::from(126)
}
