//! Request records: signing, verification and strict parsing.

use crate::escalation::*;
use crate::session::SessionAnchor;
use serde_json::{json, Value};

pub(super) fn anchor() -> SessionAnchor {
    SessionAnchor::parse(&"5a".repeat(32)).unwrap()
}

pub(super) fn body() -> RequestBody {
    RequestBody {
        v: 1,
        domain_id: "0123456789abcdef0123".into(),
        session_id: "ab".repeat(32),
        request_id: "cd".repeat(16),
        created_unix_ms: 1_764_680_000_000,
        argv: vec!["git".into(), "status".into()],
        cwd: "/workspace/sub".into(),
        justification: "see what changed\non the host".into(),
        timeout_secs: 300,
    }
}

fn signed_json() -> Value {
    let bytes = SignedRequest::sign(body(), &anchor()).to_bytes();
    serde_json::from_slice(&bytes).unwrap()
}

/// Parses `v` as a request file.
fn parse_value(v: &Value) -> Result<SignedRequest, RecordError> {
    SignedRequest::parse(&serde_json::to_vec(v).unwrap())
}

/// Parses a signed request with field `key` replaced by `value`.
fn parse_with(key: &str, value: Value) -> Result<SignedRequest, RecordError> {
    let mut v = signed_json();
    v[key] = value;
    parse_value(&v)
}

#[test]
fn round_trip_and_verify() {
    let signed = SignedRequest::sign(body(), &anchor());
    assert_eq!(signed.sig.len(), SIG_HEX_LEN);
    let bytes = signed.to_bytes();
    assert!(bytes.ends_with(b"\n"));
    let text = std::str::from_utf8(&bytes).unwrap();
    assert!(text.starts_with(r#"{"v":1,"domain_id":"0123456789abcdef0123","session_id":"#));
    assert!(text
        .trim_end()
        .ends_with(&format!(r#""timeout_secs":300,"sig":"{}"}}"#, signed.sig)));
    let parsed = SignedRequest::parse(&bytes).unwrap();
    assert_eq!(parsed, signed);
    assert_eq!(parsed.verify(&anchor()), Ok(()));
}

#[test]
fn signature_is_the_documented_hmac() {
    use hmac::{Hmac, Mac};
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&[0x5a; 32]).unwrap();
    mac.update(&serde_json::to_vec(&body()).unwrap());
    let expected = crate::identity::hex(&mac.finalize().into_bytes());
    assert_eq!(SignedRequest::sign(body(), &anchor()).sig, expected);
}

#[test]
fn wrong_key_fails() {
    let signed = SignedRequest::sign(body(), &anchor());
    let other = SessionAnchor::parse(&"5b".repeat(32)).unwrap();
    assert_eq!(signed.verify(&other), Err(RecordError::BadSignature));
}

#[test]
fn any_change_to_the_body_breaks_the_signature() {
    let changes: Vec<(&str, Value)> = vec![
        ("argv", json!(["git", "push"])),
        ("argv", json!(["git", "status", "--short"])),
        ("timeout_secs", json!(301)),
        ("session_id", json!("ac".repeat(32))),
        ("domain_id", json!("0123456789abcdef0124")),
        ("request_id", json!("ce".repeat(16))),
        ("created_unix_ms", json!(1_764_680_000_001u64)),
        ("cwd", json!("/workspace")),
        ("justification", json!("something else")),
    ];
    for (key, value) in changes {
        let parsed = parse_with(key, value).unwrap();
        assert_eq!(
            parsed.verify(&anchor()),
            Err(RecordError::BadSignature),
            "{key}"
        );
    }
    // A flipped signature digit.
    let mut v = signed_json();
    let sig = v["sig"].as_str().unwrap().to_owned();
    let flipped = if sig.starts_with('0') { "1" } else { "0" };
    v["sig"] = json!(format!("{flipped}{}", &sig[1..]));
    let parsed = parse_value(&v).unwrap();
    assert_eq!(parsed.verify(&anchor()), Err(RecordError::BadSignature));
}

#[test]
fn unknown_missing_and_duplicate_keys_are_rejected() {
    let err = parse_with("extra", json!(1)).unwrap_err();
    assert_eq!(err, RecordError::UnknownField("extra".into()));
    assert_eq!(err.to_string(), "unknown key `extra`");

    let mut v = signed_json();
    v.as_object_mut().unwrap().remove("sig");
    assert_eq!(
        parse_value(&v),
        Err(RecordError::MissingField("sig".into()))
    );

    let text = String::from_utf8(SignedRequest::sign(body(), &anchor()).to_bytes()).unwrap();
    let dup = text.replacen(
        r#""timeout_secs":300"#,
        r#""timeout_secs":300,"timeout_secs":5"#,
        1,
    );
    assert_eq!(
        SignedRequest::parse(dup.as_bytes()),
        Err(RecordError::DuplicateField("timeout_secs".into()))
    );
    let dup = text.replacen(r#"{"v":1"#, r#"{"v":1,"v":1"#, 1);
    assert_eq!(
        SignedRequest::parse(dup.as_bytes()),
        Err(RecordError::DuplicateField("v".into()))
    );
}

#[test]
fn envelope_is_checked() {
    let big = vec![b' '; MAX_REQUEST_BYTES + 1];
    assert_eq!(
        SignedRequest::parse(&big),
        Err(RecordError::TooLarge {
            size: MAX_REQUEST_BYTES + 1,
            max: MAX_REQUEST_BYTES
        })
    );
    assert_eq!(
        SignedRequest::parse(b"{\"v\":\xff}"),
        Err(RecordError::NotUtf8)
    );
    assert!(matches!(
        SignedRequest::parse(b""),
        Err(RecordError::Malformed(_))
    ));
    assert!(matches!(
        SignedRequest::parse(b"[]"),
        Err(RecordError::Malformed(_))
    ));
    let mut bytes = SignedRequest::sign(body(), &anchor()).to_bytes();
    bytes.extend_from_slice(b"{}");
    assert!(matches!(
        SignedRequest::parse(&bytes),
        Err(RecordError::Malformed(_))
    ));
    assert_eq!(
        parse_with("v", json!(2)),
        Err(RecordError::UnsupportedVersion(2))
    );
    assert!(matches!(
        parse_with("v", json!(-1)),
        Err(RecordError::Malformed(_))
    ));
    assert!(matches!(
        parse_with("timeout_secs", json!("5")),
        Err(RecordError::Malformed(_))
    ));
}

#[test]
fn fields_are_checked() {
    use RecordError::*;
    let arg = |index, reason| Err(BadArg { index, reason });
    let cases: Vec<(&str, Value, Result<SignedRequest, RecordError>)> = vec![
        ("argv", json!([]), Err(EmptyArgv)),
        ("argv", json!([""]), arg(0, "(the command) is empty")),
        (
            "argv",
            json!(["git", "a\0b"]),
            arg(1, "contains a NUL byte"),
        ),
        ("argv", json!(["git", "a\nb"]), arg(1, "contains a newline")),
        ("argv", json!(["git\n"]), arg(0, "contains a newline")),
        (
            "argv",
            json!(["x", "y".repeat(4097)]),
            arg(1, "is longer than 4096 bytes"),
        ),
        ("argv", json!(vec!["x"; 257]), Err(TooManyArgs(257))),
        (
            "domain_id",
            json!("0123456789ABCDEF0123"),
            Err(BadHex {
                field: "domain_id",
                len: 20,
            }),
        ),
        (
            "session_id",
            json!("ab".repeat(31)),
            Err(BadHex {
                field: "session_id",
                len: 64,
            }),
        ),
        (
            "request_id",
            json!("../etc/passwd"),
            Err(BadHex {
                field: "request_id",
                len: 32,
            }),
        ),
        (
            "sig",
            json!("zz".repeat(32)),
            Err(BadHex {
                field: "sig",
                len: 64,
            }),
        ),
        (
            "cwd",
            json!("workspace/sub"),
            Err(BadCwd("is not an absolute path")),
        ),
        ("cwd", json!(""), Err(BadCwd("is not an absolute path"))),
        (
            "cwd",
            json!("/workspace/a\nb"),
            Err(BadCwd("contains a newline")),
        ),
        (
            "cwd",
            json!("/workspace/a\0b"),
            Err(BadCwd("contains a NUL byte")),
        ),
        (
            "justification",
            json!("a\0b"),
            Err(BadJustification("contains a NUL byte")),
        ),
        (
            "justification",
            json!("j".repeat(4097)),
            Err(BadJustification("is longer than 4096 bytes")),
        ),
        ("timeout_secs", json!(0), Err(BadTimeout(0))),
        ("timeout_secs", json!(3601), Err(BadTimeout(3601))),
    ];
    for (key, value, expected) in cases {
        assert_eq!(parse_with(key, value.clone()), expected, "{key} = {value}");
    }
    assert_eq!(
        parse_with("argv", json!(vec!["x"; 256])).map(|r| r.body.argv.len()),
        Ok(256)
    );
    assert!(parse_with("timeout_secs", json!(3600)).is_ok());
    assert!(parse_with("timeout_secs", json!(1)).is_ok());
    assert!(request_id_is_valid(&"0f".repeat(16)));
    assert!(!request_id_is_valid(&"0F".repeat(16)));
    assert!(!request_id_is_valid(".tmp"));
}
