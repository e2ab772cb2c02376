//! TUI defects of issue #32 that live across processes, on the real stack through tmux:
//! D2 — after a failed first start, the Domain panel says the coordinator stopped (and why)
//! instead of "coordinator running (pid …)"; D3 — `lazaret tui -- CMD` started again next to
//! detached sessions runs CMD in its extra tab and in a split of a re-attached pane.
//! (D4 is pinned by the ui crate's tests: app_requests_tests.rs.)

mod support;

use std::time::Duration;
use support::tmux::Tmux;
use support::{lazaret_bin, wait_for, Dev, TestWorkspace};

/// Column where the second of two side-by-side panes starts in a 160-column TUI.
const SECOND_PANE: usize = 48;

/// The Domain of `ws` as `lazaret ps --json` lists it, if it runs.
fn domain_of(ws: &TestWorkspace) -> Option<serde_json::Value> {
    support::ps_json(&ws.dev)
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["domain_id"] == ws.domain.as_str())
        .cloned()
}

/// The text of `screen` between columns `from` and `to`, line by line.
fn columns(screen: &str, from: usize, to: usize) -> String {
    screen
        .lines()
        .map(|l| {
            l.chars()
                .skip(from)
                .take(to.saturating_sub(from))
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn d2_after_a_failed_first_start_the_domain_panel_says_the_coordinator_stopped() {
    let dev = Dev::get();
    let ws = dev.workspace("tui-d2").with_profile(
        "failsetup",
        "[profiles.failsetup]\nimage = \"localhost/lazaret/base:bookworm\"\ncommand = [\"bash\"]\n\
         persistent = [\"/opt\"]\n\
         [profiles.failsetup.setup]\ncommand = [\"sh\", \"-c\", \"echo setting-up; exit 3\"]\n\
         creates = \"/opt/tool/ready\"\n",
    );
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "tui-d2", "t", &dir, 160, 45);
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; env {} {} tui --profile failsetup",
            ws.env_args().join(" "),
            lazaret_bin().display()
        ),
    );
    // The first start fails: the setup exits 3, the coordinator is left without sessions and
    // stops. The panel says so (it said "coordinator running (pid …)" for good before).
    let s = tmux.wait_screen(
        "t",
        "the Domain panel saying the coordinator stopped",
        |s| s.contains("coordinator stopped (pid"),
    );
    assert!(!s.contains("coordinator running"), "{s}");
    // Why: the setup's failure stays in the pane (issue #32 D1: the session starts, its setup
    // runs in the pane and fails there, so the start itself is no longer refused).
    assert!(
        s.contains("the setup of profile \"failsetup\" failed (exit status 3)"),
        "{s}"
    );
    assert!(s.contains("starts the Domain again"), "{s}");
    // It did stop: no coordinator of the Domain runs.
    let gone = wait_for(Duration::from_secs(30), || {
        domain_of(&ws).is_none().then_some(())
    });
    assert!(gone.is_some(), "{:#}", support::ps_json(&dev));
    // Still so a while later (the panel is not overwritten by the last state sent).
    std::thread::sleep(Duration::from_secs(4));
    let s = tmux.screen("t");
    assert!(
        s.contains("coordinator stopped (pid") && !s.contains("coordinator running"),
        "{s}"
    );

    tmux.key("t", "C-b");
    tmux.keys("t", "q");
    tmux.wait_screen("t", "the host shell", |s| s.trim_end().ends_with("host$"));
    ws.assert_nothing_left();
}

#[test]
fn d3_cmd_runs_in_the_extra_tab_and_in_a_split_of_a_reattached_pane() {
    let dev = Dev::get();
    let ws = dev.workspace("tui-d3");
    let dir = ws.path.display().to_string();
    let lazaret = lazaret_bin().display().to_string();
    let tmux = Tmux::start(&dev, "tui-d3", "t", &dir, 160, 45);
    // A plain TUI (the profile's command: bash), detached.
    tmux.type_line("t", &format!("PS1='host$ '; {lazaret} tui"));
    tmux.wait_screen("t", "the first pane's shell", |s| {
        s.contains("1 · session") && s.contains("/workspace#")
    });
    tmux.key("t", "C-b");
    tmux.keys("t", "d");
    tmux.wait_screen("t", "the host shell after the detach", |s| {
        s.contains("lazaret: detached") && s.trim_end().ends_with("host$")
    });

    // Started again with CMD: the bash session comes back, and CMD runs in a tab of its own.
    let cmd = "sh -c 'echo cmd-ran-$((6*7)); exec sh'";
    tmux.type_line("t", &format!("clear; {lazaret} tui -- {cmd}"));
    let s = tmux.wait_screen("t", "CMD in the extra tab", |s| {
        s.contains("tab 2") && s.contains("cmd-ran-42")
    });
    assert!(
        !s.contains("/workspace#"),
        "the extra tab runs CMD, not bash: {s}"
    );

    // Back in the re-attached bash pane's tab, a split runs CMD too.
    tmux.key("t", "C-b");
    tmux.keys("t", "p");
    tmux.wait_screen("t", "the re-attached bash pane", |s| {
        s.contains("/workspace#") && !s.contains("cmd-ran-42")
    });
    tmux.key("t", "C-b");
    tmux.keys("t", "%");
    let s = tmux.wait_screen("t", "CMD in the split of the re-attached pane", |s| {
        columns(s, SECOND_PANE, SECOND_PANE + 48).contains("cmd-ran-42")
    });
    assert!(
        columns(&s, 0, SECOND_PANE).contains("/workspace#"),
        "the re-attached bash pane stays on the left: {s}"
    );
    let sessions = domain_of(&ws)
        .map(|d| d["sessions"].clone())
        .unwrap_or_default();
    let commands: Vec<String> = sessions
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| s["command"].to_string())
        .collect();
    assert_eq!(
        commands.iter().filter(|c| c.contains("cmd-ran")).count(),
        2,
        "{commands:?}"
    );

    tmux.quit_tui_ending_sessions("t");
    ws.assert_nothing_left();
}

/// The TUI's status line (the last visible row).
fn status_line(tmux: &Tmux<'_>) -> String {
    tmux.visible("t")
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn d4_the_status_line_drops_a_request_once_approved_here_or_from_another_terminal() {
    let dev = Dev::get();
    let ws = dev.workspace("tui-d4");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "tui-d4", "t", &dir, 160, 45);
    tmux.type_line(
        "t",
        &format!("PS1='host$ '; {} tui", lazaret_bin().display()),
    );
    tmux.wait_screen("t", "the pane's shell", |s| {
        s.contains("1 · session") && s.contains("/workspace#")
    });

    // Approved in this TUI's panel.
    tmux.type_line(
        "t",
        "lazaret-escalate --justification d4 -- pwd; echo rc1=$?",
    );
    tmux.wait_visible("t", "the request in the status line", |s| {
        s.contains("pane 1 asks to run a command on the host")
    });
    tmux.key("t", "C-b");
    tmux.keys("t", "a");
    tmux.wait_screen("t", "the panel focused", |s| {
        s.contains("a approve · e edit")
    });
    // Keys within the panel's guard time are dropped (DX-4).
    std::thread::sleep(Duration::from_millis(600));
    tmux.keys("t", "a");
    tmux.wait_screen("t", "the approved command's result", |s| {
        s.contains("rc1=0")
    });
    let status = status_line(&tmux);
    assert!(!status.contains("asks to run"), "{status}");

    // Approved with `lazaret approve` from another terminal.
    tmux.type_line(
        "t",
        "lazaret-escalate --justification d4 -- true; echo rc2=$?",
    );
    tmux.wait_visible("t", "the second request in the status line", |s| {
        s.contains("pane 1 asks to run a command on the host")
    });
    let pending = wait_for(Duration::from_secs(30), || {
        ws.escalations()
            .first()
            .and_then(|e| e["request_id"].as_str().map(str::to_owned))
    })
    .expect("the request is listed");
    let approve = ws.lazaret(&["approve", &pending]);
    assert_eq!(approve.code, Some(0), "{approve:?}");
    tmux.wait_screen("t", "the second command's result", |s| s.contains("rc2=0"));
    let status = tmux.wait_visible("t", "the status line without the request", |s| {
        !s.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .contains("asks to run")
    });
    assert!(status.contains("withdrawn"), "{status}");

    tmux.quit_tui_ending_sessions("t");
    ws.assert_nothing_left();
}
