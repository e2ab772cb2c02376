//! Domain ID (spec FR-1): deterministic from the Agent Profile name and the canonical workspace.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Number of hex digits kept from the digest: 80 bits, short enough for container names.
pub const DOMAIN_ID_HEX_LEN: usize = 20;

/// The stable identifier of one `(Agent Profile, canonical Agent Workspace)` pair.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DomainId(String);

impl DomainId {
    /// Derives the Domain ID. `workspace` must already be canonical (absolute, no symlinks):
    /// the caller resolves it, so that every path naming the same directory gives one Domain.
    pub fn derive(profile: &str, workspace: &Path) -> DomainId {
        let mut h = Sha256::new();
        // Domain separation tag and length prefixes: no two (profile, path) pairs share an input.
        h.update(b"lazaret.domain.v1\0");
        h.update((profile.len() as u64).to_be_bytes());
        h.update(profile.as_bytes());
        let path = workspace.as_os_str().as_bytes();
        h.update((path.len() as u64).to_be_bytes());
        h.update(path);
        let digest = h.finalize();
        let mut hex = String::with_capacity(DOMAIN_ID_HEX_LEN);
        for byte in digest.iter().take(DOMAIN_ID_HEX_LEN / 2) {
            hex.push_str(&format!("{byte:02x}"));
        }
        DomainId(hex)
    }

    /// Parses a Domain ID given by a user or read from metadata; only the derived shape passes.
    pub fn parse(s: &str) -> Option<DomainId> {
        let ok = s.len() == DOMAIN_ID_HEX_LEN
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        ok.then(|| DomainId(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for DomainId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_pair_same_id() {
        let a = DomainId::derive("default", Path::new("/home/dev/project"));
        let b = DomainId::derive("default", Path::new("/home/dev/project"));
        assert_eq!(a, b);
        assert_eq!(a.as_str().len(), DOMAIN_ID_HEX_LEN);
    }

    #[test]
    fn profile_and_path_both_matter() {
        let base = DomainId::derive("default", Path::new("/w/p"));
        assert_ne!(base, DomainId::derive("other", Path::new("/w/p")));
        assert_ne!(base, DomainId::derive("default", Path::new("/w/q")));
        // Length prefixes keep the boundary between the two inputs unambiguous.
        assert_ne!(
            DomainId::derive("a", Path::new("/b")),
            DomainId::derive("a/", Path::new("b"))
        );
    }

    #[test]
    fn parse_accepts_only_derived_shape() {
        let id = DomainId::derive("default", Path::new("/x"));
        assert_eq!(DomainId::parse(id.as_str()), Some(id));
        assert_eq!(DomainId::parse("../../etc"), None);
        assert_eq!(DomainId::parse("ABCDEF0123456789ABCD"), None);
        assert_eq!(DomainId::parse(""), None);
    }
}
