//! Issue #32 "a first launch you can watch" on the real stack: a profile's setup shows its
//! phases and percentages in the `lazaret tui` pane within a second of starting; a failed
//! setup leaves its cause and last lines on the pane's screen and names its log; the log holds
//! the setup's whole output. `lazaret run` without a terminal prints plain lines.
//!
//! The test profiles' setups are small scripts (progress lines, curl-like percentages, sleeps)
//! so that the tests take seconds, not an npm install.

mod support;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use support::tmux::Tmux;
use support::{lazaret_bin, Dev, TestWorkspace};

/// A setup of phases that last ~2 s each; it writes when it started (Unix ms) to the
/// workspace, and leaves a process behind that holds its output open (the launch goes on).
const SLOW: &str = r#"
[profiles.slowsetup]
extends = "shell"

[profiles.slowsetup.setup]
command = ["sh", "-c", '''
echo "$(($(date +%s%N) / 1000000))" > /workspace/.setup-started
echo "lazaret-progress: fetching the thing"
for p in 0 25 50 75 100; do printf '########  %d.0%%\r' "$p" >&2; sleep 0.5; done
echo >&2
echo "lazaret-progress: step two"
sleep 2
echo "lazaret-progress: step three 70 %"
echo "plain-output-of-the-setup"
sleep 2
touch /usr/local/bin/slowsetup-done
sleep 300 &
''']
creates = "/usr/local/bin/slowsetup-done"
"#;

/// A setup that fails after many lines of output, its cause last.
const FAILING: &str = r#"
[profiles.failsetup]
extends = "shell"

[profiles.failsetup.setup]
command = ["sh", "-c", '''
echo "lazaret-progress: downloading the thing"
sleep 1
i=1; while [ $i -le 40 ]; do echo "noise line $i"; i=$((i+1)); done
printf 'evil \033]52;c;aGk=\007 bytes\n'
echo "curl: (60) cause-of-the-failure" >&2
exit 60
''']
creates = "/usr/local/bin/failsetup-done"
"#;

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

fn tui_line(ws: &TestWorkspace, profile: &str) -> String {
    format!(
        "PS1='host$ '; env {} {} tui --profile {profile}",
        ws.env_args().join(" "),
        lazaret_bin().display()
    )
}

fn setup_log(ws: &TestWorkspace) -> String {
    std::fs::read_to_string(ws.domain_root().join("logs/setup.log")).unwrap_or_default()
}

#[test]
fn first_launch_in_a_pane_shows_progress_within_a_second_and_keeps_the_log() {
    let dev = Dev::get();
    let ws = dev
        .workspace("first-launch")
        .with_profile("slowsetup", SLOW);
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "first-launch", "t", &dir, 140, 40);
    let launched = Instant::now();
    tmux.type_line("t", &tui_line(&ws, "slowsetup"));

    // Each phase lasts ~2 s: polling every 50 ms, the pane must show every one, in order.
    let phases = [
        "fetching the thing",
        "fetching the thing 50 %",
        "step two",
        "step three 70 %",
    ];
    let mut seen_at: Vec<Option<u128>> = vec![None; phases.len()];
    let deadline = Instant::now() + Duration::from_secs(90);
    while Instant::now() < deadline && seen_at.iter().any(Option::is_none) {
        let s = tmux.visible("t");
        let t = now_ms();
        for (i, p) in phases.iter().enumerate() {
            let shown = s.lines().any(|l| l.contains(&format!(": {p}")));
            if shown && seen_at[i].is_none() {
                seen_at[i] = Some(t);
            }
        }
        if s.contains("/workspace#") {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let started: u128 = std::fs::read_to_string(ws.path.join(".setup-started"))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or_else(|| panic!("the setup did not run:\n{}", tmux.screen("t")));
    for (p, at) in phases.iter().zip(&seen_at) {
        assert!(
            at.is_some(),
            "the pane never showed {p:?}:\n{}",
            tmux.screen("t")
        );
    }
    let first = seen_at[0].unwrap_or(0);
    let latency = first.saturating_sub(started);
    eprintln!(
        "first progress on the pane {latency} ms after the setup started ({} ms after `lazaret \
         tui` was typed)",
        launched.elapsed().as_millis() - (now_ms() - first)
    );
    assert!(
        latency <= 1000,
        "first progress {latency} ms after the setup started"
    );

    // The setup's end: the pane becomes the profile's shell; the log holds everything.
    let s = tmux.wait_screen("t", "the shell after the setup", |s| {
        s.contains("/workspace#")
    });
    assert!(s.contains("setup of profile \"slowsetup\" done in"), "{s}");
    assert!(
        !s.contains("plain-output-of-the-setup"),
        "plain output stays in the log: {s}"
    );
    let log = setup_log(&ws);
    for want in [
        "lazaret-progress: fetching the thing",
        "75.0%",
        "lazaret-progress: step three 70 %",
        "plain-output-of-the-setup",
    ] {
        assert!(log.contains(want), "{want:?} missing from the log:\n{log}");
    }
    tmux.quit_tui_ending_sessions("t");
}

#[test]
fn a_failed_setup_shows_its_cause_in_the_pane_and_the_log_has_it_all() {
    let dev = Dev::get();
    let ws = dev
        .workspace("failed-setup")
        .with_profile("failsetup", FAILING);
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "failed-setup", "t", &dir, 160, 50);
    tmux.ok(&["set-option", "-s", "set-clipboard", "on"]);
    tmux.type_line("t", &tui_line(&ws, "failsetup"));
    tmux.wait_visible("t", "the setup's first phase", |s| {
        s.contains("downloading the thing (")
    });
    let s = tmux.wait_visible("t", "the failure in the pane", |s| {
        s.contains("cause-of-the-failure") && s.contains("exited")
    });
    let log_path = ws.domain_root().join("logs/setup.log");
    let flat: String = s.lines().map(str::trim_end).collect::<Vec<_>>().join("");
    assert!(flat.contains("failed (exit status 60)"), "{s}");
    assert!(flat.contains("noise line 40"), "the last lines: {s}");
    assert!(flat.contains("setup.log"), "the log is named: {s}");
    // The sandbox's escape sequence is shown as text, never run.
    assert!(flat.contains("\\u{1b}]52"), "{s}");
    let buffers = tmux.cmd().args(["list-buffers"]).output().expect("tmux");
    assert!(buffers.stdout.is_empty(), "OSC 52 reached the terminal");
    let log = setup_log(&ws);
    for want in [
        "noise line 1\n",
        "noise line 40\n",
        "curl: (60) cause-of-the-failure",
    ] {
        assert!(
            log.contains(want),
            "{want:?} missing from {}:\n{log}",
            log_path.display()
        );
    }
    // Enter closes the ended pane; the last one closed quits.
    tmux.key("t", "Enter");
    tmux.wait_screen("t", "the host shell", |s| s.trim_end().ends_with("host$"));

    // `lazaret run` without a terminal: plain lines, the same cause and log.
    let run = ws.run(&["true"]);
    assert_ne!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("downloading the thing"), "{run:?}");
    assert!(run.stderr.contains("cause-of-the-failure"), "{run:?}");
    assert!(
        run.stderr.contains(&log_path.display().to_string()),
        "{run:?}"
    );
    assert!(!run.stderr.contains('\r'), "{run:?}");
}
