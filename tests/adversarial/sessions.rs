//! Adversarial scenarios: coordinator-owned sessions (issue #14; FR-6, FR-8, DX-4). A session
//! now outlives its terminal, its output is kept by the Session Coordinator and replayed to
//! whoever attaches later, and several clients share it — so the agent inside gets new ideas:
//! park hostile bytes for the next terminal that attaches, stall one client to freeze the
//! session for all, or shrug off `lazaret kill` to keep the Domain alive.
//!
//! Each test drives `lazaret run --detachable` and `lazaret attach` in a private tmux server
//! (a real terminal emulator; `set-clipboard on`, raw bytes captured with `pipe-pane -O`).

use crate::support::tmux::Tmux;
use crate::support::{
    assert_traces_conform, lazaret_bin, processes_matching, wait_for, Dev, TestWorkspace,
};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Waits until the Domain's coordinator has finished its teardown (containers, processes and
/// the resource marker gone).
pub(crate) fn wait_torn_down(ws: &TestWorkspace) {
    ws.wait_torn_down();
}

/// This workspace's one coordinator-owned session as `lazaret ps --json` lists it.
pub(crate) fn hosted_session(ws: &TestWorkspace) -> Option<serde_json::Value> {
    ws.sessions().into_iter().find(|s| s["hosted"] == true)
}

/// Its ID (never `--last`: other tests of the same developer start sessions at the same time,
/// and `--last` picks across Domains).
pub(crate) fn session_of(ws: &TestWorkspace) -> String {
    wait_for(Duration::from_secs(30), || {
        hosted_session(ws)?["session_id"]
            .as_str()
            .map(str::to_owned)
    })
    .expect("the workspace's session in lazaret ps --json")
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// `lazaret ARGS` as typed into a tmux pane of the developer (in the workspace).
pub(crate) fn lazaret_line(args: &str) -> String {
    format!("{} {args}", lazaret_bin().display())
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
    let id = session_of(&ws);
    tmux.type_line("late", &lazaret_line(&format!("attach {id}")));
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
    wait_torn_down(&ws);
    ws.assert_nothing_left();
    assert_traces_conform(&ws);
}

/// Attack: stall one attached client (its terminal stops taking output: here the client's
/// stdout is a pipe nobody reads) and flood the output, hoping the coordinator blocks on that
/// client — freezing the session for everyone — or buffers the flood for it without bound.
/// The session must go on, and the coordinator stays small.
#[test]
fn a_stalled_client_never_stalls_the_session() {
    let dev = Dev::get();
    let ws = dev.workspace("adv-stall");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "adv-stall", "run", &dir, 100, 30);
    tmux.type_line("run", &lazaret_line("run --detachable"));
    tmux.wait_screen("run", "the sandbox shell", |s| s.contains("/workspace#"));
    tmux.add("slow", &dir, 100, 30);
    tmux.type_line(
        "slow",
        &format!(
            "{} | sleep 600",
            lazaret_line(&format!("attach {}", session_of(&ws)))
        ),
    );
    wait_for(Duration::from_secs(30), || {
        let s = hosted_session(&ws)?;
        let labels = s["attached"].as_array()?;
        labels.iter().any(|l| l == "attach").then_some(())
    })
    .expect("the stalled client attached");
    let started = Instant::now();
    tmux.type_line(
        "run",
        "yes lazaret-flood-line | head -c 24000000 | cat; echo flood-$((6*7))",
    );
    tmux.wait_screen("run", "the end of the flood", |s| s.contains("flood-42"));
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(120),
        "24 MB took {took:?} with one client stalled"
    );
    let coordinator =
        processes_matching(&format!("__coordinator --profile shell --workspace {dir}"));
    let rss_kib: u64 = coordinator
        .first()
        .and_then(|(pid, _)| std::fs::read_to_string(format!("/proc/{pid}/status")).ok())
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("VmRSS:")
                    .map(|v| v.trim().trim_end_matches(" kB").to_owned())
            })
        })
        .and_then(|v| v.trim().parse().ok())
        .expect("the coordinator's RSS");
    assert!(
        rss_kib < 200 * 1024,
        "the coordinator holds {rss_kib} KiB after a flood to a stalled client"
    );
    // The stalled client is ended by its developer; the session runs on for the other one.
    tmux.key("slow", "C-c");
    tmux.type_line("run", "echo still-$((6*7))");
    tmux.wait_screen("run", "the session after the flood", |s| {
        s.contains("still-42")
    });
    tmux.type_line("run", "exit");
    wait_torn_down(&ws);
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
    let id = session_of(&ws);
    let out = ws.lazaret(&["kill", &id]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    wait_torn_down(&ws);
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
