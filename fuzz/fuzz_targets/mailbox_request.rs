//! An Escalation Mailbox request file (`req/<id>.json`), written by anything in the sandbox:
//! the sweep's name check, the strict parser, the signature check and the prompt card the
//! developer reads.
#![no_main]

use lazaret::escalation::mailbox::{classify, EntryFacts, EntryKind, Verdict};
use lazaret_protocol::escalation::{EscalationPrompt, SignedRequest, MAX_REQUEST_BYTES};
use lazaret_protocol::SessionAnchor;
use lazaret_ui::terminal::escape::is_escaped;
use lazaret_ui::terminal::prompt::card;
use libfuzzer_sys::fuzz_target;
use std::time::Duration;

/// The SGR sequences the card itself writes; everything else in it must be visible text.
const CARD_SGR: &[&str] = &["\x1b[0m", "\x1b[1;33m", "\x1b[1;31m", "\x1b[1m"];

fuzz_target!(|data: &[u8]| {
    // The same bytes as a file name in req/.
    let facts = EntryFacts {
        kind: EntryKind::Regular,
        size: data.len() as u64,
        nlink: 1,
        age: Duration::ZERO,
    };
    match classify(data, &facts) {
        Verdict::Record => assert!(data.len() == 37 && data.ends_with(b".json")),
        Verdict::InFlight => assert!(data.len() == 37 && data.starts_with(b".")),
        Verdict::Junk(_) => {}
    }

    let Ok(req) = SignedRequest::parse(data) else {
        return;
    };
    assert!(data.len() <= MAX_REQUEST_BYTES);
    // The canonical encoding parses back to the same request and is a fixed point.
    let bytes = req.to_bytes();
    let again = SignedRequest::parse(&bytes).expect("a re-encoded request parses");
    assert_eq!(again, req);
    assert_eq!(again.to_bytes(), bytes);

    // A signature made with an anchor verifies with it and with no other.
    let anchor = SessionAnchor::parse(&"ab".repeat(32)).expect("anchor");
    let other = SessionAnchor::parse(&"cd".repeat(32)).expect("anchor");
    let signed = SignedRequest::sign(req.body.clone(), &anchor);
    signed.verify(&anchor).expect("its own signature verifies");
    assert!(signed.verify(&other).is_err());
    if req.sig != signed.sig {
        assert!(req.verify(&anchor).is_err());
    }

    // What the developer is shown: sandbox text never reaches the terminal unescaped.
    let prompt = EscalationPrompt {
        request_id: req.body.request_id.clone(),
        profile: "default".to_owned(),
        session_id: req.body.session_id.clone(),
        argv: req.body.argv.clone(),
        program: req.body.argv.first().cloned().unwrap_or_default(),
        cwd: req.body.cwd.clone(),
        host_cwd: "/home/dev/project".to_owned(),
        justification: req.body.justification.clone(),
        timeout_secs: req.body.timeout_secs,
        warnings: vec![req.body.cwd.clone()],
    };
    // Bounded and whole, narrow and wide: the same holds; the bounded card keeps its rows.
    for (cols, full) in [(80, false), (24, false), (200, true)] {
        let mut shown = card(&prompt, cols, full);
        for sgr in CARD_SGR {
            shown = shown.replace(sgr, "");
        }
        if let Some(c) = shown
            .chars()
            .find(|&c| is_escaped(c) && c != '\r' && c != '\n')
        {
            panic!("the card shows {c:?} raw: {shown:?}");
        }
        if !full {
            assert!(shown.lines().count() <= 24, "the card is too tall: {shown:?}");
        }
    }
});
