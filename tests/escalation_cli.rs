//! Escalations decided from any terminal (issue #15) on the real stack: a detached
//! coordinator-owned session raises `lazaret-escalate` requests; `lazaret escalations --json`
//! lists them; `lazaret approve` runs one (the session sees its result), `lazaret deny`
//! denies the next, `lazaret approve --edit` runs an edited command instead, while an attached
//! terminal shows the same prompt — the first decision wins, and the terminal's prompt is
//! withdrawn with who decided; when the terminal decides first, the command line is told so.
//! Deciding an already decided, timed-out or unknown request
//! fails with its documented status. The coordinator's trace conforms to the protocol model
//! and records the CLI's decisions; its log names the deciding client.

mod support;

use std::time::Duration;
use support::tmux::Tmux;
use support::{assert_traces_conform, lazaret_bin, wait_for, Dev, Run, TestWorkspace};

/// A profile without rules: every host command goes to the developer.
const ASK: &str = "[profiles.ask]\nextends = \"shell\"\n";

const PROMPT: &str = "the sandbox asks to run a command on the host";

/// Keys typed sooner than this after a prompt appears are discarded by design.
const GUARD: Duration = Duration::from_millis(500);

/// This Domain's waiting requests, as `lazaret escalations --json` lists them.
fn listed(ws: &TestWorkspace) -> Vec<serde_json::Value> {
    ws.escalations()
}

/// Waits until the one waiting request of this Domain runs `marker_text`; returns it.
fn wait_request(ws: &TestWorkspace, marker_text: &str) -> serde_json::Value {
    wait_for(Duration::from_secs(60), || {
        let l = listed(ws);
        match l.as_slice() {
            [one]
                if one["argv"][2]
                    .as_str()
                    .is_some_and(|a| a.contains(marker_text)) =>
            {
                Some(one.clone())
            }
            _ => None,
        }
    })
    .unwrap_or_else(|| panic!("no request for {marker_text}: {:#?}", listed(ws)))
}

fn file(ws: &TestWorkspace, name: &str) -> String {
    std::fs::read_to_string(ws.path.join(name)).unwrap_or_default()
}

/// Waits until the sandbox wrote `name` up to its `rc=` line.
fn wait_file(ws: &TestWorkspace, name: &str) -> String {
    wait_for(Duration::from_secs(60), || {
        let text = file(ws, name);
        text.contains("rc=").then_some(text)
    })
    .unwrap_or_else(|| panic!("{name} never finished: {:?}", file(ws, name)))
}

fn id(request: &serde_json::Value) -> String {
    request["request_id"].as_str().expect("an id").to_owned()
}

fn json(run: &Run) -> serde_json::Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

#[test]
fn escalations_are_listed_and_decided_from_any_terminal_first_decision_wins() {
    let dev = Dev::get();
    let ws = dev.workspace("esc-cli").with_profile("ask", ASK);
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "esccli", "a", &dir, 120, 40);
    tmux.start_detachable("a", &ws);
    let session = ws.sessions()[0]["session_id"]
        .as_str()
        .expect("a session")
        .to_owned();
    // Four requests, one after the other; each one's outcome goes to a file of the workspace.
    tmux.type_line(
        "a",
        "sleep 2; \
         lazaret-escalate -- sh -c 'echo one >> marker; echo host-said-$((6*7))' > r1 2>&1; echo rc=$? >> r1; \
         lazaret-escalate -- sh -c 'echo two >> marker' > r2 2>&1; echo rc=$? >> r2; \
         lazaret-escalate -- sh -c 'echo three >> marker' > r3 2>&1; echo rc=$? >> r3; \
         sleep 5; lazaret-escalate -- sh -c 'echo four >> marker' > r4 2>&1; echo rc=$? >> r4; \
         lazaret-escalate --timeout 15 -- sh -c 'echo five >> marker' > r5 2>&1; echo rc=$? >> r5",
    );
    tmux.key("a", "C-b");
    tmux.keys("a", "d");
    tmux.wait_screen("a", "the detach", |s| s.contains("cli-rc=0"));

    // 1. Listed with its session, command (exact and escaped) and time left; approved by a
    //    prefix of its ID: the host command runs and the session gets its output.
    let first = wait_request(&ws, "echo one");
    assert_eq!(first["session_id"], session.as_str(), "{first:#}");
    assert_eq!(first["cwd"], "/workspace", "{first:#}");
    assert_eq!(
        first["command"],
        r#"["sh", "-c", "echo one >> marker; echo host-said-$((6*7))"]"#
    );
    assert!(
        first["seconds_left"].as_u64().unwrap_or(0) > 200,
        "{first:#}"
    );
    let table = ws.lazaret(&["escalations"]);
    assert!(table.stdout.contains(&id(&first)), "{table:?}");
    let approve = ws.lazaret(&["approve", &id(&first)[..8]]);
    assert_eq!(approve.code, Some(0), "{approve:?}");
    assert!(
        approve.stdout.contains("approved escalation request"),
        "{approve:?}"
    );
    let r1 = wait_file(&ws, "r1");
    assert!(r1.contains("host-said-42") && r1.contains("rc=0"), "{r1}");
    // Deciding it again: already decided, and by whom.
    let again = ws.lazaret(&["deny", &id(&first)]);
    assert_eq!(again.code, Some(4), "{again:?}");
    assert!(
        again
            .stderr
            .contains("was already approved from the command line (lazaret approve, client "),
        "{again:?}"
    );

    // 2. Denied, with --json: the session's client exits 240 (denied); nothing ran.
    let second = wait_request(&ws, "echo two");
    let deny = ws.lazaret(&["deny", &id(&second), "--json"]);
    assert_eq!(deny.code, Some(0), "{deny:?}");
    let answer = json(&deny);
    assert_eq!(answer["outcome"], "decided", "{answer:#}");
    assert_eq!(answer["request_id"], id(&second).as_str());
    assert_eq!(answer["workspace"], dir.as_str());
    assert!(wait_file(&ws, "r2").contains("rc=240"));
    let late = ws.lazaret(&["approve", &id(&second), "--json"]);
    assert_eq!(late.code, Some(4), "{late:?}");
    let answer = json(&late);
    assert_eq!(answer["outcome"], "already_decided", "{answer:#}");
    assert_eq!(answer["decision"], "denied", "{answer:#}");

    // 3. Offered to an attached terminal too: the command line decides first (an edited
    //    command), the terminal's prompt is withdrawn with who decided, a late key there
    //    decides nothing.
    let third = wait_request(&ws, "echo three");
    tmux.add("b", &dir, 160, 40);
    let env = ws.env_args().join(" ");
    tmux.type_line(
        "b",
        &format!(
            "PS1='host$ '; env {env} {} attach {}; echo cli-rc=$?",
            lazaret_bin().display(),
            &session[..12]
        ),
    );
    tmux.wait_screen("b", "the prompt in the attached terminal", |s| {
        s.contains(PROMPT)
    });
    let edit = ws.lazaret(&[
        "approve",
        &id(&third),
        "--edit",
        "--",
        "sh",
        "-c",
        "echo edited >> marker",
    ]);
    assert_eq!(edit.code, Some(0), "{edit:?}");
    tmux.wait_screen("b", "the attached terminal's prompt withdrawn", |s| {
        s.contains(
            "withdrawn: decided elsewhere: approved with an edited command from the command \
             line (lazaret approve, client ",
        )
    });
    // (The next request comes 5 s after this one's result.)
    std::thread::sleep(GUARD);
    tmux.keys("b", "a");
    assert!(wait_file(&ws, "r3").contains("rc=0"));
    assert_eq!(file(&ws, "marker"), "one\nedited\n", "ran once, edited");

    // 4. The attached terminal decides first: the command line is told who did (4).
    let fourth = wait_request(&ws, "echo four");
    tmux.wait_screen("b", "the fourth prompt", |s| {
        s.contains(PROMPT) && s.contains(r#""echo four >> marker"]"#)
    });
    std::thread::sleep(GUARD);
    tmux.keys("b", "d");
    assert!(wait_file(&ws, "r4").contains("rc=240"));
    let second_place = ws.lazaret(&["approve", &id(&fourth)]);
    assert_eq!(second_place.code, Some(4), "{second_place:?}");
    assert!(
        second_place
            .stderr
            .contains("was already denied in an attached terminal (lazaret attach, client "),
        "{second_place:?}"
    );

    // 5. Nobody decides in time: timed out (5). An ID nobody knows: 3. Not an ID: 2.
    let fifth = wait_request(&ws, "echo five");
    assert!(wait_file(&ws, "r5").contains("rc=241"));
    wait_for(Duration::from_secs(30), || {
        listed(&ws).is_empty().then_some(())
    })
    .expect("the timed-out request is still listed");
    let expired = ws.lazaret(&["approve", &id(&fifth)]);
    assert_eq!(expired.code, Some(5), "{expired:?}");
    assert!(expired.stderr.contains("timed out"), "{expired:?}");
    let unknown = ws.lazaret(&["deny", &"0".repeat(32)]);
    assert_eq!(unknown.code, Some(3), "{unknown:?}");
    let nothing = ws.lazaret(&["deny", "0000"]);
    assert_eq!(nothing.code, Some(3), "{nothing:?}");
    assert!(
        nothing.stderr.contains("lazaret escalations"),
        "{nothing:?}"
    );
    let malformed = ws.lazaret(&["approve", "not-an-id"]);
    assert_eq!(malformed.code, Some(2), "{malformed:?}");
    assert_eq!(file(&ws, "marker"), "one\nedited\n");

    // The session ends; the trace conforms and has the CLI's decisions; the log names it.
    tmux.key("b", "C-u");
    tmux.type_line("b", "exit");
    tmux.wait_screen("b", "attach's exit", |s| s.contains("cli-rc=0"));
    wait_for(Duration::from_secs(60), || {
        ws.sessions().is_empty().then_some(())
    })
    .expect("the Domain was not torn down");
    let actions = assert_traces_conform(&ws);
    for action in ["Watch", "Approve", "Deny", "Edit", "Timeout"] {
        assert!(
            actions.iter().any(|a| a == action),
            "no {action} in {actions:?}"
        );
    }
    let log = dev.sh(&format!(
        "grep -a -F 'developer decided' '{}' | grep -a -F '{}' || true",
        dev.home.join(".local/state/lazaret/lazaret.log").display(),
        id(&second)
    ));
    let log = String::from_utf8_lossy(&log.stdout);
    assert!(
        log.contains("by=cli "),
        "the decision's log line names the client: {log}"
    );
    let centre = dev.sh(&format!(
        "grep -a -F 'control centre' '{}' | grep -a -F 'label=cli' || true",
        dev.home.join(".local/state/lazaret/lazaret.log").display()
    ));
    assert!(
        !centre.stdout.is_empty(),
        "the log ties the trace's deciding viewer to the client"
    );
}

/// Issue #15's "must show": `lazaret approve` / `lazaret deny` from a second terminal decide
/// requests raised in a TUI pane; the TUI's panel lets them go, saying they were decided
/// elsewhere and by what; deciding one again says it was already decided.
#[test]
fn a_tui_panes_requests_are_decided_from_the_command_line_and_the_panel_says_so() {
    let dev = Dev::get();
    let ws = dev.workspace("esc-cli-tui").with_profile("ask", ASK);
    let dir = ws.path.display().to_string();
    let env = ws.env_args().join(" ");
    let lazaret = lazaret_bin().display().to_string();
    let tmux = Tmux::start(&dev, "esc-cli-tui", "t", &dir, 160, 45);
    tmux.type_line(
        "t",
        &format!("PS1='host$ '; env {env} {lazaret} tui --profile ask"),
    );
    tmux.wait_screen("t", "the TUI's pane", |s| {
        s.contains("1 · session") && s.contains("/workspace#")
    });

    // 1. Approved from the command line: the pane gets the command's output, the panel is
    //    emptied with the reason.
    tmux.type_line(
        "t",
        "lazaret-escalate -- sh -c 'echo tui-one >> marker; echo host-said-$((6*7))'; echo rc=$?",
    );
    tmux.wait_screen("t", "the request in the panel", |s| {
        s.contains("Escalations (1)") && s.contains("tui-one")
    });
    let first = wait_request(&ws, "tui-one");
    let approve = ws.lazaret(&["approve", &id(&first)]);
    assert_eq!(approve.code, Some(0), "{approve:?}");
    // The status line names who decided.
    tmux.wait_screen(
        "t",
        "the approval in the pane, the panel and the status line",
        |s| {
            s.contains("host-said-42")
                && s.contains("Escalations (0)")
                && s.contains("withdrawn (decided elsewhere: approved from the command line")
        },
    );
    assert_eq!(file(&ws, "marker"), "tui-one\n");

    // 2. Denied from the command line: nothing runs.
    tmux.type_line(
        "t",
        "lazaret-escalate -- sh -c 'echo tui-two >> marker'; echo rc=$?",
    );
    tmux.wait_screen("t", "the second request in the panel", |s| {
        s.contains("Escalations (1)") && s.contains("tui-two")
    });
    let second = wait_request(&ws, "tui-two");
    let deny = ws.lazaret(&["deny", &id(&second)]);
    assert_eq!(deny.code, Some(0), "{deny:?}");
    // The panel and the pane are drawn from two streams: wait for both, the denial's exit
    // status in the pane is what the sandbox's client was told.
    tmux.wait_screen("t", "the denial in the panel and rc=240 in the pane", |s| {
        s.contains("Escalations (0)")
            && s.contains("withdrawn (decided elsewhere: denied from the command line")
            && s.contains("rc=240")
    });
    assert_eq!(file(&ws, "marker"), "tui-one\n", "nothing ran");

    // 3. Deciding the first again: already decided, and how.
    let again = ws.lazaret(&["deny", &id(&first)]);
    assert_eq!(again.code, Some(4), "{again:?}");
    assert!(
        again
            .stderr
            .contains("was already approved from the command line"),
        "{again:?}"
    );

    tmux.quit_tui_ending_sessions("t");
    ws.assert_nothing_left();
    assert_traces_conform(&ws);
}
