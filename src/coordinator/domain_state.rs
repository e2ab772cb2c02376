//! What the control centres' Domain panel shows, gathered by the coordinator (issue #14: the
//! front ends read no Domain state themselves): its status, which of its containers run, the
//! State Anchors' sizes. Sent as [`lazaret_protocol::messages::CoordinatorMessage::DomainState`].

use crate::coordinator::status::DomainStatus;
use crate::domain::Domain;
use crate::profile::AgentProfile;
use lazaret_protocol::domain_state::{AnchorSize, DomainView};
use std::path::Path;

/// The Domain's state now.
pub fn gather(domain: &Domain, profile: &AgentProfile, fingerprint: &str) -> DomainView {
    let status = DomainStatus::read(&crate::coordinator::paths::status(domain));
    let running = running_containers(&format!("lazaret-{}-", domain.id));
    let alive = |pid: u32| {
        i32::try_from(pid)
            .is_ok_and(|p| nix::sys::signal::kill(nix::unistd::Pid::from_raw(p), None).is_ok())
    };
    DomainView {
        domain_id: domain.id.to_string(),
        profile: profile.name.clone(),
        workspace: domain.workspace.root.clone(),
        fingerprint: fingerprint.to_owned(),
        coordinator: status
            .as_ref()
            .map(|s| (s.coordinator_pid, alive(s.coordinator_pid))),
        sandbox_running: running.contains(&domain.container_name("sandbox")),
        sidecar_running: running.contains(&domain.container_name("sidecar")),
        sessions: status
            .as_ref()
            .map(|s| {
                s.sessions
                    .iter()
                    .map(|x| (x.session_id.clone(), x.command.clone()))
                    .collect()
            })
            .unwrap_or_default(),
        anchors: profile
            .persistent
            .iter()
            .map(|p| {
                let anchor = domain
                    .root
                    .join("anchors")
                    .join(crate::runtime::state_anchor::anchor_name(p));
                // The current generation (`current` is a symlink Lazaret wrote: `gen-<n>`).
                let (bytes, partial) = tree_size(&anchor.join("current").join("upper"));
                AnchorSize {
                    path: p.clone(),
                    bytes,
                    partial,
                }
            })
            .collect(),
        failures: status.map(|s| s.failures).unwrap_or_default(),
    }
}

/// Names of the running containers whose name starts with `prefix`.
fn running_containers(prefix: &str) -> Vec<String> {
    let out = crate::runtime::podman::Podman::default()
        .command(["ps", "--format", "{{.Names}}"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.starts_with(prefix))
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// Allocated bytes under `dir` without following symlinks; `partial` when something could not
/// be read.
fn tree_size(dir: &Path) -> (u64, bool) {
    use std::os::unix::fs::MetadataExt;
    let mut bytes = 0u64;
    let mut partial = false;
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            partial |= d != dir || dir.exists();
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            // A huge tree is summed in later polls' time budget, not here.
            if seen > 200_000 {
                return (bytes, true);
            }
            match e.path().symlink_metadata() {
                Ok(m) => {
                    bytes += m.blocks() * 512;
                    if m.is_dir() {
                        stack.push(e.path());
                    }
                }
                Err(_) => partial = true,
            }
        }
    }
    (bytes, partial)
}
