//! Result records, and a fuzz loop over both parsers.

use super::request::{anchor, body};
use crate::escalation::*;
use serde_json::{json, Value};

/// The `sig` of the request the results answer.
fn request_sig() -> String {
    SignedRequest::sign(body(), &anchor()).sig
}

fn signed(mut r: EscalationResult) -> EscalationResult {
    r.sign(&anchor(), &request_sig());
    r
}

#[test]
fn a_result_is_bound_to_its_request_and_session() {
    use crate::session::SessionAnchor;
    let r = signed(EscalationResult::completed(
        &"cd".repeat(16),
        0,
        b"ok",
        b"",
        false,
    ));
    let parsed = EscalationResult::parse(&r.to_bytes()).unwrap();
    assert_eq!(parsed.verify(&anchor(), &request_sig()), Ok(()));
    // Another session's anchor, another request, any changed field, no signature at all.
    let other = SessionAnchor::parse(&"5b".repeat(32)).unwrap();
    assert_eq!(
        parsed.verify(&other, &request_sig()),
        Err(RecordError::BadSignature)
    );
    assert_eq!(
        parsed.verify(&anchor(), &"ef".repeat(32)),
        Err(RecordError::BadSignature)
    );
    for (key, value) in [
        ("exit_code", json!(1)),
        ("stdout", json!("aGk=")),
        ("outcome", json!("denied")),
        ("message", json!("x")),
        ("truncated", json!(true)),
        ("ran_argv", json!(["rm", "-rf", "/"])),
    ] {
        let mut v = serde_json::to_value(&parsed).unwrap();
        v[key] = value;
        let changed = EscalationResult::parse(&serde_json::to_vec(&v).unwrap()).unwrap();
        assert_eq!(
            changed.verify(&anchor(), &request_sig()),
            Err(RecordError::BadSignature),
            "{key}"
        );
    }
    let mut unsigned = serde_json::to_value(&parsed).unwrap();
    unsigned["sig"] = json!("");
    assert!(EscalationResult::parse(&serde_json::to_vec(&unsigned).unwrap()).is_err());
}

#[test]
fn results_round_trip() {
    let id = "cd".repeat(16);
    let mut r = signed(EscalationResult::completed(
        &id,
        3,
        b"out\0\xff",
        b"err\n",
        false,
    ));
    r.ran_argv = Some(vec!["git".into(), "status".into(), "-s".into()]);
    r.sign(&anchor(), &request_sig());
    let parsed = EscalationResult::parse(&r.to_bytes()).unwrap();
    assert_eq!(parsed, r);
    assert_eq!(parsed.stdout_bytes().unwrap(), b"out\0\xff");
    assert_eq!(parsed.stderr_bytes().unwrap(), b"err\n");
    assert_eq!(parsed.client_exit_status(), 3);

    let text =
        String::from_utf8(signed(EscalationResult::new(&id, Outcome::TimedOut, "slow")).to_bytes());
    assert!(text.unwrap().contains(r#""outcome":"timed_out""#));
    for (outcome, status) in [
        (Outcome::Denied, EXIT_DENIED),
        (Outcome::TimedOut, EXIT_TIMED_OUT),
        (Outcome::Cancelled, EXIT_CANCELLED),
        (Outcome::Failed, EXIT_FAILED),
        (Outcome::Completed, EXIT_FAILED),
    ] {
        let r = signed(EscalationResult::new(&id, outcome, "why"));
        let parsed = EscalationResult::parse(&r.to_bytes()).unwrap();
        assert_eq!(parsed.client_exit_status(), status);
    }
}

#[test]
fn completed_output_is_capped() {
    let big = vec![b'x'; MAX_OUTPUT_BYTES + 10];
    let r = signed(EscalationResult::completed(
        &"cd".repeat(16),
        0,
        &big,
        b"",
        false,
    ));
    assert!(r.truncated);
    let parsed = EscalationResult::parse(&r.to_bytes()).unwrap();
    assert_eq!(parsed.stdout_bytes().unwrap().len(), MAX_OUTPUT_BYTES);
    let msg = signed(EscalationResult::new(
        &"cd".repeat(16),
        Outcome::Denied,
        &"é".repeat(10_000),
    ));
    assert!(msg.message.len() <= MAX_MESSAGE_BYTES);
    assert!(EscalationResult::parse(&msg.to_bytes()).is_ok());
}

#[test]
fn results_are_parsed_strictly() {
    use RecordError::*;
    let good = signed(EscalationResult::completed(
        &"cd".repeat(16),
        0,
        b"hi",
        b"",
        false,
    ));
    let with = |key: &str, value: Value| {
        let mut v = serde_json::to_value(&good).unwrap();
        v[key] = value;
        EscalationResult::parse(&serde_json::to_vec(&v).unwrap())
    };
    assert_eq!(with("extra", json!(0)), Err(UnknownField("extra".into())));
    assert_eq!(with("stdout", json!("!!!")), Err(BadBase64("stdout")));
    assert_eq!(with("stderr", json!("aGk")), Err(BadBase64("stderr")));
    assert_eq!(with("exit_code", json!(256)), Err(BadExitCode(256)));
    assert_eq!(with("exit_code", json!(-1)), Err(BadExitCode(-1)));
    assert_eq!(with("v", json!(0)), Err(UnsupportedVersion(0)));
    assert_eq!(
        with("request_id", json!("x")),
        Err(BadHex {
            field: "request_id",
            len: 32
        })
    );
    assert_eq!(with("ran_argv", json!([])), Err(EmptyArgv));
    assert!(matches!(
        with("outcome", json!("approved")),
        Err(Malformed(_))
    ));
    let mut v = serde_json::to_value(&good).unwrap();
    v.as_object_mut().unwrap().remove("exit_code");
    assert_eq!(
        EscalationResult::parse(&serde_json::to_vec(&v).unwrap()),
        Err(MissingField("exit_code".into()))
    );
    let big = vec![b' '; MAX_RESULT_BYTES + 1];
    assert!(matches!(
        EscalationResult::parse(&big),
        Err(TooLarge { .. })
    ));
}

/// Random and mutated input never panics either parser.
#[test]
fn fuzz_does_not_panic() {
    let seed_request = SignedRequest::sign(body(), &anchor()).to_bytes();
    let seed_result = signed(EscalationResult::completed(
        &"cd".repeat(16),
        0,
        b"hello",
        b"",
        false,
    ))
    .to_bytes();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..20_000 {
        let input: Vec<u8> = match round % 3 {
            0 => (0..next() % 512).map(|_| next() as u8).collect(),
            1 => mutate(&seed_request, &mut next),
            _ => mutate(&seed_result, &mut next),
        };
        if let Ok(r) = SignedRequest::parse(&input) {
            let _ = r.verify(&anchor());
        }
        if let Ok(r) = EscalationResult::parse(&input) {
            let _ = (r.stdout_bytes(), r.client_exit_status());
        }
    }
}

fn mutate(seed: &[u8], next: &mut impl FnMut() -> u64) -> Vec<u8> {
    let mut out = seed.to_vec();
    for _ in 0..1 + next() % 4 {
        let at = (next() as usize) % out.len().max(1);
        match next() % 3 {
            0 if !out.is_empty() => out[at] = next() as u8,
            1 if !out.is_empty() => {
                out.remove(at);
            }
            _ => out.insert(at.min(out.len()), b"\"{}[],:0\\"[(next() % 9) as usize]),
        }
    }
    out
}
