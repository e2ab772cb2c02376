//! `App::reattach` over published Domain statuses (no coordinator runs: opening a session
//! fails, which must leave no empty tab behind).

use super::super::app::App;
use super::super::settings::Settings;
use super::super::test_launcher::NoEngine;
use lazaret_client::connection::DomainAddress;
use lazaret_client::target::Target;
use lazaret_protocol::status::DomainStatus;
use lazaret_protocol::{DomainId, SessionId};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn target(workspace: &str) -> Target {
    let domain_id = DomainId::derive("shell", Path::new(workspace));
    Target {
        address: DomainAddress {
            socket: PathBuf::from("/nonexistent/coordinator.sock"),
            profile: "shell".into(),
            domain_id,
            workspace: PathBuf::from(workspace),
        },
        command: vec!["bash".into()],
        sandbox_cwd: PathBuf::from("/workspace"),
        fingerprint: "0".repeat(64),
        terminal: Default::default(),
    }
}

/// A stand-in coordinator process: clients count a Domain only when its pid runs a program
/// with the `__coordinator` argument. Killed when dropped.
struct FakeCoordinator(std::process::Child);

impl FakeCoordinator {
    fn start() -> FakeCoordinator {
        let child = std::process::Command::new("sh")
            // Two commands: a lone one would be exec'd by the shell, and its cmdline replaced.
            .args(["-c", "sleep 60; exit 0", "__coordinator"])
            .spawn()
            .expect("spawning sh");
        // `spawn` returns once the child has switched to its new program, but the kernel sets
        // the new argument area up a moment later: until then its cmdline reads empty (a
        // flake on a busy machine). Wait until a client would count it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !lazaret_client::locate::coordinator_runs(child.id()) {
            assert!(
                std::time::Instant::now() < deadline,
                "the stand-in coordinator never showed its cmdline"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        FakeCoordinator(child)
    }
}

impl Drop for FakeCoordinator {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A running Domain of `workspace` (its "coordinator" is `coordinator`) with `sessions`
/// detached TUI sessions; their IDs.
fn publish(
    root: &Path,
    workspace: &str,
    sessions: usize,
    coordinator: &FakeCoordinator,
) -> Vec<String> {
    let domain_id = DomainId::derive("shell", Path::new(workspace));
    let ids: Vec<String> = (0..sessions)
        .map(|_| SessionId::generate().expect("an id").as_str().to_owned())
        .collect();
    // As a coordinator writes it (`DomainStatus`, JSON); ui has no JSON writer of its own.
    let sessions: Vec<String> = ids
        .iter()
        .map(|id| {
            format!(
                r#"{{"session_id":"{id}","client_cli_id":"cli","command":["bash"],"started_unix_ms":1,"hosted":true,"attached":[],"started_by":"tui","layout_hint":"tui1:ab:0::fc"}}"#
            )
        })
        .collect();
    let status = format!(
        r#"{{"domain_id":"{}","profile":"shell","workspace":"{workspace}","coordinator_pid":{},"coordinator_id":"c","sandbox":"s","sessions":[{}]}}"#,
        domain_id.as_str(),
        coordinator.0.id(),
        sessions.join(",")
    );
    let dir = root.join(domain_id.as_str());
    std::fs::create_dir_all(&dir).expect("domain dir");
    std::fs::write(dir.join("status.json"), status).expect("status.json");
    assert!(DomainStatus::read(&dir.join("status.json")).is_some());
    ids
}

#[test]
fn start_takes_only_this_workspace_and_counts_the_others_in_the_status_line() {
    let root = tempfile::tempdir().expect("a temp dir");
    let coordinator = FakeCoordinator::start();
    let mine = publish(root.path(), "/w/here", 1, &coordinator);
    publish(root.path(), "/w/other", 2, &coordinator);
    publish(root.path(), "/w/third", 1, &coordinator);
    let launcher = Arc::new(NoEngine {
        root: Some(root.path().to_owned()),
    });
    let mut app = App::new(
        Arc::new(target("/w/here")),
        Settings::default(),
        crate::tui::event::channel().0,
        launcher,
        crate::tui::test_launcher::test_handle(),
    );
    assert_eq!(app.reattach(), 0, "no coordinator to attach to");
    let messages: Vec<&str> = app.messages.iter().map(String::as_str).collect();
    assert_eq!(
        messages[0],
        "3 more detached sessions in other workspaces: ctrl-b s"
    );
    // Only this workspace's session was tried; its failure is said and leaves no tab.
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[1].starts_with(&format!("showing session {}: ", mine[0])),
        "{messages:?}"
    );
    assert!(app.tabs.is_empty() && app.panes.is_empty());
}
