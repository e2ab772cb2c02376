//! Issue #16 item 3 on the real stack: the built-in `claude` and `codex` profiles set up a
//! Node.js those agents support (≥ 22; Debian 12's is 18) and the agents' first screens
//! render, take keys, resize and exit cleanly, in `lazaret run` and in a `lazaret tui` pane.
//!
//! No credentials. Each test profile extends the built-in one with a network policy that allows
//! only the npm registry, which the setup installs from (behind a TLS-intercepting proxy, its
//! CA reaches the sandbox through `trust_host_cas`, on by default: issue #32); the agents' own
//! connections (api.anthropic.com, OpenAI) are refused by the sidecar and never leave the
//! machine. Claude Code then shows its "Unable to connect" screen; with onboarding marked done
//! and a placeholder API key (never sent anywhere) it shows its folder-trust and key
//! questions and its prompt, all offline. In a pane, Ctrl-V pastes an image from the host
//! clipboard into Claude Code's prompt through the clipboard shim (`xclip` in the sandbox).

mod support;

use std::time::Duration;
use support::tmux::Tmux;
use support::{lazaret_bin, Dev, TestWorkspace};

/// The built-in `NAME` with only the npm registry reachable (no trust configuration: the
/// host's CAs are Lazaret's to add).
fn profile(name: &str) -> String {
    format!(
        "[profiles.{name}]\nextends = \"{name}\"\n\n\
         [profiles.{name}.network]\ndefault = \"deny\"\nallow_names = [\"registry.npmjs.org\"]\n"
    )
}

/// Runs the profile's setup (first launch) and checks the Node.js it left.
fn set_up(ws: &TestWorkspace, name: &str) {
    let run = ws.lazaret(&[
        "run",
        "--profile",
        name,
        "--",
        "node",
        "-p",
        "process.versions.node",
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr
            .contains(&format!("setup of profile \"{name}\" done")),
        "{run:?}"
    );
    let major: u32 = run
        .stdout
        .trim()
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("node's version: {run:?}"));
    assert!(major >= 22, "Node.js {} in the {name} profile", run.stdout);
}

/// `cmd` typed at the host shell of `t` with this workspace's configuration.
fn host_line(ws: &TestWorkspace, rest: &str) -> String {
    format!(
        "clear; env {} {} {rest}",
        ws.env_args().join(" "),
        lazaret_bin().display()
    )
}

/// The lengths of the horizontal rules (runs of `─` at the start of a line) on `screen`:
/// Claude Code's span its terminal.
fn rules(screen: &str) -> Vec<usize> {
    screen
        .lines()
        .map(|l| l.chars().take_while(|&c| c == '─').count())
        .filter(|&n| n > 0)
        .collect()
}

/// The same inside a TUI pane: rules right after the pane's left border `│`.
fn pane_rules(screen: &str) -> Vec<usize> {
    rules(
        &screen
            .lines()
            .filter_map(|l| l.strip_prefix('│'))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// Claude Code drew its screen `width` columns wide: its two rules, nothing left of an
/// older, wider screen (a terminal re-wraps those into shorter pieces).
fn drawn_at(rules: &[usize], width: usize) -> bool {
    rules.len() >= 2 && rules.iter().all(|&n| n == width)
}

/// Presses `key` until `selected` shows: a question drawn before its program reads the
/// keyboard drops keys typed meanwhile.
fn choose(tmux: &Tmux<'_>, key: &str, selected: &str) {
    choose_between(tmux, key, selected, None);
}

/// Presses `key` until `selected` shows, and the opposite arrow when a late key went past it
/// to `overshot`.
fn choose_between(tmux: &Tmux<'_>, key: &str, selected: &str, overshot: Option<&str>) {
    for _ in 0..10 {
        let screen = tmux.visible("t");
        if screen.contains(selected) {
            return;
        }
        let past = overshot.is_some_and(|o| screen.contains(o));
        tmux.key("t", if past { opposite(key) } else { key });
        std::thread::sleep(Duration::from_millis(1500));
    }
    panic!("{selected:?} never selected:\n{}", tmux.visible("t"));
}

fn opposite(key: &str) -> &str {
    match key {
        "Down" => "Up",
        "Up" => "Down",
        other => other,
    }
}

const KEY: &str = "ANTHROPIC_API_KEY=sk-ant-lazaret-test-not-a-key";

#[test]
fn claude_code_runs_on_node_22_or_newer_and_its_first_screens_work_in_run_and_in_a_pane() {
    let dev = Dev::get();
    let ws = dev
        .workspace("agent-claude")
        .with_profile("claude", &profile("claude"));
    set_up(&ws, "claude");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "agent-claude", "t", &dir, 120, 40);
    tmux.type_line("t", "PS1='host$ '");

    // 1. Its welcome screen says it cannot connect (the sidecar refused), and it exits.
    tmux.type_line(
        "t",
        &host_line(&ws, "run --profile claude; echo cli-rc-1=$?"),
    );
    // The status's own line: the typed command line holds `cli-rc-1=` too, and the shell may
    // not have cleared it yet.
    let s = tmux.wait_screen("t", "Claude Code's welcome", |s| {
        s.lines().any(|l| l.starts_with("cli-rc-1="))
    });
    assert!(s.contains("Welcome to Claude Code"), "{s}");
    assert!(s.contains("Unable to connect to Anthropic services"), "{s}");
    assert!(s.contains("cli-rc-1=1"), "{s}");

    // 2. Onboarding marked done, a placeholder key: the folder-trust question takes the arrow
    //    keys and Enter, then the key question, then its prompt; a resize redraws it at the new
    //    width; typed text shows; `/exit` ends it with status 0.
    tmux.type_line(
        "t",
        &host_line(
            &ws,
            &format!(
                "run --profile claude -- sh -c 'echo {{\\\"hasCompletedOnboarding\\\":true}} \
                 > /root/.claude.json; {KEY} exec claude'; echo cli-rc-2=$?"
            ),
        ),
    );
    tmux.wait_screen("t", "the folder-trust question", |s| {
        s.contains("Yes, I trust this folder")
    });
    choose(&tmux, "Down", "❯ Yes, I trust this folder");
    tmux.key("t", "Enter");
    tmux.wait_screen("t", "the API key question", |s| {
        s.contains("Do you want to use this API key?")
    });
    choose(&tmux, "Up", "❯ Yes");
    tmux.key("t", "Enter");
    let s = tmux.wait_visible("t", "Claude Code's prompt", |s| {
        s.contains("Claude Code v") && s.contains("/workspace") && drawn_at(&rules(s), 120)
    });
    assert!(!s.contains("cli-rc-2="), "{s}");
    tmux.ok(&["resize-window", "-t", "t", "-x", "100", "-y", "30"]);
    tmux.wait_visible("t", "the prompt redrawn 100 columns wide", |s| {
        drawn_at(&rules(s), 100)
    });
    tmux.keys("t", "typed-into-claude");
    tmux.wait_screen("t", "the typed text", |s| {
        s.lines()
            .any(|l| l.starts_with('❯') && l.contains("typed-into-claude"))
    });
    tmux.key("t", "C-u");
    tmux.keys("t", "/exit");
    std::thread::sleep(Duration::from_millis(500));
    tmux.key("t", "Enter");
    tmux.wait_screen("t", "Claude Code's exit", |s| s.contains("cli-rc-2=0"));

    // 3. In a TUI pane (the folder and the key were accepted above, kept in the State Anchor):
    //    the prompt, typed text, a resize.
    tmux.ok(&["resize-window", "-t", "t", "-x", "160", "-y", "40"]);
    // The host clipboard holds an image (the reader the coordinator runs is the test's own:
    // what wl-paste or xclip would be on a desktop).
    let png = ws.image_file();
    tmux.type_line(
        "t",
        &host_line(
            &ws,
            &format!("tui --profile claude -- env {KEY} claude; echo cli-rc-3=$?"),
        )
        .replacen(
            "env ",
            &format!(
                "env LAZARET_CLIPBOARD_IMAGE_COMMAND='cat {}' ",
                png.display()
            ),
            1,
        ),
    );
    let s = tmux.wait_visible("t", "Claude Code's prompt in the pane", |s| {
        let r = pane_rules(s);
        s.contains("Claude Code v")
            && s.contains("│❯")
            && r.first().is_some_and(|&w| drawn_at(&r, w))
    });
    let wide = pane_rules(&s)[0];
    tmux.keys("t", "typed-in-a-pane");
    tmux.wait_screen("t", "the typed text in the pane", |s| {
        s.lines()
            .any(|l| l.starts_with("│❯") && l.contains("typed-in-a-pane"))
    });
    tmux.key("t", "C-u");
    // Ctrl-V: Claude Code asks xclip for the clipboard's image, the clipboard shim gets it
    // from the host (the developer just pressed the paste key in this pane).
    tmux.key("t", "C-v");
    tmux.wait_visible("t", "the pasted image in Claude Code's prompt", |s| {
        s.lines()
            .any(|l| l.starts_with("│❯") && l.contains("[Image #1]"))
    });
    tmux.key("t", "C-u");
    tmux.ok(&["resize-window", "-t", "t", "-x", "130", "-y", "40"]);
    tmux.wait_visible("t", "the pane's prompt redrawn narrower", |s| {
        let r = pane_rules(s);
        r.first().is_some_and(|&w| w < wide && drawn_at(&r, w))
    });
    // Typed right after the resize, the text shows; `/exit` ends Claude Code with status 0;
    // the ended pane keeps its status until Enter closes it, and the TUI quits.
    tmux.keys("t", "after-the-resize");
    tmux.wait_visible("t", "text typed after the resize", |s| {
        s.lines()
            .any(|l| l.starts_with("│❯") && l.contains("after-the-resize"))
    });
    tmux.key("t", "C-u");
    tmux.keys("t", "/exit");
    std::thread::sleep(Duration::from_millis(500));
    tmux.key("t", "Enter");
    tmux.wait_visible("t", "Claude Code's exit in the pane", |s| {
        s.contains("1 · exited 0 · Enter closes")
    });
    tmux.key("t", "Enter");
    tmux.wait_screen("t", "the TUI's exit", |s| s.contains("cli-rc-3=0"));
    ws.wait_torn_down();
}

#[test]
fn codex_runs_on_node_22_or_newer_and_its_sign_in_screen_works_in_run_and_in_a_pane() {
    let dev = Dev::get();
    let ws = dev
        .workspace("agent-codex")
        .with_profile("codex", &profile("codex"));
    set_up(&ws, "codex");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "agent-codex", "t", &dir, 120, 40);
    tmux.type_line("t", "PS1='host$ '");

    // In `lazaret run`: the sign-in choice takes the arrow keys, survives a resize, and
    // Ctrl-C ends it with status 0.
    tmux.type_line(
        "t",
        &host_line(&ws, "run --profile codex; echo cli-rc-1=$?"),
    );
    tmux.wait_screen("t", "Codex's sign-in choice", |s| {
        s.contains("Welcome to Codex") && s.contains("> 1. Sign in with ChatGPT")
    });
    // Codex itself drops about every other arrow key pressed after this screen appears, the
    // same with `podman exec -it` straight into the sandbox (journal/2026-12-04-issue16-agents.md):
    // the key is pressed again until the choice moves.
    choose_between(
        &tmux,
        "Down",
        "> 2. Sign in with Device Code",
        Some("> 3. Sign in another way"),
    );
    tmux.ok(&["resize-window", "-t", "t", "-x", "70", "-y", "30"]);
    tmux.wait_screen("t", "the choice after the resize", |s| {
        s.contains("> 2. Sign in with Device Code") && s.contains("Press enter to continue")
    });
    tmux.key("t", "C-c");
    tmux.wait_screen("t", "Codex's exit", |s| s.contains("cli-rc-1=0"));

    // In a TUI pane: the same screen, keys and resize.
    tmux.ok(&["resize-window", "-t", "t", "-x", "160", "-y", "40"]);
    tmux.type_line(
        "t",
        &host_line(&ws, "tui --profile codex -- codex; echo cli-rc-2=$?"),
    );
    tmux.wait_visible("t", "Codex in the pane", |s| {
        s.contains("Welcome to Codex") && s.contains("│> 1. Sign in with ChatGPT")
    });
    choose_between(
        &tmux,
        "Down",
        "│> 2. Sign in with Device Code",
        Some("│> 3. Sign in another way"),
    );
    tmux.ok(&["resize-window", "-t", "t", "-x", "130", "-y", "36"]);
    tmux.wait_visible("t", "the pane's choice after the resize", |s| {
        s.contains("│> 2. Sign in with Device Code") && s.contains("Press enter to continue")
    });
    // Ctrl-C after the resize: Codex shuts down (its app server first: seconds) with status 0,
    // and the session ends although that app server, a daemon, keeps the terminal open. (Keys
    // right after a resize used to wait in crossterm until the next key, and the session of
    // a daemon-leaving command never ended: journal/2026-12-04-issue16-agents.md.)
    tmux.key("t", "C-c");
    tmux.wait_visible("t", "Codex's exit in the pane", |s| {
        s.contains("1 · exited 0 · Enter closes")
    });
    // The last pane closed quits the TUI.
    tmux.key("t", "Enter");
    tmux.wait_screen("t", "the TUI's exit", |s| s.contains("cli-rc-2=0"));
    ws.wait_torn_down();
}
