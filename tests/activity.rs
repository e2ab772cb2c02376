//! Issue #15 end to end on the real stack, driven through tmux: what the host observed of each
//! session's activity, in the TUI (pane borders, the tab bar's summary, the jump key) and in
//! `lazaret ps --json` — a pane printing continuously is `working` and turns `idle` once it
//! stops, a bell and a desktop notification (OSC 9, its text escaped) turn a pane to "needs
//! you" until the developer looks at it.

mod support;

use std::time::Duration;
use support::tmux::Tmux;
use support::{assert_traces_conform, lazaret_bin, ps_json, wait_for, Dev, TestWorkspace};

/// Column where the second of two side-by-side panes starts in a 160-column TUI without its
/// side panels.
const SECOND_PANE: usize = 80;

/// The sessions of `ws`'s Domain in `lazaret ps --json`.
fn sessions_of(ws: &TestWorkspace) -> Vec<serde_json::Value> {
    ps_json(&ws.dev)
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["domain_id"] == ws.domain.as_str())
        .flat_map(|d| d["sessions"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// Waits until the session `id` of `ws` satisfies `pred` in `lazaret ps --json`.
fn wait_session(
    ws: &TestWorkspace,
    id: &str,
    what: &str,
    pred: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    wait_for(Duration::from_secs(30), || {
        sessions_of(ws)
            .into_iter()
            .find(|s| s["session_id"] == id && pred(s))
    })
    .unwrap_or_else(|| panic!("waiting for {what}: {:#?}", sessions_of(ws)))
}

/// The title row of the panes (below the tab bar): the left pane's and the right pane's.
fn titles(screen: &str) -> (String, String) {
    let row: Vec<char> = screen.lines().nth(1).unwrap_or("").chars().collect();
    let cut = SECOND_PANE.min(row.len());
    (row[..cut].iter().collect(), row[cut..].iter().collect())
}

/// The full session ID of the pane whose title shows `short` (its first 8 hex digits).
fn session_shown(ws: &TestWorkspace, title: &str) -> String {
    sessions_of(ws)
        .into_iter()
        .filter_map(|s| s["session_id"].as_str().map(str::to_owned))
        .find(|id| title.contains(&format!("session {}", &id[..8])))
        .unwrap_or_else(|| panic!("no session of {title:?} in {:#?}", sessions_of(ws)))
}

#[test]
fn working_idle_and_needs_you_are_what_the_host_observed_until_the_developer_looks() {
    let dev = Dev::get();
    let ws = dev.workspace("tui-activity");
    let dir = ws.path.display().to_string();
    let lazaret = lazaret_bin().display().to_string();
    // The TUI's own settings: every alert on, the command appending its stdin to a file; the
    // TUI's output recorded (`script`) to see what it sent the host terminal.
    let home = format!("{dir}.alerts");
    let events = format!("{home}/alerts.jsonl");
    let typescript = format!("{dir}.typescript");
    let out = dev.sh(&format!(
        "set -e; mkdir -p '{home}/lazaret'; cat > '{home}/lazaret/tui.toml' <<'EOF'\n\
         [alerts]\nbell = true\nnotify = \"osc9\"\ncommand = [\"sh\", \"-c\", \"cat >> {events}\"]\nEOF\n\
         chmod 600 '{home}/lazaret/tui.toml'; \
         [ -d \"$HOME/.config/containers\" ] && ln -sfn \"$HOME/.config/containers\" '{home}/containers' || true"
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tmux = Tmux::start(&dev, "tui-activity", "t", &dir, 160, 45);
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; XDG_CONFIG_HOME={home} script -q -f -c '{lazaret} tui' {typescript}"
        ),
    );
    tmux.wait_screen("t", "the first pane's shell", |s| {
        s.contains("1 · session") && s.contains("/workspace#")
    });
    // Side panels off: each of two panes gets 80 columns, whole titles.
    tmux.key("t", "C-b");
    tmux.keys("t", "b");

    // Pane 1 prints continuously: `working`.
    tmux.type_line("t", "while :; do echo tick; sleep 0.3; done");
    let s = tmux.wait_screen("t", "pane 1 working", |s| titles(s).0.contains("· working"));
    let busy = session_shown(&ws, &titles(&s).0);
    wait_session(&ws, &busy, "the busy session working in ps", |s| {
        s["activity"] == "working"
    });

    // Pane 2 rings the bell after a while, then sends a notification, then waits; the
    // developer looks at pane 1 meanwhile.
    tmux.key("t", "C-b");
    tmux.keys("t", "%");
    tmux.wait_screen("t", "the second pane's shell", |s| {
        titles(s).1.contains("2 · session") && s.contains("/workspace#")
    });
    tmux.type_line(
        "t",
        "sleep 4; printf '\\a'; sleep 4; printf '\\033]9;build \\342\\200\\256done\\007'; read x",
    );
    tmux.key("t", "C-b");
    tmux.keys("t", "o");
    let s = tmux.wait_screen("t", "pane 2 needs you: bell", |s| {
        titles(s).1.contains("· ! NEEDS YOU: bell")
            && s.lines().next().is_some_and(|l| l.contains("1 needs you"))
    });
    let calling = session_shown(&ws, &titles(&s).1);
    wait_session(&ws, &calling, "attention (bell) in ps", |s| {
        s["activity"] == "attention" && s["attention"] == "bell"
    });
    // Alerts outside the TUI: the command got the event as JSON, the host terminal Lazaret's
    // own notification (never the program's text) and a bell.
    let first = wait_for(Duration::from_secs(20), || {
        let text = std::fs::read_to_string(&events).ok()?;
        let line = text.lines().next()?.to_owned();
        serde_json::from_str::<serde_json::Value>(&line).ok()
    })
    .unwrap_or_else(|| panic!("the alert command got no event in {events}"));
    assert_eq!(first["event"], "attention", "{first}");
    assert_eq!(first["pane"], 2, "{first}");
    assert_eq!(first["reason"], "bell", "{first}");
    assert_eq!(first["session_id"], calling.as_str(), "{first}");
    let recorded = std::fs::read(&typescript).unwrap_or_default();
    let notice = b"\x07\x1b]9;Lazaret: pane 2 needs you (its program called)\x07";
    assert!(
        recorded.windows(notice.len()).any(|w| w == notice),
        "no bell and notification of Lazaret's in the TUI's output"
    );
    // The notification's text, escaped: its right-to-left override shows as text.
    tmux.wait_screen("t", "pane 2 needs you: the notification", |s| {
        titles(s)
            .1
            .contains("· ! NEEDS YOU: notification: build \\u{202e}done")
    });
    wait_session(&ws, &calling, "attention (notification) in ps", |s| {
        s["attention"] == "notification: build \\u{202e}done"
    });
    // A new call within 10 s of the first alert of this pane: no second alert (a program
    // calling in a loop never runs the developer's command in a loop).
    std::thread::sleep(Duration::from_secs(2));
    let text = std::fs::read_to_string(&events).unwrap_or_default();
    assert_eq!(
        text.lines().count(),
        1,
        "alerted again within the gap: {text}"
    );
    let recorded = std::fs::read(&typescript).unwrap_or_default();
    assert!(
        !recorded.windows(9).any(|w| w == b"\x1b]9;build"),
        "the program's notification reached the host terminal"
    );

    // The jump key focuses the pane that needs the developer; looking clears its attention,
    // in the TUI and at the coordinator.
    tmux.key("t", "C-b");
    tmux.keys("t", "u");
    tmux.wait_screen("t", "pane 2 looked at", |s| {
        !s.contains("NEEDS YOU") && !s.contains("need you")
    });
    wait_session(&ws, &calling, "attention cleared in ps", |s| {
        s.get("attention").is_none_or(|a| a == "") && s["activity"] != "attention"
    });

    // Pane 1 stops printing: `idle` after the threshold (5 s), with no key pressed there.
    tmux.key("t", "C-b");
    tmux.keys("t", "o");
    tmux.key("t", "C-c");
    tmux.wait_screen("t", "pane 1 idle", |s| titles(s).0.contains("· idle"));
    wait_session(&ws, &busy, "the busy session idle in ps", |s| {
        s["activity"] == "idle"
    });

    // Pane 1's program exits: the pane keeps its final screen and shows `exited 3` until
    // Enter closes it; the other pane runs on.
    tmux.type_line("t", "echo final-$((6*7)); exit 3");
    let s = tmux.wait_screen("t", "pane 1 exited 3", |s| {
        titles(s).0.contains("exited 3 · Enter closes")
    });
    assert!(s.contains("final-42"), "the final screen stays:\n{s}");
    assert!(titles(&s).1.contains("session"), "pane 2 runs on:\n{s}");
    wait_for(Duration::from_secs(30), || {
        (sessions_of(&ws).len() == 1).then_some(())
    })
    .unwrap_or_else(|| panic!("pane 1's session is still listed: {:#?}", sessions_of(&ws)));
    tmux.key("t", "Enter");
    tmux.wait_screen("t", "pane 1 closed", |s| {
        s.contains("tab 1 (1 pane)") && !s.contains("final-42")
    });

    tmux.quit_tui_ending_sessions("t");
    let _ = dev.sh(&format!("rm -rf '{home}' '{typescript}'"));
    ws.assert_nothing_left();
    assert_traces_conform(&ws);
}
