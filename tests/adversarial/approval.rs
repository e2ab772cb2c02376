//! Adversarial scenarios: the approval surfaces of `lazaret run` (DX-4, FR-8; see main.rs).
//!
//! Each test starts an interactive `lazaret run` in a private tmux server — a real terminal
//! emulator between Lazaret and the test — types the attack into the sandbox's shell as the
//! agent would run it, and checks what the developer's terminal shows and what reaches it:
//! the visible screen (`capture-pane`), tmux's own state (`#{alternate_on}`, paste buffers
//! filled by OSC 52 with `set-clipboard on`), and the raw bytes Lazaret wrote to the terminal
//! (`pipe-pane -O`). Terminal-generated input the sandbox provokes is sent the way a terminal
//! sends it (`send-keys -H`, `paste-buffer -p`), late and split, after the guard time.

use crate::support::tmux::Tmux;
use crate::support::{lazaret_bin, wait_for, Dev, TestWorkspace};
use std::path::PathBuf;
use std::time::Duration;

/// A profile that asks the developer about everything; with `terminal` access when given.
fn profile(terminal: &str) -> String {
    format!("[profiles.ask]\nextends = \"shell\"\n{terminal}")
}

const ALLOW_ALL: &str = "[profiles.ask.terminal]\nclipboard = true\nnotifications = true\n";

/// Longer than the prompt's guard (300 ms).
const LOOK: Duration = Duration::from_millis(700);

const CARD_HEAD: &str = "┌─ lazaret: the sandbox asks to run a command on the host";

/// One attacked `lazaret run` in tmux: the workspace, the terminal, and host-only paths
/// (under the workspace's configuration dir, which the sandbox cannot see).
struct Stage<'a> {
    tmux: Tmux<'a>,
    /// Everything Lazaret wrote to the terminal, raw.
    raw: PathBuf,
    /// Created on the host only by an approved escalation.
    marker: PathBuf,
}

fn workspace(dev: &Dev, tag: &str, terminal: &str) -> TestWorkspace {
    dev.workspace(tag).with_profile("ask", &profile(terminal))
}

impl<'a> Stage<'a> {
    /// `lazaret run --profile ask` in a 120×40 tmux pane, at the sandbox's shell prompt.
    fn start(dev: &'a Dev, ws: &'a TestWorkspace, tag: &str) -> Stage<'a> {
        Stage::start_sized(dev, ws, tag, (120, 40))
    }

    /// As [`Stage::start`], in a `cols`×`rows` pane.
    fn start_sized(
        dev: &'a Dev,
        ws: &'a TestWorkspace,
        tag: &str,
        (cols, rows): (u16, u16),
    ) -> Stage<'a> {
        let dir = ws.path.display().to_string();
        let tmux = Tmux::start(dev, tag, "t", &dir, cols, rows);
        let home = ws.config_home.clone().expect("with_profile sets it");
        let raw = home.join("raw");
        let marker = home.join("marker");
        tmux.ok(&["set-option", "-s", "set-clipboard", "on"]);
        let env = ws.env_args().join(" ");
        let lazaret = lazaret_bin().display().to_string();
        tmux.type_line(
            "t",
            &format!("PS1='host$ '; env {env} {lazaret} run --profile ask"),
        );
        tmux.type_line("t", "PS1='sandbox# '");
        tmux.wait_sandbox_prompt("t");
        // Only now: what the sandbox session writes, not the host shell's echo before it.
        tmux.ok(&[
            "pipe-pane",
            "-O",
            "-t",
            "t",
            &format!("cat >> '{}'", raw.display()),
        ]);
        Stage { tmux, raw, marker }
    }

    fn type_line(&self, line: &str) {
        self.tmux.type_line("t", line);
    }

    /// The visible screen only (no history).
    fn visible(&self) -> String {
        let out = self
            .tmux
            .cmd()
            .args(["capture-pane", "-p", "-J", "-t", "t"])
            .output()
            .expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn format(&self, f: &str) -> String {
        self.tmux.format("t", f)
    }

    /// Runs `lazaret-escalate -- touch MARKER` after `before` (sandbox shell code) and waits
    /// for the card; returns the visible screen.
    fn escalate_after(&self, before: &str) -> String {
        self.type_line(&format!(
            "{before}lazaret-escalate -- touch '{}'; echo rc=$?",
            self.marker.display()
        ));
        wait_for(Duration::from_secs(60), || {
            let s = self.visible();
            s.contains("│ command  [\"touch\"").then_some(s)
        })
        .unwrap_or_else(|| panic!("no card; screen:\n{}", self.tmux.screen("t")))
    }

    /// Every row of the real card, in order, on the visible screen, and no other card.
    fn assert_card_visible(&self, screen: &str) {
        let lines: Vec<&str> = screen.lines().collect();
        let head = lines
            .iter()
            .position(|l| l.starts_with(CARD_HEAD))
            .unwrap_or_else(|| panic!("no card head on the visible screen:\n{screen}"));
        let marker = self.marker.display().to_string();
        let rows = [
            "│ program  /".to_owned(),
            format!("│ command  [\"touch\", \"{marker}\"]"),
            "│ in       \"/workspace\" → host ".to_owned(),
            "│ why      (none given)".to_owned(),
            "│ profile  ask   session ".to_owned(),
            "└─ [a] approve  [e] edit  [d] deny   (times out in".to_owned(),
        ];
        for (i, row) in rows.iter().enumerate() {
            let line = lines.get(head + 1 + i).copied().unwrap_or_default();
            assert!(
                line.starts_with(row.as_str()),
                "row {i}: {line:?} in\n{screen}"
            );
        }
        let program = lines.get(head + 1).copied().unwrap_or_default();
        assert!(
            program.ends_with("(argv[0] \"touch\") · 1 argument"),
            "the program row: {program:?}"
        );
        assert_eq!(
            screen.matches("lazaret: the sandbox asks").count(),
            1,
            "another card is visible next to the real one:\n{screen}"
        );
    }

    /// Nothing was decided: no outcome line, the card still last, nothing ran on the host.
    fn assert_undecided(&self, what: &str) {
        std::thread::sleep(Duration::from_millis(1500));
        let s = self.visible();
        assert!(
            !s.contains("→ approved") && !s.contains("→ denied"),
            "{what}:\n{s}"
        );
        let ended = s.lines().any(|l| {
            l.strip_prefix("rc=")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        });
        assert!(!ended, "{what}: the escalation ended:\n{s}");
        assert!(!self.marker.exists(), "{what}: the command ran on the host");
    }

    /// Looks at the card, then presses `key` (once).
    fn decide(&self, key: &str) {
        std::thread::sleep(LOOK);
        self.tmux.keys("t", key);
    }

    /// Denies with `d` and waits for the client's answer.
    fn deny(&self) {
        self.decide("d");
        self.tmux
            .wait_screen("t", "the denial", |s| s.contains("rc=240"));
        assert!(!self.marker.exists());
    }

    /// Sends bytes as the terminal would (hex, one write).
    fn terminal_sends(&self, bytes: &[u8]) {
        let mut args = vec!["send-keys".to_owned(), "-t".into(), "t".into(), "-H".into()];
        args.extend(bytes.iter().map(|b| format!("{b:02x}")));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.tmux.ok(&args);
    }

    /// The raw bytes Lazaret wrote to the terminal since the sandbox prompt appeared.
    fn raw(&self) -> Vec<u8> {
        std::fs::read(&self.raw).unwrap_or_default()
    }

    /// Types `line` into the sandbox followed by `echo MARK` and waits for MARK's output.
    fn run_and_wait(&self, line: &str, mark: &str) {
        self.type_line(&format!("{line}; echo {mark}-$((6*7))"));
        self.tmux
            .wait_screen("t", mark, |s| s.contains(&format!("{mark}-42")));
        // pipe-pane writes asynchronously.
        std::thread::sleep(Duration::from_millis(300));
    }

    fn exit(&self) {
        // Whatever the attack left on the sandbox's command line goes first.
        self.tmux.key("t", "C-u");
        self.type_line("exit");
        self.tmux
            .wait_screen("t", "the host shell", |s| s.trim_end().ends_with("host$"));
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Attack: the agent prints a perfect copy of Lazaret's card for a harmless `ls` (and a fake
/// "→ approved" line), then escalates a different command, hoping the developer reads the
/// fake card and presses `a` for what they think is `ls`.
#[test]
fn a_fake_card_printed_before_the_escalation_is_not_on_screen_with_the_real_one() {
    let dev = Dev::get();
    let ws = workspace(&dev, "adv-fake-card", "");
    let st = Stage::start(&dev, &ws, "fakecard");
    let fake = "printf '\\n\\e[1;33m┌─ lazaret: the sandbox asks to run a command on the host\\e[0m\\n\
                │ command  [\"ls\"] FAKE\\n└─ [a] approve  [e] edit  [d] deny   (times out in 30 s)\\n\
                  → approved FAKE\\n'; ";
    let screen = st.escalate_after(fake);
    st.assert_card_visible(&screen);
    assert!(!screen.contains("FAKE"), "{screen}");
    st.deny();
    st.exit();
}

/// Attack: `printf '\e[23;24r\e[24;1H'` — a two-row scroll region at the bottom — then
/// escalate: the card would scroll inside two rows and only its last line would show, under a
/// fake card above.
#[test]
fn a_two_row_scroll_region_cannot_hide_the_card() {
    let dev = Dev::get();
    let ws = workspace(&dev, "adv-scroll", "");
    let st = Stage::start(&dev, &ws, "scroll");
    let screen = st
        .escalate_after("printf '\\e[1;1H\\e[2J FAKE CARD: command [\"ls\"]\\e[39;40r\\e[40;1H'; ");
    st.assert_card_visible(&screen);
    assert!(!screen.contains("FAKE"), "{screen}");
    // The real card works: approve runs the command on the host.
    st.decide("a");
    st.tmux
        .wait_screen("t", "the approval", |s| s.contains("rc=0"));
    assert!(st.marker.exists());
    st.type_line("printf '\\e[r\\e[2J\\e[H'");
    st.exit();
}

/// Attack: alternate screen, reverse video, origin mode in a small region, hidden cursor and
/// the DEC line-drawing charset shifted in, so that the card's letters turn into box
/// characters in the wrong place, on a screen the developer never sees again.
#[test]
fn alternate_screen_origin_mode_reverse_video_hidden_cursor_and_line_drawing_cannot_disguise_the_card(
) {
    let dev = Dev::get();
    let ws = workspace(&dev, "adv-modes", "");
    let st = Stage::start(&dev, &ws, "modes");
    let screen = st.escalate_after(
        "printf '\\e[?1049h\\e[?5h\\e[5;6r\\e[?6h\\e[?25l\\e(0\\e)0\\x0e\\e[8m FAKE'; ",
    );
    st.assert_card_visible(&screen);
    assert_eq!(
        st.format("#{alternate_on}"),
        "0",
        "the card is on the alternate screen"
    );
    assert_eq!(st.format("#{cursor_flag}"), "1", "the cursor is hidden");
    st.deny();
    // The sandbox gets its own modes back.
    assert_eq!(st.format("#{alternate_on}"), "1");
    assert_eq!(st.format("#{cursor_flag}"), "0");
    st.type_line("printf '\\e[r\\e[?6l\\e[?5l\\e[?25h\\e(B\\e)B\\x0f\\e[0m\\e[?1049l'");
    st.exit();
}

/// Attack: leave a control string unterminated right before escalating — a DCS (`printf
/// '\ePtmux;'`: tmux's passthrough, which takes `ESC x` pairs as content) and an OSC title —
/// so that the terminal swallows the card.
#[test]
fn an_unterminated_control_string_cannot_swallow_the_card() {
    let dev = Dev::get();
    let ws = workspace(&dev, "adv-osc-open", "");
    let st = Stage::start(&dev, &ws, "oscopen");
    let screen = st.escalate_after("printf '\\e]2;swallowed \\ePtmux;'; ");
    st.assert_card_visible(&screen);
    assert!(!st.format("#{pane_title}").contains("lazaret"));
    st.deny();
    st.exit();
}

/// Attack: send CSI 6n, DA1, DA2, DECRQSS and OSC 11/52 queries right before escalating,
/// hoping the terminal's replies — `ESC[row;colR`, `ESC[?…c`, `ESC]11;rgb:aaaa/…`, DCS and
/// 8-bit forms, some containing `a`, `d`, `e`, `y` — arrive while the card waits and answer it.
#[test]
fn terminal_replies_to_the_sandboxs_queries_never_answer_the_prompt() {
    let dev = Dev::get();
    let ws = workspace(&dev, "adv-replies", "");
    let st = Stage::start(&dev, &ws, "replies");
    let screen = st.escalate_after("printf '\\e[6n\\e[c\\e[>c\\eP$qm\\e\\\\\\e]11;?\\a'; ");
    st.assert_card_visible(&screen);
    // The replies arrive late (a slow link), whole and split across reads.
    std::thread::sleep(LOOK);
    let replies: [&[u8]; 9] = [
        b"\x1b[12;1R",
        b"\x1b[?64;1;2;6;9;15;18;21;22c",
        b"\x1b[>41;388;0c",
        b"\x1bP1$r0m\x1b\\",
        b"\x1b]11;rgb:aaaa/dddd/eeee\x1b\\",
        b"\x1b]52;c;YWFhYQ==\x07",
        b"\x9d11;rgb:aaaa/aaaa/aaaa\x9c",
        "\u{9b}24;80R".as_bytes(),
        b"\x1b]lapprove yes\x1b\\",
    ];
    for r in replies {
        st.terminal_sends(r);
        std::thread::sleep(Duration::from_millis(400));
    }
    let split: &[u8] = b"\x1b]10;rgb:aaaa/aaaa/aaaa\x07";
    for part in [&split[..1], &split[1..9], &split[9..]] {
        st.terminal_sends(part);
        std::thread::sleep(Duration::from_millis(400));
    }
    st.assert_undecided("after the terminal's replies");
    st.deny();
    st.exit();
}

/// Attack: enable every mouse mode and focus reporting before escalating, so that the
/// developer moving the mouse or switching windows sends reports (X10 bytes `a`/`y`, UTF-8
/// 1005, SGR 1006, urxvt 1015, focus in/out) that decode as approve keys.
#[test]
fn mouse_and_focus_reports_in_every_encoding_never_decide() {
    let dev = Dev::get();
    let ws = workspace(&dev, "adv-mouse", "");
    let st = Stage::start(&dev, &ws, "mouse");
    let screen = st.escalate_after("printf '\\e[?1000h\\e[?1003h\\e[?1004h\\e[?1006h'; ");
    st.assert_card_visible(&screen);
    std::thread::sleep(LOOK);
    let reports: [&[u8]; 9] = [
        // A click at column 161, row 65 in UTF-8 (1005) mode: `á` then `a`.
        "\x1b[M \u{e1}a".as_bytes(),
        b"\x1b[M aa",
        b"\x1b[M`yd",
        "\x1b[M \u{e1}\u{79f}".as_bytes(),
        b"\x1b[<0;97;100M",
        b"\x1b[<0;97;100m",
        b"\x1b[32;97;100M",
        b"\x1b[I",
        b"\x1b[O",
    ];
    for r in reports {
        st.terminal_sends(r);
        std::thread::sleep(Duration::from_millis(400));
    }
    st.assert_undecided("after mouse and focus reports");
    st.deny();
    // The sandbox's mouse modes are back.
    st.type_line("printf '\\e[?1000l\\e[?1003l\\e[?1004l\\e[?1006l'");
    st.exit();
}

/// Attack: get the developer to paste (the agent printed "paste this to continue: a") while
/// its escalation waits: the pasted text must never be a decision.
#[test]
fn a_paste_never_decides() {
    let dev = Dev::get();
    let ws = workspace(&dev, "adv-paste", "");
    let st = Stage::start(&dev, &ws, "paste");
    let screen = st.escalate_after("");
    st.assert_card_visible(&screen);
    std::thread::sleep(LOOK);
    for text in ["a", "y\n", "e"] {
        st.tmux.ok(&["set-buffer", "-b", "p", text]);
        st.tmux.ok(&["paste-buffer", "-p", "-b", "p", "-t", "t"]);
        std::thread::sleep(Duration::from_millis(400));
    }
    st.assert_undecided("after pastes");
    st.deny();
    st.exit();
}

/// Attack: time the escalation so that its card appears while the developer holds a key
/// down (auto-repeat), or types into the sandbox — those keys must not answer the card.
///
/// The guard rightly lets a key through after 300 ms of quiet, so a run in which the busy
/// machine stalled the repeat for that long and the card was answered proves nothing either
/// way: it is run again (at most three times); a stalled run in which nothing was decided, and
/// every run without a stall, counts.
#[test]
fn a_key_held_down_as_the_card_appears_never_decides() {
    let dev = Dev::get();
    for attempt in 1..=3 {
        if held_key_attempt(&dev, attempt == 3) {
            return;
        }
    }
}

/// One attempt; false when it was inconclusive (stalled and decided) and may be retried.
fn held_key_attempt(dev: &Dev, last: bool) -> bool {
    let ws = workspace(dev, "adv-held", "");
    let st = Stage::start(dev, &ws, "held");
    st.type_line(&format!(
        "sleep 1; lazaret-escalate -- touch '{}'; echo rc=$?",
        st.marker.display()
    ));
    // Auto-repeat: 'a' every 30 ms through one tmux control-mode client (no process per
    // key), from before the card until 1.5 s after it appeared; each send's time is kept to
    // prove the repeat never paused.
    let sock = format!("lazaret-test-held-{}", std::process::id());
    let mut control = dev
        .command("tmux")
        .args(["-f", "/dev/null", "-L", &sock, "-C", "attach", "-t", "t"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("a tmux control client");
    let mut keys_in = control.stdin.take().expect("control stdin");
    // The machine may be busy (other test builds): the repeat path (this thread, the tmux
    // server and its control client) runs at a higher priority so that it keeps its pace.
    let clients = wait_for(Duration::from_secs(5), || {
        let out = st
            .tmux
            .cmd()
            .args(["list-clients", "-F", "#{client_pid}"])
            .output()
            .ok()?;
        let pids = String::from_utf8_lossy(&out.stdout).into_owned();
        (!pids.trim().is_empty()).then_some(pids)
    })
    .unwrap_or_default();
    for pid in clients.lines().chain([st.format("#{pid}").as_str()]) {
        if let Ok(pid) = pid.trim().parse::<libc::id_t>() {
            // SAFETY: setpriority only changes a scheduling value of that process.
            unsafe { libc::setpriority(libc::PRIO_PROCESS, pid, -15) };
        }
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = stop.clone();
    let sender = std::thread::spawn(move || {
        use std::io::Write;
        let mut sent = Vec::new();
        // SAFETY: as above, for this thread (0: the caller).
        unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, -15) };
        while !stopped.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = keys_in.write_all(b"send-keys -t t a\n");
            let _ = keys_in.flush();
            sent.push(std::time::Instant::now());
            std::thread::sleep(Duration::from_millis(30));
        }
        sent
    });
    let appeared = wait_for(Duration::from_secs(60), || {
        st.visible().contains("│ command  [\"touch\"").then_some(())
    });
    if appeared.is_some() {
        std::thread::sleep(Duration::from_millis(1500));
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let sent = sender.join().unwrap_or_default();
    let _ = control.kill();
    let _ = control.wait();
    assert!(appeared.is_some(), "no card:\n{}", st.tmux.screen("t"));
    let longest_gap = sent
        .windows(2)
        .map(|w| w[1] - w[0])
        .max()
        .unwrap_or(Duration::MAX);
    assert!(sent.len() > 20, "the repeat did not run");
    let stalled = longest_gap >= Duration::from_millis(290);
    std::thread::sleep(Duration::from_millis(1500));
    if stalled && st.marker.exists() && !last {
        eprintln!("the key repeat stalled for {longest_gap:?} and the card was answered: again");
        st.exit();
        return false;
    }
    assert!(
        !stalled || !st.marker.exists(),
        "the key repeat stalled for {longest_gap:?} in every attempt (the guard rightly lets a \
         key after 300 ms of quiet through): rerun on a less loaded machine"
    );
    st.assert_undecided("while a key was held");
    // Released, looked, pressed: that one counts.
    st.decide("a");
    st.tmux
        .wait_screen("t", "the approval", |s| s.contains("rc=0"));
    assert!(st.marker.exists());
    st.exit();
    true
}

/// Attack: write OSC 52 to set the host clipboard (7-bit and 8-bit C1 forms, BEL and ST) and
/// to read it back (a query), split across writes; with tmux's `set-clipboard on` the host
/// terminal would take it.
#[test]
fn osc52_clipboard_writes_and_queries_do_not_reach_the_host_terminal_by_default() {
    let dev = Dev::get();
    let ws = workspace(&dev, "adv-osc52", "");
    let st = Stage::start(&dev, &ws, "osc52");
    st.run_and_wait(
        "s=$(printf secret-from-sandbox | base64); printf '\\e]52;c;%s\\a' $s; \
         printf '\\e]5'; sleep 0.2; printf '2;c;%s\\e\\\\' $s; printf '\\23552;p;%s\\234' $s; \
         printf '\\302\\23552;s;%s\\a' $s; printf '\\e]52;c;?\\a'",
        "osc52",
    );
    let buffers = st
        .tmux
        .cmd()
        .args(["list-buffers"])
        .output()
        .expect("list-buffers");
    assert_eq!(
        String::from_utf8_lossy(&buffers.stdout),
        "",
        "the sandbox set the host clipboard"
    );
    let raw = st.raw();
    assert!(contains(&raw, b"osc52-42"), "no capture");
    for bad in [&b"\x1b]52"[..], b"\x9d52", "\u{9d}52".as_bytes()] {
        assert!(!contains(&raw, bad), "{bad:?} reached the terminal");
    }
    st.exit();
}

/// The documented way to let the sandbox use the clipboard: `[profiles.NAME.terminal]
/// clipboard = true`. Attack as above; this time the host terminal gets it.
#[test]
fn the_clipboard_setting_lets_osc52_through() {
    let dev = Dev::get();
    let ws = workspace(
        &dev,
        "adv-osc52-on",
        "[profiles.ask.terminal]\nclipboard = true\n",
    );
    let st = Stage::start(&dev, &ws, "osc52on");
    st.run_and_wait(
        "printf '\\e]52;c;%s\\a' $(printf secret-from-sandbox | base64); printf '\\e]9;note\\a'",
        "osc52on",
    );
    let shown = st
        .tmux
        .cmd()
        .args(["show-buffer"])
        .output()
        .expect("show-buffer");
    assert_eq!(
        String::from_utf8_lossy(&shown.stdout),
        "secret-from-sandbox"
    );
    let raw = st.raw();
    assert!(contains(&raw, b"\x1b]52;c;"));
    // Notifications stay off: the settings are separate.
    assert!(!contains(&raw, b"\x1b]9;"));
    st.exit();
}

/// Attack: send desktop notifications through the host terminal (OSC 9, OSC 99, OSC 777,
/// iTerm2's RequestAttention) — a phishing channel outside the terminal window — and ENQ,
/// whose answerback the terminal would type into the session.
#[test]
fn notifications_and_enq_do_not_reach_the_host_terminal_by_default() {
    let dev = Dev::get();
    let ws = workspace(&dev, "adv-notify", "");
    let st = Stage::start(&dev, &ws, "notify");
    st.run_and_wait(
        "printf '\\e]9;Approve the next request\\a\\e]99;i=1;Approve\\e\\\\\\e]777;notify;Lazaret;Approve\\a\
         \\e]1337;RequestAttention=yes\\a\\005\\e]0;title-ok\\a'",
        "notify",
    );
    let raw = st.raw();
    assert!(contains(&raw, b"notify-42"), "no capture");
    for bad in [
        &b"\x1b]9;"[..],
        b"\x1b]99;",
        b"\x1b]777;",
        b"\x1b]1337;",
        b"\x05",
    ] {
        assert!(!contains(&raw, bad), "{bad:?} reached the terminal");
    }
    // Everything else still passes.
    assert!(contains(&raw, b"\x1b]0;title-ok\x07"));
    st.exit();
}

/// Attack (found by fuzzing the output filter, issue #19): splice a notification together
/// around an OSC the filter drops — `ESC]777` ended by a clipboard write, then `;notify;…`;
/// the same after a lone ESC (`ESC ESC]52;… SUB ]777;notify;…`); iTerm2's attention request
/// likewise. Dropping the OSC 52 with the ESC that ended the string before it made the terminal
/// see `ESC]777;notify;…`: a desktop notification the profile had not allowed.
#[test]
fn a_notification_cannot_be_spliced_together_around_a_dropped_osc() {
    let dev = Dev::get();
    let ws = workspace(&dev, "adv-splice", "");
    let st = Stage::start(&dev, &ws, "splice");
    st.run_and_wait(
        "printf '\\e]777\\e]52;aGk=\\a;notify;Lazaret;Approve\\e\\\\'; \
         printf '\\e\\e]52;x\\032]777;notify;Lazaret;Approve\\a'; \
         printf '\\e]1337;\\e]52;x\\aRequestAttention=yes\\a'",
        "splice",
    );
    let raw = st.raw();
    assert!(contains(&raw, b"splice-42"), "no capture");
    for bad in [&b"\x1b]777;"[..], b"\x1b]1337;RequestAttention", b"\x1b]52"] {
        assert!(!contains(&raw, bad), "{bad:?} reached the terminal");
    }
    // The passed string is ended where the dropped one was.
    assert!(contains(&raw, b"\x1b]777\x1b\\;notify"), "{raw:?}");
    st.exit();
}

/// The documented setting `notifications = true` lets the notifications through (ENQ never).
#[test]
fn the_notifications_setting_lets_them_through() {
    let dev = Dev::get();
    let ws = workspace(&dev, "adv-notify-on", ALLOW_ALL);
    let st = Stage::start(&dev, &ws, "notifyon");
    st.run_and_wait(
        "printf '\\e]9;done\\a\\e]99;i=1;done\\e\\\\\\e]777;notify;a;b\\a\\005'",
        "notifyon",
    );
    let raw = st.raw();
    for good in [
        &b"\x1b]9;done\x07"[..],
        b"\x1b]99;i=1;done\x1b\\",
        b"\x1b]777;notify;a;b\x07",
    ] {
        assert!(contains(&raw, good), "{good:?} did not reach the terminal");
    }
    assert!(!contains(&raw, b"\x05"));
    st.exit();
}

/// Attack: when `lazaret run` is started with stdin not a terminal (piped), the sandbox's
/// output still goes to the developer's terminal: write OSC 52 and a notification there.
#[test]
fn without_a_terminal_on_stdin_the_output_is_filtered_too() {
    let dev = Dev::get();
    let ws = workspace(&dev, "adv-pipes", "");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "pipes", "t", &dir, 120, 40);
    tmux.ok(&["set-option", "-s", "set-clipboard", "on"]);
    let raw = ws.config_home.clone().expect("config home").join("raw");
    tmux.ok(&[
        "pipe-pane",
        "-O",
        "-t",
        "t",
        &format!("cat >> '{}'", raw.display()),
    ]);
    let env = ws.env_args().join(" ");
    let lazaret = lazaret_bin().display().to_string();
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; env {env} {lazaret} run --profile ask -- sh -c \
             'printf \"\\033]52;c;c2VjcmV0\\007\\033]9;hi\\007\"; echo piped-$((6*7))' </dev/null"
        ),
    );
    tmux.wait_screen("t", "the output", |s| s.contains("piped-42"));
    std::thread::sleep(Duration::from_millis(300));
    let bytes = std::fs::read(&raw).unwrap_or_default();
    assert!(contains(&bytes, b"piped-42"));
    assert!(!contains(&bytes, b"\x1b]52;c;c2VjcmV0"));
    assert!(!contains(&bytes, b"\x1b]9;hi"));
    let buffers = tmux.cmd().args(["list-buffers"]).output().expect("list");
    assert_eq!(String::from_utf8_lossy(&buffers.stdout), "");
    tmux.wait_screen("t", "the host shell", |s| s.trim_end().ends_with("host$"));
}

/// Attack: TIOCSTI from inside — push `touch <host path>` plus a newline into the terminal's
/// input queue so that the developer's host shell runs it after the session ends.
#[test]
fn tiocsti_from_inside_does_not_reach_the_host_shell() {
    let dev = Dev::get();
    let ws = workspace(&dev, "adv-tiocsti", "");
    let st = Stage::start(&dev, &ws, "tiocsti");
    let planted = st.marker.display().to_string();
    st.run_and_wait(
        &format!(
            "python3 -c 'import fcntl,termios; [fcntl.ioctl(0, termios.TIOCSTI, c.encode()) \
             for c in \"touch {planted}\\n\"]'; true"
        ),
        "tiocsti",
    );
    st.exit();
    // Give the host shell time to read anything injected.
    st.tmux.type_line("t", "echo host-$((6*7))");
    st.tmux
        .wait_screen("t", "the host shell", |s| s.contains("host-42"));
    std::thread::sleep(Duration::from_millis(500));
    assert!(!st.marker.exists(), "TIOCSTI reached the host shell");
    let screen = st.tmux.screen("t");
    let after_exit = screen.rsplit("exit").next().unwrap_or_default();
    assert!(!after_exit.contains("touch"), "{screen}");
}

/// Attack: 200 long arguments, a 3 000-byte justification and a Cyrillic `е` in a path, so
/// that on an 80×24 terminal the card's head, the program and argv[0] scroll away and the
/// look-alike reads as Latin. The card stays whole on the screen: head, a warning about the
/// non-ASCII letter (escaped as `\u{435}`), the program and argument count, each field cut to
/// a head and a tail, the menu with `v`; `v` shows all; `d` still denies.
#[test]
fn a_huge_request_cannot_push_the_cards_head_and_warnings_off_an_80_by_24_terminal() {
    let dev = Dev::get();
    let ws = workspace(&dev, "adv-huge-card", "");
    let st = Stage::start_sized(&dev, &ws, "hugecard", (80, 24));
    st.type_line(&format!(
        "lazaret-escalate --justification \"$(printf 'trust me %.0s' $(seq 300))\" -- touch \
         '{}' /tmp/r\u{435}port $(seq -f '/tmp/padding-%g-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' 200); \
         echo rc=$?",
        st.marker.display()
    ));
    let screen = wait_for(Duration::from_secs(60), || {
        let s = st.visible();
        s.contains("└─ [a] approve").then_some(s)
    })
    .unwrap_or_else(|| panic!("no card; screen:\n{}", st.tmux.screen("t")));
    let lines: Vec<&str> = screen.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.starts_with(CARD_HEAD))
        .unwrap_or_else(|| panic!("the card's head is off the screen:\n{screen}"));
    assert!(
        lines[head + 1].starts_with("│ warning  non-ASCII characters shown escaped"),
        "warnings first:\n{screen}"
    );
    assert!(
        screen.contains("(argv[0] \"touch\") · 202 arguments"),
        "{screen}"
    );
    assert!(screen.contains(r"/tmp/r\u{435}port"), "{screen}");
    assert!(screen.contains("more bytes — v shows all"), "{screen}");
    assert!(
        screen.contains("[d] deny  [v] show all"),
        "the menu is on screen:\n{screen}"
    );
    st.decide("v");
    st.tmux
        .wait_screen("t", "the whole card", |s| s.contains("padding-200-"));
    st.deny();
    st.exit();
}
