//! Everything mounted into the Agent Sandbox, decided in one place (SR-3: only the workspace,
//! configured volumes and Lazaret's fixed control mounts; SR-4 Git Sentry; SR-13 Ignored
//! Workspace State; §3.4 State Anchors).

use super::mounts::SandboxMount;
use super::state_anchor::StateAnchors;
use super::{git_sentry, ignored_state};
use crate::domain::workspace::SANDBOX_WORKSPACE;
use crate::domain::Domain;
use crate::profile::AgentProfile;
use std::path::Path;

/// The sandbox's mounts, parents before children, and what the user should know about them.
#[derive(Clone, Debug, Default)]
pub struct SandboxMounts {
    pub mounts: Vec<SandboxMount>,
    /// Details for the log.
    pub notes: Vec<String>,
    /// What the developer must be told: changes made to the workspace, protections with holes.
    pub notices: Vec<String>,
}

/// Plans the mounts of `domain`'s sandbox for `profile`. Creates what must exist on the host
/// (Ignored Workspace State storage, an absent `.git/hooks` to protect).
pub fn plan(
    domain: &Domain,
    profile: &AgentProfile,
    anchors: &StateAnchors,
) -> anyhow::Result<SandboxMounts> {
    let ws = &domain.workspace.root;
    let mut out = SandboxMounts::default();
    out.mounts.push(SandboxMount::bind(
        ws,
        Path::new(SANDBOX_WORKSPACE),
        false,
        "Agent Workspace",
    ));
    // Git control files the sandbox may have planted are refused before anything starts.
    let store = git_sentry::guard::store_of(domain);
    git_sentry::guard::before_start(ws, &store)?;
    // A repository: the sandbox gets the git boundary's private directory (issue #30), and
    // the host's `.git` is not shown at all.
    let boundary = match super::git_boundary::mounts::HostLayout::discover(ws)? {
        Some(layout) => {
            let developers = git_sentry::record::load(&store, ws)?
                .map(|r| r.nested)
                .unwrap_or_default();
            Some(super::git_boundary::mounts::plan(
                domain,
                &layout,
                &developers,
            )?)
        }
        None => None,
    };
    let sentry = match &boundary {
        Some(_) => git_sentry::plan_editor_dirs(ws, &profile.hide_editor_dirs)?,
        None => git_sentry::plan(ws, &profile.hide_editor_dirs)?,
    };
    out.notes.extend(sentry.notes);
    // A mount cannot pin a symlink: the sandbox could replace it with a directory of its own
    // (hooks host git would run), so SR-4 cannot hold; refuse, saying how to fix it.
    if let Some(link) = sentry.replaceable_links.first() {
        let target = std::fs::read_link(link)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "<target>".to_owned());
        let fix = if link.ends_with("hooks") {
            format!(
                "keep the hooks where they are and point git at them from the read-only config \
                 instead: `git config core.hooksPath {target} && rm {l} && mkdir {l}`",
                l = link.display()
            )
        } else {
            "replace the symlink with the directory itself".to_owned()
        };
        anyhow::bail!(
            "{} is a symlink inside the Git directory: the sandbox could replace it with one of \
             its own that host git would follow, and no mount can prevent that (SR-4). To use \
             this repository with Lazaret, {fix} (see docs/git-sentry.md)",
            link.display()
        );
    }
    let mut protected = sentry.mounts;
    if let Some((mounts, notes)) = boundary {
        protected.extend(mounts);
        out.notes.extend(notes);
    }
    if profile.isolate_ignored {
        let ignored = ignored_state::plan(ws, &domain.root.join("ignored"))?;
        out.notes.extend(ignored.notes);
        for dir in &ignored.created_mount_points {
            out.notices.push(format!(
                "created the empty, Git-ignored directory {}/ in the workspace: the sandbox's \
                 writes there go to the Domain's Ignored Workspace State, not to your host copy",
                dir.display()
            ));
        }
        // A protective mount wins over Ignored Workspace State at the same place.
        out.mounts.extend(ignored.mounts.into_iter().filter(|m| {
            !protected
                .iter()
                .any(|p| m.container.starts_with(&p.container))
        }));
    } else {
        out.notes.push(format!(
            "profile {:?} turns Ignored Workspace State off: ignored paths are shared with the host",
            profile.name
        ));
    }
    out.mounts.extend(protected);
    for v in &profile.volumes {
        let why = format!("volume {}", v.host.display());
        out.mounts
            .push(SandboxMount::bind(&v.host, &v.container, v.read_only, &why));
    }
    out.mounts.extend(anchors.mounts());
    // Lazaret's fixed control mounts: the Escalation Mailbox (requests in, results out) and
    // the Escalation Client. Never host configuration, never the coordinator's socket.
    let mailbox = crate::escalation::mailbox::Mailbox::prepare(&domain.runtime_dir)?;
    let sandbox_mailbox = Path::new(crate::escalation::mailbox::SANDBOX_MAILBOX);
    out.mounts.push(SandboxMount::bind(
        &mailbox.req,
        &sandbox_mailbox.join("req"),
        false,
        "Escalation Mailbox: requests",
    ));
    out.mounts.push(SandboxMount::bind(
        &mailbox.res,
        &sandbox_mailbox.join("res"),
        true,
        "Escalation Mailbox: results",
    ));
    let client = crate::runtime::sidecar_image::sibling_binary("lazaret-escalate")?;
    out.mounts.push(SandboxMount::bind(
        &client,
        Path::new(crate::escalation::mailbox::SANDBOX_CLIENT),
        true,
        "Escalation Client",
    ));
    // The same executable under the clipboard tools' names is the image-paste shim (issue
    // #16): it answers as `xclip` / `wl-paste` when the image has none of its own.
    for tool in crate::escalation::mailbox::SANDBOX_CLIPBOARD_SHIMS {
        out.mounts.push(SandboxMount::bind(
            &client,
            Path::new(tool),
            true,
            "clipboard shim (image paste)",
        ));
    }
    // Parents before children: a stable sort by depth keeps the order above among equals.
    out.mounts.sort_by_key(|m| m.container.components().count());
    // `disk` (issue #19) is checked here, at start, and never enforced while running.
    if let Some(notice) = super::limits::disk_notice(&domain.root, profile.limits.disk) {
        out.notices.push(notice);
    }
    Ok(out)
}
