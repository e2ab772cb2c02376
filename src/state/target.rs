//! Which Domain a `lazaret state` verb works on, found through trusted host metadata only
//! (FR-11, SR-14): the Domain of the current workspace (default profile or `--profile`), or a
//! Domain ID (`--domain`) looked up among the Domain Roots. A host path is never a target.

use crate::domain::layout::Layout;
use crate::domain::workspace::Workspace;
use crate::domain::{Domain, DomainMetadata};
use anyhow::{bail, Context};
use lazaret_protocol::DomainId;
use std::path::{Path, PathBuf};

/// One State Anchor of a Domain on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnchorRef {
    /// The container path it persists (from its `anchor.json`, else matched by name against
    /// the profile's persistent paths); None when neither tells.
    pub container: Option<PathBuf>,
    /// `<Domain Root>/anchors/<name>`.
    pub dir: PathBuf,
    pub name: String,
}

/// The Domain named by `--domain ID`, or else by the current workspace and `profile`.
pub fn resolve(
    layout: &Layout,
    domain: Option<&str>,
    profile: Option<&str>,
) -> anyhow::Result<Domain> {
    if let Some(id) = domain {
        if profile.is_some() {
            bail!("--domain names a Domain by itself: drop --profile");
        }
        return by_id(layout, id);
    }
    let config = crate::config::HostConfig::load(layout)?;
    let profile = config.profile(profile)?;
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let d = Domain::resolve(layout, &profile.name, &cwd)?;
    if !d.root.join("domain.json").exists() {
        bail!(
            "no State of profile {:?} for {} yet (nothing has run there); `lazaret state list` \
             shows every Domain",
            profile.name,
            d.workspace.root.display()
        );
    }
    Ok(d)
}

fn by_id(layout: &Layout, id: &str) -> anyhow::Result<Domain> {
    if DomainId::parse(id).is_none() {
        bail!(
            "{id:?} is not a Domain ID ({} lowercase hex digits, as `lazaret state list` shows)",
            lazaret_protocol::DOMAIN_ID_HEX_LEN
        );
    }
    let root = layout.storage_root().join("domains").join(id);
    let meta = read_metadata(&root).with_context(|| {
        format!("no Domain {id} (see `lazaret state list` for the Domains on this machine)")
    })?;
    if meta.domain_id.as_str() != id {
        bail!("the metadata of Domain {id} names another Domain: it was edited by hand");
    }
    Ok(Domain {
        runtime_dir: layout.runtime_root()?.join(id),
        id: meta.domain_id,
        profile: meta.profile,
        workspace: Workspace {
            root: meta.workspace,
            relative_cwd: PathBuf::new(),
        },
        root,
    })
}

/// `<root>/domain.json`.
pub fn read_metadata(root: &Path) -> anyhow::Result<DomainMetadata> {
    let path = root.join("domain.json");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// The State Anchors of `domain` on disk, in name order; `persistent` (the profile's paths, if
/// it still exists) names anchors that predate `anchor.json`.
pub fn anchors(domain: &Domain, persistent: &[PathBuf]) -> Vec<AnchorRef> {
    let dir = domain.root.join("anchors");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<AnchorRef> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let recorded = std::fs::read_to_string(e.path().join("anchor.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .and_then(|v| {
                    v.get("container")
                        .and_then(|c| c.as_str())
                        .map(PathBuf::from)
                });
            let container = recorded.or_else(|| {
                persistent
                    .iter()
                    .find(|p| crate::runtime::state_anchor::anchor_name(p) == name)
                    .cloned()
            });
            AnchorRef {
                container,
                dir: e.path(),
                name,
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}
