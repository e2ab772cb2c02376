//! The mouse wheel over a pane, through the App's input path (issue #32, D6): over a
//! full-screen program without the mouse it goes to the program as cursor keys (see
//! `input::alternate_scroll`; offline panes have no session to write to, so this checks what
//! the developer sees: the program's page, not the shell's history above it).

use super::super::app::App;
use super::super::layout::Dir;
use super::super::pane::Pane;
use super::super::test_frame::{self, offline_app};
use crossterm::event::{KeyModifiers, MouseEvent, MouseEventKind};

/// A pane whose shell printed 40 lines (history), then ran a pager on the alternate screen;
/// `remote`: its history is the coordinator's (a coordinator-owned session, as every TUI pane's
/// session is), which has the shell's lines whatever the emulator shows.
fn app_with_pager(on_alt: bool, remote: bool) -> App {
    let mut app = offline_app();
    let mut p = Pane::offline(1, (10, 40), 100);
    p.remote = remote;
    let mut out = Vec::new();
    for i in 0..40 {
        out.extend_from_slice(format!("shell-line-{i}\r\n").as_bytes());
    }
    if on_alt {
        out.extend_from_slice(b"\x1b[?1049h\x1b[?1h\x1b=\x1b[H\x1b[2Jpage-top\r\ndocument");
    }
    p.emulator().process(&out);
    app.add_pane(p, None::<Dir>);
    app
}

fn wheel(app: &mut App, kind: MouseEventKind) {
    let inner = app
        .pane_rects
        .first()
        .map(|(_, r)| super::super::draw::inner(*r))
        .unwrap_or_default();
    app.mouse(&MouseEvent {
        kind,
        column: inner.x + 2,
        row: inner.y + 2,
        modifiers: KeyModifiers::NONE,
    });
}

#[test]
fn the_wheel_over_a_pager_leaves_its_page_on_screen() {
    let mut app = app_with_pager(true, true);
    test_frame::frame(&mut app, 80, 20);
    wheel(&mut app, MouseEventKind::ScrollUp);
    let f = test_frame::frame(&mut app, 80, 20);
    assert_eq!(app.panes.get(&1).map(|p| p.scroll), Some(0), "{f}");
    assert!(f.contains("page-top"), "{f}");
    assert!(
        !f.contains("shell-line-"),
        "the shell's history over the page: {f}"
    );
}

#[test]
fn the_wheel_on_the_normal_screen_still_scrolls_the_history() {
    let mut app = app_with_pager(false, false);
    test_frame::frame(&mut app, 80, 20);
    wheel(&mut app, MouseEventKind::ScrollUp);
    assert_eq!(app.panes.get(&1).map(|p| p.scroll), Some(3));
    wheel(&mut app, MouseEventKind::ScrollDown);
    assert_eq!(app.panes.get(&1).map(|p| p.scroll), Some(0));
}
