//! Test helpers shared by the TUI's unit tests: an app over a workspace that is never run, and
//! one drawn frame as text.

use super::app::App;
use super::draw;
use super::settings::Settings;
use super::test_launcher::NoEngine;
use lazaret_client::connection::DomainAddress;
use lazaret_client::target::Target;
use lazaret_protocol::DomainId;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use ratatui::Terminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An app of the `shell` profile's Domain of a fake workspace, with no panes.
pub fn offline_app() -> App {
    let domain_id = DomainId::derive("shell", Path::new("/home/dev/proj"));
    let plan = Arc::new(Target {
        address: DomainAddress {
            socket: PathBuf::from("/nonexistent/coordinator.sock"),
            profile: "shell".into(),
            domain_id,
            workspace: PathBuf::from("/home/dev/proj"),
        },
        command: vec!["bash".into()],
        sandbox_cwd: PathBuf::from("/workspace"),
        fingerprint: "0".repeat(64),
        terminal: Default::default(),
    });
    App::new(
        plan,
        Settings::default(),
        super::event::channel().0,
        Arc::new(NoEngine { root: None }),
        super::test_launcher::test_handle(),
    )
}

/// One frame of `app` on a `w`×`h` screen without the side panels, as text.
pub fn frame(app: &mut App, w: u16, h: u16) -> String {
    app.panels = false;
    frame_as_is(app, w, h)
}

/// One frame of `app` on a `w`×`h` screen, side panels as the app has them, as text.
pub fn frame_as_is(app: &mut App, w: u16, h: u16) -> String {
    draw::layout_panes(app, Rect::new(0, 0, w, h));
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap_or_else(|e| panic!("{e}"));
    t.draw(|f| draw::draw(f, app))
        .unwrap_or_else(|e| panic!("{e}"));
    let buf = t.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol().to_owned())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
