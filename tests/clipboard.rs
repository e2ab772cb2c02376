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

fn sha256_hex(path: &std::path::Path) -> String {
    let out = std::process::Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// Issue #16 item 4 (paste): `xclip` and `wl-paste` inside the sandbox (the clipboard shim)
/// give the host clipboard's image only after the developer pressed Ctrl-V in the pane, and
/// refuse before; the host's reader is the test's own command (what `wl-paste` or `xclip`
/// would be on a desktop).
#[test]
fn the_image_paste_shim_gives_the_host_image_only_after_the_paste_key() {
    let dev = Dev::get();
    let ws = dev.workspace("image-paste");
    let dir = ws.path.display().to_string();
    let png = ws.image_file();
    let want = sha256_hex(&png);
    assert_eq!(want.len(), 64, "sha256sum of the test image: {want:?}");
    let tmux = Tmux::start(&dev, "image-paste", "t", &dir, 160, 45);
    let lazaret = lazaret_bin().display().to_string();
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; env LAZARET_CLIPBOARD_IMAGE_COMMAND='cat {}' {lazaret} tui",
            png.display()
        ),
    );
    tmux.wait_screen("t", "the pane's shell", |s| {
        s.contains("1 · session") && s.contains("/workspace#")
    });

    // Nothing pasted: refused, and no bytes.
    tmux.type_line(
        "t",
        "xclip -selection clipboard -t image/png -o | wc -c; echo before-rc-${PIPESTATUS[0]}",
    );
    let s = tmux.wait_visible("t", "the refusal", |s| s.contains("before-rc-"));
    assert!(s.contains("before-rc-1"), "{s}");
    assert!(s.contains("no image was pasted: press ctrl-v"), "{s}");

    // Ctrl-V read by a program in raw mode, then the shim as an agent calls it.
    tmux.type_line(
        "t",
        "stty raw -echo; head -c1 >/dev/null; stty sane; \
         xclip -selection clipboard -t TARGETS -o; \
         xclip -selection clipboard -t image/png -o | sha256sum; \
         wl-paste --list-types; echo after-$((1+1))",
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    tmux.key("t", "C-v");
    let s = tmux.wait_visible("t", "the pasted image's digest", |s| s.contains("after-2"));
    assert!(
        s.contains(&want),
        "the image's sha256 {want} is not shown:\n{s}"
    );
    assert!(s.contains("TARGETS") && s.contains("image/png"), "{s}");

    tmux.quit_tui_ending_sessions("t");
    ws.wait_torn_down();
    let _ = std::fs::remove_file(&png);
}
