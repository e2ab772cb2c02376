//! State Anchor paths of a test workspace's Domain, as the host sees them.

use super::TestWorkspace;
use std::path::{Path, PathBuf};

/// The current upper dir of the anchor of `container` (e.g. `/opt`).
pub fn upper(ws: &TestWorkspace, container: &str) -> PathBuf {
    let name = lazaret::runtime::state_anchor::anchor_name(Path::new(container));
    ws.domain_root()
        .join("anchors")
        .join(name)
        .join("current/upper")
}
