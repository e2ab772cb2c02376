//! The request record `req/<request_id>.json` and its Session Anchor signature.
//!
//! `sig` is the lowercase hex HMAC-SHA256, keyed with the Session Anchor's 32 bytes, of the
//! canonical body: `serde_json::to_vec` of [`RequestBody`] (fields in declaration order, every
//! field of the file except `sig`). Verification re-serialises the parsed body, so any change to
//! any field — or a body moved to another session, domain or request ID — breaks the signature.

use super::{
    check_argv, check_envelope, check_hex, is_lower_hex, json_error, line_field_problem,
    to_json_line, RecordError, MAX_FIELD_BYTES, MAX_REQUEST_BYTES, MAX_TIMEOUT_SECS,
    MIN_TIMEOUT_SECS, RECORD_VERSION, REQUEST_ID_HEX_LEN, SIG_HEX_LEN,
};
use crate::domain_id::DOMAIN_ID_HEX_LEN;
use crate::identity::hex;
use crate::session::{SessionAnchor, SESSION_HEX_LEN};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// `s` can name a request file: exactly [`REQUEST_ID_HEX_LEN`] lowercase hex digits.
pub fn request_id_is_valid(s: &str) -> bool {
    is_lower_hex(s, REQUEST_ID_HEX_LEN)
}

/// Everything a request says, in canonical (signed) order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RequestBody {
    pub v: u32,
    pub domain_id: String,
    pub session_id: String,
    pub request_id: String,
    pub created_unix_ms: u64,
    pub argv: Vec<String>,
    pub cwd: String,
    pub justification: String,
    pub timeout_secs: u32,
}

/// The file form: the body's fields, then `sig`. Parsing goes through this struct so that
/// unknown, duplicate and missing keys are refused by serde.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    v: u32,
    domain_id: String,
    session_id: String,
    request_id: String,
    created_unix_ms: u64,
    argv: Vec<String>,
    cwd: String,
    justification: String,
    timeout_secs: u32,
    sig: String,
}

#[derive(Serialize)]
struct WireRef<'a> {
    #[serde(flatten)]
    body: &'a RequestBody,
    sig: &'a str,
}

impl RequestBody {
    /// Every field rule of a request (not the signature): what `parse` enforces and what the
    /// client checks before signing, so that it can say what is wrong itself.
    pub fn validate(&self) -> Result<(), RecordError> {
        if self.v != RECORD_VERSION {
            return Err(RecordError::UnsupportedVersion(self.v));
        }
        check_hex(&self.domain_id, "domain_id", DOMAIN_ID_HEX_LEN)?;
        check_hex(&self.session_id, "session_id", SESSION_HEX_LEN)?;
        check_hex(&self.request_id, "request_id", REQUEST_ID_HEX_LEN)?;
        check_argv(&self.argv)?;
        if !self.cwd.starts_with('/') {
            return Err(RecordError::BadCwd("is not an absolute path"));
        }
        if let Some(problem) = line_field_problem(&self.cwd) {
            return Err(RecordError::BadCwd(problem));
        }
        if self.justification.len() > MAX_FIELD_BYTES {
            return Err(RecordError::BadJustification("is longer than 4096 bytes"));
        }
        if self.justification.contains('\0') {
            return Err(RecordError::BadJustification("contains a NUL byte"));
        }
        if !(MIN_TIMEOUT_SECS..=MAX_TIMEOUT_SECS).contains(&self.timeout_secs) {
            return Err(RecordError::BadTimeout(self.timeout_secs));
        }
        Ok(())
    }

    /// The signed bytes.
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, RecordError> {
        serde_json::to_vec(self).map_err(|e| RecordError::Encode(e.to_string()))
    }

    fn mac(&self, anchor: &SessionAnchor) -> Result<HmacSha256, RecordError> {
        let message = self.canonical_bytes()?;
        let mut mac = <HmacSha256 as Mac>::new_from_slice(&anchor.key_bytes())
            .map_err(|e| RecordError::Encode(e.to_string()))?;
        mac.update(&message);
        Ok(mac)
    }
}

/// A request with its signature, as read from or written to the mailbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignedRequest {
    pub body: RequestBody,
    pub sig: String,
}

impl SignedRequest {
    /// Signs `body` with the session's anchor. Does not validate the body (see
    /// [`RequestBody::validate`]); an invalid body is rejected when parsed.
    pub fn sign(body: RequestBody, anchor: &SessionAnchor) -> SignedRequest {
        let sig = match body.mac(anchor) {
            Ok(mac) => hex(&mac.finalize().into_bytes()),
            // Unreachable (see `to_json_line`); a signature of the wrong shape never verifies.
            Err(_) => String::new(),
        };
        SignedRequest { body, sig }
    }

    /// The file content: one JSON object (body fields, then `sig`) and a newline. Empty only if
    /// encoding failed, which cannot happen for this type; an empty file is rejected anyway.
    pub fn to_bytes(&self) -> Vec<u8> {
        to_json_line(&WireRef {
            body: &self.body,
            sig: &self.sig,
        })
        .unwrap_or_default()
    }

    /// Strictly parses a request file: size, UTF-8, exact keys, every field rule and the shape
    /// of `sig`. The signature itself is checked by [`SignedRequest::verify`].
    pub fn parse(bytes: &[u8]) -> Result<SignedRequest, RecordError> {
        let text = check_envelope(bytes, MAX_REQUEST_BYTES)?;
        let w: Wire = serde_json::from_str(text).map_err(json_error)?;
        let request = SignedRequest {
            body: RequestBody {
                v: w.v,
                domain_id: w.domain_id,
                session_id: w.session_id,
                request_id: w.request_id,
                created_unix_ms: w.created_unix_ms,
                argv: w.argv,
                cwd: w.cwd,
                justification: w.justification,
                timeout_secs: w.timeout_secs,
            },
            sig: w.sig,
        };
        request.body.validate()?;
        check_hex(&request.sig, "sig", SIG_HEX_LEN)?;
        Ok(request)
    }

    /// Checks `sig` against the re-serialised body, in constant time.
    pub fn verify(&self, anchor: &SessionAnchor) -> Result<(), RecordError> {
        let sig = decode_sig(&self.sig).ok_or(RecordError::BadSignature)?;
        self.body
            .mac(anchor)?
            .verify_slice(&sig)
            .map_err(|_| RecordError::BadSignature)
    }
}

/// The 32 bytes of a well-formed `sig`.
pub(super) fn decode_sig(sig: &str) -> Option<[u8; SIG_HEX_LEN / 2]> {
    if !is_lower_hex(sig, SIG_HEX_LEN) {
        return None;
    }
    let mut out = [0u8; SIG_HEX_LEN / 2];
    for (byte, pair) in out.iter_mut().zip(sig.as_bytes().chunks_exact(2)) {
        let text = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(text, 16).ok()?;
    }
    Some(out)
}
