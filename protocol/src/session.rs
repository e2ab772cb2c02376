//! Session ID and Session Anchor (spec §2, FR-10): 32 random bytes each, as 64 lowercase hex
//! digits. Registration binds both to the authenticated Client CLI ID.

use crate::identity::{random_hex, IdentityError};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Length in hex digits of a [`SessionId`] and a [`SessionAnchor`] (32 bytes).
pub const SESSION_HEX_LEN: usize = 64;

fn is_session_hex(s: &str) -> bool {
    s.len() == SESSION_HEX_LEN
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Why a Session ID or Session Anchor was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SessionIdError {
    #[error("a Session ID must be {SESSION_HEX_LEN} lowercase hex digits")]
    InvalidSessionId,
    #[error("a Session Anchor must be {SESSION_HEX_LEN} lowercase hex digits")]
    InvalidSessionAnchor,
}

/// A cryptographically random identifier unique to one Client Session. Not a secret.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SessionId(String);

impl SessionId {
    /// 32 fresh random bytes from the operating system.
    pub fn generate() -> Result<SessionId, IdentityError> {
        Ok(SessionId(random_hex::<32>()?))
    }

    pub fn parse(s: &str) -> Result<SessionId, SessionIdError> {
        if is_session_hex(s) {
            Ok(SessionId(s.to_owned()))
        } else {
            Err(SessionIdError::InvalidSessionId)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for SessionId {
    type Error = SessionIdError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        SessionId::parse(&s)
    }
}

impl From<SessionId> for String {
    fn from(id: SessionId) -> String {
        id.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Ephemeral session credential (32 random bytes) that binds protocol messages — escalation
/// requests in particular — to one registered Session ID. A secret: `Debug` and `Display` do not
/// show it, and equality is constant-time.
#[derive(Clone, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SessionAnchor(String);

impl SessionAnchor {
    /// 32 fresh random bytes from the operating system.
    pub fn generate() -> Result<SessionAnchor, IdentityError> {
        Ok(SessionAnchor(random_hex::<32>()?))
    }

    pub fn parse(s: &str) -> Result<SessionAnchor, SessionIdError> {
        if is_session_hex(s) {
            Ok(SessionAnchor(s.to_owned()))
        } else {
            Err(SessionIdError::InvalidSessionAnchor)
        }
    }

    /// The secret itself, as hex. Handle with care: never log it.
    pub fn expose_hex(&self) -> &str {
        &self.0
    }

    /// The secret as its 32 raw bytes: the HMAC key of escalation requests
    /// ([`crate::escalation`]). Handle with care: never log it.
    pub fn key_bytes(&self) -> [u8; SESSION_HEX_LEN / 2] {
        let mut key = [0u8; SESSION_HEX_LEN / 2];
        // `parse` and `generate` admit only 64 lowercase hex digits, so every pair decodes.
        for (byte, pair) in key.iter_mut().zip(self.0.as_bytes().chunks_exact(2)) {
            *byte = (hex_value(pair[0]) << 4) | hex_value(pair[1]);
        }
        key
    }
}

/// The value of one lowercase hex digit (0 for anything else, which `is_session_hex` excludes).
fn hex_value(digit: u8) -> u8 {
    match digit {
        b'0'..=b'9' => digit - b'0',
        b'a'..=b'f' => digit - b'a' + 10,
        _ => 0,
    }
}

impl PartialEq for SessionAnchor {
    fn eq(&self, other: &SessionAnchor) -> bool {
        let (a, b) = (self.0.as_bytes(), other.0.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl Eq for SessionAnchor {}

impl fmt::Debug for SessionAnchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionAnchor(<redacted>)")
    }
}

impl TryFrom<String> for SessionAnchor {
    type Error = SessionIdError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        SessionAnchor::parse(&s)
    }
}

impl From<SessionAnchor> for String {
    fn from(a: SessionAnchor) -> String {
        a.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_are_64_hex_and_fresh() {
        let a = SessionId::generate().unwrap();
        let b = SessionId::generate().unwrap();
        assert_ne!(a, b);
        assert_eq!(SessionId::parse(a.as_str()), Ok(a.clone()));
        let anchor = SessionAnchor::generate().unwrap();
        assert_eq!(anchor.expose_hex().len(), SESSION_HEX_LEN);
        assert_ne!(anchor, SessionAnchor::generate().unwrap());
        assert_eq!(SessionAnchor::parse(anchor.expose_hex()), Ok(anchor));
    }

    #[test]
    fn parse_is_strict() {
        assert!(SessionId::parse("").is_err());
        assert!(SessionId::parse(&"A".repeat(64)).is_err());
        assert!(SessionId::parse(&"a".repeat(63)).is_err());
        assert!(SessionAnchor::parse(&"g".repeat(64)).is_err());
        assert!(serde_json::from_str::<SessionId>("\"abc\"").is_err());
    }

    #[test]
    fn anchor_key_bytes_decode_the_hex() {
        let hex = format!("00ff10a9{}", "0".repeat(56));
        let key = SessionAnchor::parse(&hex).unwrap().key_bytes();
        assert_eq!(&key[..4], &[0x00, 0xff, 0x10, 0xa9]);
        assert!(key[4..].iter().all(|&b| b == 0));
        let anchor = SessionAnchor::generate().unwrap();
        assert_eq!(
            crate::identity::hex(&anchor.key_bytes()),
            anchor.expose_hex()
        );
    }

    #[test]
    fn anchor_debug_is_redacted() {
        let anchor = SessionAnchor::generate().unwrap();
        let shown = format!("{anchor:?}");
        assert!(!shown.contains(anchor.expose_hex()));
    }
}
