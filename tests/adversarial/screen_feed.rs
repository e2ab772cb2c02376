//! Adversarial scenarios: the screen feed (issue #14; FR-8, DX-4, DX-5). A TUI pane attaches
//! with `updates: "screen"`: the coordinator parses the program's output into its own screen and
//! sends the pane that screen re-encoded (`ScreenSnapshot::to_ansi` and damaged-row updates of
//! the same grammar), never the program's bytes. An agent that wants the developer's terminal
//! to do something — set or read the clipboard, change the title, follow a hyperlink, answer a
//! query into the pane's input, wipe the scrollback, reset the terminal — has to get a
//! sequence through that re-encoding. An attachment with `updates: "bytes"` gets the
//! program's bytes as they are, by design (its client, `lazaret attach`, filters them with the
//! profile's output filter before its terminal), so the same session attached both ways shows
//! on the wire what the re-encoding removes.

use crate::support::tmux::Tmux;
use crate::support::{assert_traces_conform, lazaret_bin, Dev};
use lazaret_protocol::messages::Updates;
use lazaret_protocol::SessionId;
use std::time::{Duration, Instant};

#[path = "../support/attachment.rs"]
mod attachment;
#[path = "../support/screen_grammar.rs"]
mod screen_grammar;

use attachment::{address, as_developer, Attachment};

use super::sessions::{lazaret_line, session_of, wait_torn_down};

/// The hostile program: waits for `/workspace/.go` (both clients attached), writes every
/// attack (the first ones a tenth of a second apart, so that they reach the screen-fed client
/// as changed-row updates, not only in whole screens), floods, then draws `MARKER-42` at row 6, column 4 of a cleared screen and holds
/// until `/workspace/.done` (each wait ends after two minutes: a failed test leaves no session).
const HOSTILE: &str = r#"wait_for() {
  n=0; while [ ! -e "$1" ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n+1)); done
}
wait_for /workspace/.go
printf 'before-hostile\r\n'
sleep 0.1
printf '\033]52;c;c3RvbGVu\007'
sleep 0.1
printf '\033]52;c;?\007'
sleep 0.1
printf '\033]8;;https://evil.example/\033\\link-text\033]8;;\033\\\r\n'
sleep 0.1
printf '\033P+q544e\033\\'
sleep 0.1
printf '\033P$qm\033\\'
sleep 0.1
printf '\033_Gf=100;apc-payload\033\\'
sleep 0.1
printf '\033^pm-payload\033\\'
sleep 0.1
printf '\033Xsos-payload\033\\'
sleep 0.1
printf '\033]0;evil\001\002title\007'
sleep 0.1
printf '\302\23331m\302\2336n'
sleep 0.1
printf '\033[3J'
printf '\033c'
printf '\033[?1049hon-the-alt-screen\r\n'
printf '\007'
printf 'bad-utf8:\377\376\300\200\355\240\200:end\r\n'
yes lazaret-flood-line | head -c 5000000
printf '\033[?1049l\033[2J\033[6;4HMARKER-%s' $((6*7))
wait_for /workspace/.done
"#;

/// Each attack of [`HOSTILE`] as the bytes that reach a terminal fed the program's output.
const ATTACKS: &[(&str, &[u8])] = &[
    ("an OSC 52 clipboard set", b"\x1b]52;c;c3RvbGVu\x07"),
    ("an OSC 52 clipboard query", b"\x1b]52;c;?\x07"),
    ("an OSC 8 hyperlink", b"\x1b]8;;https://evil.example/\x1b\\"),
    ("a DCS XTGETTCAP query", b"\x1bP+q544e\x1b\\"),
    ("a DECRQSS query", b"\x1bP$qm\x1b\\"),
    ("an APC (kitty graphics)", b"\x1b_Gf=100;apc-payload\x1b\\"),
    ("a PM string", b"\x1b^pm-payload\x1b\\"),
    ("an SOS string", b"\x1bXsos-payload\x1b\\"),
    (
        "an OSC 0 title with C0 controls",
        b"\x1b]0;evil\x01\x02title\x07",
    ),
    ("a C1 CSI (U+009B) SGR", b"\xc2\x9b31m"),
    ("a C1 CSI (U+009B) cursor query", b"\xc2\x9b6n"),
    ("an erase of the scrollback", b"\x1b[3J"),
    ("a terminal reset (RIS)", b"\x1bc"),
    (
        "the alternate screen and text",
        b"\x1b[?1049hon-the-alt-screen",
    ),
    ("invalid UTF-8", b"\xff\xfe\xc0\x80\xed\xa0\x80"),
    ("a bell", b"\r\n\x07bad-utf8"),
];

const SIZE: (u16, u16) = (24, 80);
const MARKER: &[u8] = b"MARKER-42";

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Attack: from inside the sandbox, write OSC 52 (set and query the clipboard), an OSC 8
/// hyperlink, DCS (XTGETTCAP, DECRQSS), APC, PM and SOS strings, an OSC 0 title carrying C0
/// controls, U+009B (a C1 CSI in UTF-8: some terminals execute it) as SGR and as a cursor
/// query, `CSI 3 J` (wipe the scrollback), `ESC c` (RIS), `CSI ? 1049 h` and text on the
/// alternate screen, a bell, invalid UTF-8 (bytes that never start a character, an overlong
/// NUL, an encoded surrogate), then a 5 MB flood — hoping any of it reaches the terminal of a
/// TUI pane. The pane's wire (an attachment with `updates: "screen"`) must carry only the
/// screen grammar (`support/screen_grammar.rs`), none of the sequences, and the screen the
/// program drew in the end (`MARKER-42` at row 6, column 4); the same session attached with
/// `updates: "bytes"` receives every one of the sequences raw — what the re-encoding removes.
#[test]
fn a_screen_fed_attachment_receives_only_the_re_encoded_screen() {
    let dev = Dev::get();
    let ws = dev.workspace("adv-screen");
    ws.host_sh(&format!(
        "cat > hostile.sh <<'LAZARET_EOF'\n{HOSTILE}LAZARET_EOF\n"
    ));
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "adv-screen", "run", &dir, 80, 24);
    tmux.type_line(
        "run",
        &format!(
            "{}; echo cli-rc=$?",
            lazaret_line("run --detachable -- sh /workspace/hostile.sh")
        ),
    );
    let id = SessionId::parse(&session_of(&ws)).expect("a session ID");
    let addr = address(&ws);
    let started = Instant::now();
    let (screen, screen_exit, bytes, bytes_exit, a, b) = as_developer(&dev, || async {
        let mut screen = Attachment::open(&addr, "screen-test", &id, SIZE, Updates::Screen).await;
        let mut bytes = Attachment::open(&addr, "bytes-test", &id, SIZE, Updates::Bytes).await;
        std::fs::write(ws.path.join(".go"), "").expect("writing .go");
        let wait = Duration::from_secs(120);
        let (a, b) = tokio::join!(
            screen.read_until(wait, MARKER),
            bytes.read_until(wait, MARKER)
        );
        std::fs::write(ws.path.join(".done"), "").expect("writing .done");
        let wait = Duration::from_secs(30);
        let ((screen, screen_exit), (bytes, bytes_exit)) =
            tokio::join!(screen.finish(wait), bytes.finish(wait));
        (screen, screen_exit, bytes, bytes_exit, a, b)
    });
    for (what, out, seen) in [("screen", &screen, a), ("bytes", &bytes, b)] {
        let tail = &out[out.len().saturating_sub(300)..];
        assert!(
            seen,
            "the marker never reached the {what}-fed client ({} bytes, ending `{}`)",
            out.len(),
            tail.escape_ascii()
        );
    }
    let took = started.elapsed();
    eprintln!(
        "screen feed: {} bytes, bytes feed: {} bytes, {took:?}",
        screen.len(),
        bytes.len()
    );
    assert_eq!(
        screen_exit,
        Some(Some(0)),
        "the screen-fed client saw no exit"
    );
    assert_eq!(
        bytes_exit,
        Some(Some(0)),
        "the bytes-fed client saw no exit"
    );

    // The screen feed: the grammar and nothing else; none of the attacks; the marker.
    if let Err(v) = screen_grammar::check(&screen) {
        panic!(
            "the screen feed left the grammar at byte {}: {} at `{}`",
            v.offset, v.why, v.at
        );
    }
    // Changed-row updates (each row erased whole, `CSI 2 K`: a full redraw clears with ED)
    // were among what arrived, so the grammar covered that path too.
    assert!(
        contains(&screen, b"\x1b[2K"),
        "no changed-row update reached the screen feed"
    );
    assert!(
        screen_grammar::check(&bytes).is_err(),
        "the program's own bytes pass the grammar: it checks nothing"
    );
    for (what, needle) in ATTACKS {
        assert!(!contains(&screen, needle), "{what} reached the screen feed");
        assert!(
            contains(&bytes, needle),
            "{what} is missing from the bytes feed"
        );
    }
    assert!(
        screen.len() < bytes.len() / 10,
        "the flood went to the screen feed: {} bytes",
        screen.len()
    );
    // The screen it draws is the program's last screen.
    let (rows, cols) = (
        std::num::NonZeroU16::new(SIZE.0).expect("rows"),
        std::num::NonZeroU16::new(SIZE.1).expect("cols"),
    );
    let mut parser = vt100::Parser::new(rows, cols, 0);
    parser.process(&screen);
    let shown: Vec<String> = parser.screen().rows(0, SIZE.1).collect();
    for (row, text) in shown.iter().enumerate() {
        let expected = if row == 5 { "   MARKER-42" } else { "" };
        assert_eq!(text.trim_end(), expected, "row {} of {shown:#?}", row + 1);
    }
    assert_eq!(parser.screen().cursor_position(), (5, 12), "the cursor");
    assert!(
        !parser.screen().alternate_screen(),
        "left on the alternate screen"
    );

    tmux.wait_screen("run", "the end of lazaret run", |s| s.contains("cli-rc=0"));
    wait_torn_down(&ws);
    ws.assert_nothing_left();
    assert_traces_conform(&ws);
}

/// Attack: the same through the TUI — a pane's program (`lazaret tui -- sh …`) writes an
/// OSC 52 clipboard set and an OSC 2 title, hoping the TUI forwards them to the developer's
/// terminal (tmux with `set-clipboard on` keeps a clipboard write as a paste buffer). The TUI
/// draws its panes from the coordinator's screen feed and never forwards a program's OSC, so
/// this is a regression guard: no paste buffer, the terminal's title unchanged, the pane shows
/// the program's marker.
#[test]
fn a_tui_pane_never_passes_a_clipboard_write_or_title_to_the_terminal() {
    let dev = Dev::get();
    let ws = dev.workspace("adv-screen-tui");
    ws.host_sh(
        "cat > tui-hostile.sh <<'LAZARET_EOF'\n\
         printf '\\033]52;c;c3RvbGVu\\007\\033]2;pwned-title\\007\\033]0;pwned-title\\033\\\\'\n\
         echo tui-marker-$((6*7))\n\
         exec sleep 600\n\
         LAZARET_EOF\n",
    );
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "adv-screen-tui", "t", &dir, 120, 40);
    tmux.ok(&["set-option", "-s", "set-clipboard", "on"]);
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; {} tui -- sh /workspace/tui-hostile.sh",
            lazaret_bin().display()
        ),
    );
    tmux.wait_screen("t", "the pane's marker", |s| s.contains("tui-marker-42"));
    std::thread::sleep(Duration::from_millis(500));
    let buffers = tmux
        .cmd()
        .arg("list-buffers")
        .output()
        .expect("list-buffers");
    assert_eq!(
        String::from_utf8_lossy(&buffers.stdout),
        "",
        "a clipboard write reached tmux"
    );
    assert_ne!(tmux.format("t", "#{pane_title}"), "pwned-title");
    tmux.quit_tui_ending_sessions("t");
    wait_torn_down(&ws);
    ws.assert_nothing_left();
    assert_traces_conform(&ws);
}
