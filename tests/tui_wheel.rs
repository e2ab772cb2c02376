//! Issue #32, D6, on the real stack: the mouse wheel over `less` in a `lazaret tui` pane
//! scrolls the document (tmux's `alternate-scroll`: cursor keys to a full-screen program that
//! does not use the mouse), instead of showing the shell's earlier output above the page. The
//! wheel is what tmux's own terminal would send the TUI: SGR mouse reports (the TUI asks for
//! them), typed into the pane.

mod support;

use support::tmux::Tmux;
use support::{lazaret_bin, Dev};

/// An SGR mouse report as the host terminal would send it (0-based cell).
fn sgr(button: u8, (row, col): (usize, usize)) -> String {
    format!("\x1b[<{button};{};{}M", col + 1, row + 1)
}

/// The first `num-NNN` line of the document the screen shows.
fn top_line(screen: &str) -> Option<String> {
    screen.lines().find_map(|l| {
        let at = l.find("num-")?;
        Some(l[at..at + 7].to_owned())
    })
}

/// The lowest `shell-line-N` the screen shows.
fn first_shell_line(screen: &str) -> Option<u32> {
    screen
        .lines()
        .filter_map(|l| {
            let at = l.find("shell-line-")? + "shell-line-".len();
            let digits: String = l[at..].chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .min()
}

#[test]
fn the_wheel_over_less_in_a_pane_scrolls_the_document() {
    let dev = Dev::get();
    let ws = dev.workspace("wheel");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "wheel", "t", &dir, 120, 40);
    let lazaret = lazaret_bin().display().to_string();
    tmux.type_line("t", &format!("PS1='host$ '; {lazaret} tui"));
    tmux.wait_screen("t", "the pane's shell", |s| {
        s.contains("1 · session") && s.contains("/workspace#")
    });
    tmux.type_line(
        "t",
        "for i in $(seq 1 60); do echo shell-line-$i; done; seq -f 'num-%03g' 1 300 > /tmp/doc; \
         less /tmp/doc",
    );
    let s = tmux.wait_visible("t", "less", |s| top_line(s).as_deref() == Some("num-001"));
    assert!(!s.contains("shell-line-"), "{s}");
    let row = s
        .lines()
        .position(|l| l.contains("num-005"))
        .unwrap_or_else(|| panic!("{s}"));
    let col = s.lines().nth(row).and_then(|l| l.find("num-")).unwrap_or(0);

    // One notch down: three lines on.
    tmux.keys("t", &sgr(65, (row, col)));
    let s = tmux.wait_visible("t", "the document scrolled", |s| {
        top_line(s).as_deref() == Some("num-004")
    });
    assert!(!s.contains("shell-line-"), "{s}");
    // Two notches down, one up: three lines on from there.
    tmux.keys(
        "t",
        &format!("{}{}", sgr(65, (row, col)), sgr(65, (row, col))),
    );
    tmux.wait_visible("t", "two notches down", |s| {
        top_line(s).as_deref() == Some("num-010")
    });
    tmux.keys("t", &sgr(64, (row, col)));
    let s = tmux.wait_visible("t", "one notch up", |s| {
        top_line(s).as_deref() == Some("num-007")
    });
    assert!(
        !s.contains("shell-line-"),
        "the shell's history over the page: {s}"
    );

    // Out of less, on the normal screen, the wheel scrolls the pane's history again.
    tmux.keys("t", "q");
    tmux.type_line("t", "echo back-$((6*7))");
    let s = tmux.wait_visible("t", "the shell", |s| s.contains("back-42"));
    let before = first_shell_line(&s).unwrap_or(61);
    for _ in 0..4 {
        tmux.keys("t", &sgr(64, (row, col)));
    }
    tmux.wait_visible("t", "the history", |s| {
        first_shell_line(s).is_some_and(|n| n < before)
    });
    tmux.key("t", "Escape");
    tmux.quit_tui_ending_sessions("t");
    ws.wait_torn_down();
}
