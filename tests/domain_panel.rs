//! The TUI's Domain panel shows what the host observes (issue #14: the coordinator gathers it,
//! the front end reads no Domain state): both containers running while the Domain is up, and the
//! Network Sidecar "not running" a few seconds after its process was killed — observed on the
//! containers' host processes, not by asking podman on every tick.

mod support;

use support::tmux::Tmux;
use support::{lazaret_bin, Dev};

#[test]
fn the_domain_panel_sees_the_sidecar_die() {
    let dev = Dev::get();
    let ws = dev.workspace("domain-panel");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "domain-panel", "t", &dir, 160, 45);
    tmux.type_line(
        "t",
        &format!("PS1='host$ '; {} tui", lazaret_bin().display()),
    );
    tmux.wait_screen("t", "the pane's shell", |s| s.contains("/workspace#"));
    let s = tmux.wait_screen("t", "both containers running in the Domain panel", |s| {
        s.contains("sidecar     running") && s.contains("sandbox     running")
    });
    assert!(!s.contains("not running"), "{s}");

    // The sidecar's main process goes away (as if it crashed).
    let sidecar = format!("lazaret-{}-sidecar", ws.domain.as_str());
    let out = dev.sh(&format!("podman kill --signal KILL {sidecar}"));
    assert!(
        out.status.success(),
        "podman kill: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = tmux.wait_screen("t", "the sidecar not running", |s| {
        s.contains("sidecar     not running")
    });
    assert!(s.contains("sandbox     running"), "{s}");

    tmux.quit_tui_ending_sessions("t");
    ws.assert_nothing_left();
}
