//! Issue #16 item 1: a terminal that programs can reopen. gVisor's own `/dev/tty` fails with
//! `EIO` and a host terminal is never a controlling terminal there, so Lazaret makes
//! `/dev/tty` a symlink to `/proc/self/fd/255` and starts every session's command with its
//! terminal on that descriptor (`lazaret-escalate --keep-terminal`). Real stack, as a developer
//! would use it, in `lazaret run` and in a `lazaret tui` pane: `tty`, `exec 3<>/dev/tty`, a
//! passphrase-style `read -s < /dev/tty`, vttest (the host's Debian build, copied into the
//! workspace: the sandbox image is the same Debian), Ctrl-C, Ctrl-Z and `fg`.

mod support;

use support::tmux::Tmux;
use support::{lazaret_bin, Dev, TestWorkspace};

/// A fresh `status-N` marker after `command`: the typed line shows `$?`, not the digit.
fn status_of(tmux: &Tmux<'_>, command: &str, tag: &str) -> String {
    tmux.type_line("t", &format!("{command}; echo {tag}=$?"));
    tmux.wait_visible("t", tag, |s| {
        (0..=255).any(|n| shown(s, &format!("{tag}={n}")))
    })
}

/// Whether `word` is shown on its own (in a pane too, between its borders).
fn shown(screen: &str, word: &str) -> bool {
    screen.lines().any(|l| {
        l.split(|c: char| c.is_whitespace() || c == '│')
            .any(|w| w == word)
    })
}

/// The checks every terminal session must pass; the shell's prompt is `sandbox# `.
fn reopen_the_terminal(tmux: &Tmux<'_>) {
    let s = status_of(tmux, "tty", "tty-rc");
    assert!(shown(&s, "tty-rc=0") && shown(&s, "/dev/tty"), "{s}");

    let s = status_of(tmux, "exec 3<>/dev/tty && echo via-fd3 >&3", "fd3-rc");
    assert!(shown(&s, "fd3-rc=0") && shown(&s, "via-fd3"), "{s}");

    // A passphrase prompt: read from /dev/tty, nothing echoed.
    tmux.type_line(
        "t",
        "read -r -s -p 'passphrase: ' pw < /dev/tty; echo; echo got-${#pw}-$pw",
    );
    tmux.wait_visible("t", "the passphrase prompt", |s| shown(s, "passphrase:"));
    tmux.type_line("t", "hunter22");
    let s = tmux.wait_visible("t", "the passphrase read", |s| s.contains("got-8-hunter22"));
    assert!(
        !s.contains("passphrase: hunter22"),
        "the passphrase was echoed:\n{s}"
    );

    // Ctrl-C ends the foreground command, not the shell.
    tmux.type_line("t", "sleep 100");
    std::thread::sleep(std::time::Duration::from_millis(800));
    tmux.key("t", "C-c");
    let s = status_of(tmux, "(exit $?)", "int");
    assert!(shown(&s, "int=130"), "{s}");

    // Ctrl-Z stops it; fg brings it back; Ctrl-C then ends it.
    tmux.type_line("t", "sleep 100");
    std::thread::sleep(std::time::Duration::from_millis(800));
    tmux.key("t", "C-z");
    tmux.wait_visible("t", "the stopped job", |s| s.contains("Stopped"));
    tmux.type_line("t", "fg");
    std::thread::sleep(std::time::Duration::from_millis(800));
    tmux.key("t", "C-c");
    let s = status_of(tmux, "echo jobs-$(jobs | wc -l)", "jobs-rc");
    assert!(shown(&s, "jobs-0"), "the job is still there:\n{s}");

    // vttest opens /dev/tty for its terminal modes ("Cannot initialize tty modes" before);
    // menus 1 (cursor movements), 2 (screen features), 3 (character sets), 8 (insert/delete),
    // 11 (non-VT100) and 6 (terminal reports; its device status report is answered) run to
    // the end.
    tmux.type_line("t", "clear; ./vttest");
    tmux.wait_visible("t", "vttest's main menu", main_menu);
    for menu in ["1", "2", "3", "8"] {
        run_menu(tmux, menu);
    }
    walk_menu_11(tmux);
    tmux.type_line("t", "6");
    tmux.wait_visible("t", "vttest's menu 6", |s| {
        s.contains("Menu 6: Terminal Reports/Responses")
    });
    tmux.type_line("t", "3");
    let dsr = tmux.wait_visible("t", "the device status report", |s| {
        s.contains("Push <RETURN>")
    });
    assert!(dsr.contains("TERMINAL OK"), "DSR 5:\n{dsr}");
    tmux.key("t", "Enter");
    const M6: &str = "Menu 6: Terminal Reports/Responses";
    tmux.wait_visible("t", "vttest's menu 6 again", |s| fresh_menu(s, M6));
    // The other reports: answerback, line feed / new line mode, primary, secondary and
    // tertiary device attributes, terminal parameters — each answered or timed out by vttest,
    // none stalls.
    for test in ["1", "2", "4", "5", "6", "7"] {
        choose(tmux, test, M6);
    }
    choose(tmux, "0", "Enter choice number (0 - 12)");
    tmux.type_line("t", "0");
    let s = tmux.wait_visible("t", "the shell after vttest", |s| {
        shown(s, "sandbox#") && !s.contains("Enter choice number")
    });
    assert!(!s.contains("Cannot initialize"), "{s}");
}

/// vttest's main menu (its submenus ask for other ranges).
fn main_menu(screen: &str) -> bool {
    screen.contains("Enter choice number (0 - 12)")
}

/// Chooses `menu` in vttest's main menu and presses Enter through its screens until the main
/// menu is back.
fn run_menu(tmux: &Tmux<'_>, menu: &str) {
    tmux.type_line("t", menu);
    let mut screen = tmux.wait_visible("t", &format!("vttest's menu {menu}"), |s| !main_menu(s));
    for _ in 0..40 {
        if main_menu(&screen) {
            return;
        }
        tmux.key("t", "Enter");
        let before = screen.clone();
        let changed = support::wait_for(std::time::Duration::from_secs(10), || {
            let now = tmux.visible("t");
            (now != before).then_some(now)
        })
        .unwrap_or_else(|| tmux.visible("t"));
        // The next Enter only once vttest has drawn the whole screen and waits: an Enter typed
        // while it still draws (menu 8 inserts and deletes line by line) can be flushed by it,
        // and the walk then ran out of presses on a loaded machine (CI run of fc276f1).
        screen = settled(tmux, changed);
    }
    panic!("vttest's menu {menu} did not end:\n{screen}");
}

/// Menu 11 (non-VT100: ISO 6429 cursor movement, colours, other ISO 6429 features, xterm's
/// window title and alternate screens) through its submenus, every test of them that needs
/// no more than Enter (the mouse, font, Tektronix and window-report tests want a real xterm).
fn walk_menu_11(tmux: &Tmux<'_>) {
    const MAIN: &str = "Enter choice number (0 - 12)";
    const M11: &str = "Menu 11: Non-VT100 Tests";
    const M11_5: &str = "Menu 11.5: ISO-6429 (ECMA-48) Cursor-Movement";
    const M11_6: &str = "Menu 11.6: ISO 6429 colors";
    const M11_7: &str = "Menu 11.7: Miscellaneous ISO-6429 (ECMA-48) Tests";
    const M11_7_1: &str = "Menu 11.7.1: Protected-Areas Tests";
    const M11_8: &str = "Menu 11.8: XTERM special features";
    const M11_8_7: &str = "Menu 11.8.7: XTERM Alternate-Screen features";
    choose(tmux, "11", M11);
    choose(tmux, "5", M11_5);
    for test in ["1", "2", "3", "4", "5", "6", "7", "8", "9"] {
        choose(tmux, test, M11_5);
    }
    choose(tmux, "0", M11);
    choose(tmux, "6", M11_6);
    for test in ["2", "3", "4", "5", "8", "9"] {
        choose(tmux, test, M11_6);
    }
    choose(tmux, "0", M11);
    choose(tmux, "7", M11_7);
    choose(tmux, "1", M11_7_1);
    choose(tmux, "2", M11_7_1);
    choose(tmux, "0", M11_7);
    for test in ["2", "3", "4", "5", "6"] {
        choose(tmux, test, M11_7);
    }
    choose(tmux, "0", M11);
    choose(tmux, "8", M11_8);
    choose(tmux, "7", M11_8_7);
    for test in ["3", "4", "5"] {
        choose(tmux, test, M11_8_7);
    }
    choose(tmux, "0", M11_8);
    // Set window title: vttest asks for one, sets it, and is back at the menu.
    tmux.type_line("t", "3");
    tmux.wait_visible("t", "vttest's title prompt", |s| {
        s.contains("Please enter the new window name")
    });
    tmux.type_line("t", "vttest-title");
    tmux.wait_visible("t", "menu 11.8 after the title", |s| fresh_menu(s, M11_8));
    choose(tmux, "0", M11);
    choose(tmux, "0", MAIN);
}

/// A menu titled `title` (or the main menu's prompt) waiting for a choice, nothing typed yet.
fn fresh_menu(screen: &str, title: &str) -> bool {
    screen.contains(title)
        && screen.lines().any(|l| {
            l.split_once("Enter choice number")
                .and_then(|(_, rest)| rest.split_once("):"))
                .is_some_and(|(_, typed)| {
                    typed
                        .trim_matches(|c: char| c == ' ' || c == '│')
                        .is_empty()
                })
        })
}

/// Types `choice` at a vttest menu, presses Enter through the test's screens, and expects
/// the menu titled `back_at` waiting for the next choice.
fn choose(tmux: &Tmux<'_>, choice: &str, back_at: &str) {
    let mut screen = tmux.visible("t");
    tmux.type_line("t", choice);
    for _ in 0..40 {
        let before = screen.clone();
        // The screen changes (the choice is echoed, then vttest draws), then settles.
        screen = support::wait_for(std::time::Duration::from_secs(10), || {
            let now = tmux.visible("t");
            (now != before).then_some(now)
        })
        .unwrap_or_else(|| tmux.visible("t"));
        screen = settled(tmux, screen);
        if screen.contains("Enter choice number") {
            if fresh_menu(&screen, back_at) {
                return;
            }
            assert!(
                !fresh_menu(&screen, ""),
                "vttest's choice {choice} came back to another menu than {back_at:?}:\n{screen}"
            );
            // The choice echoed but not yet taken: wait for vttest's next screen.
            if !screen.contains("Push <RETURN>") {
                continue;
            }
        }
        tmux.key("t", "Enter");
    }
    panic!("vttest's choice {choice} did not come back to {back_at:?}:\n{screen}");
}

/// The screen once it stayed the same for 300 ms.
fn settled(tmux: &Tmux<'_>, mut screen: String) -> String {
    let mut same = 0;
    while same < 3 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let now = tmux.visible("t");
        if now == screen {
            same += 1;
        } else {
            same = 0;
            screen = now;
        }
    }
    screen
}

fn with_vttest(ws: &TestWorkspace) {
    let to = ws.path.join("vttest");
    std::fs::copy("/usr/bin/vttest", &to).expect("vttest is installed (scripts/setup installs it)");
    nix::unistd::chown(&to, Some(nix::unistd::Uid::from_raw(ws.dev.uid)), None)
        .expect("chown vttest to the developer");
}

#[test]
fn dev_tty_works_in_lazaret_run() {
    let dev = Dev::get();
    let ws = dev.workspace("tty-run");
    with_vttest(&ws);
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "tty-run", "t", &dir, 120, 40);
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; env {} {} run -- bash; echo cli-rc=$?",
            ws.env_args().join(" "),
            lazaret_bin().display()
        ),
    );
    tmux.wait_screen("t", "the sandbox shell", |s| s.contains(":/workspace# "));
    tmux.type_line("t", "PS1='sandbox# '");
    reopen_the_terminal(&tmux);
    tmux.type_line("t", "exit 3");
    tmux.wait_visible("t", "the exit status on the host", |s| {
        s.contains("cli-rc=3")
    });
    ws.wait_torn_down();
}

#[test]
fn dev_tty_works_in_a_tui_pane() {
    let dev = Dev::get();
    let ws = dev.workspace("tty-pane");
    with_vttest(&ws);
    let dir = ws.path.display().to_string();
    // A pane as wide as tmux's window but for its borders and no side panels: vttest wants
    // 80 columns.
    let tmux = Tmux::start(&dev, "tty-pane", "t", &dir, 120, 45);
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; env {} {} tui",
            ws.env_args().join(" "),
            lazaret_bin().display()
        ),
    );
    tmux.wait_screen("t", "the pane's shell", |s| s.contains("/workspace#"));
    tmux.key("t", "C-b");
    tmux.keys("t", "b");
    tmux.type_line("t", "PS1='sandbox# '");
    reopen_the_terminal(&tmux);
    // Keys typed right after the host terminal was resized reach the pane at once (they used
    // to wait in crossterm until the next key).
    tmux.type_line("t", "clear");
    tmux.ok(&["resize-window", "-t", "t", "-x", "110", "-y", "40"]);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    tmux.keys("t", "typed-after-the-resize");
    tmux.wait_visible("t", "keys typed after a resize", |s| {
        s.contains("sandbox# typed-after-the-resize")
    });
    tmux.key("t", "C-u");
    tmux.quit_tui_ending_sessions("t");
    ws.wait_torn_down();
}

/// A command that leaves a daemon behind (its stdio sent to /dev/null, the terminal still on
/// descriptor 255, as Codex's app server does) ends its session when it exits, not when the
/// daemon does.
#[test]
fn a_session_ends_with_its_command_though_a_daemon_keeps_the_terminal() {
    let dev = Dev::get();
    let ws = dev.workspace("tty-daemon");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "tty-daemon", "t", &dir, 120, 40);
    let started = std::time::Instant::now();
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; env {} {} run --detachable -- sh -c 'sleep 120 </dev/null >/dev/null 2>&1 & exit 4'; echo cli-rc=$?",
            ws.env_args().join(" "),
            lazaret_bin().display()
        ),
    );
    tmux.wait_visible("t", "the session's end", |s| shown(s, "cli-rc=4"));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "the session waited for the daemon: {:?}",
        started.elapsed()
    );
    ws.wait_torn_down();
}

/// `--keep-terminal` itself, on the host: the terminal lands on descriptor 255 only when there
/// is one, and a missing command fails as a shell would say.
#[test]
fn keep_terminal_puts_the_terminal_on_255_only_when_there_is_one() {
    let client = env!("CARGO_BIN_EXE_lazaret-escalate");
    let probe = "if [ -t 255 ]; then echo fd255-tty; else echo fd255-none; fi";
    let none = std::process::Command::new(client)
        .args(["--keep-terminal", "sh", "-c", probe])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running lazaret-escalate");
    assert_eq!(String::from_utf8_lossy(&none.stdout).trim(), "fd255-none");
    // util-linux's script gives it a pseudo-terminal.
    let with = std::process::Command::new("script")
        .args([
            "-qec",
            &format!("{client} --keep-terminal sh -c '{probe}'"),
            "/dev/null",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running script");
    assert!(
        String::from_utf8_lossy(&with.stdout).contains("fd255-tty"),
        "{with:?}"
    );
    let missing = std::process::Command::new(client)
        .args(["--keep-terminal", "/nonexistent/program"])
        .output()
        .expect("running lazaret-escalate");
    assert_eq!(missing.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/program"));
}
