//! The `lazaret state` verbs: resolve the Domain, check the safety conditions, run the
//! namespace-side work, print the human report or the JSON envelope.

use super::generations::AnchorDir;
use super::ns::ResetDone;
use super::report::{
    self, DomainRef, InspectEnvelope, ListEnvelope, Problem, ResetEnvelope, VerifyEnvelope,
};
use super::target::{self, AnchorRef};
use super::{guard, listing};
use crate::domain::layout::Layout;
use crate::domain::Domain;
use crate::runtime::podman::Podman;
use crate::runtime::state_anchor::call_raw;
use crate::runtime::state_anchor_ns::NsRequest;
use anyhow::{bail, Context};
use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;

/// `--domain`, `--profile`, `--json`.
pub use crate::cli::state::Target;

fn domain_ref(d: &Domain) -> DomainRef {
    DomainRef {
        domain_id: d.id.to_string(),
        profile: d.profile.clone(),
        workspace: d.workspace.root.clone(),
    }
}

fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    crate::say_out!("{}", crate::cli::safe_json::to_string(value)?);
    Ok(())
}

/// The profile's image and persistent paths, when the profile still exists.
fn profile_of(layout: &Layout, d: &Domain) -> (Option<String>, Vec<PathBuf>) {
    crate::config::HostConfig::load(layout)
        .ok()
        .and_then(|c| c.profile(Some(&d.profile)).ok())
        .map(|p| (Some(p.image.clone()), p.persistent.clone()))
        .unwrap_or((None, Vec::new()))
}

/// How long `state list` waits for teardowns still in progress (the last `lazaret run` returns
/// before its Domain's containers are removed, issue #18).
const TEARDOWN_SETTLE: std::time::Duration = std::time::Duration::from_secs(5);

/// Domains measured by one `podman unshare` (its request is one argument: 128 KiB at most).
const MEASURED_TOGETHER: usize = 32;

/// Measures the sizes of `domains` inside podman's user namespace, where the anchors' files of
/// subordinate uids and the overlay work dirs (mode 0) are readable; as the calling user when
/// that fails (those entries are then listed as unreadable, with the error).
fn measure(storage_root: &std::path::Path, domains: &mut [listing::DomainEntry]) {
    let (anchors, ignored) = listing::trees(storage_root, domains);
    let req = NsRequest::Sizes { anchors, ignored };
    let measured = call_raw(&Podman::default(), "measuring the State Anchors", &req)
        .and_then(|out| Ok(serde_json::from_str::<super::ns::Sizes>(out.trim())?));
    match measured {
        Ok(s) => listing::fill_sizes(domains, s.anchors, s.ignored),
        Err(e) => {
            tracing::warn!("measuring in the user namespace failed ({e:#}); measuring here");
            listing::measure_here(storage_root, domains);
        }
    }
}

pub fn list(layout: &Layout, json: bool) -> anyhow::Result<i32> {
    let runtime_root = layout.runtime_root()?;
    let activity = |meta: &crate::domain::DomainMetadata| {
        let d = Domain {
            runtime_dir: runtime_root.join(meta.domain_id.as_str()),
            root: layout
                .storage_root()
                .join("domains")
                .join(meta.domain_id.as_str()),
            id: meta.domain_id.clone(),
            profile: meta.profile.clone(),
            workspace: crate::domain::workspace::Workspace {
                root: meta.workspace.clone(),
                relative_cwd: PathBuf::new(),
            },
        };
        guard::holder(&d)
    };
    listing::settle_teardowns(&runtime_root, TEARDOWN_SETTLE);
    let storage_root = layout.storage_root();
    let mut domains = listing::list_unmeasured(&storage_root, &runtime_root, &activity)?;
    for chunk in domains.chunks_mut(MEASURED_TOGETHER) {
        measure(&storage_root, chunk);
    }
    if json {
        print_json(&ListEnvelope {
            version: 1,
            domains,
        })?;
    } else {
        let text = report::list_text(&domains);
        crate::say_out_inline!("{text}");
        if !text.ends_with('\n') {
            crate::say_out!("");
        }
    }
    Ok(0)
}

pub fn inspect(layout: &Layout, t: &Target, limit: usize) -> anyhow::Result<i32> {
    let d = target::resolve(layout, t.domain.as_deref(), t.profile.as_deref())?;
    let (image, persistent) = profile_of(layout, &d);
    let anchors: Vec<(PathBuf, PathBuf)> = target::anchors(&d, &persistent)
        .into_iter()
        .filter_map(|a| a.container.map(|c| (c, a.dir)))
        .collect();
    let empty_lower = d.runtime_dir.join("empty-lower");
    crate::domain::layout::ensure_private_dir(&d.runtime_dir)?;
    std::fs::create_dir_all(&empty_lower)
        .with_context(|| format!("creating {}", empty_lower.display()))?;
    let req = NsRequest::Inspect {
        image,
        anchors,
        empty_lower,
        limit,
    };
    let out = call_raw(&Podman::default(), "reading the State Anchors", &req)?;
    let inspections: Vec<super::inspect::Inspection> = serde_json::from_str(out.trim())
        .with_context(|| format!("reading the State Anchors: unexpected answer {out:?}"))?;
    if t.json {
        print_json(&InspectEnvelope {
            version: 1,
            domain: domain_ref(&d),
            anchors: inspections,
        })?;
    } else {
        let text = report::inspect_text(&domain_ref(&d), &inspections);
        crate::say_out_inline!("{text}");
        if !text.ends_with('\n') {
            crate::say_out!("");
        }
    }
    Ok(0)
}

pub fn verify(layout: &Layout, t: &Target) -> anyhow::Result<i32> {
    let d = target::resolve(layout, t.domain.as_deref(), t.profile.as_deref())?;
    let _lock = guard::take(&d, "verify")?;
    let (_, persistent) = profile_of(layout, &d);
    let mut problems = Vec::new();
    match target::read_metadata(&d.root) {
        Ok(m) if m.domain_id == d.id => {}
        Ok(_) => problems.push(Problem {
            anchor: None,
            problem: "domain.json names another Domain".into(),
        }),
        Err(e) => problems.push(Problem {
            anchor: None,
            problem: format!("{e:#}"),
        }),
    }
    for a in target::anchors(&d, &persistent) {
        let label = a
            .container
            .clone()
            .unwrap_or_else(|| PathBuf::from(&a.name));
        let found = match AnchorDir::open(&a.dir, false) {
            Ok(dir) => dir.verify(),
            Err(e) => vec![format!("{e:#}")],
        };
        problems.extend(found.into_iter().map(|p| Problem {
            anchor: Some(label.clone()),
            problem: p,
        }));
    }
    let ok = problems.is_empty();
    if t.json {
        print_json(&VerifyEnvelope {
            version: 1,
            domain: domain_ref(&d),
            ok,
            problems,
        })?;
    } else if ok {
        crate::say_out!(
            "{}: the State of Domain {} (profile {}) is structurally sound",
            d.workspace.root.display(),
            d.id,
            d.profile
        );
    } else {
        for p in &problems {
            let what = p
                .anchor
                .as_ref()
                .map(|a| a.display().to_string())
                .unwrap_or_else(|| "Domain".into());
            crate::say_out!("{what}: {}", crate::terminal::escape::visible(&p.problem));
        }
        crate::say_out!("the next `lazaret run` there repairs what it can (an invalid generation pointer becomes a fresh empty generation)");
    }
    Ok(if ok { 0 } else { 1 })
}

/// The anchors `paths` name (or all), or an error listing the ones there are.
fn select(all: &[AnchorRef], paths: &[String], every: bool) -> anyhow::Result<Vec<AnchorRef>> {
    if every {
        return Ok(all.to_vec());
    }
    let mut out = Vec::new();
    for p in paths {
        let wanted = crate::config::paths::normalize_absolute(p).map_err(|e| anyhow::anyhow!(e))?;
        match all
            .iter()
            .find(|a| a.container.as_deref() == Some(wanted.as_path()))
        {
            Some(a) => out.push(a.clone()),
            None => bail!(
                "no State Anchor of {} in this Domain; it has: {}",
                wanted.display(),
                all.iter()
                    .map(|a| a
                        .container
                        .as_ref()
                        .map(|c| c.display().to_string())
                        .unwrap_or_else(|| a.name.clone()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    Ok(out)
}

fn confirm(question: &str) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        bail!("not confirmed: stdin is not a terminal; pass --yes to reset without asking");
    }
    crate::say_inline!("{question} [y/N] ");
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

pub fn reset(
    layout: &Layout,
    t: &Target,
    paths: &[String],
    every: bool,
    yes: bool,
) -> anyhow::Result<i32> {
    let d = target::resolve(layout, t.domain.as_deref(), t.profile.as_deref())?;
    let (_, persistent) = profile_of(layout, &d);
    let chosen = select(&target::anchors(&d, &persistent), paths, every)?;
    if chosen.is_empty() {
        bail!("the Domain has no State Anchors: nothing to reset");
    }
    let _lock = guard::take(&d, "reset")?;
    let names: Vec<String> = chosen
        .iter()
        .map(|a| {
            a.container
                .as_ref()
                .map(|c| c.display().to_string())
                .unwrap_or_else(|| a.name.clone())
        })
        .collect();
    crate::say!(
        "Domain {} — profile {}, workspace {}",
        d.id,
        d.profile,
        d.workspace.root.display()
    );
    for (a, name) in chosen.iter().zip(&names) {
        let size = listing::tree_size(&a.dir);
        crate::say!("  reset {name}  {}", report::size_text(&size));
    }
    crate::say!("The base image, the workspace, Ignored Workspace State and other State Anchors are not touched.");
    if !yes
        && !confirm(&format!(
            "Reset {} State Anchor{}?",
            names.len(),
            if names.len() == 1 { "" } else { "s" }
        ))?
    {
        crate::say!("nothing reset");
        return Ok(1);
    }
    let req = NsRequest::Reset {
        dirs: chosen.iter().map(|a| a.dir.clone()).collect(),
    };
    let out = call_raw(&Podman::default(), "resetting the State Anchors", &req)?;
    let done: Vec<ResetDone> = serde_json::from_str(out.trim())
        .with_context(|| format!("resetting: unexpected answer {out:?}"))?;
    let generation: BTreeMap<String, u64> = names
        .iter()
        .cloned()
        .zip(done.iter().map(|r| r.generation))
        .collect();
    if t.json {
        print_json(&ResetEnvelope {
            version: 1,
            domain: domain_ref(&d),
            reset: names.clone(),
            generation,
        })?;
    } else {
        for (name, g) in &generation {
            crate::say_out!(
                "reset {name} (now generation {g}); the next launch starts it from the image"
            );
        }
    }
    Ok(0)
}
