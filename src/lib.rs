//! Lazaret: isolated execution of AI coding agents in a rootless gVisor sandbox.
//!
//! The library holds the engine; `main.rs` is the only place that exits the process.

pub mod cli;
pub mod config;
pub mod coordinator;
pub mod detachable;
pub mod doctor;
pub mod domain;
pub mod escalation;
pub mod fault;
pub mod launcher;
pub mod logging;
pub mod network;
pub mod pidfd;
pub mod profile;
pub mod profile_setup;
pub mod runtime;
pub mod session;
pub mod state;
pub mod terminal;
#[cfg(test)]
pub mod test_rng;
pub mod trust;
pub mod utc;
pub mod wake;
