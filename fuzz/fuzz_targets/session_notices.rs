//! The coordinator's scan of a session's output for the bell and desktop notifications (OSC 9,
//! 777, 99), which become activity markers and alerts on the developer's side.
#![no_main]

use lazaret::coordinator::activity::notices::{Notice, NoticeScanner, MAX_TEXT};
use lazaret_fuzz::{chunks, Bytes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = Bytes::new(data);
    let sizes = input.piece();
    let stream = input.rest();

    let mut whole = Vec::new();
    NoticeScanner::default().scan(stream, &mut whole);

    // The same output in arbitrary reads gives the same notices.
    let mut scanner = NoticeScanner::default();
    let mut again = Vec::new();
    for read in chunks(stream, sizes) {
        scanner.scan(read, &mut again);
    }
    assert_eq!(again, whole, "notices depend on how the output was split");

    // Each notice ends at a BEL or an ESC; its text is capped.
    let ends = stream.iter().filter(|b| **b == 0x07 || **b == 0x1b).count();
    assert!(whole.len() <= ends);
    for notice in &whole {
        if let Notice::Notification(text) = notice {
            assert!(text.len() <= MAX_TEXT, "{} bytes", text.len());
        }
    }
});
