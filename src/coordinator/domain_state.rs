//! What the control centres' Domain panel shows, gathered by the coordinator (issue #14: the
//! front ends read no Domain state themselves): its status, which of its containers run, the
//! State Anchors' sizes. Sent as [`lazaret_protocol::messages::CoordinatorMessage::DomainState`].

use crate::coordinator::status::DomainStatus;
use crate::domain::Domain;
use crate::profile::AgentProfile;
use crate::state::listing::tree_size_bounded;
use lazaret_protocol::domain_state::{AnchorSize, DomainView};

/// Entries the panel's State Anchor sizes count before they say "partial": a huge tree is
/// walked fully by `lazaret state list` and the disk watch, not every few seconds for a panel.
const PANEL_MAX_ENTRIES: usize = 200_000;

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
            // Walked as every host-side reader walks what the sandbox wrote: from open
            // directories, never through a symlink (the agent may swap a directory for one
            // mid-walk); bounded, as the panel refreshes it while the agent writes.
            let size = tree_size_bounded(&anchor.join("current").join("upper"), PANEL_MAX_ENTRIES);
            AnchorSize {
                path: p.clone(),
                bytes: size.bytes,
                partial: size.partial,
            }
        })
        .collect()
}
