//! `lazaret doctor`: checks the host prerequisites and says how to fix each failing one.

use crate::doctor::{self, Status};
use crate::domain::layout::Layout;
use clap::Args;

/// Check this host's prerequisites and print the fix for each failing one
///
/// Checks everything `lazaret run` needs (podman, runsc and its flags, subordinate ids, the XDG
/// runtime dir, /dev/net/tun, rootless storage, cgroups, images) and prints the exact fix for
/// each failing check, and which of the host's CA certificates a sandbox of the profile gets
/// beyond its image's own (a TLS-intercepting proxy's CA; see `trust_host_cas` in
/// docs/config.md). Exit status: 0 when nothing fails, 1 otherwise.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the checks as JSON (an array of {name, status, detail, fix}). Every character
    /// outside printable ASCII is a \uXXXX escape.
    #[arg(long)]
    pub json: bool,
    /// The profile whose trust of the host's CAs is checked (default: the default profile)
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
}

pub fn execute(layout: &Layout, args: DoctorArgs) -> anyhow::Result<i32> {
    let checks = doctor::run_all(layout, args.profile.as_deref());
    if args.json {
        crate::say_out!("{}", crate::cli::safe_json::to_string(&checks)?);
    } else {
        let mut in_limits = false;
        for c in &checks {
            // The profile bounds (`memory`, `pids`, `cpus`, `disk`) under their own heading.
            if c.name.starts_with("limits: ") != in_limits {
                in_limits = !in_limits;
                crate::say_out!(
                    "{}",
                    if in_limits {
                        "resource limits (profile keys memory, pids, cpus, disk):"
                    } else {
                        ""
                    }
                );
            }
            let mark = match c.status {
                Status::Ok => "ok  ",
                Status::Warn => "warn",
                Status::Fail => "FAIL",
            };
            crate::say_out!("{mark} {:<18} {}", c.name, c.detail);
            if let Some(fix) = &c.fix {
                if c.status != Status::Ok {
                    crate::say_out!("     fix: {fix}");
                }
            }
        }
    }
    Ok(if checks.iter().any(|c| c.status == Status::Fail) {
        1
    } else {
        0
    })
}
