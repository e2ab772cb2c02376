//! A session that ends while its escalation prompt is pending (issue #14, FR-5, OR-3): the
//! protocol core's `WithdrawPrompt` withdraws the prompt from the control centre showing it —
//! with the reason — and the request gets a `cancelled` Escalation Result. Driven on the real
//! stack: a session started with `lazaret run --detachable` escalates while a `lazaret tui` of
//! the same Domain watches as a control centre; the session is ended with `lazaret kill ID`
//! (by id, never `--last`) while the TUI's own session keeps the Domain up.

mod support;

use std::time::Duration;
use support::tmux::Tmux;
use support::{assert_traces_conform, lazaret_bin, wait_for, Dev};

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

#[test]
fn a_session_killed_with_a_pending_prompt_withdraws_it_from_the_control_centre() {
    let dev = Dev::get();
    let ws = dev.workspace("esc-withdraw");
    let dir = ws.path.display().to_string();
    let lazaret = lazaret_bin().display().to_string();
    let tmux = Tmux::start(&dev, "escw", "a", &dir, 120, 40);
    tmux.add("t", &dir, 160, 45);

    // A: a coordinator-owned session started from a terminal; its id, before the TUI's own.
    let env = ws.env_args().join(" ");
    tmux.type_line(
        "a",
        &format!("PS1='host$ '; env {env} {lazaret} run --detachable -- bash; echo cli-rc=$?"),
    );
    tmux.wait_screen("a", "A's shell", |s| s.contains(":/workspace# "));
    let listed = wait_for(Duration::from_secs(30), || {
        let s = ws.sessions();
        (s.len() == 1).then_some(s)
    })
    .expect("A listed");
    let a = listed[0]["session_id"].as_str().expect("A's id").to_owned();

    // A control centre: a TUI of the same Domain (with a pane of its own).
    tmux.type_line("t", &format!("PS1='host$ '; {lazaret} tui"));
    tmux.wait_screen("t", "the TUI's pane", |s| {
        s.contains("1 · session") && s.contains("sessions    2")
    });

    // A's escalation waits: in A's terminal and in the control centre.
    tmux.type_line("a", "lazaret-escalate -- echo never-$((6*7)); echo rc=$?");
    let s = tmux.wait_screen("t", "the pending request in the control centre", |s| {
        s.contains("Escalations (1)") && s.contains(r#"["echo", "never-42"]"#)
    });
    assert!(s.contains(&format!("session {}", &a[..8])), "{s}");

    let killed = ws.lazaret(&["kill", &a[..12]]);
    assert_eq!(killed.code, Some(0), "{killed:?}");

    // The control centre is told why, and the prompt leaves its panel.
    let s = tmux.wait_screen("t", "the withdrawal in the control centre", |s| {
        s.contains("withdrawn (the session ended; its request was cancelled)")
    });
    assert!(s.contains("Escalations (0)"), "still pending:\n{s}");
    assert!(s.contains("never-42"), "the note names the command:\n{s}");

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
