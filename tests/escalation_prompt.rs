//! Interactive Host Escalation on the real stack, driven through tmux (FR-5, DX-4, SR-7): the
//! prompt in the owning `lazaret run` terminal shows profile, session, the escaped argv, the
//! working directories and the justification; approve, edit and deny each decide what runs on
//! the host; the terminal returns to the sandbox afterwards; two sessions prompting at once
//! each see only their own prompt and output. The coordinator's trace of it all conforms to
//! the protocol model.

mod support;

use std::time::Duration;
use support::tmux::Tmux;
use support::{assert_traces_conform, lazaret_bin, Dev, TestWorkspace};

/// A profile whose rules approve `printf …`, except `printf ask-me …` (always asked) and
/// `printf never …` (denied without asking); everything else goes to the developer.
const PROFILE: &str = "[profiles.ask]\nextends = \"shell\"\n\
[[profiles.ask.auto_approve]]\nargv = [\"printf\", \"never\"]\ntrailing_args = true\ndecision = \"deny\"\n\
[[profiles.ask.auto_approve]]\nargv = [\"printf\"]\ntrailing_args = true\n\
[[profiles.ask.auto_approve]]\nargv = [\"printf\", \"ask-me\"]\ntrailing_args = true\ndecision = \"ask\"\n";

/// Keys typed sooner than this after a prompt appears are discarded by design.
const GUARD: Duration = Duration::from_millis(500);

fn start_session(tmux: &Tmux<'_>, target: &str, ws: &TestWorkspace) {
    let env = ws.env_args().join(" ");
    let lazaret = lazaret_bin().display().to_string();
    tmux.type_line(
        target,
        &format!("PS1='host$ '; env {env} {lazaret} run --profile ask"),
    );
    tmux.type_line(target, "PS1='sandbox# '");
    tmux.wait_sandbox_prompt(target);
}

fn prompt_count(screen: &str) -> usize {
    screen
        .matches("the sandbox asks to run a command on the host")
        .count()
}

#[test]
fn approve_edit_deny_rules_and_timeout_through_the_terminal() {
    let dev = Dev::get();
    let ws = dev.workspace("esc-prompt").with_profile("ask", PROFILE);
    ws.host_sh("mkdir -p sub");
    let tmux = Tmux::start(&dev, "esc", "t", &ws.path.display().to_string(), 120, 50);
    start_session(&tmux, "t", &ws);
    let host_sub = format!("{}/sub", ws.path.display());

    // Approve: runs on the host, in the host directory matching /workspace/sub.
    tmux.type_line(
        "t",
        "cd /workspace/sub && lazaret-escalate --justification $'where am I\\e]0;pwned\\a' -- pwd; echo rc=$?",
    );
    let s = tmux.wait_screen("t", "the prompt", |s| prompt_count(s) == 1);
    assert!(s.contains("profile  ask"), "{s}");
    assert!(s.contains(r#"command  ["pwd"]"#), "{s}");
    assert!(
        s.contains(&format!(r#"in       "/workspace/sub" → host "{host_sub}""#)),
        "{s}"
    );
    // The justification's escape sequence is shown, not obeyed.
    assert!(
        s.contains(r#"why      "where am I\u{1b}]0;pwned\u{7}""#),
        "{s}"
    );
    assert_ne!(tmux.format("t", "#{pane_title}"), "pwned");
    std::thread::sleep(GUARD);
    tmux.keys("t", "a");
    let s = tmux.wait_screen("t", "the host's output", |s| s.contains("rc=0"));
    assert!(s.contains(&format!("\n{host_sub}\n")), "{s}");
    assert!(s.contains("→ approved"), "{s}");

    // The terminal is the sandbox's again.
    tmux.type_line("t", "echo back-$((40+2))");
    tmux.wait_screen("t", "the sandbox shell again", |s| s.contains("back-42"));

    // Edit: what runs is the edited argv, and the client says so.
    tmux.type_line("t", "lazaret-escalate -- echo asked; echo rc=$?");
    tmux.wait_screen("t", "the second prompt", |s| prompt_count(s) == 2);
    std::thread::sleep(GUARD);
    tmux.keys("t", "e");
    tmux.wait_screen("t", "the edit line", |s| s.contains("edit> echo asked"));
    tmux.key("t", "C-u");
    tmux.keys("t", "echo 'edited on the host'");
    tmux.key("t", "Enter");
    let s = tmux.wait_screen("t", "the edited command's output", |s| {
        s.matches("rc=0").count() == 2
    });
    assert!(s.contains("\nedited on the host\n"), "{s}");
    assert!(!s.contains("\nasked\n"), "{s}");
    assert!(
        s.contains(r#"the developer edited the command; ran: ["echo", "edited on the host"]"#),
        "{s}"
    );

    // Deny: nothing runs; the client exits 240 with the reason.
    tmux.type_line(
        "t",
        "lazaret-escalate -- touch /tmp/lazaret-denied-marker; echo rc=$?",
    );
    tmux.wait_screen("t", "the third prompt", |s| prompt_count(s) == 3);
    std::thread::sleep(GUARD);
    tmux.keys("t", "d");
    let s = tmux.wait_screen("t", "the denial", |s| s.contains("rc=240"));
    assert!(s.contains("denied: the developer denied it"), "{s}");
    assert!(!std::path::Path::new("/tmp/lazaret-denied-marker").exists());

    // Rules: the strictest matching decision wins, whatever their order.
    tmux.type_line(
        "t",
        "lazaret-escalate -- printf 'auto-%s\\n' ok; lazaret-escalate -- printf never; echo rc=$?",
    );
    let s = tmux.wait_screen("t", "the rule decisions", |s| {
        s.matches("rc=240").count() == 2
    });
    assert!(s.contains("\nauto-ok\n"), "{s}");
    assert!(
        s.contains("denied: a rule of the host configuration denies this command"),
        "{s}"
    );
    assert_eq!(prompt_count(&s), 3, "a rule-decided request prompted: {s}");
    tmux.type_line("t", "lazaret-escalate -- printf ask-me; echo; echo rc=$?");
    tmux.wait_screen("t", "the prompt a rule asks for", |s| prompt_count(s) == 4);
    std::thread::sleep(GUARD);
    tmux.keys("t", "y");
    tmux.wait_screen("t", "the asked command's output", |s| {
        s.contains("\nask-me\nrc=0")
    });

    // No answer in time: the prompt is withdrawn, the client says timed out (241), and the
    // terminal is the sandbox's again.
    tmux.type_line("t", "lazaret-escalate --timeout 2 -- pwd; echo rc=$?");
    tmux.wait_screen("t", "the fifth prompt", |s| prompt_count(s) == 5);
    let s = tmux.wait_screen("t", "the timeout", |s| s.contains("rc=241"));
    assert!(s.contains("withdrawn: no decision in time"), "{s}");
    assert!(s.contains("timed out: no decision in time"), "{s}");
    tmux.type_line("t", "echo again-$((40+3))");
    tmux.wait_screen("t", "the sandbox shell again", |s| s.contains("again-43"));

    tmux.type_line("t", "exit");
    tmux.wait_screen("t", "the host shell", |s| s.trim_end().ends_with("host$"));
    ws.assert_nothing_left();
    let actions = assert_traces_conform(&ws);
    for action in [
        "Prompt", "Approve", "Edit", "Deny", "Execute", "Finish", "Deliver",
    ] {
        assert!(
            actions.iter().any(|a| a == action),
            "no {action} in {actions:?}"
        );
    }
}

#[test]
fn two_sessions_prompting_at_once_see_only_their_own() {
    let dev = Dev::get();
    let ws = dev.workspace("esc-two").with_profile("ask", PROFILE);
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "esc2", "a", &dir, 120, 40);
    tmux.add("b", &dir, 120, 40);
    start_session(&tmux, "a", &ws);
    start_session(&tmux, "b", &ws);

    tmux.type_line(
        "a",
        "lazaret-escalate --justification from-A -- echo A-ran; echo rc=$?",
    );
    tmux.type_line(
        "b",
        "lazaret-escalate --justification from-B -- echo B-ran; echo rc=$?",
    );
    let a = tmux.wait_screen("a", "A's prompt", |s| prompt_count(s) == 1);
    let b = tmux.wait_screen("b", "B's prompt", |s| prompt_count(s) == 1);
    assert!(a.contains("from-A") && !a.contains("from-B"), "{a}");
    assert!(b.contains("from-B") && !b.contains("from-A"), "{b}");
    let session_of = |s: &str| {
        s.lines()
            .find_map(|l| l.split("session ").nth(1).map(|x| x.trim().to_owned()))
            .unwrap_or_default()
    };
    assert_ne!(session_of(&a), session_of(&b), "A: {a}\nB: {b}");

    // Answer B; A's prompt stays open and sees nothing of B.
    std::thread::sleep(GUARD);
    tmux.keys("b", "a");
    let b = tmux.wait_screen("b", "B's output", |s| s.contains("rc=0"));
    assert!(b.contains("\nB-ran\n"), "{b}");
    std::thread::sleep(Duration::from_millis(500));
    let a = tmux.screen("a");
    assert!(!a.contains("B-ran") && !a.contains("rc=0"), "{a}");
    assert!(
        a.trim_end().ends_with("s)"),
        "A's prompt is no longer the last thing: {a}"
    );

    // Keys typed into A go to A's prompt: deny it.
    tmux.keys("a", "d");
    let a = tmux.wait_screen("a", "A's denial", |s| s.contains("rc=240"));
    assert!(!a.contains("\nA-ran\n") && !a.contains("B-ran"), "{a}");
    let b = tmux.screen("b");
    assert!(
        !b.contains("A-ran") && !b.contains("from-A") && !b.contains("rc=240"),
        "{b}"
    );

    for t in ["a", "b"] {
        tmux.type_line(t, "exit");
        tmux.wait_screen(t, "the host shell", |s| s.trim_end().ends_with("host$"));
    }
    ws.assert_nothing_left();
    assert_traces_conform(&ws);
}
