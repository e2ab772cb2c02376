//! State Anchor (spec §3.4, FR-4, DX-2): each persistent container path of a profile is a
//! kernel overlay of the image's content at that path (lower, read-only) and a Domain-scoped
//! upper dir, mounted inside podman's rootless user+mount namespace (podman's own `:O` volumes
//! are ignored by runsc) and bound into the sandbox at that path.
//!
//! Lower layers come from `podman image mount` of the profile's image, so files the upper layer
//! does not record follow the image when it is rebuilt, while upper files and whiteouts stay
//! authoritative. Mounts are (re)made and verified before every sandbox start — they live in
//! the rootless pause process's namespace and vanish when it restarts — and unmounted after
//! the sandbox and the sidecar at teardown (§3.2 recovery order).
//!
//! Host layout: `<Domain Root>/anchors/<name>/{anchor.json, gen-<n>/{upper,work}, current}`
//! (persistent, host-private; generations make `lazaret state reset` crash-consistent) and the
//! mount point `<runtime dir>/anchors/<name>` (transient). `<name>` is readable and unique:
//! `usr-local-1a2b3c4d` for `/usr/local`. Nothing of Lazaret's control plane is stored there.

use super::mounts::SandboxMount;
use super::podman::Podman;
use super::state_anchor_ns::{AnchorMount, NsReport, NsRequest};
use crate::domain::layout::ensure_private_dir;
use crate::domain::Domain;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// A Domain's State Anchors for one profile.
#[derive(Clone, Debug)]
pub struct StateAnchors {
    image: String,
    anchors: Vec<AnchorMount>,
    /// `<runtime dir>/anchors`.
    mount_root: PathBuf,
}

/// Directory name of the anchor of `container` (e.g. `/usr/local` → `usr-local-<8 hex>`).
pub fn anchor_name(container: &Path) -> String {
    use sha2::{Digest, Sha256};
    let text = container.to_string_lossy();
    let readable: String = text
        .trim_start_matches('/')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(40)
        .collect();
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{readable}-{hex}")
}

impl StateAnchors {
    pub fn new(domain: &Domain, image: &str, persistent: &[PathBuf]) -> StateAnchors {
        let mount_root = domain.runtime_dir.join("anchors");
        let anchors = persistent
            .iter()
            .map(|container| {
                let name = anchor_name(container);
                AnchorMount {
                    container: container.clone(),
                    dir: domain.root.join("anchors").join(&name),
                    target: mount_root.join(&name),
                }
            })
            .collect();
        StateAnchors {
            image: image.to_owned(),
            anchors,
            mount_root,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.anchors.is_empty()
    }

    /// The sandbox's bind mounts of the prepared anchors.
    pub fn mounts(&self) -> Vec<SandboxMount> {
        self.anchors
            .iter()
            .map(|a| {
                let why = format!("State Anchor: {}", a.container.display());
                SandboxMount::bind(&a.target, &a.container, false, &why)
            })
            .collect()
    }

    /// Creates the host dirs, then mounts (or keeps, when already right) every anchor inside
    /// podman's rootless namespace and verifies the result. With `read_trust`, the same call
    /// reads the image's CA bundle (issue #32), even for a profile without State Anchors.
    pub fn prepare(&self, podman: &Podman, read_trust: bool) -> anyhow::Result<NsReport> {
        if self.is_empty() && !read_trust {
            return Ok(NsReport::default());
        }
        ensure_private_dir(&self.mount_root)?;
        for a in &self.anchors {
            if let Some(anchors) = a.dir.parent() {
                ensure_private_dir(anchors)?;
            }
            ensure_private_dir(&a.dir)?;
            // Which container path the dir persists, for `lazaret state` (names are lossy).
            let dir = crate::state::generations::AnchorDir::open(&a.dir, false)?;
            if dir.container()?.is_none() {
                dir.write_container(&a.container)?;
            }
            match std::fs::create_dir(&a.target) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("creating {}", a.target.display()));
                }
            }
        }
        let req = NsRequest::Mount {
            image: self.image.clone(),
            anchors: self.anchors.clone(),
            image_id_file: self.mount_root.join("image-id"),
            empty_lower: self.mount_root.join(".empty"),
            read_trust,
        };
        call(podman, "preparing the State Anchors", &req)
    }

    /// Unmounts every anchor mounted for the Domain whose runtime dir is `runtime_dir` (found
    /// by listing its mount points, so recovery needs no profile) and releases the image mount.
    /// Safe to call when nothing is mounted.
    /// Also detaches the Escalation Mailbox's request dir, in the same `podman unshare`.
    pub fn release_all(podman: &Podman, runtime_dir: &Path) -> anyhow::Result<()> {
        let mount_root = runtime_dir.join("anchors");
        let targets: Vec<PathBuf> = std::fs::read_dir(&mount_root)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|e| e.file_name() != ".empty")
            .map(|e| e.path())
            .collect();
        let image_id_file = mount_root.join("image-id");
        let mailbox =
            Some(crate::escalation::mailbox_fs::req_path(runtime_dir)).filter(|m| m.is_dir());
        if targets.is_empty() && !image_id_file.exists() && mailbox.is_none() {
            return Ok(());
        }
        let req = NsRequest::Unmount {
            targets,
            image_id_file,
            mailbox,
        };
        call(
            podman,
            "unmounting the State Anchors and the mailbox's request dir",
            &req,
        )?;
        Ok(())
    }
}

/// The path of this binary; after an upgrade replaced its file while a Domain ran, the new
/// file at the same path (the request format is part of the stable JSON below).
pub(crate) fn lazaret_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("locating the lazaret binary")?;
    let text = exe.to_string_lossy();
    let path = PathBuf::from(text.strip_suffix(" (deleted)").unwrap_or(&text));
    if !path.exists() {
        anyhow::bail!(
            "the lazaret binary {} was removed while the Domain ran: reinstall it, then run \
             lazaret again to recover the Domain",
            path.display()
        );
    }
    Ok(path)
}

/// Runs this binary's hidden `__state-anchor` verb inside `podman unshare`.
fn call(podman: &Podman, step: &str, req: &NsRequest) -> anyhow::Result<NsReport> {
    let out = call_raw(podman, step, req)?;
    let report: NsReport = serde_json::from_str(out.trim())
        .with_context(|| format!("{step}: unexpected answer {out:?}"))?;
    Ok(report)
}

/// Runs `req` in the namespace; returns its JSON answer.
pub fn call_raw(podman: &Podman, step: &str, req: &NsRequest) -> anyhow::Result<String> {
    let exe = lazaret_binary()?;
    let json = serde_json::to_string(req)?;
    let out = podman.run(
        step,
        [
            std::ffi::OsStr::new("unshare"),
            exe.as_os_str(),
            std::ffi::OsStr::new("__state-anchor"),
            std::ffi::OsStr::new(&json),
        ],
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_readable_and_distinct() {
        let a = anchor_name(Path::new("/usr/local"));
        let b = anchor_name(Path::new("/usr-local"));
        assert!(a.starts_with("usr-local-"), "{a}");
        assert_ne!(a, b);
        assert_eq!(a, anchor_name(Path::new("/usr/local")));
    }
}
