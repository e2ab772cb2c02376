//! A pane: an attachment to one coordinator-owned session (issue #14) and the emulator its
//! output is parsed into. The session's process and terminal live in the Session Coordinator:
//! closing the TUI, or losing its terminal, only detaches. The link's task (on the TUI's event
//! loop) parses the coordinator's screen updates into the emulator and marks the pane dirty; the
//! loop draws from the emulator and sends input through the link.

use super::emulator::{new_emulator, Emulator};
use super::event::{AppEvent, AppSender};
use super::layout::PaneId;
use super::links::Links;
use lazaret_client::link::{DomainLink, SessionSink};
use lazaret_client::target::Target;
use lazaret_protocol::SessionId;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PaneStatus {
    Starting,
    Running { session: String },
    Exited(i32),
    Failed(String),
}

/// What the pane's link and the UI share.
pub struct PaneShared {
    emulator: Mutex<Box<dyn Emulator>>,
    /// The session this pane is attached to, and its link.
    target: Mutex<Option<(Arc<DomainLink>, SessionId)>>,
    /// Set when there is something new to draw; cleared by the UI when drawn.
    dirty: AtomicBool,
    /// The pane's own size (its place in the layout).
    size: Mutex<(u16, u16)>,
    events: Mutex<Option<AppSender>>,
}

pub struct Pane {
    pub id: PaneId,
    /// The Domain and command of the pane's session (none for an offline pane).
    pub plan: Option<Arc<Target>>,
    pub status: PaneStatus,
    /// Lines scrolled back into the history (0: following the output).
    pub scroll: usize,
    /// Attached to a coordinator-owned session: its history is the coordinator's (the pane's
    /// emulator keeps none), fetched while scrolled back.
    pub remote: bool,
    /// The history lines last received for this pane's scroll window.
    pub history: Option<super::pane_history::RemoteHistory>,
    /// The window last asked for (not asked again until the scroll moves).
    requested: Option<(u32, u32)>,
    /// How far back the pane may scroll (`scrollback` of `tui.toml`); the coordinator keeps
    /// at most its own history of the session (5,000 lines).
    pub scroll_limit: usize,
    /// A session of this TUI (started here, or by a TUI and shown again): quitting with "end"
    /// ends it. Other sessions opened from the picker are only detached.
    pub owned: bool,
    /// The developer closed the pane while its session ran: when the session has ended the
    /// pane leaves the layout instead of keeping its final screen.
    pub closing: bool,
    shared: Arc<PaneShared>,
}

fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Output of the session: parsed into the pane's emulator. The emulator's answers to terminal
/// queries are dropped: the coordinator's copy of the terminal answers them (once).
struct Sink(Arc<PaneShared>);

impl SessionSink for Sink {
    fn output(&self, bytes: &[u8]) {
        {
            let mut emu = lock(&self.0.emulator);
            emu.process(bytes);
            let _ = emu.take_replies();
        }
        if !self.0.dirty.swap(true, Ordering::SeqCst) {
            if let Some(tx) = lock(&self.0.events).as_ref() {
                let _ = tx.send(AppEvent::Output);
            }
        }
    }
}

impl Pane {
    /// Starts a new session of `plan`'s Domain in a new pane of `rows`×`cols`; the Domain's link
    /// is opened in the background. [`AppEvent::Link`] `Started` (token = pane id) follows.
    pub fn start(
        id: PaneId,
        plan: Arc<Target>,
        (rows, cols): (u16, u16),
        scrollback: usize,
        events: AppSender,
        links: Arc<Links>,
    ) -> Pane {
        // The coordinator keeps the session's history; the pane's emulator keeps none.
        let shared = Arc::new(PaneShared::new((rows, cols), 0, Some(events.clone())));
        let sink: Arc<dyn SessionSink> = Arc::new(Sink(shared.clone()));
        let for_thread = plan.clone();
        std::thread::spawn(move || match links.get_or_open(&for_thread) {
            Ok(link) => link.start(
                u64::from(id),
                for_thread.command.clone(),
                for_thread.sandbox_cwd.clone(),
                (rows.max(1), cols.max(1)),
                for_thread.fingerprint.clone(),
                sink,
            ),
            Err(e) => {
                let _ = events.send(AppEvent::Unreachable {
                    domain: for_thread.domain_id(),
                    reason: format!("{e:#}"),
                });
                let _ = events.send(AppEvent::Ended {
                    pane: id,
                    result: Err(format!("{e:#}")),
                });
            }
        });
        Pane {
            id,
            plan: Some(plan),
            status: PaneStatus::Starting,
            scroll: 0,
            remote: true,
            history: None,
            requested: None,
            scroll_limit: scrollback,
            owned: true,
            closing: false,
            shared,
        }
    }

    /// A pane attached to a running session (re-attach, session picker). When the Domain's
    /// link is not open yet, it is opened in the background (as for [`Pane::start`]); a
    /// failure ends the pane ([`AppEvent::Ended`]).
    pub fn attach(
        id: PaneId,
        plan: Arc<Target>,
        links: Arc<Links>,
        session: SessionId,
        (rows, cols): (u16, u16),
        scrollback: usize,
        events: AppSender,
    ) -> Pane {
        let shared = Arc::new(PaneShared::new((rows, cols), 0, Some(events.clone())));
        let sink: Arc<dyn SessionSink> = Arc::new(Sink(shared.clone()));
        let status = PaneStatus::Running {
            session: session.as_str().to_owned(),
        };
        let to = shared.clone();
        let attach = move |link: Arc<DomainLink>| {
            link.attach(session.clone(), (rows.max(1), cols.max(1)), 0, sink);
            *lock(&to.target) = Some((link, session));
        };
        match links.get(&plan.domain_id()) {
            Some(link) => attach(link),
            None => {
                let for_thread = plan.clone();
                std::thread::spawn(move || match links.get_or_open(&for_thread) {
                    Ok(link) => attach(link),
                    Err(e) => {
                        let _ = events.send(AppEvent::Unreachable {
                            domain: for_thread.domain_id(),
                            reason: format!("{e:#}"),
                        });
                        let _ = events.send(AppEvent::Ended {
                            pane: id,
                            result: Err(format!("{e:#}")),
                        });
                    }
                });
            }
        }
        Pane {
            id,
            plan: Some(plan),
            status,
            scroll: 0,
            remote: true,
            history: None,
            requested: None,
            scroll_limit: scrollback,
            owned: false,
            closing: false,
            shared,
        }
    }

    /// A pane with no session behind it: its emulator is fed by the caller (snapshot tests of
    /// the UI, benchmarks of the drawing path).
    pub fn offline(id: PaneId, (rows, cols): (u16, u16), scrollback: usize) -> Pane {
        Pane {
            id,
            plan: None,
            status: PaneStatus::Running {
                session: "0123456789abcdef".into(),
            },
            scroll: 0,
            remote: false,
            history: None,
            requested: None,
            scroll_limit: scrollback,
            owned: false,
            closing: false,
            shared: Arc::new(PaneShared::new((rows, cols), scrollback, None)),
        }
    }

    /// The session started: the pane is attached to it.
    pub fn started(&mut self, link: Arc<DomainLink>, session: SessionId) {
        self.status = PaneStatus::Running {
            session: session.as_str().to_owned(),
        };
        *lock(&self.shared.target) = Some((link, session));
    }

    /// How far the pane can scroll back: the coordinator's history once known (else one more
    /// page, to ask), or the emulator's own for an offline pane; never past
    /// [`Pane::scroll_limit`].
    pub fn history_max(&self, page: usize) -> usize {
        let kept = if self.remote && self.has_ended() {
            // The history was the session's, in its coordinator.
            0
        } else if !self.remote {
            self.emulator().history_len()
        } else {
            match &self.history {
                Some(h) => h.total as usize,
                None => self.scroll + page,
            }
        };
        kept.min(self.scroll_limit)
    }

    /// Asks the coordinator for the history lines the pane shows at its scroll position.
    pub fn want_history(&mut self) {
        if !self.remote || self.scroll == 0 {
            self.requested = None;
            return;
        }
        let rows = lock(&self.shared.size).0;
        let window = super::pane_history::window(self.scroll, rows);
        let have = self
            .history
            .as_ref()
            .is_some_and(|h| h.from_end == window.0 && h.lines.len() as u32 >= window.1);
        if have || self.requested == Some(window) {
            return;
        }
        if let Some((link, session)) = lock(&self.shared.target).as_ref() {
            link.history(session, window.0, window.1);
            self.requested = Some(window);
        }
    }

    /// The session this pane shows.
    pub fn session(&self) -> Option<SessionId> {
        lock(&self.shared.target).as_ref().map(|(_, s)| s.clone())
    }

    /// Sends input to the pane's session (dropped while it is not attached). The session takes
    /// this pane's size again if another client had changed it.
    pub fn write(&self, bytes: &[u8]) {
        let size = *lock(&self.shared.size);
        {
            let mut emu = lock(&self.shared.emulator);
            if emu.size() != size {
                emu.resize(size.0, size.1);
            }
        }
        if let Some((link, session)) = lock(&self.shared.target).as_ref() {
            link.input(session, bytes);
        }
    }

    /// Resizes the pane; its session follows (the program gets SIGWINCH).
    pub fn resize(&self, rows: u16, cols: u16) {
        let (rows, cols) = (rows.max(1), cols.max(1));
        {
            let mut size = lock(&self.shared.size);
            if *size == (rows, cols) {
                return;
            }
            *size = (rows, cols);
        }
        lock(&self.shared.emulator).resize(rows, cols);
        if let Some((link, session)) = lock(&self.shared.target).as_ref() {
            link.resize(session, (rows, cols));
        }
    }

    /// Another client made the session this size: shown at that size until this pane is used.
    pub fn follow_session_size(&self, rows: u16, cols: u16) {
        lock(&self.shared.emulator).resize(rows.max(1), cols.max(1));
        self.shared.dirty.store(true, Ordering::SeqCst);
    }

    /// The emulator, for drawing and input encoding (hold briefly).
    pub fn emulator(&self) -> MutexGuard<'_, Box<dyn Emulator>> {
        lock(&self.shared.emulator)
    }

    /// Whether there is new output since the last call.
    pub fn take_dirty(&self) -> bool {
        self.shared.dirty.swap(false, Ordering::SeqCst)
    }

    /// Ends the pane's session (its command is hung up).
    pub fn close(&self) {
        if let Some((link, session)) = lock(&self.shared.target).as_ref() {
            link.end(session);
        }
    }

    /// Keeps `hint` with the pane's session in its coordinator (see [`super::layout_hint`]).
    pub fn set_layout_hint(&self, hint: String) {
        if let Some((link, session)) = lock(&self.shared.target).as_ref() {
            link.set_layout_hint(session, hint);
        }
    }

    /// Detaches the pane: its session keeps running in the coordinator.
    pub fn detach(&self) {
        if let Some((link, session)) = lock(&self.shared.target).take() {
            link.detach(&session);
        }
    }

    /// The session ended: its modes no longer apply to input, nothing can be written to it.
    /// Its program ended (or never started): the pane only shows its final screen.
    pub fn has_ended(&self) -> bool {
        matches!(self.status, PaneStatus::Exited(_) | PaneStatus::Failed(_))
    }

    pub fn ended(&self) {
        *lock(&self.shared.target) = None;
        lock(&self.shared.emulator).reset_modes();
        self.shared.dirty.store(true, Ordering::SeqCst);
    }
}

impl PaneShared {
    fn new((rows, cols): (u16, u16), scrollback: usize, events: Option<AppSender>) -> PaneShared {
        PaneShared {
            emulator: Mutex::new(new_emulator(rows.max(1), cols.max(1), scrollback)),
            target: Mutex::new(None),
            dirty: AtomicBool::new(false),
            size: Mutex::new((rows.max(1), cols.max(1))),
            events: Mutex::new(events),
        }
    }
}
