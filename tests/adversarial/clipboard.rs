//! Adversarial scenarios: the image-paste shim (issue #16 item 4). The agent wants what the
//! developer copied — a screenshot of a password manager, a photo — without the developer
//! pasting it into this session. It tries: asking with no paste key at all; asking right
//! after the developer pressed Ctrl-V in *another* session of the same Domain; pressing the
//! key itself — printing `\x16` as output, and pushing it into its own terminal's input with
//! `TIOCSTI`; and, after a real paste key, taking whatever the clipboard holds when it is not
//! an image (text, a script). Driven through `lazaret tui` panes in a private tmux server,
//! the host clipboard being the test's own reader command over a file it controls.

use crate::support::tmux::Tmux;
use crate::support::{lazaret_bin, Dev};
use std::time::Duration;

/// Runs `xclip` for an image in the focused pane after `prefix` and waits for its status
/// (`tag-rc-N`); returns the screen.
fn ask(tmux: &Tmux<'_>, prefix: &str, tag: &str) -> String {
    tmux.type_line(
        "t",
        &format!(
            "{prefix}xclip -selection clipboard -t image/png -o | wc -c; \
             echo {tag}-rc-${{PIPESTATUS[0]}}"
        ),
    );
    tmux.wait_visible("t", tag, |s| status_shown(s, tag))
}

/// Whether `tag-rc-N` is shown (not only the command line that prints it).
fn status_shown(screen: &str, tag: &str) -> bool {
    (0..10).any(|n| screen.contains(&format!("{tag}-rc-{n}")))
}

#[test]
fn the_clipboard_image_goes_only_to_the_session_the_developer_pasted_into_and_only_if_an_image() {
    let dev = Dev::get();
    let ws = dev.workspace("adv-clipboard");
    let dir = ws.path.display().to_string();
    // The "clipboard" holds a script, not an image.
    let clip = std::path::PathBuf::from(format!("{dir}.clip"));
    std::fs::write(&clip, "#!/bin/sh\necho stolen\n").expect("writing the clipboard file");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&clip, std::fs::Permissions::from_mode(0o644))
            .expect("chmod the clipboard file");
    }
    let tmux = Tmux::start(&dev, "adv-clipboard", "t", &dir, 200, 50);
    let lazaret = lazaret_bin().display().to_string();
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; env LAZARET_CLIPBOARD_IMAGE_COMMAND='cat {}' {lazaret} tui",
            clip.display()
        ),
    );
    tmux.wait_screen("t", "pane 1's shell", |s| {
        s.contains("1 · session") && s.contains("/workspace#")
    });

    // No key: refused.
    let s = ask(&tmux, "", "nokey");
    assert!(
        s.contains("nokey-rc-1") && s.contains("no image was pasted"),
        "{s}"
    );

    // The key "pressed" by the sandbox: as output, and into its own input queue (TIOCSTI,
    // refused by the kernel or gVisor, or a byte that never passes the coordinator's input).
    let s = ask(&tmux, "printf '\\026'; ", "printed");
    assert!(s.contains("printed-rc-1"), "{s}");
    let sti = "python3 -c 'import fcntl,termios\ntry: fcntl.ioctl(0, termios.TIOCSTI, b\"\\x16\")\nexcept OSError as e: print(\"sti\", e)'; read -t 1 -r _; ";
    let s = ask(&tmux, sti, "sti");
    assert!(s.contains("sti-rc-1"), "TIOCSTI armed the paste: {s}");

    // A second pane: another session of the same Domain.
    tmux.key("t", "C-b");
    tmux.keys("t", "%");
    tmux.wait_screen("t", "pane 2's shell", |s| {
        s.contains("2 · session") && s.matches("/workspace#").count() >= 2
    });
    // Pane 2 waits, then asks; meanwhile the developer presses Ctrl-V in pane 1.
    tmux.type_line(
        "t",
        "sleep 4; xclip -selection clipboard -t image/png -o | wc -c; echo other-rc-${PIPESTATUS[0]}",
    );
    tmux.key("t", "C-b");
    tmux.keys("t", "o");
    std::thread::sleep(Duration::from_millis(500));
    // (bash quotes the key after Ctrl-V: the first Ctrl-C is inserted, the second clears
    // the line.)
    tmux.key("t", "C-v");
    tmux.key("t", "C-c");
    tmux.key("t", "C-c");
    let s = tmux.wait_visible("t", "pane 2's refusal", |s| status_shown(s, "other"));
    assert!(
        s.contains("other-rc-1"),
        "another session's paste key gave this one the clipboard: {s}"
    );

    // Pane 1, after its own key: the clipboard holds no image, so nothing is passed.
    tmux.type_line(
        "t",
        "stty raw -echo; head -c1 >/dev/null; stty sane; \
         xclip -selection clipboard -t image/png -o; echo script-rc-$?",
    );
    std::thread::sleep(Duration::from_millis(500));
    tmux.key("t", "C-v");
    let s = tmux.wait_visible("t", "the refusal of a script", |s| {
        status_shown(s, "script")
    });
    assert!(
        s.contains("script-rc-1") && s.contains("no PNG or JPEG"),
        "{s}"
    );
    assert!(
        !s.contains("echo stolen\n") && !s.contains("#!/bin/sh"),
        "{s}"
    );

    tmux.quit_tui_ending_sessions("t");
    ws.wait_torn_down();
    let _ = std::fs::remove_file(&clip);
}
