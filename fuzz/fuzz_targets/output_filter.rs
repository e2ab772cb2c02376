//! The sandbox's output on its way to the developer's terminal in `lazaret run`: the streaming
//! filter that keeps the clipboard, notifications and ENQ away from the host terminal.
#![no_main]

use lazaret_fuzz::{chunks, Bytes};
use lazaret_protocol::access::TerminalAccess;
use lazaret_ui::terminal::output_filter::OutputFilter;
use libfuzzer_sys::fuzz_target;

/// Sequences (7-bit form) the default access blocks: clipboard, notifications, hyperlinks and
/// queries whose reply echoes the sandbox's text (issue #31).
const BLOCKED: &[&[u8]] = &[
    b"\x1b]52;",
    b"\x1b]5522;",
    b"\x1b]9;",
    b"\x1b]99;",
    b"\x1b]777;",
    b"\x1b]8;",
    b"\x1b]50;",
    b"\x1bP$q",
    b"\x1bP+q",
    b"\x1b[20t",
    b"\x1b[21t",
];

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fuzz_target!(|data: &[u8]| {
    let mut input = Bytes::new(data);
    let sizes = input.piece();
    let stream = input.rest();

    let mut whole = OutputFilter::new(TerminalAccess::default());
    let mut out = Vec::new();
    whole.filter(stream, &mut out);

    // The same output in arbitrary reads passes the same bytes.
    let mut split_up = OutputFilter::new(TerminalAccess::default());
    let mut again = Vec::new();
    for read in chunks(stream, sizes) {
        split_up.filter(read, &mut again);
    }
    assert_eq!(
        again, out,
        "what passes depends on how the output was split"
    );
    assert_eq!(split_up.modes, whole.modes);

    assert!(!out.contains(&0x05), "ENQ passed");
    for osc in BLOCKED {
        assert!(!contains(&out, osc), "{osc:?} passed: {out:?}");
    }
    // Only what the sandbox wrote, never more (a string ended early adds no bytes).
    assert!(
        out.len() <= stream.len(),
        "{} > {}",
        out.len(),
        stream.len()
    );
    let _ = whole.modes.restore();
});
