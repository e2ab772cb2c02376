//! Protocol Identities (spec §2, §3.2, SR-9): who a peer is, as one URI.
//!
//! A Protocol Identity binds a component [`Role`], an Agent Profile name, a [`DomainId`] and a
//! runtime [`ComponentId`]. Certificates carry it as exactly one URI Subject Alternative Name:
//!
//! ```text
//! lazaret://<role>/<profile>/<domain-id>/<component-id>
//! ```
//!
//! Every segment has a restricted character set that contains neither `/`, `%`, `?`, `#` nor
//! anything needing escaping, so an identity has exactly one spelling: [`ProtocolIdentity::parse`]
//! accepts a string only if [`ProtocolIdentity::to_uri`] gives it back byte for byte.

use crate::DomainId;
use serde::{Deserialize, Serialize};
use std::fmt;

/// URI scheme of Protocol Identities.
pub const URI_SCHEME: &str = "lazaret";

/// Longest Agent Profile name a Protocol Identity can carry.
pub const MAX_PROFILE_LEN: usize = 64;

/// Longest runtime component ID (a podman container ID, 64 hex digits, fits).
pub const MAX_COMPONENT_ID_LEN: usize = 64;

/// Why an identity, or one of its parts, was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    #[error("unknown component role {0:?}")]
    UnknownRole(String),
    #[error(
        "invalid Agent Profile name {0:?}: use 1 to {MAX_PROFILE_LEN} characters from \
         A-Z a-z 0-9 . _ -, starting with a letter or digit"
    )]
    InvalidProfile(String),
    #[error("invalid Domain ID {0:?}")]
    InvalidDomainId(String),
    #[error(
        "invalid component ID {0:?}: use 1 to {MAX_COMPONENT_ID_LEN} characters from a-z 0-9 -, \
         starting with a letter or digit"
    )]
    InvalidComponentId(String),
    #[error("not a Lazaret Protocol Identity URI: {0:?}")]
    MalformedUri(String),
    #[error("cannot read random bytes from the operating system: {0}")]
    Random(String),
}

/// The component role a certificate is issued for. A certificate for one role never
/// authorizes another (SR-9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// The Domain's Session Coordinator (the TLS server).
    Coordinator,
    /// A host Lazaret CLI process.
    ClientCli,
    /// The Domain's Network Sidecar.
    NetworkSidecar,
    /// The Domain's Agent Sandbox.
    AgentSandbox,
}

impl Role {
    /// All roles, in a fixed order.
    pub const ALL: [Role; 4] = [
        Role::Coordinator,
        Role::ClientCli,
        Role::NetworkSidecar,
        Role::AgentSandbox,
    ];

    /// The role's spelling in identity URIs and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Coordinator => "coordinator",
            Role::ClientCli => "client-cli",
            Role::NetworkSidecar => "network-sidecar",
            Role::AgentSandbox => "agent-sandbox",
        }
    }

    /// Parses the exact spelling of [`Role::as_str`] (case-sensitive).
    pub fn parse(s: &str) -> Result<Role, IdentityError> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| IdentityError::UnknownRole(s.to_owned()))
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Checks that `name` may be an Agent Profile name in a Protocol Identity:
/// 1 to [`MAX_PROFILE_LEN`] characters from `A-Z a-z 0-9 . _ -`, starting with a letter or digit.
pub fn validate_profile(name: &str) -> Result<(), IdentityError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_PROFILE_LEN
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(IdentityError::InvalidProfile(name.to_owned()))
    }
}

/// A runtime-unique identifier of one component instance (Session Coordinator ID, Client CLI ID,
/// Network Sidecar ID, Agent Sandbox ID). It names a component; only a certificate carrying it
/// authenticates one.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ComponentId(String);

impl ComponentId {
    /// A fresh random ID: 16 bytes from the operating system, as 32 lowercase hex digits.
    pub fn generate() -> Result<ComponentId, IdentityError> {
        Ok(ComponentId(random_hex::<16>()?))
    }

    /// Parses an ID: 1 to [`MAX_COMPONENT_ID_LEN`] characters from `a-z 0-9 -`, starting with a
    /// letter or digit.
    pub fn parse(s: &str) -> Result<ComponentId, IdentityError> {
        let ok = !s.is_empty()
            && s.len() <= MAX_COMPONENT_ID_LEN
            && (s.as_bytes()[0].is_ascii_lowercase() || s.as_bytes()[0].is_ascii_digit())
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if ok {
            Ok(ComponentId(s.to_owned()))
        } else {
            Err(IdentityError::InvalidComponentId(s.to_owned()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ComponentId {
    type Error = IdentityError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        ComponentId::parse(&s)
    }
}

impl From<ComponentId> for String {
    fn from(id: ComponentId) -> String {
        id.0
    }
}

impl fmt::Display for ComponentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `N` random bytes from the operating system as `2 * N` lowercase hex digits.
pub(crate) fn random_hex<const N: usize>() -> Result<String, IdentityError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| IdentityError::Random(e.to_string()))?;
    Ok(hex(&bytes))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    s
}

/// An authenticated binding of role, Agent Profile, Domain ID and runtime component ID — once it
/// came out of [`crate::authz::authorize`]. Constructed by hand it is only a claim to issue a
/// certificate for.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ProtocolIdentity {
    role: Role,
    profile: String,
    domain_id: DomainId,
    component_id: ComponentId,
}

impl ProtocolIdentity {
    /// Builds an identity; the profile name must pass [`validate_profile`].
    pub fn new(
        role: Role,
        profile: &str,
        domain_id: DomainId,
        component_id: ComponentId,
    ) -> Result<ProtocolIdentity, IdentityError> {
        validate_profile(profile)?;
        Ok(ProtocolIdentity {
            role,
            profile: profile.to_owned(),
            domain_id,
            component_id,
        })
    }

    pub fn role(&self) -> Role {
        self.role
    }

    pub fn profile(&self) -> &str {
        &self.profile
    }

    pub fn domain_id(&self) -> &DomainId {
        &self.domain_id
    }

    pub fn component_id(&self) -> &ComponentId {
        &self.component_id
    }

    /// The URI SAN: `lazaret://<role>/<profile>/<domain-id>/<component-id>`.
    pub fn to_uri(&self) -> String {
        format!(
            "{URI_SCHEME}://{}/{}/{}/{}",
            self.role, self.profile, self.domain_id, self.component_id
        )
    }

    /// Parses a URI SAN strictly: exactly the shape [`ProtocolIdentity::to_uri`] produces, with
    /// four valid segments, no query, fragment, percent-encoding, empty or extra segment.
    pub fn parse(uri: &str) -> Result<ProtocolIdentity, IdentityError> {
        let malformed = || IdentityError::MalformedUri(uri.to_owned());
        let rest = uri
            .strip_prefix(URI_SCHEME)
            .and_then(|r| r.strip_prefix("://"))
            .ok_or_else(malformed)?;
        let parts: Vec<&str> = rest.split('/').collect();
        let [role, profile, domain, component] = parts.as_slice() else {
            return Err(malformed());
        };
        let role = Role::parse(role)?;
        let domain_id = DomainId::parse(domain)
            .ok_or_else(|| IdentityError::InvalidDomainId((*domain).to_owned()))?;
        let component_id = ComponentId::parse(component)?;
        let identity = ProtocolIdentity::new(role, profile, domain_id, component_id)?;
        // Every segment's character set excludes the URI's delimiters, so this holds by
        // construction; checking it keeps "one identity, one spelling" true if a rule changes.
        if identity.to_uri() != uri {
            return Err(malformed());
        }
        Ok(identity)
    }
}

impl TryFrom<String> for ProtocolIdentity {
    type Error = IdentityError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        ProtocolIdentity::parse(&s)
    }
}

impl From<ProtocolIdentity> for String {
    fn from(id: ProtocolIdentity) -> String {
        id.to_uri()
    }
}

impl fmt::Display for ProtocolIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_uri())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn domain() -> DomainId {
        DomainId::derive("default", Path::new("/w/p"))
    }

    fn sample(role: Role) -> ProtocolIdentity {
        let component = ComponentId::parse("0123abcd").unwrap();
        ProtocolIdentity::new(role, "default", domain(), component).unwrap()
    }

    #[test]
    fn uri_round_trips_for_every_role() {
        for role in Role::ALL {
            let id = sample(role);
            let uri = id.to_uri();
            assert_eq!(
                uri,
                format!("lazaret://{}/default/{}/0123abcd", role.as_str(), domain())
            );
            assert_eq!(ProtocolIdentity::parse(&uri), Ok(id));
        }
    }

    #[test]
    fn parse_rejects_ambiguous_or_foreign_spellings() {
        let good = sample(Role::ClientCli).to_uri();
        let d = domain();
        let bad = [
            String::new(),
            good.replace("lazaret://", "https://"),
            good.replace("lazaret://", "LAZARET://"),
            good.replace("client-cli", "Client-Cli"),
            good.replace("client-cli", "client%2Dcli"),
            good.replace("client-cli", "admin"),
            format!("{good}/"),
            format!("{good}?x=1"),
            format!("{good}#frag"),
            format!("{good}/extra"),
            good.replace("/default/", "/def%61ult/"),
            good.replace("/default/", "//"),
            good.replace("/default/", "/de/fault/"),
            good.replace("/default/", "/.hidden/"),
            good.replace("/default/", "/../"),
            good.replace("0123abcd", "0123ABCD"),
            good.replace("0123abcd", ""),
            good.replace(d.as_str(), "ABCDEF0123456789ABCD"),
            good.replace(d.as_str(), "abc"),
            format!("lazaret://user@client-cli/default/{d}/0123abcd"),
            format!("lazaret://client-cli:443/default/{d}/0123abcd"),
            format!(" {good}"),
            format!("{good}\n"),
        ];
        for uri in bad {
            assert!(ProtocolIdentity::parse(&uri).is_err(), "accepted {uri:?}");
        }
    }

    #[test]
    fn profile_charset_is_restricted() {
        for ok in [
            "default",
            "Claude_2",
            "a",
            "x.y-z",
            &"p".repeat(MAX_PROFILE_LEN),
        ] {
            assert_eq!(validate_profile(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            "-x",
            "a/b",
            "a%20",
            "a b",
            "é",
            &"p".repeat(MAX_PROFILE_LEN + 1),
        ] {
            assert!(validate_profile(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn generated_component_ids_are_fresh_hex() {
        let a = ComponentId::generate().unwrap();
        let b = ComponentId::generate().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.as_str().len(), 32);
        assert_eq!(ComponentId::parse(a.as_str()), Ok(a));
    }

    #[test]
    fn serde_uses_the_uri_and_validates() {
        let id = sample(Role::AgentSandbox);
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, format!("\"{}\"", id.to_uri()));
        assert_eq!(serde_json::from_str::<ProtocolIdentity>(&json).unwrap(), id);
        assert!(serde_json::from_str::<ProtocolIdentity>("\"lazaret://x\"").is_err());
        assert!(serde_json::from_str::<ComponentId>("\"../x\"").is_err());
        assert_eq!(
            serde_json::to_string(&Role::NetworkSidecar).unwrap(),
            "\"network-sidecar\""
        );
    }
}
