//! The `lazaret state` operations that run inside podman's rootless user namespace (through
//! the hidden `__state-anchor` verb), because State Anchor generations hold files of
//! subordinate uids: resetting (new generation, old ones removed fd-relatively) and reading
//! the overlay changes against the image.

use super::generations::{fault_from_env, AnchorDir};
use super::inspect::{inspect as inspect_upper, Inspection};
use super::listing::{anchor_size, tree_size, SizeEntry};
use crate::runtime::state_anchor_ns::{lower_dir, podman};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One reset anchor dir and its new current generation.
#[derive(Debug, Serialize, Deserialize)]
pub struct ResetDone {
    pub dir: PathBuf,
    pub generation: u64,
}

/// Resets every dir in `dirs` (each first brought to a valid state).
pub fn reset(dirs: &[PathBuf]) -> anyhow::Result<Vec<ResetDone>> {
    let fault = fault_from_env();
    dirs.iter()
        .map(|d| {
            let anchor = AnchorDir::open(d, false)?;
            anchor.recover()?;
            let generation = anchor.reset(&*fault)?;
            Ok(ResetDone {
                dir: d.clone(),
                generation,
            })
        })
        .collect()
}

/// The current upper dir of `dir`, without changing anything (an old-layout anchor has its
/// `upper` directly inside).
fn current_upper(dir: &Path) -> anyhow::Result<PathBuf> {
    let anchor = AnchorDir::open(dir, false)?;
    match anchor.current_paths() {
        Ok((upper, _)) => Ok(upper),
        Err(e) if dir.join("upper").is_dir() => {
            tracing::debug!("{}: {e:#}; reading the old layout", dir.display());
            Ok(dir.join("upper"))
        }
        Err(e) => Err(e),
    }
}

/// The changes of each `(container path, anchor dir)` against `image` (mounted for the
/// purpose; without an image, added and modified cannot be told apart).
pub fn inspect(
    image: Option<&str>,
    anchors: &[(PathBuf, PathBuf)],
    empty_lower: &Path,
    limit: usize,
) -> anyhow::Result<Vec<Inspection>> {
    let root = match image {
        Some(img) => Some(PathBuf::from(podman(&["image", "mount", img])?)),
        None => None,
    };
    let result = anchors
        .iter()
        .map(|(container, dir)| {
            // A path the image lacks has an empty lower: everything in the upper is added.
            let lower = match &root {
                Some(r) => {
                    Some(lower_dir(r, container)?.unwrap_or_else(|| empty_lower.to_path_buf()))
                }
                None => None,
            };
            let upper = current_upper(dir)?;
            let mut found = inspect_upper(&upper, lower.as_deref(), container, limit)?;
            found.generation = AnchorDir::open(dir, false)
                .ok()
                .and_then(|a| a.current_generation().ok().flatten());
            Ok(found)
        })
        .collect();
    if let Some(img) = image {
        let _ = podman(&["image", "unmount", img]);
    }
    result
}

/// The sizes `lazaret state list` shows, measured inside the namespace.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Sizes {
    /// Of each anchor directory asked for, in order ([`anchor_size`]).
    pub anchors: Vec<SizeEntry>,
    /// Of each Ignored Workspace State directory asked for, in order ([`tree_size`]).
    pub ignored: Vec<SizeEntry>,
}

pub fn sizes(anchors: &[PathBuf], ignored: &[PathBuf]) -> Sizes {
    Sizes {
        anchors: anchors.iter().map(|a| anchor_size(a)).collect(),
        ignored: ignored.iter().map(|i| tree_size(i)).collect(),
    }
}
