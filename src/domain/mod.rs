//! Domain: the runtime and persistent-state scope of one `(Agent Profile, Agent Workspace)` pair.

pub mod key;
pub mod layout;
pub mod legacy;
pub mod lock;
pub mod sandbox_lock;
pub mod workspace;

use anyhow::Context;
use layout::Layout;
use lazaret_protocol::DomainId;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use workspace::Workspace;

/// A resolved Domain: its identity and the host directories that belong to it.
#[derive(Clone, Debug)]
pub struct Domain {
    pub id: DomainId,
    pub profile: String,
    pub workspace: Workspace,
    /// Persistent, host-only: `<Storage Root>/domains/<Domain ID>`.
    pub root: PathBuf,
    /// Transient, host-private (0700, SR-10): `$XDG_RUNTIME_DIR/lazaret/<Domain ID>`.
    pub runtime_dir: PathBuf,
}

/// What the Domain Root records about its Domain, so later tools can resolve it without a path.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct DomainMetadata {
    pub domain_id: DomainId,
    pub profile: String,
    pub workspace: PathBuf,
}

impl Domain {
    /// Resolves the Domain for `profile` in the workspace containing `cwd` (FR-1), refusing
    /// workspaces that would expose Lazaret's own host state to the sandbox (SR-2, SR-3).
    pub fn resolve(layout: &Layout, profile: &str, cwd: &Path) -> anyhow::Result<Domain> {
        let workspace = Workspace::resolve(cwd)?;
        workspace.check_mountable(layout)?;
        // Keyed: the ID is seen inside the sandbox and must not confirm path guesses.
        let key = key::load_or_create(&layout.storage_root())?;
        let keyed = DomainId::derive_keyed(&key, profile, &workspace.root);
        let id = legacy::settle(layout, keyed, profile, &workspace.root)?;
        Ok(Domain {
            root: layout.storage_root().join("domains").join(id.as_str()),
            runtime_dir: layout.runtime_root()?.join(id.as_str()),
            id,
            profile: profile.to_owned(),
            workspace,
        })
    }

    /// Creates the Domain Root and the host-private runtime dir, checking ownership and mode.
    pub fn prepare_dirs(&self, layout: &Layout) -> anyhow::Result<()> {
        layout::ensure_private_dir(&layout.runtime_root()?)?;
        layout::ensure_private_dir(&self.runtime_dir)?;
        layout::ensure_private_dir(&layout.storage_root())?;
        layout::ensure_private_dir(&self.root.with_file_name(""))?;
        layout::ensure_private_dir(&self.root)?;
        let meta_path = self.root.join("domain.json");
        if !meta_path.exists() {
            let meta = DomainMetadata {
                domain_id: self.id.clone(),
                profile: self.profile.clone(),
                workspace: self.workspace.root.clone(),
            };
            let text = serde_json::to_string_pretty(&meta)?;
            // Concurrent first runs of a new Domain each write their own file; any one wins.
            let tmp = self
                .root
                .join(format!("domain.json.{}.tmp", std::process::id()));
            let written =
                std::fs::write(&tmp, text + "\n").and_then(|_| std::fs::rename(&tmp, &meta_path));
            if let Err(e) = written {
                let _ = std::fs::remove_file(&tmp);
                if !meta_path.exists() {
                    return Err(e).with_context(|| {
                        format!("writing Domain metadata {}", meta_path.display())
                    });
                }
            }
        }
        Ok(())
    }

    /// Container name of a Domain component, e.g. `lazaret-<id>-sandbox`.
    pub fn container_name(&self, role: &str) -> String {
        format!("lazaret-{}-{role}", self.id)
    }
}
