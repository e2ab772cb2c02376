//! What the control centres' Domain panel shows, gathered by the coordinator (issue #14: the
//! front ends read no Domain state themselves): its status, which of its containers run, the
//! State Anchors' sizes. Sent as [`lazaret_protocol::messages::CoordinatorMessage::DomainState`].

use crate::coordinator::status::DomainStatus;
use crate::domain::Domain;
use crate::profile::AgentProfile;
use lazaret_protocol::domain_state::{AnchorSize, DomainView};
use std::path::Path;

/// Host pids of the Domain's containers' main processes, noted at bring-up.
#[derive(Clone, Copy, Debug, Default)]
pub struct ContainerPids {
    pub sandbox: Option<u32>,
    pub sidecar: Option<u32>,
}

/// The Domain's state now. The containers' liveness is observed on their processes (no podman
/// process per tick); the State Anchors' sizes are walked only when `anchors` is `None` (a walk
/// can take a while on a big tooling dir: the feed does it less often).
pub fn gather(
    domain: &Domain,
    profile: &AgentProfile,
    fingerprint: &str,
    containers: ContainerPids,
    anchors: Option<Vec<AnchorSize>>,
) -> DomainView {
    let status = DomainStatus::read(&crate::coordinator::paths::status(domain));
    let alive = crate::coordinator::liveness::process_alive;
    DomainView {
        domain_id: domain.id.to_string(),
        profile: profile.name.clone(),
        workspace: domain.workspace.root.clone(),
        fingerprint: fingerprint.to_owned(),
        coordinator: status
            .as_ref()
            .map(|s| (s.coordinator_pid, alive(s.coordinator_pid))),
        sandbox_running: containers.sandbox.is_some_and(alive),
        sidecar_running: containers.sidecar.is_some_and(alive),
        sessions: status
            .as_ref()
            .map(|s| {
                s.sessions
                    .iter()
                    .map(|x| (x.session_id.clone(), x.command.clone()))
                    .collect()
            })
            .unwrap_or_default(),
        anchors: anchors.unwrap_or_else(|| anchor_sizes(domain, profile)),
        failures: status.map(|s| s.failures).unwrap_or_default(),
        ports: Vec::new(),
        run_allowed: crate::runtime::run_rules_store::load(&crate::runtime::sidecar::status_dir(
            domain,
        ))
        .map(|r| r.allow.iter().map(|x| x.target.to_string()).collect())
        .unwrap_or_default(),
    }
}

/// The sizes of the profile's State Anchors (their current generation).
pub fn anchor_sizes(domain: &Domain, profile: &AgentProfile) -> Vec<AnchorSize> {
    profile
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
        .collect()
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
