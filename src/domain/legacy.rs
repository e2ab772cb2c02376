//! Domains named by the unkeyed Domain ID (before Domain Keys, issue #13): their Domain Root
//! `<Storage Root>/domains/<unkeyed ID>` is taken over under the keyed ID the first time the
//! Domain is resolved while nothing of it runs — renamed in place (one `rename`, same file
//! system) and its `domain.json` rewritten with the new ID, so Ignored Workspace State and
//! State Anchors are kept. While an older coordinator still holds the Domain (its lifecycle
//! lock, or the resource marker of a run that needs recovery), the Domain keeps its old ID for
//! that run and is migrated at the next one.

use super::layout::Layout;
use super::lock::LifecycleLock;
use super::DomainMetadata;
use anyhow::Context;
use lazaret_protocol::DomainId;
use std::path::Path;

/// The ID this Domain goes by: `keyed`, after taking over a Domain Root of the unkeyed ID when
/// there is one for the same (profile, workspace) and nothing of it runs; the unkeyed ID while
/// something of it still runs.
pub fn settle(
    layout: &Layout,
    keyed: DomainId,
    profile: &str,
    workspace: &Path,
) -> anyhow::Result<DomainId> {
    let domains = layout.storage_root().join("domains");
    let new_root = domains.join(keyed.as_str());
    if std::fs::symlink_metadata(&new_root).is_ok() {
        return Ok(keyed);
    }
    let old = DomainId::derive(profile, workspace);
    let old_root = domains.join(old.as_str());
    let Ok(meta) = crate::state::target::read_metadata(&old_root) else {
        return Ok(keyed);
    };
    if meta.domain_id != old || meta.profile != profile || meta.workspace != workspace {
        return Ok(keyed);
    }
    let old_runtime = layout.runtime_root()?.join(old.as_str());
    let _held = if std::fs::symlink_metadata(&old_runtime).is_ok() {
        if old_runtime.join("resources").exists() {
            return Ok(old);
        }
        match LifecycleLock::try_acquire(&old_runtime)? {
            Some(lock) => Some(lock),
            None => return Ok(old),
        }
    } else {
        None
    };
    if let Err(e) = std::fs::rename(&old_root, &new_root) {
        // Another Lazaret command resolving the same Domain took it over first.
        if std::fs::symlink_metadata(&new_root).is_ok() {
            return Ok(keyed);
        }
        return Err(e).with_context(|| {
            format!(
                "moving the Domain Root {} to {} (Domain IDs are keyed now: docs/runtime.md)",
                old_root.display(),
                new_root.display()
            )
        });
    }
    let meta = DomainMetadata {
        domain_id: keyed.clone(),
        ..meta
    };
    let path = new_root.join("domain.json");
    let tmp = new_root.join(format!("domain.json.{}.tmp", std::process::id()));
    let text = serde_json::to_string_pretty(&meta)? + "\n";
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .with_context(|| format!("rewriting {}", path.display()))?;
    tracing::info!(old = %old, new = %keyed, "Domain Root taken over under its keyed Domain ID");
    Ok(keyed)
}
