//! A `lazaret tui` pane's emulator fed a session's output (hostile) in arbitrary reads, with
//! resizes, scrolled back and drawn into part of the frame.
#![no_main]

use lazaret_fuzz::Bytes;
use lazaret_ui::tui::emulator::new_emulator;
use libfuzzer_sys::fuzz_target;
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;

fuzz_target!(|data: &[u8]| {
    let mut input = Bytes::new(data);
    let rows = u16::from(input.u8() % 24) + 1;
    let cols = u16::from(input.u8() % 80) + 1;
    let scrollback = usize::from(input.u8());
    let mut emulator = new_emulator(rows, cols, scrollback);
    // The same output cut elsewhere (each read in two at a point the input chooses): the pane
    // may not depend on where reads end (vte 0.15 lost the character after a UTF-8 sequence
    // cut between reads: alacritty/vte#159).
    let mut cut = new_emulator(rows, cols, scrollback);
    while !input.is_empty() {
        match input.u8() {
            0xff => {
                let (r, c) = (u16::from(input.u8() % 30), u16::from(input.u8() % 90));
                emulator.resize(r, c);
                cut.resize(r, c);
            }
            0xfe => {
                emulator.reset_modes();
                cut.reset_modes();
            }
            n => {
                let read = input.take(usize::from(n) * 4);
                emulator.process(read);
                let at = usize::from(n).wrapping_mul(7) % (read.len() + 1);
                cut.process(&read[..at]);
                cut.process(&read[at..]);
            }
        }
        let _ = emulator.take_replies();
        let _ = cut.take_replies();
    }
    assert_eq!(
        cut.screen_text(),
        emulator.screen_text(),
        "the pane depends on where reads end"
    );
    let (rows, cols) = emulator.size();
    assert!(rows >= 1 && cols >= 1);
    assert!(emulator.screen_text().lines().count() <= usize::from(rows));
    if let Some((row, col)) = emulator.cursor(0) {
        assert!(
            row < rows && col < cols,
            "cursor {row},{col} outside {rows}x{cols}"
        );
    }
    let _ = emulator.modes();

    // Drawn into an area (smaller or larger than the screen) inside a bigger frame: nothing
    // outside the area changes.
    let area = Rect::new(3, 2, cols, rows);
    let frame = Rect::new(0, 0, cols + 6, rows + 4);
    let mut buf = Buffer::filled(frame, Cell::new("#"));
    let scroll = emulator.history_len().min(usize::from(data.len() as u8));
    emulator.draw(&mut buf, area, scroll);
    for y in 0..frame.height {
        for x in 0..frame.width {
            if !area.contains((x, y).into()) {
                assert_eq!(
                    buf[(x, y)].symbol(),
                    "#",
                    "drawn outside the area at {x},{y}"
                );
            }
        }
    }
});
