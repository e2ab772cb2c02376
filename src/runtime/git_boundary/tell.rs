//! What the boundary tells the developer: one line per thing that crossed, logged and appended
//! to the Domain's boundary log (host-private), which `lazaret run` prints after its command.

use super::reconcile::Report;
use super::refs::Head;
use super::{printable, Boundary, LOG};
use crate::domain::Domain;
use std::fmt::Write as _;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt;

impl Boundary {
    pub(super) fn describe(&self, r: &Report) -> String {
        let host = &self.layout.repo;
        let short = |n: &str| {
            n.strip_prefix("refs/heads/")
                .or_else(|| n.strip_prefix("refs/"))
                .unwrap_or(n)
                .to_owned()
        };
        match r {
            Report::AgentMoved { name, from, to } => {
                let what = short(name);
                match from {
                    None if name.starts_with("refs/tags/") => {
                        format!("git boundary: agent created {what} at {}", to.short())
                    }
                    None => format!(
                        "git boundary: agent created branch {what} at {}",
                        to.short()
                    ),
                    Some(f) if host.is_ancestor(f, to) => format!(
                        "git boundary: agent committed {} commits to {what} (fast-forwarded)",
                        host.count(Some(f), to).unwrap_or(0)
                    ),
                    Some(f) => format!(
                        "git boundary: agent rewrote {what} ({} → {}); the old commit stays in \
                         `git reflog {what}`",
                        f.short(),
                        to.short()
                    ),
                }
            }
            Report::AgentDeleted { name, kept } => format!(
                "git boundary: agent deleted {}; its last commit is kept as {kept}",
                short(name)
            ),
            Report::Diverged { name, kept } => format!(
                "git boundary: agent branch {} kept under {kept} (your {} moved too): `git log \
                 {}..{kept}` shows its commits",
                short(name),
                short(name),
                short(name)
            ),
            Report::KeptCheckedOut { name } => format!(
                "git boundary: agent deleted {}, which is checked out here: kept",
                short(name)
            ),
            Report::HostHeadFollowed { to } => match to {
                Head::Branch(b) => format!(
                    "git boundary: agent switched to branch {}: your checkout follows",
                    short(b)
                ),
                Head::Detached(o) => format!(
                    "git boundary: agent detached HEAD at {}: your checkout follows",
                    o.short()
                ),
            },
        }
    }

    /// Logs `msgs` and appends them to the Domain's boundary log; returns them.
    pub(super) fn tell(&self, msgs: Vec<String>) -> Vec<String> {
        if msgs.is_empty() {
            return msgs;
        }
        let mut text = String::new();
        for m in &msgs {
            tracing::info!("{m}");
            let _ = writeln!(text, "{}", printable(m));
        }
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&self.log)
            .and_then(|mut f| f.write_all(text.as_bytes()));
        msgs
    }
}

/// Lines of the Domain's boundary log from byte `from` on (what rounds told since then).
pub fn log_since(domain: &Domain, from: u64) -> Vec<String> {
    use std::io::{Read, Seek};
    let Ok(mut f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(domain.runtime_dir.join(LOG))
    else {
        return Vec::new();
    };
    let mut text = String::new();
    let _ = f.seek(std::io::SeekFrom::Start(from));
    let _ = f.take(1 << 20).read_to_string(&mut text);
    text.lines().map(str::to_owned).collect()
}

/// The boundary log's length now (see [`log_since`]).
pub fn log_len(domain: &Domain) -> u64 {
    std::fs::symlink_metadata(domain.runtime_dir.join(LOG)).map_or(0, |m| m.len())
}
