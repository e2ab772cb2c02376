//! Files of a running coordinator in the Domain's host-private runtime dir (SR-10).

use crate::domain::Domain;
use std::path::PathBuf;

/// The coordinator's Unix socket (never mounted into the sandbox).
pub fn socket(domain: &Domain) -> PathBuf {
    domain.runtime_dir.join("coordinator.sock")
}

/// What `lazaret ps` reads: the running Domain and its sessions.
pub fn status(domain: &Domain) -> PathBuf {
    domain.runtime_dir.join("status.json")
}
