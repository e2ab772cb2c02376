//! The TUI's loop: one thread reads the host terminal ([`super::terminal_input`]), runs the
//! links to the coordinators (tasks on its runtime, feeding the panes' emulators), applies every
//! event and renders — a frame at once when frames are rare, at most one
//! per [`lazaret_client::pacer::FRAME`] under a flood ([`Pacer`]), each pane's output coalesced into
//! that frame, so a flood in one pane never delays keys or other panes.

use super::app::App;
use super::draw;
use super::event::{AppEvent, AppReceiver};
use super::frame_writer::{Commit, FrameWriter};
use super::screen::Screen;
use super::settings::Settings;
use anyhow::Context;
use lazaret_client::pacer::Pacer;
use lazaret_client::target::Launcher;
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

type Backend = CrosstermBackend<FrameWriter<std::io::Stdout>>;

/// How often the loop wakes while nothing happens, to redraw what changes with time alone
/// (activity markers `working` → `idle`, a held connection's seconds left).
const ACTIVITY_TICK: std::time::Duration = std::time::Duration::from_secs(1);

/// What `lazaret tui` was asked for.
#[derive(Clone, Debug, Default)]
pub struct TuiOptions {
    pub profile: Option<String>,
    /// What each new pane runs (empty: the profile's command).
    pub command: Vec<String>,
    /// The directory of the developer's settings (`tui.toml`, themes).
    pub config_dir: std::path::PathBuf,
}

/// Runs the control centre until it is quit or detached. `launcher` is the engine's side:
/// it resolves the workspace of the current directory and opens links to coordinators.
pub fn run(launcher: Arc<dyn Launcher>, opts: &TuiOptions) -> anyhow::Result<i32> {
    if !crate::terminal::stdin_is_terminal() {
        anyhow::bail!(
            "lazaret tui needs a terminal (stdin is not one); for scripts use `lazaret run` or \
             `lazaret exec`"
        );
    }
    let settings = Settings::load(&opts.config_dir).map_err(|e| anyhow::anyhow!(e))?;
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let mut target = launcher.resolve(&cwd, opts.profile.as_deref())?;
    if !opts.command.is_empty() {
        target.command = opts.command.clone();
    }
    let plan = Arc::new(target);
    // One thread runs the UI and every link to a coordinator: a key goes from the UI to the
    // socket, and an update from the socket to the screen, without waking another thread.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the TUI's event loop")?;
    let (tx, mut rx) = super::event::channel();
    let screen = Screen::enter(tx.clone())?;
    let (writer, commit) = FrameWriter::new(std::io::stdout());
    let mut terminal = Terminal::new(CrosstermBackend::new(writer)).context("starting the TUI")?;
    let wake = super::terminal_input::Wake::default();
    super::terminal_input::start(rt.handle(), tx.clone(), wake.clone());
    let mut app = App::new(plan, settings, tx.clone(), launcher, rt.handle().clone());
    let full = terminal.size().context("reading the terminal size")?;
    draw::layout_panes(&mut app, full.into());
    // The sessions this TUI had are shown again; a new one starts when there were none.
    // A command given on the command line runs in a tab of its own in any case: in this TUI's
    // Domain, whichever session shown again has the focus.
    if app.reattach() == 0 || !opts.command.is_empty() {
        app.open_own_tab();
    }
    // A lost terminal (SIGHUP) or SIGTERM detaches: the sessions never die with the TUI.
    let detach = tx.clone();
    let resized = tx.clone();
    let signals = crate::terminal::signals::SignalForwarder::start(
        move |sig| {
            if sig == libc::SIGHUP {
                super::terminal_input::drop_terminal();
            }
            let _ = detach.send(AppEvent::Detach);
        },
        // The loop waits on the terminal's input, not on crossterm's signal pipe: the new
        // size is sent as an event (`render` reads the size itself).
        move || {
            let (w, h) = crossterm::terminal::size().unwrap_or((0, 0));
            let _ = resized.send(AppEvent::Input(crossterm::event::Event::Resize(w, h)));
            wake.resized();
        },
    )?;
    let result = rt.block_on(event_loop(&mut app, &mut terminal, &commit, &mut rx));
    drop(signals);
    // Drawing failed (the terminal went away before its SIGHUP arrived, or any other error):
    // only quitting with "end" ends the sessions.
    if result.is_err() || !app.quit {
        app.detach_on_exit = true;
    }
    app.message(if app.detach_on_exit {
        "detaching…".into()
    } else {
        "ending the sessions…".into()
    });
    let _ = render(&mut app, &mut terminal, &commit);
    rt.block_on(app.shut_down(&mut rx));
    drop(terminal);
    drop(screen);
    if app.detach_on_exit {
        eprintln!(
            "lazaret: detached; the sessions keep running (`lazaret ps` lists them, `lazaret tui` \
             shows them again)"
        );
    }
    result.map(|_| 0)
}

fn render(app: &mut App, terminal: &mut Terminal<Backend>, commit: &Commit) -> anyhow::Result<()> {
    let full = terminal.size().context("reading the terminal size")?;
    draw::layout_panes(app, full.into());
    // A coordinator that said goodbye is "stopped" in the Domain panel once it has.
    let stopping = app.recheck_ended_coordinators(lazaret_client::locate::coordinator_runs);
    app.follow_focus();
    app.look_at_focused();
    let now = super::app_activity::now_ms();
    app.send_alerts(now);
    app.drawn_working = app.ticking(now) || stopping;
    for p in app.panes.values() {
        p.take_dirty();
    }
    // One synchronized update per frame (no tearing in terminals that support it), written
    // in one piece.
    let _ = crossterm::queue!(
        terminal.backend_mut(),
        crossterm::terminal::BeginSynchronizedUpdate
    );
    let drawn = terminal.draw(|f| draw::draw(f, app)).map(|_| ());
    if !app.host_bytes.is_empty() {
        let bytes = std::mem::take(&mut app.host_bytes);
        let _ = terminal.backend_mut().write_all(&bytes);
    }
    let _ = crossterm::queue!(
        terminal.backend_mut(),
        crossterm::terminal::EndSynchronizedUpdate
    );
    commit.arm();
    let committed = terminal.backend_mut().flush();
    drawn.context("drawing the TUI")?;
    committed.context("writing to the terminal")?;
    Ok(())
}

async fn event_loop(
    app: &mut App,
    terminal: &mut Terminal<Backend>,
    commit: &Commit,
    rx: &mut AppReceiver,
) -> anyhow::Result<()> {
    let mut pacer = Pacer::new(Instant::now());
    loop {
        if app.needs_render {
            // Under a flood: gather more before drawing (one frame per FRAME, not one per read).
            loop {
                let wait = pacer.wait(Instant::now());
                if wait.is_zero() {
                    break;
                }
                match tokio::time::timeout(wait, rx.recv()).await {
                    Ok(Some(ev)) => app.handle(ev),
                    Err(_) => break,
                    Ok(None) => return Ok(()),
                }
            }
            render(app, terminal, commit)?;
            app.needs_render = false;
            pacer.drew(Instant::now());
        }
        if app.quit {
            return Ok(());
        }
        // Once a second while a session is `working` (its marker turns `idle` with time alone)
        // or a connection is held (its seconds left count down).
        let next = tokio::select! {
            ev = rx.recv() => ev,
            _ = tokio::time::sleep(ACTIVITY_TICK) => {
                // Drawn `working`: one more frame once it turned `idle`.
                app.needs_render = app.drawn_working;
                continue;
            }
        };
        match next {
            Some(ev) => app.handle(ev),
            None => return Ok(()),
        }
        while let Ok(ev) = rx.try_recv() {
            app.handle(ev);
        }
    }
}
