//! `lazaret tui` end to end on the real stack, driven through tmux (issue #7): two panes in one
//! Domain, commands in both, escalations of one pane approved, edited and denied from the
//! panel with keys, results in the right pane; hostile output (OSC 52, title, a cursor query)
//! never reaches the host terminal — checked on tmux and on the bytes the TUI wrote (recorded
//! with `script`). The terminal is restored and nothing of the Domain is left after quitting.

mod support;

use std::time::Duration;
use support::tmux::Tmux;
use support::{assert_traces_conform, lazaret_bin, ps_json, wait_for, Dev, TestWorkspace};

/// Column where the second of two side-by-side panes starts in a 160-column TUI (the side
/// panels take 64 columns, the two panes share 96).
const SECOND_PANE: usize = 48;

/// What a host terminal would have been asked to do by the TUI's output.
#[derive(Default)]
struct HostSide {
    titles: Vec<String>,
    clipboard: Vec<Vec<u8>>,
    /// Device status / attribute queries (answered by a terminal into the TUI's input).
    queries: Vec<String>,
}

impl vt100::Callbacks for HostSide {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.titles
            .push(String::from_utf8_lossy(title).into_owned());
    }
    fn copy_to_clipboard(&mut self, _: &mut vt100::Screen, _ty: &[u8], data: &[u8]) {
        self.clipboard.push(data.to_vec());
    }
    fn unhandled_csi(
        &mut self,
        _: &mut vt100::Screen,
        i1: Option<u8>,
        _i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        if c == 'n' || c == 'c' {
            self.queries.push(format!("{i1:?} {params:?} {c}"));
        }
    }
}

/// The lines of `screen` with `needle` right of column `from`.
fn in_columns(screen: &str, needle: &str, from: usize) -> bool {
    screen.lines().any(|l| {
        let chars: Vec<char> = l.chars().collect();
        chars.len() > from && chars[from..].iter().collect::<String>().contains(needle)
    })
}

fn left_of(screen: &str, needle: &str, to: usize) -> bool {
    screen.lines().any(|l| {
        let chars: Vec<char> = l.chars().collect();
        chars[..to.min(chars.len())]
            .iter()
            .collect::<String>()
            .contains(needle)
    })
}

/// Types `command` in the focused pane, waits until its request `argv` (as the panel shows
/// it) is pending, and opens the escalations panel.
fn request_and_open_panel(tmux: &Tmux<'_>, command: &str, argv: &str) -> String {
    tmux.type_line("t", command);
    let s = tmux.wait_screen("t", "the pending request", |s| {
        s.contains(argv) && s.contains("ESCALATION PENDING")
    });
    tmux.key("t", "C-b");
    tmux.keys("t", "a");
    tmux.wait_screen("t", "the panel focused", |s| {
        s.contains("a approve · e edit")
    });
    // The developer looks before deciding: keys within the panel's guard time (0.3 s) after
    // it took the keyboard are dropped (DX-4).
    std::thread::sleep(std::time::Duration::from_millis(600));
    s
}

#[test]
fn two_panes_escalations_from_the_panel_and_no_injection() {
    let dev = Dev::get();
    let ws = dev.workspace("tui");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "tui", "t", &dir, 160, 45);
    // tmux keeps what applications copy with OSC 52 as a paste buffer: a leak would show.
    tmux.ok(&["set-option", "-s", "set-clipboard", "on"]);
    let typescript = format!("{dir}.typescript");
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; script -q -f -c '{} tui' {typescript}",
            lazaret_bin().display()
        ),
    );
    tmux.wait_screen("t", "the first pane's shell", |s| {
        s.contains("1 · session") && s.contains("/workspace#")
    });
    tmux.type_line("t", "echo one-$((1+1))");
    tmux.wait_screen("t", "pane 1's output", |s| s.contains("one-2"));

    // A second pane beside it, in the same Domain.
    tmux.key("t", "C-b");
    tmux.keys("t", "%");
    tmux.wait_screen("t", "the second pane's session in the Domain panel", |s| {
        s.contains("2 · session") && s.contains("sessions    2")
    });
    tmux.type_line("t", "echo two-$((1+2))");
    let s = tmux.wait_screen("t", "pane 2's output", |s| s.contains("two-3"));
    assert!(in_columns(&s, "two-3", SECOND_PANE), "{s}");
    assert!(!left_of(&s, "two-3", SECOND_PANE), "{s}");

    // Approve from the panel.
    let s = request_and_open_panel(
        &tmux,
        "lazaret-escalate --justification why-this -- pwd; echo rc=$?",
        r#"cmd  ["pwd"]"#,
    );
    assert!(s.contains(r#"why  "why-this""#), "{s}");
    assert!(s.contains("PENDING pane 2"), "{s}");
    tmux.keys("t", "a");
    let s = tmux.wait_screen("t", "the approved command's result", |s| s.contains("rc=0"));
    assert!(in_columns(&s, "rc=0", SECOND_PANE), "{s}");
    assert!(s.contains(r#"approved  pane 2 ["pwd"]"#), "{s}");
    let host_tail: String = dir
        .chars()
        .rev()
        .take(20)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    assert!(
        s.contains(&host_tail),
        "the host path of the workspace: {s}"
    );

    // Edit, then approve the edited command.
    request_and_open_panel(
        &tmux,
        "lazaret-escalate -- echo original; echo rc=$?",
        r#"["echo", "original"]"#,
    );
    tmux.keys("t", "e");
    tmux.wait_screen("t", "the edit line", |s| s.contains("edit> echo original"));
    tmux.key("t", "C-u");
    tmux.keys("t", "echo edited-on-host");
    tmux.key("t", "Enter");
    let s = tmux.wait_screen("t", "the edited command's output", |s| {
        // The edited command's output, alone on a line of pane 2.
        s.contains("││edited-on-host ")
    });
    assert!(s.contains("the developer edited the com"), "{s}");
    assert!(
        s.contains(r#"edited    pane 2 ["echo", "edited-on-host"]"#),
        "{s}"
    );

    // Deny.
    request_and_open_panel(
        &tmux,
        "clear; lazaret-escalate -- echo nope; echo rc=$?",
        r#"["echo", "nope"]"#,
    );
    tmux.keys("t", "d");
    let s = tmux.wait_screen("t", "the denial", |s| s.contains("rc=240"));
    assert!(s.contains(r#"denied    pane 2 ["echo", "nope"]"#), "{s}");
    assert!(!s.contains("\nnope"), "{s}");

    // Hostile output in pane 1: clipboard, title, a cursor-position query.
    tmux.key("t", "C-b");
    tmux.key("t", "Left");
    tmux.type_line(
        "t",
        r"printf '\033]52;c;aGVsbG8=\007\033]0;pwned-title\007\033[6n'; echo; echo done-$((3+4))",
    );
    tmux.wait_screen("t", "the hostile output's end", |s| {
        left_of(s, "done-7", SECOND_PANE)
    });
    assert_ne!(tmux.format("t", "#{pane_title}"), "pwned-title");
    let buffers = tmux
        .cmd()
        .arg("list-buffers")
        .output()
        .expect("list-buffers");
    assert!(
        String::from_utf8_lossy(&buffers.stdout).trim().is_empty(),
        "a clipboard write reached tmux: {}",
        String::from_utf8_lossy(&buffers.stdout)
    );

    // The answer to the cursor query went to the pane's own PTY: bash got it as input. Drop it.
    tmux.key("t", "C-c");

    // A flood of output in pane 1 keeps pane 2 and the keyboard responsive.
    tmux.type_line("t", "yes lazaret-flood-line | head -n 50000000");
    tmux.wait_screen("t", "the flood", |s| s.contains("lazaret-flood-line"));
    tmux.key("t", "C-b");
    tmux.key("t", "Right");
    let typed = std::time::Instant::now();
    tmux.type_line("t", "echo alive-$((5*5))");
    tmux.wait_screen("t", "pane 2 during the flood", |s| {
        in_columns(s, "alive-25", SECOND_PANE)
    });
    let took = typed.elapsed();
    assert!(
        took < std::time::Duration::from_secs(5),
        "pane 2 answered only after {took:?} while pane 1 flooded"
    );
    tmux.key("t", "C-b");
    tmux.key("t", "Left");
    tmux.key("t", "C-c");

    // A pane in another workspace: its own Domain, shown in the panels while focused.
    let other = dev.workspace("tui-other");
    tmux.key("t", "C-b");
    tmux.keys("t", "N");
    tmux.wait_screen("t", "the new-pane prompt", |s| {
        s.contains("new pane in (DIR [PROFILE])")
    });
    tmux.keys("t", &other.path.display().to_string());
    tmux.key("t", "Enter");
    let domain_id: String = other.domain.as_str().chars().collect();
    let s = tmux.wait_screen("t", "the other workspace's pane and Domain", |s| {
        s.contains("tab 2 (1 pane)")
            && s.contains(&format!("Domain {domain_id}"))
            && s.contains("/workspace#")
    });
    assert!(s.contains(&other.path.display().to_string()), "{s}");

    // Quit, ending the TUI's sessions (it asks: end or detach): the host shell is back,
    // nothing of either Domain is left.
    tmux.quit_tui_ending_sessions("t");
    let emitted = std::fs::read(&typescript).expect("the recorded TUI output");
    let _ = std::fs::remove_file(&typescript);
    for (what, bytes) in [
        ("OSC 52", &b"\x1b]52"[..]),
        // (The text `pwned-title` itself is on screen: the shell echoed the command line.)
        ("a title", b"\x1b]0;"),
        ("a title", b"\x1b]2;"),
        ("a cursor query", b"\x1b[6n"),
    ] {
        assert!(
            !emitted.windows(bytes.len()).any(|w| w == bytes),
            "the TUI wrote {what} to the host terminal"
        );
    }
    // The same bytes through a terminal emulator: no title, clipboard or query got through.
    let (rows, cols) = (
        std::num::NonZeroU16::new(45),
        std::num::NonZeroU16::new(160),
    );
    let mut parser = vt100::Parser::new_with_callbacks(
        rows.expect("rows"),
        cols.expect("cols"),
        0,
        HostSide::default(),
    );
    parser.process(&emitted);
    let seen = parser.callbacks();
    assert!(
        seen.titles.iter().all(|t| !t.contains("pwned")),
        "{:?}",
        seen.titles
    );
    assert!(seen.clipboard.is_empty(), "{:?}", seen.clipboard);
    assert!(seen.queries.is_empty(), "{:?}", seen.queries);
    ws.assert_nothing_left();
    other.assert_nothing_left();
    assert_traces_conform(&ws);
}

/// The running Domains of `ws` in `lazaret ps --json` (one entry per coordinator).
fn domains_of(ws: &TestWorkspace) -> Vec<serde_json::Value> {
    ps_json(&ws.dev)
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|d| d["domain_id"] == ws.domain.as_str())
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// Waits until `ws` runs in one Domain whose sessions satisfy `pred`; returns that Domain.
fn wait_domain(
    ws: &TestWorkspace,
    what: &str,
    pred: impl Fn(&[serde_json::Value]) -> bool,
) -> serde_json::Value {
    wait_for(Duration::from_secs(60), || {
        let ds = domains_of(ws);
        let sessions = ds.first()?["sessions"].as_array()?.clone();
        (ds.len() == 1 && pred(&sessions)).then(|| ds[0].clone())
    })
    .unwrap_or_else(|| panic!("waiting for {what}: {:#}", ps_json(&ws.dev)))
}

/// Both sessions hosted by the coordinator, started by a TUI, and detached.
fn detached(sessions: &[serde_json::Value]) -> bool {
    sessions.len() == 2
        && sessions.iter().all(|s| {
            s["hosted"] == true
                && s["started_by"] == "tui"
                && s["attached"].as_array().is_some_and(|a| a.is_empty())
        })
}

/// The text of the pane between columns `from` and `to` (its border excluded), its rows
/// joined without line breaks so that a line the pane wrapped reads as one.
fn pane_text(screen: &str, from: usize, to: usize) -> String {
    screen
        .lines()
        .map(|l| {
            let chars: Vec<char> = l.chars().collect();
            chars[from.min(chars.len())..to.min(chars.len())]
                .iter()
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect()
}

fn pane_title(session: &str) -> String {
    format!("session {}", &session[..8])
}

/// Issue #14's "must show": sessions outlive their terminal. A TUI with two panes detaches
/// (`ctrl-b d`), the sessions keep running detached in one Domain, a new TUI shows them again
/// in the same split (with the earlier command line, then its later output), killing the tmux server of that TUI
/// (SIGHUP) only detaches, `lazaret attach` in another terminal shows the screen and takes
/// input, and `exit` in both sessions tears the Domain down (FR-6) with nothing left.
#[test]
fn sessions_outlive_the_tui_and_its_terminal_and_attach_elsewhere() {
    let dev = Dev::get();
    let ws = dev.workspace("tui-detach");
    let dir = ws.path.display().to_string();
    let lazaret = lazaret_bin().display().to_string();
    // `lazaret tui` shows again only the detached TUI sessions of its own workspace's
    // Domains: those of other workspaces (other tests, other helpers of the test user) stay
    // detached and are only counted in the status line.
    let tmux = Tmux::start(&dev, "tui-detach", "t", &dir, 160, 45);
    tmux.type_line("t", &format!("PS1='host$ '; {lazaret} tui"));
    tmux.wait_screen("t", "the first pane's shell", |s| {
        s.contains("1 · session") && s.contains("/workspace#")
    });
    tmux.key("t", "C-b");
    tmux.keys("t", "%");
    tmux.wait_screen("t", "the second pane's shell", |s| {
        s.contains("2 · session") && s.matches("/workspace#").count() >= 2
    });
    wait_domain(&ws, "two attached sessions", |s| s.len() == 2);
    // Long enough to certainly span the detach, `lazaret ps` and the next TUI's re-attach (a
    // few seconds each), so that the re-attached pane shows the command line before its output
    // (the issue says `sleep 300`; 30 s keeps the test short).
    let command = "sleep 30; echo done-$((0+1))";
    let typed = std::time::Instant::now();
    tmux.type_line("t", command);
    tmux.wait_screen("t", "the command line in pane 2", |s| {
        pane_text(s, SECOND_PANE + 1, SECOND_PANE + 47).contains(command)
    });

    // Detach the whole TUI: the host shell is back, both sessions run on, detached.
    tmux.key("t", "C-b");
    tmux.keys("t", "d");
    tmux.wait_screen("t", "the host shell after the detach", |s| {
        s.contains("lazaret: detached") && s.trim_end().ends_with("host$")
    });
    let domain = wait_domain(&ws, "both sessions detached", detached);
    let coordinator = domain["coordinator_pid"].as_u64().expect("coordinator pid");
    // Each session carries where the TUI had it: tab 0 of that TUI, left and right of a split.
    let hints: Vec<&str> = domain["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["layout_hint"].as_str())
        .collect();
    assert_eq!(hints.len(), 2, "{domain:#}");
    assert!(
        hints
            .iter()
            .any(|h| h.starts_with("tui1:") && h.contains(":0:r0:"))
            && hints
                .iter()
                .any(|h| h.starts_with("tui1:") && h.ends_with(":0:r1:fc")),
        "{hints:?}"
    );
    let ids: Vec<String> = domain["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| s["session_id"].as_str().expect("session id").to_owned())
        .collect();

    // A new TUI shows both again in one tab, side by side as before (the busy one on the
    // right), with the command line at once and `done-1` later.
    tmux.type_line("t", &format!("{lazaret} tui"));
    let s = tmux.wait_screen("t", "the re-attached TUI", |s| {
        s.contains(" tab 1 (2 panes)") && ids.iter().all(|id| s.contains(&pane_title(id)))
    });
    assert!(!s.contains(" tab 2 "), "one tab: {s}");
    let busy = ids
        .iter()
        .find(|id| in_columns(&s, &pane_title(id), SECOND_PANE))
        .cloned()
        .unwrap_or_else(|| panic!("no session on the right: {s}"));
    let s = tmux.wait_screen("t", "the command line in the right pane", |s| {
        pane_text(s, SECOND_PANE + 1, SECOND_PANE + 47).contains(command)
    });
    assert!(
        !s.contains("done-1"),
        "done-1 already after {:?}: {s}",
        typed.elapsed()
    );
    tmux.wait_screen("t", "done-1 in the re-attached pane", |s| {
        pane_text(s, SECOND_PANE + 1, SECOND_PANE + 47).contains("done-1")
    });
    // Both sessions are attached to this TUI now.
    wait_domain(&ws, "both sessions attached to the TUI", |s| {
        s.len() == 2
            && s.iter()
                .all(|s| s["attached"].as_array().is_some_and(|a| !a.is_empty()))
    });
    // The busy pane is the focused one, as it was; zoomed, its session gets the whole main
    // area (94 columns; the coordinator re-wraps its screen). (Widening a session straight from the
    // 46-column split to `lazaret attach`'s 120 columns loses rows of its screen in the
    // coordinator: see journal 2026-12-03-issue14-tuigaps.md.)
    tmux.key("t", "C-b");
    tmux.keys("t", "z");
    tmux.wait_screen("t", "the zoomed busy pane", |s| {
        ids.iter()
            .all(|id| s.contains(&pane_title(id)) == (*id == busy))
            && s.contains("done-1")
    });

    // The terminal of the TUI goes away (SIGHUP): the sessions survive, detached again, and
    // the TUI itself ends (it reads its terminal on its own loop: a read of the dead terminal
    // must not keep it busy forever).
    tmux.ok(&["kill-server"]);
    wait_domain(
        &ws,
        "both sessions detached after the terminal died",
        detached,
    );
    let left = wait_for(Duration::from_secs(15), || {
        support::processes_in(&ws.path, &["tui"])
            .is_empty()
            .then_some(())
    });
    assert!(
        left.is_some(),
        "the TUI still runs after its terminal died: {:?}",
        support::processes_in(&ws.path, &["tui"])
    );

    // A plain terminal attaches: the screen (with `done-1`) at once, and it takes input.
    let plain = Tmux::start(&dev, "tui-attach", "a", &dir, 120, 40);
    plain.type_line("a", &format!("PS1='plain$ '; {lazaret} attach {busy}"));
    plain.wait_screen("a", "the session's screen on attach", |s| {
        s.contains("done-1") && s.contains("/workspace#")
    });
    wait_domain(&ws, "`lazaret attach` attached", |s| {
        s.iter()
            .any(|s| s["session_id"] == busy.as_str() && s["attached"] != serde_json::json!([]))
    });
    plain.type_line("a", "echo typed-$((6*7))");
    plain.wait_screen("a", "the typed command's output", |s| {
        s.contains("typed-42")
    });
    plain.type_line("a", "exit");
    plain.wait_screen("a", "the plain shell after the session's exit", |s| {
        s.trim_end().ends_with("plain$")
    });
    wait_domain(&ws, "one session left", |s| s.len() == 1);
    let other = ids
        .iter()
        .find(|id| **id != busy)
        .expect("the other session");
    plain.type_line("a", &format!("clear; {lazaret} attach {other}"));
    wait_domain(&ws, "the other session attached", |s| {
        s.len() == 1 && s[0]["attached"] != serde_json::json!([])
    });
    // The visible screen (no history): the redrawn session, not the previous one.
    let shown = wait_for(Duration::from_secs(30), || {
        let out = plain
            .cmd()
            .args(["capture-pane", "-p", "-t", "a"])
            .output()
            .ok()?;
        let s = String::from_utf8_lossy(&out.stdout).into_owned();
        (!s.contains("typed-42") && s.contains("/workspace#")).then_some(s)
    });
    assert!(shown.is_some(), "{}", plain.screen("a"));
    plain.type_line("a", "exit");

    // No session is left: the Domain is torn down (FR-6), nothing of it remains.
    let gone = wait_for(Duration::from_secs(60), || {
        let alive = std::path::Path::new(&format!("/proc/{coordinator}")).exists();
        (!alive && domains_of(&ws).is_empty()).then_some(())
    });
    assert!(
        gone.is_some(),
        "the coordinator {coordinator} tore the Domain down and exited: {:#}",
        ps_json(&dev)
    );
    let ps = dev.lazaret().arg("ps").output().expect("lazaret ps");
    assert!(
        !String::from_utf8_lossy(&ps.stdout).contains(ws.domain.as_str()),
        "{}",
        String::from_utf8_lossy(&ps.stdout)
    );
    plain.wait_screen("a", "the plain shell after the last exit", |s| {
        s.trim_end().ends_with("plain$")
    });
    ws.assert_nothing_left();
    let actions = assert_traces_conform(&ws);
    for step in ["Attach", "Detach"] {
        assert!(
            actions.iter().any(|a| a == step),
            "no {step} in the traces: {actions:?}"
        );
    }
}
