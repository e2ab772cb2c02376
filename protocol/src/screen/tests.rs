use super::*;

fn line(text: &str) -> ScreenLine {
    ScreenLine::new(text.to_string(), false)
}

/// Every escape in `out` is one the renderer writes itself: CSI with digits/`;`/`:`/`?` and a
/// final byte among `m H J r l h q` (`q` after a space), or `ESC =` / `ESC >`; no other control
/// byte than ESC, CR and LF; no C1 control encoded in UTF-8.
fn assert_only_known_sequences(out: &[u8]) {
    let text = std::str::from_utf8(out).expect("renderer writes UTF-8");
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('=') | Some('>') => {}
                Some('[') => {
                    let mut params = String::new();
                    while let Some(&p) = chars.peek() {
                        if p.is_ascii_digit() || ";:? ".contains(p) {
                            params.push(p);
                            chars.next();
                        } else {
                            break;
                        }
                    }
                    let fin = chars.next().expect("CSI has a final byte");
                    assert!("mHJKrlhq".contains(fin), "unexpected CSI {params:?}{fin}");
                    assert!(
                        fin == 'q' || !params.contains(' '),
                        "space only in DECSCUSR"
                    );
                }
                other => panic!("unexpected escape ESC {other:?}"),
            },
            '\r' | '\n' => {}
            c if c.is_control() => panic!("control character {c:?} in output"),
            _ => {}
        }
    }
}

#[test]
fn items_split_text_and_sgr() {
    let l = line("ab\u{1b}[1;31mcd\u{1b}[0m");
    let items: Vec<_> = l.items().collect();
    assert_eq!(
        items,
        vec![
            LineItem::Text("ab"),
            LineItem::Sgr("1;31"),
            LineItem::Text("cd"),
            LineItem::Sgr("0"),
        ]
    );
    assert_eq!(l.plain_text(), "abcd");
}

#[test]
fn items_drop_everything_else() {
    let hostile = "a\u{1b}]52;c;SGVsbG8=\u{7}b\u{1b}[2Jc\u{9b}31md\u{1b}P+q\u{1b}\\e\u{1b}[999999999999999999999999999999999999999999999999999999999999999999999mf\r\n\u{8}g\u{7f}h\u{1b}";
    let l = line(hostile);
    for item in l.items() {
        if let LineItem::Text(t) = item {
            assert!(!t.chars().any(char::is_control), "{t:?}");
        }
    }
    // OSC 52's payload stays as harmless text; the sequences around it do not.
    assert_eq!(l.plain_text(), "a]52;c;SGVsbG8=bc31mdP+q\\efgh");
}

#[test]
fn to_ansi_of_hostile_lines_only_prints_and_colours() {
    let hostile = [
        "\u{1b}]52;c;SGVsbG8=\u{7}",
        "\u{1b}[6n\u{1b}[c\u{1b}[?1049h\u{1b}[3J",
        "\u{9b}6n\u{90}q\u{9c}\u{85}",
        "\u{1b}[38;2;1;2;3mok\u{1b}[0m",
        "\u{1b}[",
        "\u{1b}",
        "\u{1b}[1;2",
    ];
    let mut snapshot = ScreenSnapshot {
        rows: 4,
        cols: 10,
        lines: hostile.iter().map(|t| line(t)).collect(),
        history: hostile
            .iter()
            .map(|t| ScreenLine::new(t.to_string(), true))
            .collect(),
        title: Some("\u{1b}]52;c;x\u{7}".into()),
        ..ScreenSnapshot::default()
    };
    snapshot.lines.push(line(&"x".repeat(100_000)));
    assert_only_known_sequences(&snapshot.to_ansi_with_history(true));
    assert_only_known_sequences(&snapshot.to_ansi());
}

#[test]
fn damage_of_hostile_lines_only_prints_and_colours_on_its_rows() {
    let hostile = [
        "\u{1b}]52;c;SGVsbG8=\u{7}",
        "\u{1b}[6n\u{1b}[c\u{1b}[?1049h\u{1b}[3J",
        "\u{9b}6n\u{90}q\u{9c}\u{85}",
        "\u{1b}[1;2",
    ];
    let damage = ScreenDamage {
        rows: 3,
        cols: 10,
        lines: hostile
            .iter()
            .enumerate()
            .map(|(r, t)| (r as u16, line(t)))
            .collect(),
        cursor: Cursor::default(),
        modes: ScreenModes::default(),
    };
    let out = damage.to_ansi();
    assert_only_known_sequences(&out);
    let text = String::from_utf8(out).expect("UTF-8");
    // Each row is erased whole at its place; a row past the screen is left out.
    assert!(text.contains("\u{1b}[1;1H\u{1b}[2K") && text.contains("\u{1b}[3;1H\u{1b}[2K"));
    assert!(!text.contains("\u{1b}[4;1H"));
    // It never leaves or enters the alternate screen, or clears the screen.
    assert!(!text.contains("\u{1b}[?1049") && !text.contains("\u{1b}[J"));
}

#[test]
fn to_ansi_sets_modes_and_cursor() {
    let snapshot = ScreenSnapshot {
        rows: 3,
        cols: 5,
        lines: vec![line("hi"), line(""), line("\u{1b}[7mx")],
        cursor: Cursor {
            row: 9,
            col: 9,
            visible: false,
            shape: Some(CursorShape::Bar { blinking: true }),
        },
        modes: ScreenModes {
            alt_screen: true,
            app_cursor: true,
            app_keypad: true,
            bracketed_paste: true,
            mouse: MouseMode::Drag,
            sgr_mouse: true,
            focus_events: true,
            autowrap: false,
        },
        ..ScreenSnapshot::default()
    };
    let out = String::from_utf8(snapshot.to_ansi()).expect("utf-8");
    assert_only_known_sequences(out.as_bytes());
    let alt = out.find("\u{1b}[?1049h").expect("alt screen entered");
    let first = out.find("\u{1b}[1;1Hhi").expect("row 1 drawn");
    assert!(alt < first, "alt screen before drawing");
    assert!(out.contains("\u{1b}[3;1H\u{1b}[7mx\u{1b}[0m"));
    assert!(!out.contains("\u{1b}[2;1H"), "blank rows are not drawn");
    for mode in ["?1h", "?2004h", "?1002h", "?1006h", "?1004h", "5 q"] {
        assert!(out.contains(&format!("\u{1b}[{mode}")), "{mode} in {out:?}");
    }
    assert!(out.contains("\u{1b}="));
    assert!(!out.contains("\u{1b}[?7h\u{1b}[?1h"), "autowrap stays off");
    assert!(
        out.ends_with("\u{1b}[3;5H"),
        "cursor clamped, hidden: {out:?}"
    );
}

#[test]
fn history_scrolls_into_scrollback_and_wraps_run_on() {
    let snapshot = ScreenSnapshot {
        rows: 2,
        cols: 3,
        lines: vec![line("v")],
        history: vec![ScreenLine::new("abc".into(), true), line("d"), line("e")],
        ..ScreenSnapshot::default()
    };
    let out = String::from_utf8(snapshot.to_ansi_with_history(true)).expect("utf-8");
    assert!(out.contains("\u{1b}[Jabc\u{1b}[0md\u{1b}[0m\r\ne\u{1b}[0m\r\n\n"));
    assert!(!snapshot.to_ansi().windows(3).any(|w| w == b"abc"));
}

#[test]
fn json_round_trip_and_size_of_a_full_colour_screen() {
    let (rows, cols) = (50u16, 200u16);
    let lines = (0..rows)
        .map(|r| {
            let mut text = String::new();
            for c in 0..cols {
                // A new colour every 8 cells: a busy, full-colour TUI screen.
                if c % 8 == 0 {
                    let n = (u32::from(r) * 7 + u32::from(c)) % 256;
                    text.push_str(&format!("\u{1b}[38;5;{n};48;5;{}m", 255 - n));
                }
                text.push(char::from(b'a' + (c % 26) as u8));
            }
            ScreenLine::new(text, false)
        })
        .collect();
    let snapshot = ScreenSnapshot {
        rows,
        cols,
        lines,
        ..ScreenSnapshot::default()
    };
    let json = serde_json::to_vec(&snapshot).expect("serializes");
    let back: ScreenSnapshot = serde_json::from_slice(&json).expect("deserializes");
    assert_eq!(back, snapshot);
    let ansi = snapshot.to_ansi();
    eprintln!(
        "50x200 screen, colour every 8 cells: JSON {} bytes, ANSI {} bytes",
        json.len(),
        ansi.len()
    );
    assert!(json.len() < 128 * 1024, "JSON {} bytes", json.len());
}
