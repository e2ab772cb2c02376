//! The container runtime edge: rootless Podman driving runsc (Agent Sandbox) and runc (Network
//! Sidecar). Pure decisions (argument vectors, policy text) are kept apart from the calls.

pub mod denial_ledger;
pub mod domain_runtime;
pub mod git_boundary;
pub mod git_sentry;
pub mod gvisor;
pub mod ignored_state;
pub mod ledger_history;
pub mod limits;
pub mod mounts;
pub mod network_policy;
pub mod podman;
pub mod run_rules_store;
pub mod runsc_exec;
pub mod runsc_wrapper;
pub mod sandbox;
pub mod sandbox_fate;
pub mod sandbox_kill;
pub mod sandbox_mounts;
pub mod sandbox_namespaces;
pub mod sidecar;
pub mod sidecar_image;
pub mod state_anchor;
pub mod state_anchor_ns;

/// Label carried by every container Lazaret creates: value is the Domain ID.
pub const DOMAIN_LABEL: &str = "lazaret.domain";
/// Label naming the component role (`sandbox`, `sidecar`).
pub const ROLE_LABEL: &str = "lazaret.role";
