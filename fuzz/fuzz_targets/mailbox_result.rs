//! An Escalation Mailbox result file (`res/<id>.json`), as the Escalation Client reads it.
#![no_main]

use lazaret_protocol::escalation::{EscalationResult, MAX_OUTPUT_BYTES, MAX_RESULT_BYTES};
use lazaret_protocol::SessionAnchor;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(result) = EscalationResult::parse(data) else {
        return;
    };
    assert!(data.len() <= MAX_RESULT_BYTES);
    let bytes = result.to_bytes();
    let again = EscalationResult::parse(&bytes).expect("a re-encoded result parses");
    assert_eq!(again, result);
    assert_eq!(again.to_bytes(), bytes);

    let out = result.stdout_bytes().expect("checked by parse");
    let err = result.stderr_bytes().expect("checked by parse");
    assert!(out.len() <= MAX_OUTPUT_BYTES && err.len() <= MAX_OUTPUT_BYTES);
    let _ = result.client_exit_status();

    let anchor = SessionAnchor::parse(&"ab".repeat(32)).expect("anchor");
    let mut signed = result.clone();
    signed.sign(&anchor, &"0".repeat(64));
    signed
        .verify(&anchor, &"0".repeat(64))
        .expect("its own signature verifies");
    assert!(signed.verify(&anchor, &"1".repeat(64)).is_err());
});
