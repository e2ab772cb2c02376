//! Resizing a session's screen: alacritty reflows soft-wrapped lines; rows the reflow adds are
//! kept on screen while there is room below the cursor (as tmux does), and only rows that no
//! longer fit go to the history — each exactly once.

use super::*;
use lazaret_protocol::screen::ScreenLine;

const PROMPT: &str = "root@3f2a:/workspace# ";
const COMMAND: &str = "echo A123456789B123456789C123456789D123456789E12; echo out-$((1+1))";
const OUTPUT: &str = "A123456789B123456789C123456789D123456789E12";

/// Soft-wrapped rows joined into logical lines, trailing blanks and empty lines at the end
/// dropped.
fn logical(lines: &[ScreenLine]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut joined = false;
    for line in lines {
        let text = line.plain_text();
        match out.last_mut() {
            Some(last) if joined => last.push_str(&text),
            _ => out.push(text),
        }
        joined = line.wrapped;
    }
    let mut out: Vec<String> = out.iter().map(|l| l.trim_end().to_string()).collect();
    while out.last().is_some_and(String::is_empty) {
        out.pop();
    }
    out
}

fn screen_text(screen: &SessionScreen) -> Vec<String> {
    logical(&screen.snapshot(0).lines)
}

/// The history and the screen as one text: a line wrapped from the history's last row onto
/// the screen's first is one line.
fn all_text(screen: &SessionScreen) -> Vec<String> {
    let snap = screen.snapshot(usize::MAX);
    let rows: Vec<ScreenLine> = snap.history.into_iter().chain(snap.lines).collect();
    logical(&rows)
}

fn history_text(screen: &SessionScreen) -> Vec<String> {
    logical(&screen.snapshot(usize::MAX).history)
}

/// The reproduction: a shell in a 46×20 pane ran a command longer than a row.
fn shell_session() -> SessionScreen {
    let mut screen = SessionScreen::new(20, 46, 1_000);
    let out = format!("{PROMPT}{COMMAND}\r\n{OUTPUT}\r\nout-2\r\n{PROMPT}");
    screen.process(out.as_bytes());
    screen
}

fn shell_lines() -> Vec<String> {
    vec![
        format!("{PROMPT}{COMMAND}"),
        OUTPUT.to_string(),
        "out-2".to_string(),
        PROMPT.trim_end().to_string(),
    ]
}

#[test]
fn narrowing_again_keeps_the_rewrapped_line_on_screen() {
    let mut screen = shell_session();
    assert_eq!(screen_text(&screen), shell_lines());
    screen.resize(40, 120);
    let wide = screen.snapshot(0);
    assert_eq!(wide.lines[0].plain_text(), format!("{PROMPT}{COMMAND}"));
    assert_eq!(screen_text(&screen), shell_lines());
    screen.resize(20, 46);
    assert_eq!(screen_text(&screen), shell_lines());
    assert_eq!(screen.history_len(), 0, "{:?}", history_text(&screen));
    let snap = screen.snapshot(usize::MAX);
    assert!(snap.lines[0].plain_text().starts_with(PROMPT));
    // The command line takes two rows at 46 columns; the prompt is on row 4, the cursor after it.
    assert_eq!(snap.lines[4].plain_text(), PROMPT.trim_end());
    assert_eq!((snap.cursor.row, snap.cursor.col), (4, 22));
}

#[test]
fn widening_keeps_the_cursor_on_its_cell_and_narrowing_puts_it_back() {
    let mut screen = SessionScreen::new(20, 46, 1_000);
    // A long command being typed: the cursor after its last character, on the second row.
    screen.process(format!("{OUTPUT}\r\n{PROMPT}{COMMAND}").as_bytes());
    let typed = PROMPT.len() + COMMAND.len();
    let at = |s: &SessionScreen| {
        let c = s.snapshot(0).cursor;
        (c.row, c.col)
    };
    assert_eq!(at(&screen), (2, 89 - 46));
    screen.resize(40, 120);
    assert_eq!(at(&screen), (1, 89));
    screen.resize(20, 46);
    assert_eq!(at(&screen), (2, 89 - 46));
    assert_eq!(
        screen_text(&screen),
        [OUTPUT.to_string(), format!("{PROMPT}{COMMAND}")]
    );
    // The cursor is where typing goes on: the next character lands after the command.
    screen.process(b"Z");
    assert_eq!(
        screen.snapshot(0).lines[2].plain_text().len(),
        typed - 46 + 1
    );
    assert!(screen.snapshot(0).lines[2].plain_text().ends_with("))Z"));
    assert_eq!(screen.history_len(), 0);
}

/// Lines `n00`…, every third one longer than 46 columns.
fn numbered(count: usize) -> Vec<String> {
    (0..count)
        .map(|n| {
            if n % 3 == 0 {
                format!("{n:03}-{}", "x".repeat(50))
            } else {
                format!("{n:03}")
            }
        })
        .collect()
}

#[test]
fn narrowing_a_full_screen_sends_what_no_longer_fits_to_the_history_once() {
    let lines = numbered(30);
    let mut screen = SessionScreen::new(20, 46, 1_000);
    for l in &lines {
        screen.process(format!("{l}\r\n").as_bytes());
    }
    let before = screen.history_len();
    assert!(before > 0);
    screen.resize(20, 120);
    screen.resize(20, 46);
    assert_eq!(all_text(&screen), lines, "in order, each line once");
    // Widening let the screen's long lines take one row each; narrowing wrapped them again,
    // and only then did rows leave the screen: the history grew by what no longer fit.
    let snap = screen.snapshot(0);
    assert_eq!(snap.cursor.row, 19);
    assert!(snap.lines[19].plain_text().is_empty());
    assert!(!snap.lines[0].plain_text().is_empty());
    assert!(screen.history_len() >= before);
}

#[test]
fn narrowing_with_some_room_below_keeps_what_fits_and_pushes_the_rest() {
    // Ten lines of 100 characters written at 120 columns: one row each, nine empty rows below
    // the cursor's.
    let lines: Vec<String> = (0..10).map(|n| format!("{n}{}", "y".repeat(99))).collect();
    let mut screen = SessionScreen::new(20, 120, 1_000);
    for l in &lines {
        screen.process(format!("{l}\r\n").as_bytes());
    }
    assert_eq!(screen.snapshot(0).cursor.row, 10);
    screen.resize(20, 46);
    // At 46 columns each takes three rows: 30 rows and the cursor's. Nine fit below; the
    // oldest eleven rows (three lines and two rows of the fourth) go to the history, once.
    assert_eq!(screen.history_len(), 11);
    let snap = screen.snapshot(usize::MAX);
    assert_eq!(snap.cursor.row, 19);
    assert_eq!(snap.lines[0].plain_text(), "y".repeat(8));
    assert_eq!(snap.lines[1].plain_text(), lines[4][..46]);
    assert!(snap.history[10].wrapped);
    assert_eq!(all_text(&screen), lines);
}

#[test]
fn the_alternate_screen_is_left_as_it_was() {
    let mut screen = shell_session();
    screen.process(b"\x1b[?1049h\x1b[H\x1b[2Jtop line\x1b[10;5Hmiddle\x1b[20;1Hstatus");
    let before = screen.snapshot(0);
    screen.resize(40, 120);
    screen.resize(20, 46);
    let after = screen.snapshot(0);
    assert!(after.modes.alt_screen);
    assert_eq!(after.lines, before.lines);
    assert_eq!(after.cursor, before.cursor);
    assert_eq!(screen.history_len(), 0);
    // Behind it, the primary screen was reflowed the way alacritty does it (a documented
    // limit): back on it, no line is lost or doubled between the history and the screen.
    screen.process(b"\x1b[?1049l");
    assert_eq!(all_text(&screen), shell_lines());
}

#[test]
fn hostile_sizes_do_not_panic() {
    let mut screen = shell_session();
    for (rows, cols) in [
        (0, 0),
        (1, 1),
        (0, 46),
        (20, 0),
        (1, 46),
        (20, 1),
        (u16::MAX, u16::MAX),
        (u16::MAX, 1),
        (1, u16::MAX),
        (20, 46),
    ] {
        screen.resize(rows, cols);
        let (r, c) = screen.size();
        assert!(
            (1..=500).contains(&r) && (1..=2_000).contains(&c),
            "{r}x{c}"
        );
        screen.process(b"\x1b[6n");
        let snap = screen.snapshot(usize::MAX);
        assert_eq!(snap.lines.len(), usize::from(r));
        assert!(snap.cursor.row < r && snap.cursor.col < c);
    }
    assert_eq!(screen.size(), (20, 46));
    assert_eq!(all_text(&screen), shell_lines());
}
