//! What `lazaret escalations` last showed the developer (DX-4, issue #31): the IDs it listed
//! and their command digests, kept in the user's private runtime directory for
//! [`REMEMBERED`], so that `lazaret approve PREFIX` decides the request the developer read
//! under that prefix or nothing.
//!
//! A prefix that named a listed request, where that request no longer waits and the prefix
//! now matches another one, is refused ([`check`]); so is a prefix that now names a request
//! whose command differs from the one listed under it.

use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// The file, in Lazaret's runtime directory.
pub const FILE: &str = "escalations-listed.json";
/// How long a listing binds the prefixes it showed.
pub const REMEMBERED: Duration = Duration::from_secs(3600);
/// Most entries kept.
const MAX: usize = 256;

/// One listed request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shown {
    pub request_id: String,
    pub digest: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Listing {
    unix_ms: u64,
    shown: Vec<Shown>,
}

/// Remembers what was listed now (replacing the previous listing). Failing to remember is
/// not worth failing the listing for: logged.
pub fn remember(runtime_root: &Path, shown: Vec<Shown>, now_ms: u64) {
    let listing = Listing {
        unix_ms: now_ms,
        shown: shown.into_iter().take(MAX).collect(),
    };
    let write = || -> std::io::Result<()> {
        let bytes = serde_json::to_vec(&listing).map_err(std::io::Error::other)?;
        let tmp = runtime_root.join(format!(".{FILE}.{}", std::process::id()));
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, runtime_root.join(FILE))
    };
    if let Err(e) = write() {
        tracing::warn!("remembering the listed escalation requests: {e}");
    }
}

/// What the last listing showed, if it was recent; nothing when missing, stale or unreadable.
pub fn recall(runtime_root: &Path, now_ms: u64) -> Vec<Shown> {
    let Ok(bytes) = std::fs::read(runtime_root.join(FILE)) else {
        return Vec::new();
    };
    match serde_json::from_slice::<Listing>(&bytes) {
        Ok(l) if now_ms.saturating_sub(l.unix_ms) <= REMEMBERED.as_millis() as u64 => l.shown,
        _ => Vec::new(),
    }
}

/// Whether deciding `resolved` (with `digest`) by `prefix` decides what the listing showed
/// under that prefix. `Err` says why not.
pub fn check(prefix: &str, resolved: &str, digest: &str, listed: &[Shown]) -> Result<(), String> {
    let under: Vec<&Shown> = listed
        .iter()
        .filter(|s| s.request_id.starts_with(prefix))
        .collect();
    if under.is_empty() {
        return Ok(());
    }
    match under.iter().find(|s| s.request_id == resolved) {
        Some(s) if s.digest == digest => Ok(()),
        Some(_) => Err(format!(
            "the command of request {resolved} is not the one `lazaret escalations` listed"
        )),
        None => Err(format!(
            "{prefix} named request {} when `lazaret escalations` listed it; that request no \
             longer waits and {prefix} now names another one ({resolved}) that you have not \
             been shown",
            under[0].request_id
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(id: &str, digest: &str) -> Shown {
        Shown {
            request_id: id.into(),
            digest: digest.into(),
        }
    }

    #[test]
    fn a_prefix_decides_only_what_was_listed_under_it() {
        let listed = [shown("3fa9c1d2aaaa", "d1"), shown("77aa0000bbbb", "d2")];
        assert!(check("3fa9c1d2", "3fa9c1d2aaaa", "d1", &listed).is_ok());
        // Nothing listed under this prefix: nothing to hold it to.
        assert!(check("0000", "0000ffff", "d9", &listed).is_ok());
        // The listed request went; another one took the prefix.
        let e = check("3fa9c1d2", "3fa9c1d2cccc", "d1", &listed).unwrap_err();
        assert!(
            e.contains("3fa9c1d2aaaa") && e.contains("3fa9c1d2cccc"),
            "{e}"
        );
        // Same ID, another command (cannot happen with coordinator IDs: still refused).
        assert!(check("3fa9c1d2", "3fa9c1d2aaaa", "d3", &listed).is_err());
    }

    #[test]
    fn a_listing_is_remembered_for_a_while_only() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        assert!(recall(dir.path(), 0).is_empty());
        remember(dir.path(), vec![shown("ab", "cd")], 1_000);
        assert_eq!(recall(dir.path(), 2_000), vec![shown("ab", "cd")]);
        let later = 1_000 + REMEMBERED.as_millis() as u64 + 1;
        assert!(recall(dir.path(), later).is_empty());
        std::fs::write(dir.path().join(FILE), b"{not json").unwrap_or_default();
        assert!(recall(dir.path(), 2_000).is_empty());
    }
}
