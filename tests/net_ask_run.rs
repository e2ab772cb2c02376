//! Issue #17 item 2, the `lazaret run` terminal: under `default = "ask"` a connection no rule
//! decides is held while the run's own terminal asks, with a card like an escalation prompt's:
//! `a` allows it for the run (the held connection proceeds), `d` refuses it, and a card whose
//! connection is decided elsewhere (`lazaret net deny`) closes by itself; afterwards the
//! terminal is the sandbox's again. Real stack (gVisor sandbox, the real sidecar), driven
//! through tmux; every address tried is a test host of the test's own network namespace
//! (`support::netns`).
//!
//! Issue #19, the same terminal: a Domain failure while the command runs (the Network Sidecar
//! killed) is said on it at once, by a card that gives the terminal back.

mod support;

use std::process::Command;
use std::time::Duration;
use support::netns::{host_fetch, TestHosts, BASE, PORT, PUBLIC, RESOLVER};
use support::tmux::Tmux;
use support::{lazaret_bin, wait_for, Dev};

/// Keys typed sooner than this after a card appears are discarded by design.
const GUARD: Duration = Duration::from_millis(500);

fn card_count(screen: &str, target: &str) -> usize {
    screen
        .matches(&format!(
            "the sandbox is waiting to connect to {target} (tcp)"
        ))
        .count()
}

#[test]
fn the_run_terminal_asks_about_a_held_connection() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_for(Duration::from_secs(10), || host_fetch(PUBLIC).then_some(()))
        .expect("the public test host answers from the host");
    let ws = dev.workspace("net-ask-run").with_profile(
        "asker",
        &format!(
            "[profiles.asker]\n{BASE}[profiles.asker.network]\nresolvers = [\"{RESOLVER}\"]\n\
             default = \"ask\"\nask_timeout = 60\n"
        ),
    );
    let tmux = Tmux::start(
        &dev,
        "net-ask-run",
        "t",
        &ws.path.display().to_string(),
        160,
        40,
    );
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; env {} {} run --profile asker",
            ws.env_args().join(" "),
            lazaret_bin().display()
        ),
    );
    tmux.type_line("t", "PS1='sandbox# '");
    tmux.wait_sandbox_prompt("t");

    // 1. Held: the card takes the terminal; `a` allows it, the held connection proceeds.
    let allowed = format!("{PUBLIC}:{PORT}");
    tmux.type_line(
        "t",
        &format!("curl -sS -m 60 -o /dev/null http://{allowed}/ && echo ok=$((40+2))"),
    );
    let card = tmux.wait_visible("t", "the card", |s| card_count(s, &allowed) == 1);
    assert!(
        card.contains(&format!("[a] allows port {PORT} of {PUBLIC}, TCP and UDP")),
        "{card}"
    );
    assert!(card.contains("[w] allows every port of"), "{card}");
    assert!(card.contains("refused in "), "{card}");
    assert!(
        !card.contains("sandbox# "),
        "the card is alone on the screen:\n{card}"
    );
    std::thread::sleep(GUARD);
    tmux.keys("t", "a");
    tmux.wait_screen("t", "the result on the card", |s| {
        s.contains(&format!("→ allowed {allowed} for this run"))
    });
    tmux.wait_screen("t", "the held connection through", |s| s.contains("ok=42"));
    let rules = ws.lazaret(&["net", "rules", "--json", "--profile", "asker"]);
    assert!(
        rules.stdout.contains(&format!("\"target\":\"{allowed}\"")),
        "{rules:?}"
    );

    // 2. `d` on the card: refused at once (curl: could not connect).
    let denied = format!("{PUBLIC}:18081");
    tmux.type_line(
        "t",
        &format!("clear; curl -sS -m 60 -o /dev/null http://{denied}/ 2>/dev/null; echo rc=$?"),
    );
    tmux.wait_visible("t", "the second card", |s| card_count(s, &denied) == 1);
    std::thread::sleep(GUARD);
    tmux.keys("t", "d");
    tmux.wait_screen("t", "the refusal on the card", |s| {
        s.contains(&format!("→ refused {denied} for this run"))
    });
    tmux.wait_screen("t", "the refused connection", |s| s.contains("rc=7"));

    // 3. Decided elsewhere: the card closes by itself, the terminal is the sandbox's again.
    let elsewhere = format!("{PUBLIC}:18082");
    tmux.type_line(
        "t",
        &format!("clear; curl -sS -m 60 -o /dev/null http://{elsewhere}/ 2>/dev/null; echo rc2=$?"),
    );
    tmux.wait_visible("t", "the third card", |s| card_count(s, &elsewhere) == 1);
    let r = ws.lazaret(&["net", "deny", &elsewhere, "--profile", "asker"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    tmux.wait_screen("t", "the card closed", |s| {
        s.contains("→ no longer held: decided elsewhere")
    });
    tmux.wait_screen("t", "the refused connection", |s| s.contains("rc2=7"));
    tmux.type_line("t", "echo again-$((40+3))");
    tmux.wait_screen("t", "the sandbox shell again", |s| s.contains("again-43"));

    tmux.type_line("t", "exit");
    tmux.wait_screen("t", "the host shell", |s| s.trim_end().ends_with("host$"));
    ws.assert_nothing_left();
    drop(hosts);
}

/// The Network Sidecar killed while `lazaret run`'s command runs on a terminal: a card says so
/// at once (before, only the run's end did), alone on the screen; a key after the guard gives
/// the terminal back — that key never reaches the sandbox — and the command goes on; the end of
/// the run repeats the failure.
#[test]
fn a_sidecar_killed_under_a_run_is_said_on_its_terminal_at_once() {
    let dev = Dev::get();
    let ws = dev.workspace("failure-card");
    let tmux = Tmux::start(
        &dev,
        "failure-card",
        "t",
        &ws.path.display().to_string(),
        160,
        40,
    );
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; env {} {} run",
            ws.env_args().join(" "),
            lazaret_bin().display()
        ),
    );
    tmux.type_line("t", "PS1='sandbox# '");
    // The prompt itself (the typed `PS1='sandbox# '` line contains its text too).
    tmux.wait_visible("t", "the sandbox prompt", |s| {
        s.lines().any(|l| l.trim_end() == "sandbox#")
    });
    let pid = ws.container_pid("sidecar").expect("the sidecar runs");
    let killed = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let card = tmux.wait_visible("t", "the failure card", |s| {
        s.contains("the Domain reports a failure while your command runs")
    });
    assert!(
        card.contains("│ the Network Sidecar exited"),
        "the failure named:\n{card}"
    );
    assert!(card.contains("any key goes back to the session"), "{card}");
    assert!(
        !card.contains("sandbox# "),
        "the card is alone on the screen:\n{card}"
    );
    std::thread::sleep(GUARD);
    tmux.keys("t", "q");
    tmux.wait_visible("t", "the card closed", |s| {
        s.contains("└─ back to the session")
    });
    tmux.type_line("t", "echo still-$((40+2))");
    let back = tmux.wait_screen("t", "the sandbox shell again", |s| s.contains("still-42"));
    assert!(
        !back.contains("qecho"),
        "the key that closed the card reached the sandbox:\n{back}"
    );
    tmux.type_line("t", "exit");
    let end = tmux.wait_screen("t", "the host shell", |s| s.trim_end().ends_with("host$"));
    assert!(
        end.contains(
            "lazaret: warning: the Domain reported while the command ran: the Network Sidecar \
             exited"
        ),
        "{end}"
    );
    ws.assert_nothing_left();
}
