//! The Agent Sandbox: a rootless runsc container joined to the Network Sidecar's namespace, with
//! the Agent Workspace at `/workspace`. Commands reach it with `podman exec`.

use super::mounts::SandboxMount;
use super::podman::Podman;
use super::{DOMAIN_LABEL, ROLE_LABEL};
use crate::domain::workspace::SANDBOX_WORKSPACE;
use crate::domain::Domain;
use crate::profile::AgentProfile;
use crate::trust::sandbox::SandboxTrust;
use std::path::Path;

/// The sandbox's PID 1: it keeps the sandbox alive and reaps the processes orphaned inside
/// (a `sleep infinity` PID 1 left them zombies for good, each counted against `pids` until the
/// sandbox could not fork any more: issue #19). dash's `wait` reaps every child while it waits
/// for the sleep. SIGTERM (podman stop) ends it at once. The sleep gets `/dev/null` as stdin
/// rather than PID 1's host descriptor.
pub const SANDBOX_INIT: [&str; 3] = [
    "/bin/sh",
    "-c",
    "trap 'exit 0' TERM INT HUP; while :; do sleep 2147483647 </dev/null & wait $!; done",
];

/// `podman create` arguments of the sandbox (pure, for tests and review). The sandbox's PID 1
/// ([`SANDBOX_INIT`]) only keeps it alive and reaps; every Client Session's command is a
/// `podman exec`. `trust`: the composed CA bundle's mount, last, and its environment, where
/// the profile's `env` does not set the same variable (issue #32).
pub fn create_args(
    domain: &Domain,
    profile: &AgentProfile,
    runtime: &Path,
    mounts: &[SandboxMount],
    trust: Option<&SandboxTrust>,
) -> anyhow::Result<Vec<String>> {
    let mut args: Vec<String> = vec![
        "create".into(),
        "--name".into(),
        domain.container_name("sandbox"),
        "--label".into(),
        format!("{DOMAIN_LABEL}={}", domain.id),
        "--label".into(),
        format!("{ROLE_LABEL}=sandbox"),
        "--pull=never".into(),
        "--runtime".into(),
        runtime.display().to_string(),
        // The only shared namespace: the sidecar's network namespace (SR-12).
        "--network".into(),
        format!("container:{}", domain.container_name("sidecar")),
        "--cap-drop=NET_ADMIN,NET_RAW,SYS_ADMIN,SYS_PTRACE,SYS_MODULE".into(),
        "--security-opt=no-new-privileges".into(),
        "--env".into(),
        "HOME=/root".into(),
    ];
    let trust_env = trust.map(|t| t.env.as_slice()).unwrap_or_default();
    for (k, v) in trust_env {
        if !profile.env.contains_key(k) {
            args.push("--env".into());
            args.push(format!("{k}={v}"));
        }
    }
    for (k, v) in &profile.env {
        args.push("--env".into());
        args.push(format!("{k}={v}"));
    }
    for m in mounts.iter().chain(trust.map(|t| &t.mount)) {
        args.extend(m.podman_args()?);
    }
    // Resource bounds (issue #19): see `super::limits` for what enforces each.
    args.extend(super::limits::podman_args(&profile.limits));
    args.extend([
        "--workdir".into(),
        SANDBOX_WORKSPACE.into(),
        profile.image.clone(),
    ]);
    args.extend(SANDBOX_INIT.iter().map(|a| (*a).to_owned()));
    Ok(args)
}

/// Creates the sandbox (it cannot start before the sidecar is up: SR-5).
pub fn create(
    podman: &Podman,
    domain: &Domain,
    profile: &AgentProfile,
    runtime: &Path,
    mounts: &[SandboxMount],
    trust: Option<&SandboxTrust>,
) -> anyhow::Result<()> {
    podman.run(
        "creating Agent Sandbox",
        create_args(domain, profile, runtime, mounts, trust)?,
    )?;
    Ok(())
}

pub fn start(podman: &Podman, domain: &Domain) -> anyhow::Result<()> {
    podman.run(
        "starting Agent Sandbox",
        ["start", &domain.container_name("sandbox")],
    )?;
    Ok(())
}

/// Options of one command run in the sandbox.
#[derive(Clone, Debug)]
pub struct ExecRequest {
    pub command: Vec<String>,
    pub workdir: String,
    pub tty: bool,
    pub term: Option<String>,
    /// Extra environment of the command (the session's escalation credentials).
    pub env: Vec<(String, String)>,
}

/// `podman exec` arguments. The command runs behind a POSIX-sh prelude that checks the kernel
/// it sees is gVisor's and refuses otherwise (fail closed; see [`super::gvisor`]).
pub fn exec_args(container: &str, req: &ExecRequest) -> Vec<String> {
    let mut a: Vec<String> = vec!["exec".into(), "-i".into()];
    if req.tty {
        a.push("-t".into());
    }
    if let Some(term) = &req.term {
        a.push("--env".into());
        a.push(format!("TERM={term}"));
    }
    for (k, v) in &req.env {
        a.push("--env".into());
        a.push(format!("{k}={v}"));
    }
    a.push("--workdir".into());
    a.push(req.workdir.clone());
    a.push(container.to_owned());
    a.extend(super::gvisor::exec_prelude());
    a.extend(req.command.iter().cloned());
    a
}

/// Whether `path` exists in the sandbox `container`, asked with `test -e` inside (`None`: it
/// could not be asked — podman's own failures are 125 and up, `test` says only 0 or 1).
pub fn path_exists(container: &str, path: &str) -> Option<bool> {
    let args = exec_args(
        container,
        &ExecRequest {
            command: vec!["test".into(), "-e".into(), path.into()],
            workdir: "/".into(),
            tty: false,
            term: None,
            env: Vec::new(),
        },
    );
    let status = Podman::default()
        .command(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .ok()?;
    match status.code() {
        Some(0) => Some(true),
        Some(1) => Some(false),
        _ => None,
    }
}
