//! Session Coordinator: the single owner of a Domain's runtime and Client Sessions (spec §3.2).
//!
//! `core` is the sans-IO state machine that follows `protocol/Lazaret.tla`; `daemon` and
//! `server` are the detached process that carries its effects out; `launch` and `client` are
//! the CLI's side (join a running coordinator, or become the startup leader and start one).

pub mod activity;
pub mod client;
mod client_conn;
pub mod core;
pub mod daemon;
pub mod disk_watch;
pub mod domain_state;
pub mod driver;
pub mod driver_edges;
pub mod driver_ports;
mod driver_steps;
#[cfg(test)]
pub(crate) mod driver_tests;
pub mod effect;
pub mod engine;
mod escalation;
pub mod event;
pub mod hosted;
pub mod invariants;
pub mod launch;
mod lifecycle;
pub mod liveness;
pub mod paste_keys;
pub mod paths;
mod prompt;
pub mod registry;
pub mod screen;
pub mod server;
pub mod session_api;
pub mod state;
pub mod status;
pub mod status_watch;
pub mod trace;
pub mod viewers;

#[cfg(test)]
mod core_model;
#[cfg(test)]
mod core_mutants;
#[cfg(test)]
mod core_tests;
#[cfg(test)]
mod viewers_tests;

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

/// Traces kept in the state dir; older ones are removed when a coordinator starts.
pub const TRACES_KEPT: usize = 100;

/// Removes all but the newest [`TRACES_KEPT`] trace files.
pub fn prune_traces(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut traces: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if traces.len() <= TRACES_KEPT {
        return;
    }
    traces.sort();
    for (_, path) in &traces[..traces.len() - TRACES_KEPT] {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod prune_tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    #[test]
    fn only_the_newest_traces_are_kept() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        for i in 0..TRACES_KEPT + 5 {
            let f = std::fs::File::create(t.path().join(format!("d-{i}.jsonl")))?;
            f.set_modified(base + Duration::from_secs(i as u64))?;
        }
        std::fs::write(t.path().join("other.txt"), "not a trace")?;
        prune_traces(t.path());
        let left: Vec<String> = std::fs::read_dir(t.path())?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left.len(), TRACES_KEPT + 1);
        assert!(!left.contains(&"d-4.jsonl".to_owned()), "the oldest went");
        assert!(left.contains(&"d-5.jsonl".to_owned()));
        assert!(left.contains(&"other.txt".to_owned()));
        Ok(())
    }
}
