//! Escalation Mailbox records (spec §3.6, SR-7, SR-8, FR-10, OR-2): what the Escalation Client
//! inside the Agent Sandbox and the Session Coordinator on the host exchange as files.
//!
//! - `req/<request_id>.json`: a [`SignedRequest`], written by the client by atomic rename. The
//!   mailbox is not an authentication boundary (anything in the sandbox can write there), so the
//!   request carries an HMAC-SHA256 over its exact content keyed with the Session Anchor, which
//!   only that session's processes hold.
//! - `res/<request_id>.json`: an [`EscalationResult`], written by the coordinator by atomic
//!   rename into a directory the sandbox sees read-only.
//!
//! Both parsers are strict: size cap, UTF-8, exactly the documented keys (no unknown, missing
//! or duplicate key), version 1, and field-by-field checks. The client's exit statuses for
//! outcomes other than completion are the `EXIT_*` constants. Layout and semantics for users:
//! `docs/escalation.md`.

mod pending;
mod prompt;
mod request;
mod result;
#[cfg(test)]
mod tests;

pub use pending::{DecideAnswer, PendingEscalation};
pub use prompt::{Decision, EscalationPrompt, DIGEST_HEX_LEN};
pub use request::{request_id_is_valid, RequestBody, SignedRequest};
pub use result::{EscalationResult, Outcome};

/// The only record version.
pub const RECORD_VERSION: u32 = 1;
/// Largest request file accepted.
pub const MAX_REQUEST_BYTES: usize = 64 * 1024;
/// Largest result file accepted: two capped streams in base64 plus the rest.
pub const MAX_RESULT_BYTES: usize = 4 * 1024 * 1024 + 64 * 1024;
/// Cap on each of a host command's stdout and stderr, before base64 (`truncated` says so).
pub const MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// Most argv elements in a request.
pub const MAX_ARGS: usize = 256;
/// Longest argv element, cwd and justification, in bytes.
pub const MAX_FIELD_BYTES: usize = 4096;
/// Longest result message, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024;
/// Accepted range of `timeout_secs`.
pub const MIN_TIMEOUT_SECS: u32 = 1;
pub const MAX_TIMEOUT_SECS: u32 = 3600;
/// Hex digits of an Escalation Request ID (16 random bytes).
pub const REQUEST_ID_HEX_LEN: usize = 32;
/// Hex digits of a request signature (HMAC-SHA256).
pub const SIG_HEX_LEN: usize = 64;

/// Request directory, relative to the mailbox.
pub const REQUEST_DIR: &str = "req";
/// Result directory, relative to the mailbox.
pub const RESULT_DIR: &str = "res";
/// Where the mailbox is mounted inside the Agent Sandbox unless `LAZARET_MAILBOX` says otherwise.
pub const DEFAULT_MAILBOX: &str = "/run/lazaret/mailbox";
/// Environment of a sandbox session process read by the Escalation Client.
pub const ENV_DOMAIN: &str = "LAZARET_DOMAIN";
pub const ENV_SESSION: &str = "LAZARET_SESSION";
pub const ENV_SESSION_ANCHOR: &str = "LAZARET_SESSION_ANCHOR";
pub const ENV_MAILBOX: &str = "LAZARET_MAILBOX";

/// Client exit status: the request was denied (by the developer, by a rule, or because the
/// session has no terminal to ask on).
pub const EXIT_DENIED: u8 = 240;
/// Client exit status: the request timed out (no decision, or the host command ran too long,
/// or no result arrived).
pub const EXIT_TIMED_OUT: u8 = 241;
/// Client exit status: the request was cancelled (its session went away, or the developer
/// cancelled it).
pub const EXIT_CANCELLED: u8 = 242;
/// Client exit status: approved, but Lazaret could not run the command (or reported no status).
pub const EXIT_FAILED: u8 = 243;
/// Client exit status: the client itself could not make the request (usage, environment,
/// mailbox or unreadable result).
pub const EXIT_CLIENT_ERROR: u8 = 244;

/// The file name of a request or result: `<request_id>.json`.
pub fn record_file_name(request_id: &str) -> String {
    format!("{request_id}.json")
}

/// Why a record was rejected. The Display text completes "rejected escalation record …: ".
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("record is {size} bytes, more than the {max} allowed")]
    TooLarge { size: usize, max: usize },
    #[error("record is not UTF-8")]
    NotUtf8,
    #[error("malformed JSON: {0}")]
    Malformed(String),
    #[error("unknown key `{0}`")]
    UnknownField(String),
    #[error("duplicate key `{0}`")]
    DuplicateField(String),
    #[error("missing key `{0}`")]
    MissingField(String),
    #[error("unsupported record version {0}")]
    UnsupportedVersion(u32),
    #[error("`{field}` must be {len} lowercase hex digits")]
    BadHex { field: &'static str, len: usize },
    #[error("argv is empty")]
    EmptyArgv,
    #[error("argv has {0} elements, more than the {MAX_ARGS} allowed")]
    TooManyArgs(usize),
    #[error("argv[{index}] {reason}")]
    BadArg { index: usize, reason: &'static str },
    #[error("cwd {0}")]
    BadCwd(&'static str),
    #[error("justification {0}")]
    BadJustification(&'static str),
    #[error("timeout_secs {0} is outside {MIN_TIMEOUT_SECS}..={MAX_TIMEOUT_SECS}")]
    BadTimeout(u32),
    #[error("bad signature")]
    BadSignature,
    #[error("`{0}` is not valid base64")]
    BadBase64(&'static str),
    #[error("`{0}` holds more than {MAX_OUTPUT_BYTES} bytes")]
    OutputTooLarge(&'static str),
    #[error("exit_code {0} is outside 0..=255")]
    BadExitCode(i32),
    #[error("message {0}")]
    BadMessage(&'static str),
    #[error("record cannot be encoded: {0}")]
    Encode(String),
}

/// `s` is exactly `len` lowercase hex digits.
pub(crate) fn is_lower_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

pub(crate) fn check_hex(s: &str, field: &'static str, len: usize) -> Result<(), RecordError> {
    if is_lower_hex(s, len) {
        Ok(())
    } else {
        Err(RecordError::BadHex { field, len })
    }
}

/// The size and UTF-8 checks shared by both parsers; the text to hand to serde.
pub(crate) fn check_envelope(bytes: &[u8], max: usize) -> Result<&str, RecordError> {
    if bytes.len() > max {
        return Err(RecordError::TooLarge {
            size: bytes.len(),
            max,
        });
    }
    std::str::from_utf8(bytes).map_err(|_| RecordError::NotUtf8)
}

/// Maps serde's messages for unknown, duplicate and missing keys to their own variants.
pub(crate) fn json_error(e: serde_json::Error) -> RecordError {
    let text = e.to_string();
    let key = || {
        text.split('`')
            .nth(1)
            .map(str::to_owned)
            .unwrap_or_default()
    };
    if text.starts_with("unknown field") {
        RecordError::UnknownField(key())
    } else if text.starts_with("duplicate field") {
        RecordError::DuplicateField(key())
    } else if text.starts_with("missing field") {
        RecordError::MissingField(key())
    } else {
        RecordError::Malformed(text)
    }
}

/// One argv element or path-like field: at most [`MAX_FIELD_BYTES`], no NUL, no newline.
pub(crate) fn line_field_problem(s: &str) -> Option<&'static str> {
    if s.len() > MAX_FIELD_BYTES {
        Some("is longer than 4096 bytes")
    } else if s.contains('\0') {
        Some("contains a NUL byte")
    } else if s.contains('\n') {
        Some("contains a newline")
    } else {
        None
    }
}

/// The argv rules shared by requests and a result's `ran_argv`.
pub(crate) fn check_argv(argv: &[String]) -> Result<(), RecordError> {
    if argv.is_empty() {
        return Err(RecordError::EmptyArgv);
    }
    if argv.len() > MAX_ARGS {
        return Err(RecordError::TooManyArgs(argv.len()));
    }
    if argv[0].is_empty() {
        return Err(RecordError::BadArg {
            index: 0,
            reason: "(the command) is empty",
        });
    }
    for (index, arg) in argv.iter().enumerate() {
        if let Some(reason) = line_field_problem(arg) {
            return Err(RecordError::BadArg { index, reason });
        }
    }
    Ok(())
}

/// A record as one JSON line. Serialising these plain structs cannot fail (serde_json fails only
/// for non-string map keys or failing `Serialize` impls, and neither occurs).
pub(crate) fn to_json_line<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, RecordError> {
    let mut out = serde_json::to_vec(value).map_err(|e| RecordError::Encode(e.to_string()))?;
    out.push(b'\n');
    Ok(out)
}
