//! Behaviour both emulators must share; each test runs on both.

use ratatui::buffer::{Buffer, CellWidth};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};

use super::*;
use crate::tui::emulator_alacritty::AlacrittyEmulator;
use crate::tui::emulator_vt100::Vt100Emulator;
use crate::tui::input::encode_key;

fn both(rows: u16, cols: u16, scrollback: usize) -> Vec<(&'static str, Box<dyn Emulator>)> {
    vec![
        (
            "alacritty",
            Box::new(AlacrittyEmulator::new(rows, cols, scrollback)),
        ),
        (
            "vt100",
            Box::new(Vt100Emulator::new(rows, cols, scrollback)),
        ),
    ]
}

fn row_text(buf: &Buffer, y: u16, xs: std::ops::Range<u16>) -> String {
    xs.map(|x| buf[(x, y)].symbol().to_owned())
        .collect::<String>()
        .trim_end()
        .to_owned()
}

#[test]
fn dsr_6_reports_the_cursor_after_output() {
    for (name, mut emu) in both(24, 80, 100) {
        emu.process(b"hello\r\nab");
        emu.process(b"\x1b[6n");
        assert_eq!(emu.take_replies(), b"\x1b[2;3R", "{name}");
        assert!(
            emu.take_replies().is_empty(),
            "{name}: replies are taken once"
        );
        // A query split across reads is still answered, once.
        emu.process(b"\x1b[1;5H\x1b");
        emu.process(b"[6");
        emu.process(b"n");
        assert_eq!(emu.take_replies(), b"\x1b[1;5R", "{name}");
    }
}

#[test]
fn dsr_5_and_device_attributes_are_answered() {
    for (name, mut emu) in both(24, 80, 100) {
        emu.process(b"\x1b[5n");
        assert_eq!(emu.take_replies(), b"\x1b[0n", "{name}");
        for query in [&b"\x1b[c"[..], b"\x1b[0c"] {
            emu.process(query);
            let reply = String::from_utf8(emu.take_replies()).unwrap_or_default();
            assert!(
                reply.starts_with("\x1b[?") && reply.ends_with('c'),
                "{name}: {reply:?}"
            );
        }
        emu.process(b"\x1b[>c");
        let reply = String::from_utf8(emu.take_replies()).unwrap_or_default();
        assert!(
            reply.starts_with("\x1b[>") && reply.ends_with('c'),
            "{name}: {reply:?}"
        );
        emu.process(b"\x1b[18t");
        assert_eq!(emu.take_replies(), b"\x1b[8;24;80t", "{name}");
    }
}

#[test]
fn clipboard_and_title_sequences_are_silent() {
    for (name, mut emu) in both(4, 20, 100) {
        emu.process(b"\x1b]52;c;aGk=\x07\x1b]52;c;?\x07\x1b]0;x\x07\x1b]2;title\x1b\\");
        assert!(emu.take_replies().is_empty(), "{name}");
        assert_eq!(emu.screen_text(), "\n\n\n", "{name}");
    }
}

#[test]
fn alternate_screen_in_modes_and_text() {
    for (name, mut emu) in both(3, 20, 100) {
        emu.process(b"main");
        emu.process(b"\x1b[?1049h\x1b[Halt");
        assert!(emu.modes().alt_screen, "{name}");
        assert_eq!(emu.screen_text(), "alt\n\n", "{name}");
        emu.process(b"\x1b[?1049l");
        assert!(!emu.modes().alt_screen, "{name}");
        assert_eq!(emu.screen_text(), "main\n\n", "{name}");
    }
}

#[test]
fn app_cursor_mode_changes_arrow_encoding() {
    let up = crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Up);
    for (name, mut emu) in both(3, 20, 100) {
        assert_eq!(encode_key(&up, &emu.modes()), b"\x1b[A", "{name}");
        emu.process(b"\x1b[?1h");
        assert!(emu.modes().app_cursor, "{name}");
        assert_eq!(encode_key(&up, &emu.modes()), b"\x1bOA", "{name}");
    }
}

#[test]
fn modes_follow_the_program() {
    for (name, mut emu) in both(3, 20, 100) {
        let fresh = Modes {
            cursor_visible: true,
            ..Modes::default()
        };
        assert_eq!(emu.modes(), fresh, "{name}");
        emu.process(b"\x1b[?1000h");
        assert_eq!(emu.modes().mouse, MouseMode::Click, "{name}");
        emu.process(b"\x1b[?1002h");
        assert_eq!(emu.modes().mouse, MouseMode::Drag, "{name}");
        emu.process(b"\x1b[?1003h\x1b[?1006h\x1b[?2004h\x1b[?1004h\x1b[?25l");
        let modes = emu.modes();
        assert_eq!(modes.mouse, MouseMode::Motion, "{name}");
        assert!(
            modes.mouse_sgr && modes.bracketed_paste && modes.focus_events,
            "{name}"
        );
        assert!(!modes.cursor_visible, "{name}");
        emu.process(b"\x1b[?1004l");
        assert!(!emu.modes().focus_events, "{name}");
    }
}

#[test]
fn reset_modes_turns_everything_off_and_keeps_text() {
    for (name, mut emu) in both(3, 20, 100) {
        emu.process(b"keep\x1b[?1h\x1b[?1003h\x1b[?1006h\x1b[?2004h\x1b[?1004h\x1b[?25l");
        emu.process(b"\x1b[?1049h\x1b[Hfull-screen app\x1b[?10");
        emu.reset_modes();
        let fresh = Modes {
            cursor_visible: true,
            ..Modes::default()
        };
        assert_eq!(emu.modes(), fresh, "{name}");
        assert_eq!(emu.screen_text(), "keep\n\n", "{name}");
        emu.process(b"!");
        assert_eq!(
            emu.screen_text(),
            "keep!\n\n",
            "{name}: the cursor stayed put"
        );
    }
}

#[test]
fn cursor_only_when_visible_and_live() {
    for (name, mut emu) in both(3, 20, 100) {
        emu.process(b"ab");
        assert_eq!(emu.cursor(0), Some((0, 2)), "{name}");
        assert_eq!(emu.cursor(1), None, "{name}");
        emu.process(b"\x1b[?25l");
        assert_eq!(emu.cursor(0), None, "{name}");
    }
}

#[test]
fn resize_changes_size() {
    for (name, mut emu) in both(3, 20, 100) {
        assert_eq!(emu.size(), (3, 20), "{name}");
        emu.resize(5, 40);
        assert_eq!(emu.size(), (5, 40), "{name}");
        emu.resize(0, 0);
        let narrowest = if name == "alacritty" { 2 } else { 1 };
        assert_eq!(emu.size(), (1, narrowest), "{name}");
    }
}

/// Found by fuzzing (issue #19, `scripts/fuzz pane_emulator`): alacritty indexed past the end
/// of a one-column row to write a double-width char, so a pane one column wide panicked the TUI
/// on such output.
#[test]
fn a_wide_char_in_a_one_column_pane_does_not_panic() {
    let mut emu = AlacrittyEmulator::new(4, 1, 0);
    emu.process("中文\r\n😀x".as_bytes());
    emu.resize(3, 1);
    emu.process("中".as_bytes());
    assert_eq!(emu.size(), (3, 2));
}

#[test]
fn wide_chars_never_cross_the_area_edge() {
    for (name, mut emu) in both(2, 10, 100) {
        emu.process("abc中x\r\nabcd😀".as_bytes());
        let mut buf = Buffer::filled(Rect::new(0, 0, 20, 3), ratatui::buffer::Cell::new("X"));
        let area = Rect::new(4, 0, 5, 2);
        emu.draw(&mut buf, area, 0);
        for y in 0..3 {
            for x in 0..20 {
                if !area.contains((x, y).into()) {
                    assert_eq!(
                        buf[(x, y)].symbol(),
                        "X",
                        "{name}: wrote outside at {x},{y}"
                    );
                }
            }
        }
        // 中 fits in columns 3–4 of the area; 😀 would need columns 4–5, so it is a space.
        assert_eq!(buf[(7, 0)].symbol(), "中", "{name}");
        assert_eq!(buf[(8, 0)].symbol(), " ", "{name}");
        assert_eq!(row_text(&buf, 1, 4..9), "abcd", "{name}");
    }
}

#[test]
fn wide_chars_occupy_two_cells() {
    for (name, mut emu) in both(2, 10, 100) {
        emu.process("中😀x".as_bytes());
        let mut buf = Buffer::empty(Rect::new(0, 0, 10, 2));
        {
            let area = buf.area;
            emu.draw(&mut buf, area, 0);
        }
        let symbols: Vec<&str> = (0..5).map(|x| buf[(x, 0)].symbol()).collect();
        assert_eq!(symbols, ["中", " ", "😀", " ", "x"], "{name}");
        assert_eq!(emu.screen_text(), "中😀x\n", "{name}");
    }
}

#[test]
fn combining_marks_join_their_base_char() {
    for (name, mut emu) in both(2, 10, 100) {
        emu.process("e\u{301}!".as_bytes());
        let mut buf = Buffer::empty(Rect::new(0, 0, 10, 2));
        {
            let area = buf.area;
            emu.draw(&mut buf, area, 0);
        }
        assert_eq!(buf[(0, 0)].symbol(), "e\u{301}", "{name}");
        assert_eq!(buf[(1, 0)].symbol(), "!", "{name}");
    }
}

#[test]
fn colours_and_attributes_map_to_ratatui() {
    for (name, mut emu) in both(2, 10, 100) {
        emu.process(b"\x1b[1;31mR\x1b[0;4;38;2;1;2;3;48;5;200mG\x1b[0;7;95mB\x1b[0mN");
        let mut buf = Buffer::empty(Rect::new(0, 0, 10, 2));
        {
            let area = buf.area;
            emu.draw(&mut buf, area, 0);
        }
        let red = &buf[(0, 0)];
        assert_eq!(
            (red.fg, red.bg, red.modifier),
            (Color::Red, Color::Reset, Modifier::BOLD)
        );
        let rgb = &buf[(1, 0)];
        assert_eq!(rgb.fg, Color::Rgb(1, 2, 3), "{name}");
        assert_eq!(rgb.bg, Color::Indexed(200), "{name}");
        assert_eq!(rgb.modifier, Modifier::UNDERLINED, "{name}");
        let bright = &buf[(2, 0)];
        assert_eq!(
            (bright.fg, bright.modifier),
            (Color::LightMagenta, Modifier::REVERSED)
        );
        let plain = &buf[(3, 0)];
        assert_eq!(
            (plain.fg, plain.bg, plain.modifier),
            (Color::Reset, Color::Reset, Modifier::empty())
        );
    }
}

#[test]
fn scrollback_shows_earlier_lines() {
    for (name, mut emu) in both(10, 20, 1000) {
        let lines: Vec<String> = (0..100).map(|i| format!("line {i}")).collect();
        emu.process(lines.join("\r\n").as_bytes());
        assert!(emu.history_len() >= 90, "{name}: {}", emu.history_len());
        let mut buf = Buffer::empty(Rect::new(0, 0, 20, 10));
        {
            let area = buf.area;
            emu.draw(&mut buf, area, 5);
        }
        assert_eq!(row_text(&buf, 0, 0..20), "line 85", "{name}");
        assert_eq!(row_text(&buf, 9, 0..20), "line 94", "{name}");
        // Drawing scrolled back leaves the live screen alone.
        assert!(emu.screen_text().ends_with("line 99"), "{name}");
        {
            let area = buf.area;
            emu.draw(&mut buf, area, 0);
        }
        assert_eq!(row_text(&buf, 9, 0..20), "line 99", "{name}");
        // Scrolling past the history stops at its oldest line.
        {
            let area = buf.area;
            emu.draw(&mut buf, area, usize::MAX);
        }
        assert_eq!(
            row_text(&buf, 0, 0..20),
            format!("line {}", 90 - emu.history_len())
        );
    }
}

#[test]
fn draw_blanks_area_beyond_the_screen() {
    for (name, mut emu) in both(2, 4, 100) {
        emu.process(b"abcd\r\nef");
        let mut buf = Buffer::filled(Rect::new(0, 0, 6, 3), ratatui::buffer::Cell::new("X"));
        {
            let area = buf.area;
            emu.draw(&mut buf, area, 0);
        }
        let rows: Vec<String> = (0..3).map(|y| row_text(&buf, y, 0..6)).collect();
        assert_eq!(rows, ["abcd", "ef", ""], "{name}");
    }
}

#[test]
fn screen_snapshot() {
    for (name, mut emu) in both(6, 30, 100) {
        emu.process(
            "\x1b[1;32m$\x1b[0m ls -l\r\n\x1b[34mdrwxr-xr-x\x1b[0m  src\r\n日本語 ✓ 🚀 done\r\n\ttab\x1b[3;25Hhere"
                .as_bytes(),
        );
        insta::assert_snapshot!(format!("screen_{name}"), emu.screen_text());
    }
}

#[test]
fn reset_modes_after_a_death_inside_a_string() {
    for (name, mut emu) in both(2, 20, 100) {
        emu.process(b"keep\x1b]0;never terminated");
        emu.reset_modes();
        emu.process(b"!");
        assert_eq!(emu.screen_text(), "keep!\n", "{name}");
    }
}

#[test]
fn tabs_draw_as_spaces() {
    for (name, mut emu) in both(2, 20, 100) {
        emu.process(b"a\tb");
        let mut buf = Buffer::empty(Rect::new(0, 0, 20, 2));
        {
            let area = buf.area;
            emu.draw(&mut buf, area, 0);
        }
        assert_eq!(row_text(&buf, 0, 0..20), "a       b", "{name}");
        assert_eq!(emu.screen_text(), "a       b\n", "{name}");
    }
}

#[test]
fn cells_ratatui_would_mismeasure_keep_the_emulator_width() {
    // U+2764 + VS16: one column to alacritty (ratatui would count two), two to vt100.
    for ((name, mut emu), columns) in both(2, 10, 100).into_iter().zip([1, 2]) {
        emu.process("\u{2764}\u{fe0f}x中".as_bytes());
        let mut buf = Buffer::empty(Rect::new(0, 0, 10, 2));
        {
            let area = buf.area;
            emu.draw(&mut buf, area, 0);
        }
        let heart = &buf[(0, 0)];
        assert_eq!(heart.symbol(), "\u{2764}\u{fe0f}", "{name}");
        assert_eq!(heart.cell_width(), columns, "{name}");
        assert_eq!(buf[(columns, 0)].symbol(), "x", "{name}");
        let cjk = &buf[(columns + 1, 0)];
        assert_eq!((cjk.symbol(), cjk.cell_width()), ("中", 2), "{name}");
        assert_eq!(
            cjk.diff_option,
            ratatui::buffer::CellDiffOption::None,
            "{name}"
        );
    }
}

#[test]
fn blanks_clear_what_the_buffer_held_and_coloured_blanks_keep_their_colour() {
    for (name, mut emu) in both(3, 10, 0) {
        // Row 0: text then default blanks; row 1: a blank with a red background (erase with
        // a colour); row 2: nothing.
        emu.process(b"ab\r\n\x1b[41m \x1b[0m");
        let area = Rect::new(0, 0, 10, 3);
        let mut buf = Buffer::empty(area);
        for y in 0..3 {
            for x in 0..10 {
                buf[(x, y)].set_char('X').set_bg(Color::Blue);
            }
        }
        emu.draw(&mut buf, area, 0);
        assert_eq!(row_text(&buf, 0, 0..10), "ab", "{name}");
        assert_eq!(buf[(5, 0)], ratatui::buffer::Cell::EMPTY, "{name}");
        assert_eq!(buf[(0, 1)].symbol(), " ", "{name}");
        assert_eq!(buf[(0, 1)].bg, Color::Red, "{name}");
        assert_eq!(buf[(1, 1)], ratatui::buffer::Cell::EMPTY, "{name}");
        assert_eq!(buf[(9, 2)], ratatui::buffer::Cell::EMPTY, "{name}");
    }
}

/// Found by fuzzing (issue #19, `scripts/fuzz screen`): vte 0.15 lost the character after a
/// UTF-8 sequence that one read ended and the next completed (`e` + half of U+0301, then the
/// rest + `e\u{301}`: the second `e` was gone). Output arrives in arbitrary reads; a pane shows
/// the same whatever the cut.
#[test]
fn a_character_split_between_reads_loses_nothing_after_it() {
    let text = "ae\u{301}e\u{301}z 中文 \u{1F600}!";
    let bytes = text.as_bytes();
    let area = Rect::new(0, 0, 30, 2);
    let shown = |emu: &dyn Emulator| {
        let mut buf = Buffer::empty(area);
        emu.draw(&mut buf, area, 0);
        row_text(&buf, 0, 0..30)
    };
    for (name, mut whole) in both(2, 30, 0) {
        whole.process(bytes);
        let want = shown(whole.as_ref());
        assert!(want.starts_with("ae\u{301}e\u{301}z"), "{name}: {want:?}");
        for at in 1..bytes.len() {
            let mut emu: Box<dyn Emulator> = if name == "alacritty" {
                Box::new(AlacrittyEmulator::new(2, 30, 0))
            } else {
                Box::new(Vt100Emulator::new(2, 30, 0))
            };
            emu.process(&bytes[..at]);
            emu.process(&bytes[at..]);
            assert_eq!(shown(emu.as_ref()), want, "{name}, cut at {at}");
        }
    }
}

/// Found by fuzzing (issue #19): vte 0.15 overflowed shifting a long legacy `#rgb` colour (a
/// panic where overflow is checked); the workspace builds vte without overflow checks.
#[test]
fn a_legacy_colour_with_many_digits_does_not_panic() {
    for (_, mut emu) in both(4, 20, 0) {
        for osc in ["4;1;", "10;", "11;", "12;"] {
            emu.process(format!("\x1b]{osc}#{}\x07x", "0".repeat(60)).as_bytes());
        }
        assert!(emu.screen_text().starts_with("xxxx"));
    }
}
