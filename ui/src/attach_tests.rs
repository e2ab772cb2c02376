//! Handing the terminal back after `lazaret attach` (issue #32, D5).

use super::hand_back;
use crate::terminal::output_filter::OutputFilter;
use lazaret_protocol::access::TerminalAccess;

/// Whether the session's program is on the alternate screen after `chunks` of its output.
fn on_alt_after(chunks: &[&[u8]]) -> bool {
    let mut filter = OutputFilter::new(TerminalAccess::default());
    let mut out = Vec::new();
    for c in chunks {
        filter.filter(c, &mut out);
    }
    filter.modes.alt_screen()
}

#[test]
fn a_normal_screen_session_is_left_without_leaving_an_alternate_screen() {
    // The coordinator's redraw of a shell: it leaves the alternate screen first (the bytes the
    // attach receives), then draws the normal screen.
    let redraw: &[u8] = b"\x1b[?1049l\x1b[0m\x1b[H\x1b[J\x1b[1;1Hsandbox# ";
    assert!(!on_alt_after(&[redraw]));
    let back = hand_back(false);
    let text = String::from_utf8_lossy(&back);
    assert!(!text.contains("1049"), "{text:?}");
    assert!(
        !text.contains("\x1b8") && !text.contains("\x1b[H"),
        "{text:?}"
    );
    assert!(text.contains("\x1b[?25h"), "the cursor is shown: {text:?}");
}

#[test]
fn a_program_on_the_alternate_screen_is_left_with_it() {
    // Attached while `less` runs: the redraw switches to the alternate screen.
    let redraw: &[u8] = b"\x1b[?1049l\x1b[H\x1b[J\x1b[?1049h\x1b[H\x1b[J\x1b[1;1Hpage";
    assert!(on_alt_after(&[redraw]));
    assert!(hand_back(true).starts_with(b"\x1b[?1049l"));
    // `less` quit while attached: back on the normal screen, nothing to leave.
    assert!(!on_alt_after(&[redraw, b"\x1b[?1049l$ "]));
    // A switch cut across two reads still counts.
    assert!(on_alt_after(&[b"\x1b[?10", b"49h"]));
}

#[test]
fn the_three_alternate_screen_modes_are_one_screen() {
    // A program that entered with 1047 and the coordinator's redraw leaving with 1049.
    assert!(!on_alt_after(&[b"\x1b[?1047h", b"\x1b[?1049l"]));
    assert!(on_alt_after(&[b"\x1b[?47h"]));
}
