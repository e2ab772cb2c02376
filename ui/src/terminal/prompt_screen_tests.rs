//! DX-4: whatever the sandbox did to the terminal before its escalation, the card drawn after
//! [`clean_screen`] is fully visible and alone on the screen — rendered by both terminal
//! emulators the project uses (vt100 for scroll region, origin mode, alternate screen, cursor;
//! alacritty_terminal also for DEC special graphics and insert mode).

use super::*;
use crate::tui::emulator::Emulator;
use crate::tui::emulator_alacritty::AlacrittyEmulator;
use crate::tui::emulator_vt100::Vt100Emulator;

const ROWS: u16 = 24;
const COLS: u16 = 120;

fn prompt() -> EscalationPrompt {
    EscalationPrompt {
        request_id: "r".into(),
        profile: "shell".into(),
        session_id: "0123456789abcdef".into(),
        argv: vec!["rm".into(), "-rf".into(), "/home/dev".into()],
        program: "/usr/bin/rm".into(),
        cwd: "/workspace".into(),
        host_cwd: "/home/dev/p".into(),
        justification: "cleanup".into(),
        timeout_secs: 30,
        warnings: Vec::new(),
    }
}

/// A spoofed card, as the sandbox would print it, showing a harmless command.
const FAKE: &str =
    "\r\n\x1b[1;33m┌─ lazaret: the sandbox asks to run a command on the host\x1b[0m\r\n\
│ profile  shell   session 0123456789ab\r\n│ command  \x1b[1m[\"ls\"]\x1b[0m FAKE\r\n\
│ in       \"/workspace\" → host \"/home/dev/p\"\r\n│ why      \"look\"\r\n\
└─ [a] approve  [e] edit  [d] deny   (times out in 30 s)\r\n";

/// What the sandbox may have done before asking: (name, bytes).
fn hostile() -> Vec<(&'static str, String)> {
    let fill: String = (0..ROWS).map(|i| format!("sandbox line {i}\r\n")).collect();
    let with = |setup: &str| format!("{fill}{FAKE}{setup}");
    vec![
        ("scroll region 23;24", with("\x1b[23;24r\x1b[24;1H")),
        ("scroll region 1;2", with("\x1b[1;2r\x1b[2;1H")),
        (
            "origin mode in a small region",
            with("\x1b[5;6r\x1b[?6h\x1b[1;1H"),
        ),
        ("alternate screen", format!("{fill}\x1b[?1049h{FAKE}")),
        ("alternate screen (47)", format!("{fill}\x1b[?47h{FAKE}")),
        ("reverse video", with("\x1b[?5h")),
        ("hidden cursor", with("\x1b[?25l")),
        ("invisible and reversed SGR", with("\x1b[8;7;30;40m")),
        ("DEC special graphics in G0", with("\x1b(0")),
        (
            "DEC special graphics in G1, shifted out",
            with("\x1b)0\x0e"),
        ),
        ("insert mode", with("\x1b[4h")),
        ("autowrap off", with("\x1b[?7l")),
        ("unterminated OSC", with("\x1b]0;swallow")),
        ("unterminated DCS", with("\x1bP1$q")),
        ("half an escape sequence", with("\x1b[3")),
        ("cursor parked on the last column", with("\x1b[24;120H")),
        (
            "everything at once",
            format!(
                "{fill}\x1b[?1049h{FAKE}\x1b[23;24r\x1b[?6h\x1b[?5h\x1b[?25l\x1b(0\x1b)0\x0e\
                 \x1b[4h\x1b[?7l\x1b[8m\x1b]2;x"
            ),
        ),
    ]
}

/// The card's rows as the screen must show them, in order.
fn card_rows() -> Vec<&'static str> {
    vec![
        "┌─ lazaret: the sandbox asks to run a command on the host",
        "│ program  /usr/bin/rm (argv[0] \"rm\") · 2 arguments",
        "│ command  [\"rm\", \"-rf\", \"/home/dev\"]",
        "│ in       \"/workspace\" → host \"/home/dev/p\"",
        "│ why      \"cleanup\"",
        "│ profile  shell   session 0123456789ab   request r",
        "└─ [a] approve  [e] edit  [d] deny   (times out in 30 s)",
    ]
}

fn assert_card_alone(name: &str, emulator: &str, emu: &dyn Emulator) {
    let text = emu.screen_text();
    let lines: Vec<&str> = text.lines().collect();
    let first = lines
        .iter()
        .position(|l| *l == card_rows()[0])
        .unwrap_or_else(|| panic!("{name} ({emulator}): no card head in\n{text}"));
    for (i, row) in card_rows().iter().enumerate() {
        assert_eq!(
            lines.get(first + i).copied(),
            Some(*row),
            "{name} ({emulator}): row {i} in\n{text}"
        );
    }
    assert!(
        !text.contains("FAKE") && !text.contains("sandbox line"),
        "{name} ({emulator}): the sandbox's screen is still visible next to the card:\n{text}"
    );
    let modes = emu.modes();
    assert!(
        !modes.alt_screen,
        "{name} ({emulator}): still on the alternate screen"
    );
    assert!(
        modes.cursor_visible,
        "{name} ({emulator}): the cursor is hidden"
    );
    assert!(
        modes.bracketed_paste,
        "{name} ({emulator}): pastes are not bracketed"
    );
    assert_eq!(
        modes.mouse,
        crate::tui::emulator::MouseMode::Off,
        "{name} ({emulator})"
    );
    assert!(!modes.focus_events, "{name} ({emulator})");
}

#[test]
fn the_card_is_fully_visible_whatever_the_sandbox_set() {
    for (name, setup) in hostile() {
        let emulators: Vec<(&str, Box<dyn Emulator>)> = vec![
            ("vt100", Box::new(Vt100Emulator::new(ROWS, COLS, 1000))),
            (
                "alacritty",
                Box::new(AlacrittyEmulator::new(ROWS, COLS, 1000)),
            ),
        ];
        for (emulator, mut emu) in emulators {
            emu.process(setup.as_bytes());
            emu.process(clean_screen(ROWS).as_bytes());
            emu.process(card(&prompt(), COLS, false).as_bytes());
            assert_card_alone(name, emulator, emu.as_ref());
            // The menu is the last row written; the cursor is below the card.
            let (row, _) = emu.cursor(0).unwrap_or((u16::MAX, 0));
            assert!(
                usize::from(row) >= card_rows().len(),
                "{name} ({emulator}): cursor {row}"
            );
        }
    }
}

#[test]
fn without_the_reset_a_scroll_region_hides_the_card() {
    // The regression this guards against: the card drawn straight after `ESC[23;24r`
    // scrolls inside two rows and the spoofed card above stays on screen.
    let mut emu = Vt100Emulator::new(ROWS, COLS, 1000);
    let setup = &hostile()[0].1;
    emu.process(setup.as_bytes());
    emu.process(card(&prompt(), COLS, false).as_bytes());
    let text = emu.screen_text();
    assert!(text.contains("FAKE"), "{text}");
    assert!(!text.contains(card_rows()[2]), "{text}");
}

#[test]
fn the_clean_screen_resets_every_mode_it_names() {
    for part in [
        "\x18",
        "\x1b[?1049l",
        "\x1b[r",
        "\x1b[?6l",
        "\x1b[?7h",
        "\x1b[4l",
        "\x1b[?5l",
        "\x1b[?25h",
        "\x1b(B",
        "\x1b)B",
        "\x0f",
        "\x1b[0m",
        "\x1b[?2004h",
    ] {
        assert!(CLEAN.contains(part), "{part:?}");
    }
    // Leaving the alternate screen comes first: its DECRC may restore the sandbox's modes.
    assert!(CLEAN.find("\x1b[?1049l") < CLEAN.find("\x1b[r"));
    let s = clean_screen(24);
    assert_eq!(s.matches('\n').count(), 24);
    assert!(s.ends_with("\x1b[H"));
}

#[test]
fn a_decision_needs_the_guard_and_one_key_alone() {
    use Key::*;
    assert!(decides(true, &[Char('a')]));
    assert!(decides(true, &[Report, Char('a'), Report]));
    assert!(!decides(false, &[Char('a')]));
    assert!(!decides(true, &[Char('x'), Char('a')]));
    assert!(!decides(true, &[Pasted('a')]));
}

#[test]
fn a_huge_request_still_fits_an_80_by_24_terminal_with_its_head_warnings_and_menu() {
    let mut p = prompt();
    p.argv = std::iter::once("rm".to_owned())
        .chain((0..256).map(|i| format!("/home/dev/file-{i}-{}", "x".repeat(200))))
        .collect();
    p.justification = "because ".repeat(500);
    p.cwd = format!("/workspace/{}", "deep/".repeat(800));
    p.warnings = vec![
        "the program is in the workspace: the sandbox wrote it".into(),
        format!("nested repository at {}", "n/".repeat(2000)),
    ];
    for emu in [
        &mut Vt100Emulator::new(24, 80, 1000) as &mut dyn Emulator,
        &mut AlacrittyEmulator::new(24, 80, 1000),
    ] {
        emu.process(clean_screen(24).as_bytes());
        emu.process(card(&p, 80, false).as_bytes());
        let text = emu.screen_text();
        let lines: Vec<&str> = text.lines().skip_while(|l| l.is_empty()).collect();
        assert_eq!(lines.first().copied(), Some(card_rows()[0]), "{text}");
        // Warnings first, right under the head; the program and the count are on screen.
        assert!(
            lines[1].starts_with("│ warning  the program is in the workspace"),
            "{text}"
        );
        assert!(
            lines[2].starts_with("│ warning  nested repository at"),
            "{text}"
        );
        assert!(
            text.contains("│ program  /usr/bin/rm (argv[0] \"rm\") · 256 arguments"),
            "{text}"
        );
        assert!(text.contains("more bytes — v shows all"), "{text}");
        assert!(
            text.contains("[a] approve  [e] edit  [d] deny  [v] show all"),
            "the menu is on screen:\n{text}"
        );
    }
    // Shown whole on `v`.
    let all = card(&p, 80, true);
    assert!(all.contains("file-255-") && all.contains("file-128-"));
}
