//! The result record `res/<request_id>.json`: the Escalation Result of one accepted request
//! (OR-2), written by the coordinator and read by the Escalation Client.
//!
//! `stdout` and `stderr` are base64 (standard alphabet, padded) of at most [`MAX_OUTPUT_BYTES`]
//! each; `truncated` says a stream was cut at that cap. `ran_argv` is set when the command that
//! ran differs from the request (the developer edited it).
//!
//! `sig` binds the result to its request (SR-8): the lowercase hex HMAC-SHA256, keyed with the
//! Session Anchor, of `lazaret.result.v1\0`, the request's own `sig` (64 hex digits), `\0`, and
//! the result record serialised with `sig` empty. The client checks it with the anchor and the
//! signature of the request it sent, so a result file it did not get from the coordinator for
//! that very request — written by another process, or kept from an earlier request — is refused.

use super::{
    check_argv, check_envelope, check_hex, json_error, to_json_line, RecordError, EXIT_CANCELLED,
    EXIT_DENIED, EXIT_FAILED, EXIT_TIMED_OUT, MAX_MESSAGE_BYTES, MAX_OUTPUT_BYTES,
    MAX_RESULT_BYTES, RECORD_VERSION, REQUEST_ID_HEX_LEN, SIG_HEX_LEN,
};
use crate::session::SessionAnchor;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Deserializer, Serialize};

/// How a request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The host command ran; `exit_code` is its status (128 + signal if a signal ended it).
    Completed,
    /// Denied by the developer, a rule, or for want of a terminal to ask on.
    Denied,
    /// No decision in time, or the host command outlived `timeout_secs` and was killed.
    TimedOut,
    /// The request or its host command was cancelled.
    Cancelled,
    /// Approved, but Lazaret could not run the command.
    Failed,
}

/// One Escalation Result, as written to the mailbox.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EscalationResult {
    pub v: u32,
    pub request_id: String,
    pub outcome: Outcome,
    #[serde(deserialize_with = "present")]
    pub exit_code: Option<i32>,
    /// base64
    pub stdout: String,
    /// base64
    pub stderr: String,
    pub truncated: bool,
    pub message: String,
    #[serde(deserialize_with = "present")]
    pub ran_argv: Option<Vec<String>>,
    /// See the module documentation; empty until [`EscalationResult::sign`].
    pub sig: String,
}

/// Domain separation of result signatures from request signatures.
const RESULT_SIG_TAG: &[u8] = b"lazaret.result.v1\0";

/// An `Option` whose key must still be present (`null` for none): keeps parsing exact.
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d)
}

/// `text` cut to at most `max` bytes on a character boundary.
fn clip(text: &str, max: usize) -> String {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

impl EscalationResult {
    /// A result without command output. `message` is clipped to [`MAX_MESSAGE_BYTES`].
    pub fn new(request_id: &str, outcome: Outcome, message: &str) -> EscalationResult {
        EscalationResult {
            v: RECORD_VERSION,
            request_id: request_id.to_owned(),
            outcome,
            exit_code: None,
            stdout: String::new(),
            stderr: String::new(),
            truncated: false,
            message: clip(message, MAX_MESSAGE_BYTES),
            ran_argv: None,
            sig: String::new(),
        }
    }

    /// A completed command. Each stream is cut to [`MAX_OUTPUT_BYTES`]; `truncated` is set if
    /// either was cut or `truncated` is already true (the caller stopped reading at the cap).
    pub fn completed(
        request_id: &str,
        exit_code: i32,
        stdout: &[u8],
        stderr: &[u8],
        truncated: bool,
    ) -> EscalationResult {
        let cut = stdout.len() > MAX_OUTPUT_BYTES || stderr.len() > MAX_OUTPUT_BYTES;
        let keep = |s: &[u8]| STANDARD.encode(&s[..s.len().min(MAX_OUTPUT_BYTES)]);
        EscalationResult {
            exit_code: Some(exit_code),
            stdout: keep(stdout),
            stderr: keep(stderr),
            truncated: truncated || cut,
            ..EscalationResult::new(request_id, Outcome::Completed, "")
        }
    }

    fn mac(
        &self,
        anchor: &SessionAnchor,
        request_sig: &str,
    ) -> Result<Hmac<sha2::Sha256>, RecordError> {
        let unsigned = EscalationResult {
            sig: String::new(),
            ..self.clone()
        };
        let body = serde_json::to_vec(&unsigned).map_err(|e| RecordError::Encode(e.to_string()))?;
        let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(&anchor.key_bytes())
            .map_err(|e| RecordError::Encode(e.to_string()))?;
        mac.update(RESULT_SIG_TAG);
        mac.update(request_sig.as_bytes());
        mac.update(b"\0");
        mac.update(&body);
        Ok(mac)
    }

    /// Signs the result for the request whose signature is `request_sig`, with its session's
    /// anchor.
    pub fn sign(&mut self, anchor: &SessionAnchor, request_sig: &str) {
        self.sig = match self.mac(anchor, request_sig) {
            Ok(mac) => crate::identity::hex(&mac.finalize().into_bytes()),
            // Unreachable (see `to_json_line`); an empty signature never verifies.
            Err(_) => String::new(),
        };
    }

    /// Checks `sig` (constant time) against the anchor and the request's signature.
    pub fn verify(&self, anchor: &SessionAnchor, request_sig: &str) -> Result<(), RecordError> {
        let sig = super::request::decode_sig(&self.sig).ok_or(RecordError::BadSignature)?;
        self.mac(anchor, request_sig)?
            .verify_slice(&sig)
            .map_err(|_| RecordError::BadSignature)
    }

    /// The decoded stdout.
    pub fn stdout_bytes(&self) -> Result<Vec<u8>, RecordError> {
        decode(&self.stdout, "stdout")
    }

    /// The decoded stderr.
    pub fn stderr_bytes(&self) -> Result<Vec<u8>, RecordError> {
        decode(&self.stderr, "stderr")
    }

    /// The Escalation Client's exit status for this result: a completed command's own status,
    /// otherwise the outcome's `EXIT_*` code (and [`EXIT_FAILED`] for a completion without one).
    pub fn client_exit_status(&self) -> u8 {
        match self.outcome {
            Outcome::Completed => self
                .exit_code
                .and_then(|c| u8::try_from(c).ok())
                .unwrap_or(EXIT_FAILED),
            Outcome::Denied => EXIT_DENIED,
            Outcome::TimedOut => EXIT_TIMED_OUT,
            Outcome::Cancelled => EXIT_CANCELLED,
            Outcome::Failed => EXIT_FAILED,
        }
    }

    /// The file content: one JSON object and a newline (empty only if encoding failed, which
    /// cannot happen for this type; an empty file is rejected anyway).
    pub fn to_bytes(&self) -> Vec<u8> {
        to_json_line(self).unwrap_or_default()
    }

    /// Strictly parses a result file: size, UTF-8, exact keys, version, request ID shape, valid
    /// base64 within the output cap, exit code 0..=255, message length, `ran_argv` rules.
    pub fn parse(bytes: &[u8]) -> Result<EscalationResult, RecordError> {
        let text = check_envelope(bytes, MAX_RESULT_BYTES)?;
        let r: EscalationResult = serde_json::from_str(text).map_err(json_error)?;
        if r.v != RECORD_VERSION {
            return Err(RecordError::UnsupportedVersion(r.v));
        }
        check_hex(&r.request_id, "request_id", REQUEST_ID_HEX_LEN)?;
        if let Some(code) = r.exit_code {
            if !(0..=255).contains(&code) {
                return Err(RecordError::BadExitCode(code));
            }
        }
        r.stdout_bytes()?;
        r.stderr_bytes()?;
        if r.message.len() > MAX_MESSAGE_BYTES {
            return Err(RecordError::BadMessage("is longer than 16384 bytes"));
        }
        if r.message.contains('\0') {
            return Err(RecordError::BadMessage("contains a NUL byte"));
        }
        if let Some(argv) = &r.ran_argv {
            check_argv(argv)?;
        }
        check_hex(&r.sig, "sig", SIG_HEX_LEN)?;
        Ok(r)
    }
}

fn decode(text: &str, field: &'static str) -> Result<Vec<u8>, RecordError> {
    // A 1 MiB stream is at most 4 * ceil(MAX_OUTPUT_BYTES / 3) characters of base64.
    if text.len() > MAX_OUTPUT_BYTES.div_ceil(3) * 4 {
        return Err(RecordError::OutputTooLarge(field));
    }
    STANDARD
        .decode(text)
        .map_err(|_| RecordError::BadBase64(field))
}
