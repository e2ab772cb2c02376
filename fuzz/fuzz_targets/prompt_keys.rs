//! The escalation prompt's input: raw-mode terminal bytes (keys, pastes, and whatever a
//! terminal answers to queries the sandbox sent it) decoded into keys, split across reads
//! anywhere, then applied to the "edit the command" line.
#![no_main]

use lazaret_fuzz::{chunks, Bytes};
use lazaret_ui::terminal::line_editor::{join, split, Edit, Key, KeyDecoder, LineEditor};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = Bytes::new(data);
    let sizes = input.piece();
    let cols = input.u16();
    let stream = input.rest();

    let mut whole = KeyDecoder::new();
    let mut keys = whole.feed(stream);
    keys.extend(whole.flush());

    // The same bytes in arbitrary reads decode to the same keys.
    let mut split_up = KeyDecoder::new();
    let mut again = Vec::new();
    for read in chunks(stream, sizes) {
        again.extend(split_up.feed(read));
    }
    again.extend(split_up.flush());
    assert_eq!(again, keys, "keys depend on how the input was split");

    let mut editor = LineEditor::new("git push origin main");
    for (i, key) in keys.iter().enumerate() {
        // Comparing the whole line around every key would make long inputs quadratic: the
        // first keys are checked that way, all of them for their outcome.
        let before = (i < 64).then(|| editor.text());
        let edit = editor.apply(key);
        if !key.is_keypress() {
            // Pastes and terminal reports never submit or cancel the prompt.
            assert_eq!(edit, Edit::Continue, "{key:?}");
        }
        if let (Some(before), Key::Report | Key::Other) = (before, key) {
            assert_eq!(editor.text(), before);
        }
        if edit != Edit::Continue {
            break;
        }
    }
    assert!(editor.cursor() <= editor.text().chars().count());
    let text = editor.text();
    assert!(!text.chars().any(char::is_control));
    let shown = editor.render("edit> ", cols);
    assert!(shown.rows >= 1 && shown.cursor_row <= shown.rows);
    assert!(shown.text.starts_with("edit> "));
    if let Ok(argv) = split(&text) {
        assert_eq!(split(&join(&argv)).as_ref(), Ok(&argv));
    }
});
