//! A profile setup's output as Lazaret reads it for progress (issue #32): every piece the
//! sandbox writes between line feeds and carriage returns. A phase shown on the developer's
//! terminal is short, of the allowed characters only, and nothing a terminal interprets.
#![no_main]

use lazaret::profile_setup::progress::{parse, Piece, MAX_PHASE};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for piece in data.split(|b| *b == b'\n' || *b == b'\r') {
        match parse(piece) {
            Piece::Phase { name, percent } => {
                assert!(!name.is_empty() && name.chars().count() <= MAX_PHASE, "{name:?}");
                assert!(
                    name.chars()
                        .all(|c| c.is_ascii_alphanumeric() || " ._@/:+()-".contains(c)),
                    "{name:?}"
                );
                assert_eq!(lazaret::terminal::escape::message(&name), name);
                assert!(percent.is_none_or(|p| p <= 100));
            }
            Piece::Percent(p) => assert!(p <= 100),
            Piece::Output | Piece::Blank => {}
        }
    }
});
