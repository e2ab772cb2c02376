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
    publish_of(
        root,
        workspace,
        "shell",
        r#"["bash"]"#,
        sessions,
        coordinator,
    )
}

/// As [`publish`], in the Domain of `profile`, the sessions running `command` (a JSON array).
fn publish_of(
    root: &Path,
    workspace: &str,
    profile: &str,
    command: &str,
    sessions: usize,
    coordinator: &FakeCoordinator,
) -> Vec<String> {
    let domain_id = DomainId::derive(profile, Path::new(workspace));
    let ids: Vec<String> = (0..sessions)
        .map(|_| SessionId::generate().expect("an id").as_str().to_owned())
        .collect();
    // As a coordinator writes it (`DomainStatus`, JSON); ui has no JSON writer of its own.
    let sessions: Vec<String> = ids
        .iter()
        .map(|id| {
            format!(
                r#"{{"session_id":"{id}","client_cli_id":"cli","command":{command},"started_unix_ms":1,"hosted":true,"attached":[],"started_by":"tui","layout_hint":"tui1:ab:0::fc"}}"#
            )
        })
        .collect();
    let status = format!(
        r#"{{"domain_id":"{}","profile":"{profile}","workspace":"{workspace}","coordinator_pid":{},"coordinator_id":"c","sandbox":"s","sessions":[{}]}}"#,
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

/// Resolves any workspace and profile to a Domain whose profile command is
/// `<profile>-profile-command`; opens no link.
struct Resolves {
    root: PathBuf,
}

impl lazaret_client::target::Launcher for Resolves {
    fn resolve(&self, dir: &Path, profile: Option<&str>) -> anyhow::Result<Target> {
        let profile = profile.unwrap_or("shell");
        let mut t = target(&dir.display().to_string());
        t.address.profile = profile.into();
        t.address.domain_id = DomainId::derive(profile, dir);
        t.command = vec![format!("{profile}-profile-command")];
        Ok(t)
    }
    fn open_link(
        &self,
        _: &tokio::runtime::Handle,
        _: &Target,
        _: &str,
        _: lazaret_client::target::LinkEvents,
    ) -> anyhow::Result<lazaret_client::link::DomainLink> {
        anyhow::bail!("no coordinator in this test")
    }
    fn wait_if_last(&self, _: &Target, _: &[String]) {}
    fn runtime_root(&self) -> anyhow::Result<PathBuf> {
        Ok(self.root.clone())
    }
}

/// The pane showing `session`, focused.
fn focus_session(app: &mut App, session: &str) {
    let pane = app
        .panes
        .values()
        .find(|p| {
            matches!(&p.status, super::super::pane::PaneStatus::Running { session: s } if s == session)
        })
        .map(|p| p.id)
        .unwrap_or_else(|| panic!("no pane shows {session}"));
    let tab = app
        .tabs
        .iter()
        .position(|t| t.panes().contains(&pane))
        .unwrap_or_else(|| panic!("pane {pane} is in no tab"));
    app.tab = tab;
    app.tabs[tab].focus = pane;
}

/// The command and Domain of the pane that has the focus.
fn focused_plan(app: &App) -> (Vec<String>, String) {
    let plan = app.current_plan();
    (plan.command.clone(), plan.address.profile.clone())
}

#[test]
fn new_tabs_and_splits_next_to_sessions_shown_again_run_what_this_tui_was_asked() {
    // Issue #32, D3: `lazaret tui -- htop -d 5` started again next to detached sessions.
    let root = tempfile::tempdir().expect("a temp dir");
    let coordinator = FakeCoordinator::start();
    // A shell session of this TUI's Domain (started by a plain `lazaret tui`), and a Claude
    // Code session of the same workspace's claude Domain.
    let shell = publish(root.path(), "/w/here", 1, &coordinator);
    let claude = publish_of(
        root.path(),
        "/w/here",
        "claude",
        r#"["claude","--resume"]"#,
        1,
        &coordinator,
    );
    let mut plan = target("/w/here");
    plan.command = vec!["htop".into(), "-d".into(), "5".into()];
    let mut app = App::new(
        Arc::new(plan),
        Settings::default(),
        crate::tui::event::channel().0,
        Arc::new(Resolves {
            root: root.path().to_owned(),
        }),
        crate::tui::test_launcher::test_handle(),
    );
    assert_eq!(app.reattach(), 2);
    let htop = vec!["htop".to_string(), "-d".into(), "5".into()];

    // The tab for CMD runs CMD in this TUI's Domain, whichever session has the focus.
    focus_session(&mut app, &claude[0]);
    app.open_own_tab();
    assert_eq!(focused_plan(&app), (htop.clone(), "shell".into()));

    // A split of a session shown again in this TUI's Domain runs CMD too.
    focus_session(&mut app, &shell[0]);
    app.act(super::super::keymap::Action::SplitRight);
    assert_eq!(focused_plan(&app), (htop.clone(), "shell".into()));
    // And so does a new tab from there.
    focus_session(&mut app, &shell[0]);
    app.act(super::super::keymap::Action::NewTab);
    assert_eq!(focused_plan(&app), (htop, "shell".into()));

    // A split of the claude Domain's session (this TUI was asked nothing about that Domain)
    // runs what that session runs.
    focus_session(&mut app, &claude[0]);
    app.act(super::super::keymap::Action::SplitDown);
    assert_eq!(
        focused_plan(&app),
        (
            vec!["claude".to_string(), "--resume".into()],
            "claude".into()
        )
    );
}
