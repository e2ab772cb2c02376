//! Coordinator-owned sessions on the real stack (issue #14), driven through tmux: a session
//! started with `lazaret run --detachable` survives its terminal (detach key and SIGHUP), is
//! attached again with its screen redrawn from the coordinator, takes input from every attached
//! client, ends with `lazaret kill` (its process inside the Agent Sandbox with it) or its own
//! exit (status passed through, Domain torn down: FR-6); escalations of a detached session wait
//! and are decided by a client that attaches later, and a prompt offered to two clients is
//! decided once (FR-5). Every coordinator trace conforms to the protocol model.
//!
//! Sessions are named by their Session ID (a prefix), never `--last`: other tests of the same
//! developer may start sessions at the same time, and `--last` picks across all Domains.

mod support;

use std::time::Duration;
use support::tmux::Tmux;
use support::{assert_traces_conform, lazaret_bin, wait_for, Dev, TestWorkspace};

/// A profile without rules: every host command goes to the developer.
const ASK: &str = "[profiles.ask]\nextends = \"shell\"\n";

/// Keys typed sooner than this after a prompt appears are discarded by design.
const GUARD: Duration = Duration::from_millis(500);

const PROMPT: &str = "the sandbox asks to run a command on the host";

/// `lazaret attach <session>` in `target` (a fresh host shell).
fn attach(tmux: &Tmux<'_>, target: &str, ws: &TestWorkspace, session: &str) {
    let env = ws.env_args().join(" ");
    let lazaret = lazaret_bin().display().to_string();
    tmux.type_line(
        target,
        &format!("PS1='host$ '; env {env} {lazaret} attach {session}; echo cli-rc=$?"),
    );
}

fn sessions(ws: &TestWorkspace) -> Vec<serde_json::Value> {
    ws.sessions()
}

/// Waits until the Domain lists `n` sessions satisfying `pred`; returns them.
fn wait_sessions(
    ws: &TestWorkspace,
    what: &str,
    pred: impl Fn(&[serde_json::Value]) -> bool,
) -> Vec<serde_json::Value> {
    wait_for(Duration::from_secs(30), || {
        let s = sessions(ws);
        pred(&s).then_some(s)
    })
    .unwrap_or_else(|| panic!("waiting for {what}; sessions: {:#?}", sessions(ws)))
}

fn id_of(session: &serde_json::Value) -> String {
    session["session_id"]
        .as_str()
        .expect("a session id")
        .to_owned()
}

fn attached(session: &serde_json::Value) -> Vec<String> {
    session["attached"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a.as_str().map(str::to_owned))
        .collect()
}

/// After the last session: the Domain is torn down, nothing of it is left.
fn assert_torn_down(ws: &TestWorkspace) {
    ws.wait_torn_down();
}

fn marker_lines(ws: &TestWorkspace) -> usize {
    std::fs::read_to_string(ws.path.join("marker"))
        .unwrap_or_default()
        .lines()
        .count()
}

/// The rows `target` shows now, as drawn (soft-wrapped rows apart, no scrollback).
fn visible_rows(tmux: &Tmux<'_>, target: &str) -> Vec<String> {
    let out = tmux
        .cmd()
        .args(["capture-pane", "-p", "-t", target])
        .output()
        .expect("capture");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim_end().to_owned())
        .collect()
}

/// A command longer than a 46-column row.
const LONG: &str = "echo A123456789B123456789C123456789D123456789E12; echo before-$((6*7))";

#[test]
fn a_detachable_session_survives_its_terminal_and_is_attached_again() {
    let dev = Dev::get();
    let ws = dev.workspace("detach");
    let dir = ws.path.display().to_string();
    let first = Tmux::start(&dev, "detach-1", "t", &dir, 46, 20);
    first.start_detachable("t", &ws);
    first.type_line("t", LONG);
    first.wait_screen("t", "the first output", |s| s.contains("\nbefore-42"));

    // ctrl-b d: the CLI exits 0 and says how to come back.
    first.key("t", "C-b");
    first.keys("t", "d");
    let s = first.wait_screen("t", "the detach", |s| {
        s.lines().any(|l| l.starts_with("cli-rc="))
    });
    assert!(s.contains("cli-rc=0"), "{s}");
    assert!(
        s.contains("keeps running. Back with: lazaret attach"),
        "{s}"
    );
    let listed = wait_sessions(&ws, "the detached session", |s| {
        s.len() == 1 && attached(&s[0]).is_empty()
    });
    assert_eq!(listed[0]["hosted"], true, "{listed:?}");
    assert_eq!(listed[0]["started_by"], "run", "{listed:?}");
    let id = id_of(&listed[0]);

    // Attached again from a wider terminal: the screen is redrawn at once, nothing typed, the
    // long command line re-wrapped onto one row.
    let second = Tmux::start(&dev, "detach-2", "t", &dir, 120, 40);
    attach(&second, "t", &ws, &id[..12]);
    second.wait_screen("t", "the redrawn screen", |s| s.contains("\nbefore-42"));
    let rows = visible_rows(&second, "t");
    assert!(rows.contains(&format!("sandbox# {LONG}")), "{rows:#?}");
    wait_sessions(&ws, "the attach listed", |s| attached(&s[0]) == ["attach"]);
    second.type_line("t", "echo after-$((6*7))");
    second.wait_screen("t", "the second output", |s| s.contains("\nafter-42"));

    // Attached from the narrow terminal too: the session takes its size, and the re-wrapped
    // command line stays on screen with everything above it, as there is room below (the
    // reflow used to push the screen's first rows into the history).
    attach(&first, "t", &ws, &id[..12]);
    first.wait_screen("t", "the narrow redraw", |s| s.contains("\nafter-42"));
    let rows = visible_rows(&first, "t");
    assert!(rows[0].contains(":/workspace# "), "{rows:#?}");
    let at = rows
        .iter()
        .position(|r| r == "sandbox# echo A123456789B123456789C123456789D1")
        .unwrap_or_else(|| panic!("the command's first row: {rows:#?}"));
    assert_eq!(rows[at + 2], "A123456789B123456789C123456789D123456789E12");
    assert_eq!(rows[at + 3], "before-42");

    // The wide terminal's tmux server goes away (SIGHUP to all in it, its attached client
    // too): the session survives.
    drop(second);
    wait_sessions(&ws, "the SIGHUP'd client gone", |s| {
        attached(&s[0]) == ["attach"]
    });
    let listed = sessions(&ws);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(id_of(&listed[0]), id);
    first.type_line("t", "echo still-$((6*7))");
    first.wait_screen("t", "output after SIGHUP", |s| s.contains("\nstill-42"));

    // The command's exit status passes through `lazaret attach`.
    first.type_line("t", "exit 3");
    first.wait_screen("t", "attach's exit", |s| s.contains("cli-rc=3"));
    assert_torn_down(&ws);
    assert_traces_conform(&ws);
}

#[test]
fn two_clients_attached_to_one_session_see_the_same_output_and_either_can_type() {
    let dev = Dev::get();
    let ws = dev.workspace("two-clients");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "two", "a", &dir, 100, 30);
    tmux.add("b", &dir, 100, 30);
    tmux.start_detachable("a", &ws);
    let id = id_of(&wait_sessions(&ws, "the session", |s| s.len() == 1)[0]);
    attach(&tmux, "b", &ws, &id[..12]);
    tmux.wait_screen("b", "the redrawn prompt", |s| s.contains("sandbox# "));
    let listed = wait_sessions(&ws, "two clients attached", |s| attached(&s[0]).len() == 2);
    let mut labels = attached(&listed[0]);
    labels.sort();
    assert_eq!(labels, ["attach", "run"]);

    tmux.type_line("a", "echo from-a-$((6*7))");
    for t in ["a", "b"] {
        tmux.wait_screen(t, "A's output", |s| s.contains("\nfrom-a-42"));
    }
    tmux.type_line("b", "echo from-b-$((6*7))");
    for t in ["a", "b"] {
        tmux.wait_screen(t, "B's output", |s| s.contains("\nfrom-b-42"));
    }

    // One detaches; the other stays attached and the session runs on.
    tmux.key("b", "C-b");
    tmux.keys("b", "d");
    tmux.wait_screen("b", "B's detach", |s| s.contains("cli-rc=0"));
    wait_sessions(&ws, "one client left", |s| attached(&s[0]) == ["run"]);
    tmux.type_line("a", "exit 5");
    tmux.wait_screen("a", "A's exit", |s| s.contains("cli-rc=5"));
    assert_torn_down(&ws);
    assert_traces_conform(&ws);
}

#[test]
fn lazaret_kill_ends_a_detached_session_and_the_domain_with_it() {
    let dev = Dev::get();
    let ws = dev.workspace("kill");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "kill", "a", &dir, 100, 30);
    tmux.add("b", &dir, 100, 30);

    // A: a detached session running a recognisable process; B keeps the Domain up to look.
    tmux.start_detachable("a", &ws);
    tmux.type_line("a", "sleep 4242 & echo started-$((6*7))");
    tmux.wait_screen("a", "the background job", |s| s.contains("\nstarted-42"));
    tmux.key("a", "C-b");
    tmux.keys("a", "d");
    tmux.wait_screen("a", "A's detach", |s| s.contains("cli-rc=0"));
    let a = id_of(&wait_sessions(&ws, "A detached", |s| s.len() == 1)[0]);
    tmux.start_detachable("b", &ws);
    let both = wait_sessions(&ws, "two sessions", |s| s.len() == 2);
    // `ps --json` says whether each session's process still runs.
    for s in &both {
        assert_eq!(s["running"], true, "{both:#?}");
    }

    // An unknown session: a clear error, non-zero.
    let unknown = ws.lazaret(&["kill", "0000ffff0000"]);
    assert_ne!(unknown.code, Some(0), "{unknown:?}");
    assert!(
        unknown.stderr.contains("no running session 0000ffff0000"),
        "{unknown:?}"
    );

    // `lazaret kill` returns once the session has left the Domain: `ps` right after it never
    // lists it.
    let killed = ws.lazaret(&["kill", &a[..12]]);
    assert_eq!(killed.code, Some(0), "{killed:?}");
    assert!(killed.stderr.contains("ended session"), "{killed:?}");
    let left = sessions(&ws);
    assert_eq!(
        left.len(),
        1,
        "A still listed after its kill returned: {left:#?}"
    );
    assert_ne!(id_of(&left[0]), a);

    // A's processes inside the Agent Sandbox ended with it (not only the coordinator's
    // `podman exec`).
    let gone = wait_for(Duration::from_secs(10), || {
        tmux.type_line("b", "echo count-$(ps -eo args | grep -c '^sleep 4242')-end");
        std::thread::sleep(Duration::from_millis(500));
        tmux.screen("b").contains("count-0-end").then_some(())
    });
    let screen = tmux.screen("b");
    let b = id_of(&left[0]);
    // The last session: kill returns once the Domain is torn down (its coordinator exited
    // after the last teardown step, which removes the resource marker).
    let killed_b = ws.lazaret(&["kill", &b[..12]]);
    let marker = ws.runtime_dir().join("resources");
    let (listed, marker_left) = (sessions(&ws), marker.exists());
    assert!(
        gone.is_some(),
        "A's process still runs in the sandbox after lazaret kill:\n{screen}"
    );
    assert_eq!(killed_b.code, Some(0), "{killed_b:?}");
    assert!(killed_b.stderr.contains("torn down"), "{killed_b:?}");
    assert!(listed.is_empty(), "listed after the last kill: {listed:#?}");
    assert!(
        !marker_left,
        "the teardown had not finished when kill returned"
    );
    tmux.wait_screen("b", "B ended by kill", |s| {
        s.lines().any(|l| l.starts_with("cli-rc="))
    });
    assert_torn_down(&ws);
    let after = ws.lazaret(&["kill", &b[..12]]);
    assert_ne!(after.code, Some(0), "{after:?}");
    assert_traces_conform(&ws);
}

#[test]
fn an_escalation_of_a_detached_session_waits_and_is_decided_by_a_client_that_attaches_later() {
    let dev = Dev::get();
    let ws = dev.workspace("esc-detached").with_profile("ask", ASK);
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "escd", "a", &dir, 120, 40);
    tmux.start_detachable("a", &ws);
    let id = id_of(&wait_sessions(&ws, "the session", |s| s.len() == 1)[0]);
    // The escalation is raised once the session is detached.
    tmux.type_line(
        "a",
        "sleep 3; touch .asking; lazaret-escalate -- sh -c 'echo ran >> marker; echo host-said-$((6*7))'; echo rc=$?",
    );
    tmux.key("a", "C-b");
    tmux.keys("a", "d");
    tmux.wait_screen("a", "the detach", |s| s.contains("cli-rc=0"));
    wait_sessions(&ws, "detached", |s| attached(&s[0]).is_empty());
    wait_for(Duration::from_secs(30), || {
        ws.path.join(".asking").exists().then_some(())
    })
    .expect("the escalation was never raised");
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(marker_lines(&ws), 0, "ran without a decision");
    assert!(
        !tmux.screen("a").contains(PROMPT),
        "offered to a detached terminal"
    );
    // `lazaret ps` says the session waits for the developer (issue #15).
    let listed = wait_activity(&ws, "the escalation listed", |s| {
        s["activity"] == "escalation"
    });
    assert_eq!(listed["pending_escalations"], 1, "{listed:#}");

    tmux.add("b", &dir, 120, 40);
    attach(&tmux, "b", &ws, &id[..12]);
    let s = tmux.wait_screen("b", "the prompt offered again", |s| s.contains(PROMPT));
    assert!(s.contains(&id[..12]), "the prompt names the session: {s}");
    std::thread::sleep(GUARD);
    tmux.keys("b", "a");
    let s = tmux.wait_screen("b", "the result in the sandbox", |s| s.contains("rc=0"));
    assert!(s.contains("\nhost-said-42"), "{s}");
    assert_eq!(marker_lines(&ws), 1);
    let listed = wait_activity(&ws, "the decision listed", |s| {
        s["activity"] != "escalation"
    });
    assert_eq!(listed["pending_escalations"], 0, "{listed:#}");

    tmux.type_line("b", "exit");
    tmux.wait_screen("b", "attach's exit", |s| s.contains("cli-rc=0"));
    assert_torn_down(&ws);
    let actions = assert_traces_conform(&ws);
    for action in ["Prompt", "Approve", "Execute", "Deliver"] {
        assert!(
            actions.iter().any(|a| a == action),
            "no {action} in {actions:?}"
        );
    }
}

#[test]
fn a_prompt_offered_to_two_attached_clients_is_decided_once() {
    let dev = Dev::get();
    let ws = dev.workspace("esc-two-clients").with_profile("ask", ASK);
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "esc2c", "a", &dir, 120, 40);
    tmux.add("b", &dir, 120, 40);
    tmux.start_detachable("a", &ws);
    let id = id_of(&wait_sessions(&ws, "the session", |s| s.len() == 1)[0]);
    attach(&tmux, "b", &ws, &id[..12]);
    tmux.wait_screen("b", "the redrawn prompt", |s| s.contains("sandbox# "));
    wait_sessions(&ws, "two clients", |s| attached(&s[0]).len() == 2);

    tmux.type_line(
        "a",
        "lazaret-escalate -- sh -c 'echo ran >> marker; echo host-said-$((6*7))'; echo rc=$?",
    );
    for t in ["a", "b"] {
        tmux.wait_screen(t, "the prompt in both", |s| s.matches(PROMPT).count() == 1);
    }
    std::thread::sleep(GUARD);
    tmux.keys("a", "a");
    tmux.wait_screen("a", "the result", |s| s.contains("rc=0"));
    // B is told what was decided, and by which kind of client.
    tmux.wait_screen("b", "B's prompt withdrawn", |s| {
        s.contains(
            "withdrawn: decided elsewhere: approved in the terminal that started the session",
        )
    });
    tmux.wait_screen("b", "the result in B too", |s| s.contains("\nhost-said-42"));
    // A late key in B decides nothing and reaches the shell as a plain key at most.
    tmux.keys("b", "d");
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(marker_lines(&ws), 1, "the host command ran more than once");
    tmux.key("b", "C-u");
    tmux.type_line("b", "echo both-$((6*7))");
    for t in ["a", "b"] {
        tmux.wait_screen(t, "the shell again", |s| s.contains("\nboth-42"));
    }

    // ctrl-b d while a prompt is shown detaches B; the request stays pending for A.
    tmux.type_line(
        "a",
        "lazaret-escalate -- sh -c 'echo again >> marker'; echo rc2=$((40+2))",
    );
    for t in ["a", "b"] {
        // The card's command line (the typed command line alone shows no JSON array).
        tmux.wait_screen(t, "the second prompt in both", |s| {
            s.contains(PROMPT) && s.contains(r#""-c", "echo again >> marker"]"#)
        });
    }
    tmux.key("b", "C-b");
    tmux.keys("b", "d");
    let s = tmux.wait_screen("b", "B detached from the prompt", |s| {
        s.contains("cli-rc=0")
    });
    assert!(s.contains("withdrawn: you detached"), "{s}");
    wait_sessions(&ws, "A alone attached", |s| attached(&s[0]) == ["run"]);
    assert_eq!(marker_lines(&ws), 1, "decided by B's detach key");
    std::thread::sleep(GUARD);
    tmux.keys("a", "a");
    tmux.wait_screen("a", "the second result", |s| s.contains("\nrc2=42"));
    assert_eq!(marker_lines(&ws), 2);

    tmux.type_line("a", "exit");
    tmux.wait_screen("a", "the exit", |s| s.contains("cli-rc=0"));
    assert_torn_down(&ws);
    assert_traces_conform(&ws);
}

#[test]
fn attach_refuses_a_direct_session_clearly() {
    let dev = Dev::get();
    let ws = dev.workspace("attach-direct");
    let holder = ws.spawn(&["sh", "-c", support::HOLD]);
    let listed = wait_sessions(&ws, "the direct session", |s| s.len() == 1);
    assert_eq!(listed[0]["hosted"], false, "{listed:?}");
    let id = id_of(&listed[0]);
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "direct", "t", &dir, 100, 30);
    attach(&tmux, "t", &ws, &id[..12]);
    let s = tmux.wait_screen("t", "the refusal", |s| {
        s.lines().any(|l| l.starts_with("cli-rc="))
    });
    ws.release();
    let run = support::finish(holder);
    assert!(!s.contains("cli-rc=0"), "{s}");
    assert!(
        s.contains("cannot be attached") && s.contains("--detachable"),
        "{s}"
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_torn_down(&ws);
    assert_traces_conform(&ws);
}

/// Host processes whose parent is `pid`: (pid, executable's file name, command line).
fn children_of(pid: u32) -> Vec<(u32, String, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        if ppid != Some(pid) {
            continue;
        }
        let exe = std::fs::read_link(entry.path().join("exe"))
            .ok()
            .and_then(|p| Some(p.file_name()?.to_string_lossy().into_owned()))
            .unwrap_or_default();
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        found.push((
            child,
            exe,
            String::from_utf8_lossy(&cmdline).replace('\0', " "),
        ));
    }
    found
}

#[test]
fn a_coordinator_owned_session_is_run_by_runsc_itself_on_the_coordinators_terminal() {
    let dev = Dev::get();
    let ws = dev.workspace("runsc-exec");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "runsc-exec", "t", &dir, 100, 30);
    tmux.start_detachable("t", &ws);

    // The session's process is `runsc exec`, a child of the coordinator that entered Podman's
    // namespaces (nsenter execs runsc): no `podman exec` and no conmon relay in between.
    let status: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(ws.runtime_dir().join("status.json")).expect("status.json"),
    )
    .expect("the Domain's status");
    let coordinator = status["coordinator_pid"].as_u64().expect("coordinator pid") as u32;
    let children = children_of(coordinator);
    let runsc: Vec<_> = children
        .iter()
        .filter(|(_, exe, cmd)| exe == "runsc" && cmd.contains(" exec "))
        .collect();
    assert_eq!(runsc.len(), 1, "the coordinator's children: {children:#?}");
    assert!(
        runsc[0].2.contains(&format!(
            "--env=LAZARET_SESSION={}",
            id_of(&sessions(&ws)[0])
        )),
        "{runsc:#?}"
    );
    assert!(
        !children.iter().any(|(_, exe, _)| exe == "podman"),
        "a podman process still relays the session: {children:#?}"
    );
    let runsc_pid = runsc[0].0;
    let user_ns = |pid: u32| std::fs::read_link(format!("/proc/{pid}/ns/user")).ok();
    assert_ne!(
        user_ns(runsc_pid),
        user_ns(coordinator),
        "runsc runs in Podman's rootless user namespace, not the developer's"
    );

    // Its terminal: the client's size and TERM; Ctrl-C reaches the foreground job; the kernel
    // is gVisor's (the prelude checked it; `dmesg` says so too).
    tmux.type_line(
        "t",
        "stty size; echo term=$TERM; dmesg | head -n 1; echo end-$((1+1))",
    );
    let s = tmux.wait_screen("t", "the terminal's size", |s| s.contains("\nend-2"));
    assert!(s.contains("\n30 100\n"), "{s}");
    assert!(s.contains("\nterm=xterm-256color\n"), "{s}");
    assert!(s.contains("gVisor"), "{s}");
    tmux.type_line("t", "sleep 100");
    std::thread::sleep(Duration::from_millis(500));
    tmux.key("t", "C-c");
    tmux.type_line("t", "echo after-$((2+3))");
    tmux.wait_screen("t", "the prompt after Ctrl-C", |s| s.contains("\nafter-5"));

    // The command's exit status passes through; the Domain goes with its last session.
    tmux.type_line("t", "exit 7");
    tmux.wait_screen("t", "the CLI's exit", |s| s.contains("cli-rc=7"));
    assert_torn_down(&ws);
    assert!(
        std::fs::metadata(format!("/proc/{runsc_pid}")).is_err(),
        "runsc exec outlived its session"
    );
    assert_traces_conform(&ws);
}

/// The session's entry in `lazaret ps --json`, once `pred` holds (waits up to 30 s).
fn wait_activity(
    ws: &TestWorkspace,
    what: &str,
    pred: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    wait_for(Duration::from_secs(30), || {
        let s = sessions(ws);
        s.first().filter(|s| pred(s)).cloned()
    })
    .unwrap_or_else(|| panic!("waiting for {what}; sessions: {:#?}", sessions(ws)))
}

#[test]
fn ps_shows_what_the_host_observed_of_a_sessions_activity() {
    let dev = Dev::get();
    let ws = dev.workspace("activity");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "activity", "t", &dir, 100, 30);
    tmux.start_detachable("t", &ws);
    let listed = wait_activity(&ws, "working", |s| s["activity"] == "working");
    assert!(
        listed["last_output_unix_ms"].as_u64().unwrap_or(0) > 0,
        "{listed:#}"
    );

    // Quiet for the threshold: idle.
    let listed = wait_activity(&ws, "idle", |s| s["activity"] == "idle");
    assert!(listed.get("attention").is_none(), "{listed:#}");

    // A bell after the last key: attention, "bell".
    tmux.type_line("t", "sleep 1; printf '\\a'");
    let listed = wait_activity(&ws, "the bell", |s| s["activity"] == "attention");
    assert_eq!(listed["attention"], "bell", "{listed:#}");

    // A key is the developer looking: cleared.
    tmux.type_line("t", "true");
    wait_activity(&ws, "the bell cleared", |s| s["activity"] != "attention");

    // A desktop notification (OSC 9) with a bidi override in its text: kept escaped.
    tmux.type_line(
        "t",
        "sleep 1; printf '\\033]9;done \\342\\200\\256evil\\007'",
    );
    let listed = wait_activity(&ws, "the notification", |s| s["activity"] == "attention");
    assert_eq!(
        listed["attention"], "notification: done \\u{202e}evil",
        "{listed:#}"
    );
    let out = ws
        .dev
        .command(lazaret_bin().to_str().expect("utf-8 path"))
        .arg("ps")
        .output()
        .expect("lazaret ps");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("needs you: notification: done \\u{202e}evil"),
        "{table}"
    );
    assert!(!table.contains('\u{202e}'), "{table}");

    tmux.type_line("t", "exit 0");
    tmux.wait_screen("t", "the CLI's exit", |s| s.contains("cli-rc=0"));
    assert_torn_down(&ws);
}

/// The last session's exit tears the Domain down at once; its attached client still hears the
/// exit status first, however late the session's thread gets to telling it
/// (`LAZARET_TEST_PAUSE_AT=session-left` widens that window: without the coordinator waiting
/// for it, the client hears "the Domain is shutting down" and says 125 — CI of b49da90).
#[test]
fn the_last_session_s_client_hears_its_exit_status_before_the_domain_shuts_down() {
    let dev = Dev::get();
    let ws = dev.workspace("exit-told");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "exit-told", "t", &dir, 100, 30);
    let env = ws.env_args().join(" ");
    let lazaret = lazaret_bin().display().to_string();
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; env LAZARET_TEST_PAUSE_AT=session-left {env} {lazaret} run \
             --detachable -- sh -c 'sleep 3; echo done-sleeping; exit 7'; echo cli-rc=$?"
        ),
    );
    let screen = tmux.wait_screen("t", "the CLI's exit", |s| {
        s.lines().any(|l| l.starts_with("cli-rc="))
    });
    assert!(screen.contains("done-sleeping"), "{screen}");
    assert!(screen.contains("cli-rc=7"), "{screen}");
    assert!(!screen.contains("went away"), "{screen}");
    assert_torn_down(&ws);
}

/// `idle_stop` (issue #18): a Domain whose sessions are all detached and without input for that
/// long is stopped; an attached session is never stopped, and the silence counts from the
/// detach. Output does not count (issue #31): the session prints a dot every second throughout,
/// which kept the Domain up for ever before.
#[test]
fn idle_stop_ends_a_domain_whose_sessions_are_detached_and_silent_but_not_an_attached_one() {
    const IDLE_STOP: Duration = Duration::from_secs(4);
    let dev = Dev::get();
    let ws = dev.workspace("idle-stop").with_profile(
        "idle",
        "[profiles.idle]\nextends = \"shell\"\nidle_stop = \"4s\"\n",
    );
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "idle-stop", "t", &dir, 100, 30);
    tmux.start_detachable("t", &ws);
    tmux.type_line("t", "echo quiet-$((6*7))");
    tmux.wait_screen("t", "the output", |s| s.contains("\nquiet-42"));
    // The sandbox keeps printing: a byte a second, for ever.
    tmux.type_line("t", "(while :; do printf .; sleep 1; done) &");

    // Attached and silent for longer than idle_stop: it keeps running.
    std::thread::sleep(IDLE_STOP * 2);
    let listed = sessions(&ws);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(attached(&listed[0]), ["run"], "{listed:?}");

    // Detached (ctrl-b d): stopped once silent for idle_stop after the detach, not before.
    tmux.key("t", "C-b");
    tmux.keys("t", "d");
    tmux.wait_screen("t", "the detach", |s| {
        s.lines().any(|l| l.starts_with("cli-rc="))
    });
    let detached = std::time::Instant::now();
    std::thread::sleep(IDLE_STOP / 2);
    assert_eq!(
        sessions(&ws).len(),
        1,
        "stopped before idle_stop had passed"
    );
    wait_for(Duration::from_secs(30), || {
        sessions(&ws).is_empty().then_some(())
    })
    .unwrap_or_else(|| panic!("not stopped: {:#?}", sessions(&ws)));
    let after = detached.elapsed();
    assert!(after >= IDLE_STOP, "stopped {after:?} after the detach");
    assert_torn_down(&ws);
    let log = std::fs::read_to_string(ws.dev.home.join(".local/state/lazaret/lazaret.log"))
        .unwrap_or_default();
    assert!(
        log.lines()
            .any(|l| l.contains("idle_stop: every session detached and without input")),
        "the coordinator's log says why"
    );
}

/// The host pid of the Domain's `runsc-sandbox` process (the Sentry): the one whose command
/// line names the sandbox container's ID.
fn sentry_pid(dev: &Dev, ws: &TestWorkspace) -> Option<u32> {
    let name = format!("lazaret-{}-sandbox", ws.domain.as_str());
    let out = dev
        .command("podman")
        .args(["inspect", "--format", "{{.Id}}", &name])
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if id.len() != 64 {
        return None;
    }
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let argv: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        (argv.first().map(String::as_str) == Some("runsc-sandbox")
            && argv.iter().any(|a| a.contains(&id)))
        .then_some(pid)
    })
}

/// Issue #19: the Agent Sandbox killed under a coordinator-owned session (its runsc-sandbox
/// process SIGKILLed). The attached `lazaret run --detachable` says the sandbox stopped and why,
/// and exits 125 (Lazaret's failure) — not runsc's own 128 as if it were the command's status.
#[test]
fn a_detachable_session_whose_sandbox_is_killed_says_so_instead_of_runsc_s_status() {
    let dev = Dev::get();
    let ws = dev.workspace("sandbox-gone-hosted");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "sandbox-gone", "t", &dir, 200, 30);
    let env = ws.env_args().join(" ");
    let lazaret = lazaret_bin().display().to_string();
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; env {env} {lazaret} run --detachable -- sh -c \
             'echo holding-$((6*7)); sleep 120'; echo cli-rc=$?"
        ),
    );
    tmux.wait_screen("t", "the command", |s| s.contains("\nholding-42"));
    let pid = wait_for(Duration::from_secs(10), || sentry_pid(&dev, &ws))
        .expect("the sandbox's runsc-sandbox process");
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let screen = tmux.wait_screen("t", "the CLI's exit", |s| {
        s.lines().any(|l| l.starts_with("cli-rc="))
    });
    assert!(screen.contains("cli-rc=125"), "{screen}");
    assert!(
        screen.contains("the Agent Sandbox stopped while the command ran"),
        "{screen}"
    );
    assert!(screen.contains("killed by signal 9 (SIGKILL)"), "{screen}");
    assert_torn_down(&ws);
}

/// Index of the first visible row satisfying `pred`.
fn row_where(rows: &[String], what: &str, pred: impl Fn(&str) -> bool) -> usize {
    rows.iter()
        .position(|r| pred(r))
        .unwrap_or_else(|| panic!("no row with {what}: {rows:#?}"))
}

/// Issue #32, D5: detaching hands the terminal back with the host shell's prompt on a clean
/// line below the session's output. A normal-screen session is not left with `ESC[?1049l`
/// (which restores a cursor saved when `less` ran earlier, and the prompt was drawn over the
/// session's output); a session whose program is on the alternate screen is left with it.
#[test]
fn detaching_puts_the_host_prompt_below_the_session_and_leaves_its_alternate_screen() {
    let dev = Dev::get();
    let ws = dev.workspace("detach-prompt");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "detach-prompt", "t", &dir, 80, 30);
    tmux.start_detachable("t", &ws);
    // A full-screen program ran and quit (the terminal saved the cursor then), then more output.
    tmux.type_line("t", "less /etc/os-release");
    tmux.wait_screen("t", "less", |s| s.contains("(END)"));
    tmux.keys("t", "q");
    tmux.type_line("t", "for i in 1 2 3 4 5 6; do echo row-$i; done");
    tmux.wait_screen("t", "the rows", |s| s.contains("\nrow-6"));
    tmux.key("t", "C-b");
    tmux.keys("t", "d");
    tmux.wait_screen("t", "the detach", |s| s.contains("cli-rc=0"));
    tmux.type_line("t", "echo host-$((6*7))");
    tmux.wait_screen("t", "the host shell", |s| s.contains("\nhost-42"));
    let rows = visible_rows(&tmux, "t");
    let last = row_where(&rows, "row-6", |r| r == "row-6");
    for i in 1..=6 {
        assert_eq!(rows[last + i - 6], format!("row-{i}"), "{rows:#?}");
    }
    let detached = row_where(&rows, "the detach message", |r| {
        r.starts_with("lazaret: detached from session")
    });
    let rc = row_where(&rows, "cli-rc=0", |r| r == "cli-rc=0");
    let echoed = row_where(&rows, "host-42", |r| r == "host-42");
    assert!(last < detached && detached < rc && rc < echoed, "{rows:#?}");
    assert!(
        rows[echoed - 1].starts_with("host$ echo host-"),
        "{rows:#?}"
    );

    // Attached again while the session shows `less`: detaching leaves the alternate screen.
    let id = id_of(&wait_sessions(&ws, "the detached session", |s| s.len() == 1)[0]);
    attach(&tmux, "t", &ws, &id[..12]);
    tmux.wait_screen("t", "the redraw", |s| s.contains("\nrow-6"));
    wait_sessions(&ws, "the attach listed", |s| attached(&s[0]) == ["attach"]);
    tmux.type_line("t", "less /etc/os-release");
    tmux.wait_visible("t", "less", |s| s.contains("(END)"));
    assert_eq!(tmux.format("t", "#{alternate_on}"), "1");
    tmux.key("t", "C-b");
    tmux.keys("t", "d");
    tmux.wait_visible("t", "the second detach", |s| {
        s.lines().filter(|l| l.starts_with("cli-rc=")).count() >= 1 && !s.contains("(END)")
    });
    assert_eq!(tmux.format("t", "#{alternate_on}"), "0");
    tmux.type_line("t", "echo back-$((6*7))");
    let s = tmux.wait_visible("t", "the host shell again", |s| s.contains("\nback-42"));
    assert!(s.contains("lazaret: detached from session"), "{s}");

    let killed = ws.lazaret(&["kill", &id[..12]]);
    assert_eq!(killed.code, Some(0), "{killed:?}");
    assert_torn_down(&ws);
}
