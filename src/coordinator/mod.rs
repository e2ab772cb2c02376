//! Session Coordinator: the single owner of a Domain's runtime and Client Sessions (spec §3.2).
//!
//! `core` is the sans-IO state machine that follows `protocol/Lazaret.tla`; `daemon` and
//! `server` are the detached process that carries its effects out; `launch` and `client` are
//! the CLI's side (join a running coordinator, or become the startup leader and start one).

pub mod client;
pub mod core;
pub mod daemon;
pub mod effect;
pub mod engine;
mod escalation;
pub mod event;
pub mod invariants;
pub mod launch;
mod lifecycle;
pub mod local;
pub mod paths;
pub mod registry;
pub mod server;
pub mod session_api;
pub mod state;
pub mod status;
pub mod trace;

#[cfg(test)]
mod core_model;
#[cfg(test)]
mod core_tests;

use crate::domain::layout::Layout;
use crate::domain::Domain;
use lazaret_protocol::ComponentId;
use std::path::PathBuf;

/// Where a coordinator run records its protocol trace (kept after the run, for conformance).
pub fn trace_path(layout: &Layout, domain: &Domain, coordinator: &ComponentId) -> PathBuf {
    layout
        .state_dir()
        .join("traces")
        .join(format!("{}-{}.jsonl", domain.id, coordinator.as_str()))
}
