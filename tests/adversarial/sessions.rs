//! Adversarial scenarios: coordinator-owned sessions (issue #14; FR-6, FR-8, DX-4). A session
//! now outlives its terminal, its output is kept by the Session Coordinator and replayed to
//! whoever attaches later, and several clients share it — so the agent inside gets new ideas:
//! park hostile bytes for the next terminal that attaches, stall one client to freeze the
//! session for all, or shrug off `lazaret kill` to keep the Domain alive.
//!
//! Each test drives `lazaret run --detachable` and `lazaret attach` in a private tmux server
//! (a real terminal emulator; `set-clipboard on`, raw bytes captured with `pipe-pane -O`).

use crate::support::tmux::Tmux;
use crate::support::{assert_traces_conform, lazaret_bin, processes_matching, wait_for, Dev};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// `lazaret ARGS` as typed into a tmux pane of the developer (in the workspace).
fn lazaret_line(args: &str) -> String {
    format!("{} {args}", lazaret_bin().display())
}

/// The pid of the `lazaret attach` running in a tmux pane.
fn attach_pid(tmux: &Tmux<'_>, target: &str) -> u32 {
    let shell: u32 = tmux
        .format(target, "#{pane_pid}")
        .trim()
        .parse()
        .expect("the pane's shell pid");
    wait_for(Duration::from_secs(10), || {
        processes_matching(" attach")
            .into_iter()
            .find(|(pid, _)| {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .ok()
                    .and_then(|s| s.rsplit(')').next().map(str::to_owned))
                    .and_then(|rest| rest.split_whitespace().nth(1).map(str::to_owned))
                    .is_some_and(|ppid| ppid == shell.to_string())
            })
            .map(|(pid, _)| pid)
    })
    .expect("a lazaret attach process in the pane")
}

/// Attack: while nobody is attached, park a clipboard write (OSC 52), a window title, a
/// desktop notification and a cursor-position query in the session's output, so that the
/// next terminal that attaches gets them in its redraw — or receives them live.
#[test]
fn a_detached_session_cannot_park_clipboard_title_or_queries_for_the_next_terminal() {
    let dev = Dev::get();
    let ws = dev.workspace("adv-park");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "adv-park", "run", &dir, 120, 40);
    tmux.ok(&["set-option", "-s", "set-clipboard", "on"]);
    tmux.type_line("run", &lazaret_line("run --detachable"));
    tmux.wait_screen("run", "the sandbox shell", |s| s.contains("/workspace#"));
    tmux.type_line(
        "run",
        "printf '\\e]52;c;%s\\a\\e]0;pwned-title\\a\\e]9;pwned-note\\a\\e[6n' \
         $(printf parked-secret | base64); echo; echo parked-$((6*7))",
    );
    tmux.wait_screen("run", "the parked output", |s| s.contains("parked-42"));
    tmux.key("run", "C-b");
    tmux.keys("run", "d");
    tmux.wait_screen("run", "the detach", |s| s.contains("lazaret attach"));
    // Now the terminal that attaches later, with everything it receives captured.
    tmux.add("late", &dir, 120, 40);
    let raw = PathBuf::from(format!("{dir}.late-raw"));
    tmux.ok(&[
        "pipe-pane",
        "-O",
        "-t",
        "late",
        &format!("cat >> '{}'", raw.display()),
    ]);
    tmux.type_line("late", &lazaret_line("attach --last"));
    tmux.wait_screen("late", "the redrawn screen", |s| s.contains("parked-42"));
    // Live, too: the same bytes again while attached.
    tmux.type_line(
        "late",
        "printf '\\e]52;c;%s\\a\\e]0;pwned-title\\a\\e]9;pwned-note\\a\\e[6n' \
         $(printf live-secret | base64); echo; echo live-$((6*7))",
    );
    tmux.wait_screen("late", "the live output", |s| s.contains("live-42"));
    std::thread::sleep(Duration::from_millis(300));
    let buffers = tmux
        .cmd()
        .args(["list-buffers"])
        .output()
        .expect("list-buffers");
    assert_eq!(
        String::from_utf8_lossy(&buffers.stdout),
        "",
        "the session set the host clipboard"
    );
    assert_ne!(tmux.format("late", "#{pane_title}").trim(), "pwned-title");
    let bytes = std::fs::read(&raw).unwrap_or_default();
    let _ = std::fs::remove_file(&raw);
    assert!(contains(&bytes, b"parked-42"), "no capture");
    for (what, bad) in [
        ("OSC 52", &b"\x1b]52"[..]),
        ("a title", b"\x1b]0;"),
        ("a notification", b"\x1b]9;"),
        ("a cursor query", b"\x1b[6n"),
    ] {
        assert!(
            !contains(&bytes, bad),
            "{what} reached the attached terminal"
        );
    }
    tmux.key("late", "C-u");
    tmux.type_line("late", "exit");
    tmux.wait_screen("late", "the end", |s| s.contains("$ ") || s.contains("# "));
    wait_for(Duration::from_secs(60), || {
        ws.containers().is_empty().then_some(())
    })
    .unwrap_or_else(|| panic!("left: {:?}", ws.containers()));
    ws.assert_nothing_left();
    assert_traces_conform(&ws);
}

/// Attack: stall one attached client (its terminal stops reading — here the client is
/// stopped with SIGSTOP) and flood the output, hoping the coordinator blocks on that client
/// and freezes the session for everyone. The session must go on; the stalled client is
/// redrawn once it reads again.
#[test]
fn a_stalled_client_never_stalls_the_session() {
    let dev = Dev::get();
    let ws = dev.workspace("adv-stall");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "adv-stall", "run", &dir, 100, 30);
    tmux.type_line("run", &lazaret_line("run --detachable"));
    tmux.wait_screen("run", "the sandbox shell", |s| s.contains("/workspace#"));
    tmux.add("slow", &dir, 100, 30);
    tmux.type_line("slow", &lazaret_line("attach --last"));
    tmux.wait_screen("slow", "the second client", |s| s.contains("/workspace#"));
    let slow = attach_pid(&tmux, "slow");
    let stop = |sig: &str| {
        let out = dev.sh(&format!("kill -{sig} {slow}"));
        assert!(out.status.success(), "kill -{sig} {slow}");
    };
    stop("STOP");
    let started = Instant::now();
    tmux.type_line(
        "run",
        "yes lazaret-flood-line | head -c 60000000 | cat; echo flood-$((6*7))",
    );
    tmux.wait_screen("run", "the end of the flood", |s| s.contains("flood-42"));
    let took = started.elapsed();
    stop("CONT");
    // The stalled client catches up with a redraw: the current screen, not the whole flood.
    tmux.wait_screen("slow", "the stalled client's redraw", |s| {
        s.contains("flood-42")
    });
    assert!(
        took < Duration::from_secs(120),
        "60 MB took {took:?} with one client stalled"
    );
    tmux.type_line("run", "exit");
    tmux.wait_screen("slow", "the session's end", |s| {
        s.contains("$ ") || s.contains("# ")
    });
    wait_for(Duration::from_secs(60), || {
        ws.containers().is_empty().then_some(())
    })
    .unwrap_or_else(|| panic!("left: {:?}", ws.containers()));
    ws.assert_nothing_left();
    assert_traces_conform(&ws);
}

/// Attack: ignore SIGHUP and SIGTERM so that `lazaret kill` cannot end the session — and the
/// Domain, whose last session it is, stays up.
#[test]
fn a_session_that_ignores_its_hangup_still_ends_on_lazaret_kill() {
    let dev = Dev::get();
    let ws = dev.workspace("adv-nohup");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "adv-nohup", "run", &dir, 100, 30);
    tmux.type_line(
        "run",
        &lazaret_line("run --detachable -- sh -c \"trap '' HUP TERM INT; echo stubborn-\\$((6*7)); while :; do sleep 1; done\""),
    );
    tmux.wait_screen("run", "the stubborn command", |s| s.contains("stubborn-42"));
    let killed = Instant::now();
    let out = ws.lazaret(&["kill", "--last"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    wait_for(Duration::from_secs(60), || {
        ws.containers().is_empty().then_some(())
    })
    .unwrap_or_else(|| panic!("the Domain is still up: {:?}", ws.containers()));
    assert!(
        killed.elapsed() < Duration::from_secs(45),
        "the Domain went only after {:?}",
        killed.elapsed()
    );
    tmux.wait_screen("run", "the attached terminal told", |s| {
        s.contains("$ ") || s.contains("# ")
    });
    ws.assert_nothing_left();
    assert_traces_conform(&ws);
}
