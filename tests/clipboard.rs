//! Issue #16 item 4 (copy): text selected in a `lazaret tui` pane reaches the host clipboard —
//! tmux's paste buffers stand for it (`set-clipboard on` keeps what an application sets with
//! OSC 52) — by copy mode and by a mouse drag, while the sandbox's own OSC 52 does not.
//! Real stack: the pane's session runs in the gVisor sandbox.

mod support;

use support::tmux::Tmux;
use support::{lazaret_bin, Dev};

/// Every paste buffer's text, newest first.
fn buffers(tmux: &Tmux<'_>) -> Vec<String> {
    let names = tmux
        .cmd()
        .args(["list-buffers", "-F", "#{buffer_name}"])
        .output()
        .expect("list-buffers");
    String::from_utf8_lossy(&names.stdout)
        .lines()
        .map(|name| {
            let out = tmux
                .cmd()
                .args(["show-buffer", "-b", name])
                .output()
                .expect("show-buffer");
            String::from_utf8_lossy(&out.stdout).into_owned()
        })
        .collect()
}

/// Row and column (0-based, of the host terminal) where `needle` is shown on a line that does
/// not also hold `not` (the typed command line).
fn position(screen: &str, needle: &str, not: &str) -> (usize, usize) {
    screen
        .lines()
        .enumerate()
        .find_map(|(row, line)| {
            let at = line.find(needle).filter(|_| !line.contains(not))?;
            Some((row, line[..at].chars().count()))
        })
        .unwrap_or_else(|| panic!("{needle:?} not shown:\n{screen}"))
}

/// An SGR mouse report as the host terminal would send it (1-based cell; `end`: `m`).
fn sgr(button: u8, (row, col): (usize, usize), end: char) -> String {
    format!("\x1b[<{button};{};{}{end}", col + 1, row + 1)
}

#[test]
fn text_selected_in_a_pane_reaches_the_host_clipboard_and_the_sandboxs_osc52_does_not() {
    let dev = Dev::get();
    let ws = dev.workspace("clipboard");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "clipboard", "t", &dir, 160, 45);
    tmux.ok(&["set-option", "-s", "set-clipboard", "on"]);
    let lazaret = lazaret_bin().display().to_string();
    tmux.type_line("t", &format!("PS1='host$ '; {lazaret} tui"));
    tmux.wait_screen("t", "the pane's shell", |s| {
        s.contains("1 · session") && s.contains("/workspace#")
    });

    // The sandbox sets the clipboard itself: nothing arrives.
    tmux.type_line(
        "t",
        "printf '\\033]52;c;%s\\007' $(printf sandbox-wrote | base64); echo osc-$((5*2))",
    );
    tmux.wait_visible("t", "the sandbox's OSC 52 printed", |s| {
        s.contains("osc-10")
    });

    // Copy mode: up to the output line, from its start, ten characters.
    tmux.type_line("t", "printf 'copy-me-%s\\n' 42");
    tmux.wait_visible("t", "the line to copy", |s| {
        s.lines()
            .any(|l| l.contains("copy-me-42") && !l.contains("printf"))
    });
    tmux.key("t", "C-b");
    tmux.keys("t", "y");
    tmux.wait_visible("t", "copy mode", |s| {
        s.contains("copy: v marks, y copies, Esc leaves")
    });
    tmux.keys("t", "k0v");
    tmux.keys("t", &"l".repeat(9));
    tmux.keys("t", "y");
    tmux.wait_visible("t", "the copy's message", |s| {
        s.contains("copied 10 characters to the host clipboard")
    });
    support::wait_for(std::time::Duration::from_secs(10), || {
        buffers(&tmux)
            .contains(&"copy-me-42".to_owned())
            .then_some(())
    })
    .unwrap_or_else(|| panic!("no copy-me-42 in {:?}", buffers(&tmux)));
    // Keys reach the program again after the copy.
    tmux.type_line("t", "echo after-$((3+4))");
    tmux.wait_visible("t", "a command after copy mode", |s| s.contains("after-7"));

    // A mouse drag over the output, released: copied.
    tmux.type_line("t", "printf 'drag-me-%s\\n' 9");
    let s = tmux.wait_visible("t", "the line to drag over", |s| {
        s.lines()
            .any(|l| l.contains("drag-me-9") && !l.contains("printf"))
    });
    let (row, col) = position(&s, "drag-me-9", "printf");
    let mut drag = sgr(0, (row, col), 'M');
    drag.push_str(&sgr(32, (row, col + 4), 'M'));
    drag.push_str(&sgr(32, (row, col + 8), 'M'));
    drag.push_str(&sgr(0, (row, col + 8), 'm'));
    tmux.keys("t", &drag);
    support::wait_for(std::time::Duration::from_secs(10), || {
        buffers(&tmux)
            .contains(&"drag-me-9".to_owned())
            .then_some(())
    })
    .unwrap_or_else(|| panic!("no drag-me-9 in {:?}", buffers(&tmux)));

    let all = buffers(&tmux);
    assert!(
        !all.iter().any(|b| b.contains("sandbox-wrote")),
        "the sandbox's OSC 52 reached the host clipboard: {all:?}"
    );
    tmux.quit_tui_ending_sessions("t");
    ws.wait_torn_down();
}
