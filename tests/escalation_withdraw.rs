//! A session that ends while its escalation prompt is pending (issue #14, FR-5, OR-3): the
//! protocol core's `WithdrawPrompt` withdraws the prompt from the control centre showing it —
//! with the reason — and the request gets a `cancelled` Escalation Result. Driven on the real
//! stack: a `lazaret tui` (a control centre) with two panes; the escalating pane's session is
//! ended with `lazaret kill ID` (by id, never `--last`) while the other keeps the Domain up.

mod support;

use std::time::Duration;
use support::tmux::Tmux;
use support::{assert_traces_conform, lazaret_bin, wait_for, Dev};

/// The Session ID prefix the TUI shows in pane `pane`'s title (" 2 · session 0123abcd ").
fn pane_session(screen: &str, pane: u32) -> Option<String> {
    let tag = format!("{pane} · session ");
    let at = screen.find(&tag)? + tag.len();
    let id: String = screen[at..].chars().take(8).collect();
    (id.len() == 8 && id.chars().all(|c| c.is_ascii_hexdigit())).then_some(id)
}

/// The Escalation Results in the Domain's mailbox (as the sandbox reads them).
fn results(dir: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| std::fs::read(e.path()).ok())
        .filter_map(|b| serde_json::from_slice(&b).ok())
        .collect()
}

/// Lines of the developer's Lazaret log with both `what` and `request`.
fn log_lines(dev: &Dev, what: &str, request: &str) -> Vec<String> {
    let log = dev.home.join(".local/state/lazaret/lazaret.log");
    let out = dev.sh(&format!(
        "grep -F -- '{request}' '{}' || true",
        log.display()
    ));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(what))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_session_killed_with_a_pending_prompt_withdraws_it_from_the_control_centre() {
    let dev = Dev::get();
    let ws = dev.workspace("esc-withdraw");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "escw", "t", &dir, 160, 45);
    tmux.type_line(
        "t",
        &format!("PS1='host$ '; {} tui", lazaret_bin().display()),
    );
    tmux.wait_screen("t", "the first pane's shell", |s| {
        s.contains("1 · session") && s.contains("/workspace#")
    });
    // A second pane keeps the Domain up once the first pane's session is killed.
    tmux.key("t", "C-b");
    tmux.keys("t", "%");
    tmux.wait_screen("t", "the second pane", |s| {
        s.contains("2 · session") && s.contains("sessions    2")
    });
    tmux.key("t", "C-b");
    tmux.key("t", "Left");
    tmux.type_line("t", "lazaret-escalate -- echo never-$((6*7)); echo rc=$?");
    let s = tmux.wait_screen("t", "the pending request in the control centre", |s| {
        s.contains("ESCALATION PENDING") && s.contains(r#"["echo", "never-42"]"#)
    });
    let prefix = pane_session(&s, 1).unwrap_or_else(|| panic!("pane 1's session:\n{s}"));
    let listed = ws.sessions();
    let id = listed
        .iter()
        .filter_map(|s| s["session_id"].as_str())
        .find(|id| id.starts_with(&prefix))
        .unwrap_or_else(|| panic!("{prefix} not in {listed:#?}"))
        .to_owned();

    let killed = ws.lazaret(&["kill", &id[..12]]);
    assert_eq!(killed.code, Some(0), "{killed:?}");

    // The control centre is told: the prompt leaves its panel and is listed as withdrawn.
    let s = tmux.wait_screen("t", "the withdrawal in the control centre", |s| {
        s.contains("Escalations (0)") && s.contains(r#"pane 1 ["echo", "never-42"]"#)
    });
    assert!(s.contains("withdrawn"), "{s}");
    assert!(
        !s.contains("ESCALATION PENDING"),
        "the prompt of a dead session is still shown:\n{s}"
    );

    // The request got its result: cancelled (a client left behind in the sandbox stops
    // waiting), and the host command never ran.
    let res = ws.runtime_dir().join("mailbox").join("res");
    let got = wait_for(Duration::from_secs(10), || {
        let r = results(&res);
        (!r.is_empty()).then_some(r)
    })
    .unwrap_or_else(|| panic!("no escalation result in {}", res.display()));
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0]["outcome"], "cancelled", "{got:#?}");
    assert_eq!(got[0]["exit_code"], serde_json::Value::Null, "{got:#?}");

    // The withdrawal said why (the TUI's status line shows it until the pane's end replaces
    // it; the coordinator logs what it sent).
    let request = got[0]["request_id"].as_str().expect("a request id");
    let withdrawn = log_lines(&dev, "escalation prompt withdrawn", request);
    assert_eq!(withdrawn.len(), 1, "{withdrawn:#?}");
    assert!(
        withdrawn[0].contains("reason=the session ended; its request was cancelled")
            && withdrawn[0].contains("clients=1"),
        "{withdrawn:#?}"
    );

    tmux.quit_tui_ending_sessions("t");
    ws.assert_nothing_left();
    let actions = assert_traces_conform(&ws);
    let at = |name: &str| actions.iter().position(|a| a == name);
    assert!(
        matches!((at("Prompt"), at("Leave")), (Some(p), Some(l)) if p < l),
        "the prompt, then its session's Leave: {actions:?}"
    );
    assert!(
        !actions.iter().any(|a| a == "Execute"),
        "nothing ran: {actions:?}"
    );
}
