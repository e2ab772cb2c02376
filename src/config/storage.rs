//! Filesystem grants of a profile: `persistent` State Anchor paths (spec §3.4), extra
//! `volumes` from the host (SR-2, SR-3, SR-10) and `hide_editor_dirs` (spec §3.3).

use super::file::RawVolume;
use super::paths::{self, canonical_best_effort, is_within, overlaps};
use super::validate::{Check, Placed};
use crate::profile::Volume;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// At most this many State Anchor paths per profile (each is an overlay mount).
pub const MAX_PERSISTENT: usize = 16;

/// Where the Agent Workspace is mounted in the sandbox.
pub const WORKSPACE: &str = "/workspace";

/// Container trees whose content is made by the kernel or per boot, never kept.
const VOLATILE: [&str; 5] = ["/proc", "/sys", "/dev", "/run", "/tmp"];

fn persistent_problem(p: &Path) -> Option<String> {
    if p == Path::new("/") {
        return Some(
            "persistent path \"/\" would keep the whole filesystem: list the directories \
             installations write to instead (e.g. \"/usr\", \"/etc\", \"/var\", \"/root\", \"/opt\")"
                .to_owned(),
        );
    }
    if is_within(p, Path::new(WORKSPACE)) {
        return Some(format!(
            "persistent path {} is in the workspace ({WORKSPACE}), which is the host project \
             itself: remove it (ignored workspace paths already persist as Ignored Workspace State)",
            p.display()
        ));
    }
    VOLATILE
        .iter()
        .find(|v| is_within(p, Path::new(v)))
        .map(|v| {
            format!(
                "persistent path {} is under {v}, whose content the sandbox kernel creates at \
                 each start: remove it",
                p.display()
            )
        })
}

/// Validates `persistent = [...]`: absolute, normalised, allowed, none inside another.
pub fn persistent(c: &mut Check<'_>, raw: &Spanned<Vec<Spanned<String>>>) -> Vec<Placed<PathBuf>> {
    if raw.get_ref().len() > MAX_PERSISTENT {
        c.error(
            Some(&raw.span()),
            format!(
                "persistent lists {} paths; at most {MAX_PERSISTENT} are allowed: keep a common \
                 parent instead of several children",
                raw.get_ref().len()
            ),
        );
    }
    let mut out: Vec<Placed<PathBuf>> = Vec::new();
    for item in raw.get_ref() {
        let span = item.span();
        let p = match paths::normalize_absolute(item.get_ref()) {
            Ok(p) => p,
            Err(e) => {
                c.error(Some(&span), format!("persistent path: {e}"));
                continue;
            }
        };
        if let Some(problem) = persistent_problem(&p) {
            c.error(Some(&span), problem);
            continue;
        }
        if let Some(prev) = out.iter().find(|q| overlaps(&p, &q.value)) {
            let msg = if prev.value == p {
                format!(
                    "persistent path {} is listed twice (also at {}): remove one",
                    p.display(),
                    c.line_of(prev.span.as_ref())
                )
            } else {
                let (inner, outer) = if is_within(&p, &prev.value) {
                    (&p, &prev.value)
                } else {
                    (&prev.value, &p)
                };
                format!(
                    "persistent path {} is inside persistent path {} ({} and {}): keep only {}",
                    inner.display(),
                    outer.display(),
                    c.line_of(Some(&span)),
                    c.line_of(prev.span.as_ref()),
                    outer.display()
                )
            };
            c.error(Some(&span), msg);
            continue;
        }
        out.push(Placed::here(p, span));
    }
    out
}

/// Validates the host side of a volume: absolute after `~/` expansion and clear of Lazaret's
/// own directories and of the home directory as a whole.
fn volume_host(c: &mut Check<'_>, raw: &Spanned<String>) -> Option<PathBuf> {
    let span = raw.span();
    let host = match paths::expand_home(raw.get_ref(), &c.host.home) {
        Ok(h) => h,
        Err(e) => {
            c.error(Some(&span), format!("volume host path: {e}"));
            return None;
        }
    };
    let canon = canonical_best_effort(&host);
    let home = c.host.home.clone();
    if is_within(&home, &host) || is_within(&canonical_best_effort(&home), &canon) {
        let msg = format!(
            "volume host path {} contains your home directory {}: mount only the directory the \
             agent needs (e.g. \"~/.cache/pip\")",
            host.display(),
            home.display()
        );
        c.error(Some(&span), msg);
        return None;
    }
    let dirs: Vec<(&str, PathBuf)> = c
        .host
        .lazaret_dirs()
        .into_iter()
        .map(|(what, d)| (what, d.to_path_buf()))
        .collect();
    for (what, dir) in dirs {
        if overlaps(&host, &dir) || overlaps(&canon, &canonical_best_effort(&dir)) {
            let msg = format!(
                "volume host path {} overlaps Lazaret's {what} {}: Lazaret's own files must \
                 never be reachable from the sandbox (SR-2, SR-3); mount a directory outside it",
                c.host.show(&host),
                c.host.show(&dir)
            );
            c.error(Some(&span), msg);
            return None;
        }
    }
    Some(host)
}

/// Validates the container side of a volume: absolute, normalised, not `/`, not the workspace.
fn volume_container(c: &mut Check<'_>, raw: &Spanned<String>) -> Option<PathBuf> {
    let span = raw.span();
    let p = match paths::normalize_absolute(raw.get_ref()) {
        Ok(p) => p,
        Err(e) => {
            c.error(Some(&span), format!("volume container path: {e}"));
            return None;
        }
    };
    if p == Path::new("/") {
        c.error(
            Some(&span),
            "volume container path is \"/\": mount the volume at a directory, e.g. \"/data\"",
        );
        return None;
    }
    if is_within(&p, Path::new(WORKSPACE)) {
        c.error(
            Some(&span),
            format!(
                "volume container path {} is in {WORKSPACE}, where the workspace is mounted: \
                 choose a path outside it",
                p.display()
            ),
        );
        return None;
    }
    Some(p)
}

/// Validates `[[volumes]]`; the placed span of each volume is its `container` value.
pub fn volumes(c: &mut Check<'_>, raw: &[RawVolume]) -> Vec<Placed<Volume>> {
    let mut out: Vec<Placed<Volume>> = Vec::new();
    for v in raw {
        let host = volume_host(c, &v.host);
        let container = volume_container(c, &v.container);
        let (Some(host), Some(container)) = (host, container) else {
            continue;
        };
        let span = v.container.span();
        if let Some(prev) = out.iter().find(|p| p.value.container == container) {
            let msg = format!(
                "two volumes are mounted at {} (here and at {}): give each its own container path",
                container.display(),
                c.line_of(prev.span.as_ref())
            );
            c.error(Some(&span), msg);
            continue;
        }
        out.push(Placed::here(
            Volume {
                host,
                container,
                read_only: v.read_only,
            },
            span,
        ));
    }
    out
}

/// A volume may not be mounted at, inside, or above a State Anchor path.
pub fn volumes_vs_persistent(
    c: &mut Check<'_>,
    volumes: &[Placed<Volume>],
    persistent: &[Placed<PathBuf>],
) {
    for v in volumes {
        for p in persistent {
            if overlaps(&v.value.container, &p.value) {
                let span = v.span.as_ref().or(p.span.as_ref()).cloned();
                let msg = format!(
                    "volume container path {} overlaps persistent path {} ({}): a volume can \
                     neither be mounted into a State Anchor nor contain one; choose another \
                     container path",
                    v.value.container.display(),
                    p.value.display(),
                    c.line_of(p.span.as_ref())
                );
                c.error(span.as_ref(), msg);
            }
        }
    }
}

/// Validates `hide_editor_dirs`: workspace-relative, normalised, not Git's own directory.
pub fn hide_editor_dirs(c: &mut Check<'_>, raw: &[Spanned<String>]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for item in raw {
        match paths::normalize_relative(item.get_ref()) {
            Ok(p) if p.starts_with(".git") => c.error(
                Some(&item.span()),
                format!(
                    "hide_editor_dirs entry {} is Git's directory, which the Git Sentry already \
                     protects (hiding it would break Git in the sandbox): remove it",
                    p.display()
                ),
            ),
            Ok(p) => {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
            Err(e) => c.error(Some(&item.span()), format!("hide_editor_dirs entry: {e}")),
        }
    }
    out
}
