//! Domain ID (spec FR-1): deterministic from the Agent Profile name and the canonical workspace,
//! keyed with the developer's Domain Key.
//!
//! The Domain ID is visible inside the Agent Sandbox (`LAZARET_DOMAIN`, request records) and on
//! the host to every user (container names in process lists). An unkeyed hash of (profile,
//! workspace path) would let anyone who sees it confirm guesses of the host path by hashing
//! them, so [`DomainId::derive_keyed`] is an HMAC-SHA256 keyed with a per-user secret
//! ([`DomainKey`], kept host-private in the Storage Root and never mounted). The unkeyed
//! derivation [`DomainId::derive`] is what Lazaret used before; it still names Domains created
//! then, until they are migrated (`src/domain/legacy.rs`), and test fixtures.

use hmac::{Hmac, Mac};
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

/// Bytes of a [`DomainKey`].
pub const DOMAIN_KEY_LEN: usize = 32;

/// The developer's secret that keys Domain IDs: 32 random bytes, created once per user.
#[derive(Clone, PartialEq, Eq)]
pub struct DomainKey([u8; DOMAIN_KEY_LEN]);

impl fmt::Debug for DomainKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DomainKey(..)")
    }
}

impl DomainKey {
    /// A fresh random key.
    pub fn generate() -> Result<DomainKey, crate::identity::IdentityError> {
        let mut bytes = [0u8; DOMAIN_KEY_LEN];
        getrandom::fill(&mut bytes)
            .map_err(|e| crate::identity::IdentityError::Random(e.to_string()))?;
        Ok(DomainKey(bytes))
    }

    /// The key stored as exactly [`DOMAIN_KEY_LEN`] bytes.
    pub fn from_bytes(bytes: &[u8]) -> Option<DomainKey> {
        Some(DomainKey(bytes.try_into().ok()?))
    }

    pub fn as_bytes(&self) -> &[u8; DOMAIN_KEY_LEN] {
        &self.0
    }
}

/// The length-prefixed (profile, path) input: no two pairs share one.
fn id_input(profile: &str, workspace: &Path) -> Vec<u8> {
    let path = workspace.as_os_str().as_bytes();
    let mut input = Vec::with_capacity(16 + profile.len() + path.len());
    input.extend((profile.len() as u64).to_be_bytes());
    input.extend(profile.as_bytes());
    input.extend((path.len() as u64).to_be_bytes());
    input.extend(path);
    input
}

fn from_digest(digest: &[u8]) -> DomainId {
    let mut hex = String::with_capacity(DOMAIN_ID_HEX_LEN);
    for byte in digest.iter().take(DOMAIN_ID_HEX_LEN / 2) {
        hex.push_str(&format!("{byte:02x}"));
    }
    DomainId(hex)
}

impl DomainId {
    /// The Domain ID of real Domains: HMAC-SHA256 keyed with the developer's [`DomainKey`]
    /// over a separation tag and the length-prefixed pair. `workspace` must already be
    /// canonical (absolute, no symlinks): the caller resolves it, so that every path naming the
    /// same directory gives one Domain.
    pub fn derive_keyed(key: &DomainKey, profile: &str, workspace: &Path) -> DomainId {
        // HMAC accepts keys of any length: this cannot fail.
        let mut mac = match <Hmac<Sha256> as Mac>::new_from_slice(key.as_bytes()) {
            Ok(mac) => mac,
            Err(_) => return DomainId(String::new()),
        };
        mac.update(b"lazaret.domain.v2\0");
        mac.update(&id_input(profile, workspace));
        from_digest(&mac.finalize().into_bytes())
    }

    /// The unkeyed derivation Lazaret used before Domain Keys (SHA-256 of a separation tag
    /// and the pair): only for finding Domains created then, and for test fixtures. Anyone
    /// can compute it from a guessed path, so it must not name a Domain the sandbox sees.
    pub fn derive(profile: &str, workspace: &Path) -> DomainId {
        let mut h = Sha256::new();
        h.update(b"lazaret.domain.v1\0");
        h.update(id_input(profile, workspace));
        from_digest(&h.finalize())
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
    fn keyed_ids_depend_on_the_key_and_differ_from_the_unkeyed_one() {
        let k1 = DomainKey::from_bytes(&[1; 32]).unwrap();
        let k2 = DomainKey::from_bytes(&[2; 32]).unwrap();
        let p = Path::new("/home/dev/project");
        let a = DomainId::derive_keyed(&k1, "default", p);
        assert_eq!(a, DomainId::derive_keyed(&k1, "default", p));
        assert_eq!(DomainId::parse(a.as_str()), Some(a.clone()));
        assert_ne!(a, DomainId::derive_keyed(&k2, "default", p));
        assert_ne!(a, DomainId::derive("default", p));
        assert_ne!(a, DomainId::derive_keyed(&k1, "other", p));
        assert_ne!(
            a,
            DomainId::derive_keyed(&k1, "default", Path::new("/home/dev/q"))
        );
        assert!(DomainKey::from_bytes(&[0; 31]).is_none());
        assert_ne!(
            DomainKey::generate().unwrap(),
            DomainKey::generate().unwrap()
        );
        assert_eq!(format!("{k1:?}"), "DomainKey(..)");
    }

    #[test]
    fn the_unkeyed_derivation_is_unchanged() {
        // Domains created before Domain Keys are found by this exact value.
        let mut h = Sha256::new();
        h.update(b"lazaret.domain.v1\0");
        h.update(7u64.to_be_bytes());
        h.update(b"default");
        h.update(2u64.to_be_bytes());
        h.update(b"/w");
        let hex: String = h.finalize()[..10]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(DomainId::derive("default", Path::new("/w")).as_str(), hex);
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
