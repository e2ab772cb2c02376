//! Entries a walk of a Domain's storage could not read, and why (issue #32): `state list` and
//! `state inspect` name them instead of saying only that some were unreadable. The list is
//! bounded; the count is not. Paths are relative to the walked tree and raw (names inside an
//! upper dir are chosen by the sandbox: reports escape them).

use serde::{Deserialize, Serialize};
use std::path::Path;

/// Entries listed at most; the rest are only counted.
pub const MAX_LISTED: usize = 10;

/// The entries a walk could not read.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Unreadable {
    /// How many entries could not be read, listed or not.
    pub count: u64,
    /// The first [`MAX_LISTED`] of them, in walk order.
    pub entries: Vec<UnreadableEntry>,
}

/// One entry that could not be read.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct UnreadableEntry {
    /// Relative to the walked tree ("." for its root); non-UTF-8 bytes as U+FFFD.
    pub path: String,
    /// What failed and the error, e.g. "open: EACCES: Permission denied".
    pub reason: String,
}

impl Unreadable {
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Notes that `rel` could not be read for `reason`.
    pub fn note(&mut self, rel: &Path, reason: impl Into<String>) {
        self.count = self.count.saturating_add(1);
        if self.entries.len() < MAX_LISTED {
            let path = if rel.as_os_str().is_empty() {
                ".".to_owned()
            } else {
                rel.to_string_lossy().into_owned()
            };
            self.entries.push(UnreadableEntry {
                path,
                reason: reason.into(),
            });
        }
    }
}
