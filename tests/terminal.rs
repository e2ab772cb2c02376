//! Interactive `lazaret run` driven through tmux (FR-8, DX-5): typing reaches the sandbox,
//! resizes follow, and the host terminal's mode is restored after exit.

mod support;

use std::time::Duration;
use support::tmux::Tmux;
use support::{lazaret_bin, wait_for, Dev, TestWorkspace};

fn file_text(ws: &TestWorkspace, name: &str) -> String {
    std::fs::read_to_string(ws.path.join(name)).unwrap_or_default()
}

#[test]
fn interactive_session_types_resizes_and_restores_the_terminal() {
    let dev = Dev::get();
    let ws = dev.workspace("tty");
    let tmux = Tmux::start(&dev, "tty", "t", &ws.path.display().to_string(), 100, 30);
    let lazaret = lazaret_bin().display().to_string();
    // Host terminal state before, then the interactive sandbox shell.
    tmux.type_line(
        "t",
        &format!(
        "PS1='host$ '; stty -g > .host-before-g; stty -a | sed 1d > .host-before-a; {lazaret} run"
    ),
    );
    tmux.type_line("t", "PS1='sandbox# '");
    tmux.wait_sandbox_prompt("t");

    tmux.type_line(
        "t",
        "echo typed-$((6*7)) $(cat /proc/version | cut -d' ' -f3)",
    );
    tmux.wait_screen("t", "the command's output", |s| {
        s.contains("typed-42 4.4.0")
    });

    tmux.type_line("t", "stty size > /workspace/.size-1");
    wait_for(Duration::from_secs(10), || {
        (file_text(&ws, ".size-1") == "30 100\n").then_some(())
    })
    .unwrap_or_else(|| panic!("size inside: {:?}", file_text(&ws, ".size-1")));

    tmux.ok(&["resize-window", "-t", "t", "-x", "120", "-y", "40"]);
    wait_for(Duration::from_secs(10), || {
        tmux.type_line("t", "stty size > /workspace/.size-2");
        std::thread::sleep(Duration::from_millis(300));
        (file_text(&ws, ".size-2") == "40 120\n").then_some(())
    })
    .unwrap_or_else(|| panic!("size after resize: {:?}", file_text(&ws, ".size-2")));

    tmux.type_line("t", "exit 3");
    tmux.wait_screen("t", "the host prompt again", |s| {
        s.trim_end().ends_with("host$")
    });
    tmux.type_line(
        "t",
        "echo status=$?; stty -g > .host-after-g; stty -a | sed 1d > .host-after-a",
    );
    tmux.wait_screen("t", "the exit status", |s| s.contains("status=3"));
    wait_for(Duration::from_secs(10), || {
        (!file_text(&ws, ".host-after-a").is_empty()).then_some(())
    });
    assert_eq!(
        file_text(&ws, ".host-before-g"),
        file_text(&ws, ".host-after-g")
    );
    assert_eq!(
        file_text(&ws, ".host-before-a"),
        file_text(&ws, ".host-after-a")
    );
    assert!(!file_text(&ws, ".host-before-a").is_empty());
    ws.assert_nothing_left();
}
