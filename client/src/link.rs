//! A long-lived client connection to one Domain's Session Coordinator, for a front end that
//! shows several sessions at once (`lazaret tui`): a task on the front end's own event loop
//! (a current-thread runtime) carries the connection, so a key goes from the front end to the
//! socket, and a screen update from the socket to the pane, without waking another thread; the
//! front end sends it commands and receives [`LinkEvent`]s, and each attached session's output
//! goes straight to the [`SessionSink`] registered for it (a pane's emulator). Sessions are
//! attached for screen updates ([`Updates::Screen`]): a pane draws the coordinator's screen and
//! fetches the history on demand, so it never parses the program's own bytes.

use super::connection::{connect, Connection, DomainAddress};
use crate::open::JoinError;
use lazaret_protocol::escalation::{Decision, EscalationPrompt};
use lazaret_protocol::framing::{self, Frame, FrameError};
use lazaret_protocol::messages::{
    ClientMessage, CoordinatorMessage, SaveStep, SessionInfo, Updates,
};
use lazaret_protocol::SessionId;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::mpsc;

/// Where an attached session's output goes.
pub trait SessionSink: Send + Sync {
    fn output(&self, bytes: &[u8]);
}

/// What the link tells the front end.
#[derive(Debug)]
pub enum LinkEvent {
    Started {
        token: u64,
        session: SessionInfo,
    },
    StartFailed {
        token: u64,
        reason: String,
    },
    Attached {
        session: SessionId,
        rows: u16,
        cols: u16,
    },
    Resized {
        session: SessionId,
        rows: u16,
        cols: u16,
    },
    Exited {
        session: SessionId,
        status: Option<i32>,
        reason: String,
    },
    Sessions(Vec<SessionInfo>),
    Prompt(EscalationPrompt),
    Withdrawn {
        request_id: String,
        reason: String,
    },
    /// Scrollback lines of an attached session (answer to [`DomainLink::history`]).
    History {
        session: SessionId,
        from_end: u32,
        total: u32,
        lines: Vec<lazaret_protocol::screen::ScreenLine>,
    },
    /// The Domain's state (for a control centre).
    DomainState(lazaret_protocol::domain_state::DomainView),
    /// The Domain's network denials, newest first.
    Denials(Vec<lazaret_protocol::denial::DenialEntry>),
    /// What became of [`DomainLink::allow_destination`].
    DestinationAllowed {
        target: String,
        private: bool,
        save: SaveStep,
        answer: lazaret_protocol::messages::AllowAnswer,
    },
    /// What became of [`DomainLink::deny_destination`] (`answer.lines` stays empty).
    DestinationDenied {
        target: String,
        answer: lazaret_protocol::messages::AllowAnswer,
    },
    /// What the Domain's sidecar holds under `default = "ask"`, waiting for the developer
    /// (oldest first; the whole list each time it changes). Targets were chosen by the
    /// sandbox: show them escaped.
    Held(Vec<lazaret_protocol::held::HeldEntry>),
    /// What the host observed of a session's activity (for a control centre).
    Activity {
        session: SessionId,
        activity: lazaret_protocol::activity::SessionActivity,
    },
    /// A request was refused (e.g. attach to a session that has ended).
    Error(String),
    /// The connection ended (the coordinator shut down, or died).
    Gone(String),
}

enum Cmd {
    Start {
        token: u64,
        argv: Vec<String>,
        cwd: PathBuf,
        size: (u16, u16),
        fingerprint: String,
        sink: Arc<dyn SessionSink>,
    },
    Attach {
        session: SessionId,
        size: (u16, u16),
        history: u32,
        sink: Arc<dyn SessionSink>,
    },
    Detach(SessionId),
    LayoutHint(SessionId, String),
    History(SessionId, u32, u32),
    Input(SessionId, Vec<u8>),
    Resize(SessionId, (u16, u16)),
    End(SessionId),
    List,
    Watch,
    Looked(SessionId),
    Decide(String, Decision),
    AllowDestination(String, bool, SaveStep),
    DenyDestination(String),
    Close,
}

/// The front end's handle on the connection's task.
pub struct DomainLink {
    pub address: DomainAddress,
    tx: mpsc::UnboundedSender<Cmd>,
    task: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// How long [`DomainLink::open`] waits for the front end's event loop to connect.
const CONNECT_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

impl DomainLink {
    /// Connects on `rt` and keeps the connection there as a task; `events` receives what
    /// happens. Blocks until connected, so it must be called from another thread than the one
    /// driving `rt` (which must be running it meanwhile).
    pub fn open(
        rt: &tokio::runtime::Handle,
        address: DomainAddress,
        label: &str,
        events: impl Fn(LinkEvent) + Send + Sync + 'static,
    ) -> Result<DomainLink, JoinError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let (ready, connected) = std::sync::mpsc::channel();
        let (at, label) = (address.clone(), label.to_owned());
        let task = rt.spawn(async move {
            match connect(&at, &label).await {
                Ok(conn) => {
                    let _ = ready.send(Ok(()));
                    let reason = run(conn, rx, &events).await;
                    events(LinkEvent::Gone(reason));
                }
                Err(e) => {
                    let _ = ready.send(Err(e));
                }
            }
        });
        match connected.recv_timeout(CONNECT_WAIT) {
            Ok(Ok(())) => Ok(DomainLink {
                address,
                tx,
                task: std::sync::Mutex::new(Some(task)),
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => {
                task.abort();
                Err(JoinError::Failed(anyhow::anyhow!(
                    "connecting to the coordinator: no answer within {} s",
                    CONNECT_WAIT.as_secs()
                )))
            }
        }
    }

    fn send(&self, cmd: Cmd) {
        let _ = self.tx.send(cmd);
    }

    /// Starts a session running `argv` (empty: the profile's command) and attaches to it.
    pub fn start(
        &self,
        token: u64,
        argv: Vec<String>,
        cwd: PathBuf,
        size: (u16, u16),
        fingerprint: String,
        sink: Arc<dyn SessionSink>,
    ) {
        self.send(Cmd::Start {
            token,
            argv,
            cwd,
            size,
            fingerprint,
            sink,
        });
    }

    /// Attaches to a running session; its screen (and `history` scrollback lines) come first.
    pub fn attach(
        &self,
        session: SessionId,
        size: (u16, u16),
        history: u32,
        sink: Arc<dyn SessionSink>,
    ) {
        self.send(Cmd::Attach {
            session,
            size,
            history,
            sink,
        });
    }

    pub fn detach(&self, session: &SessionId) {
        self.send(Cmd::Detach(session.clone()));
    }

    /// Keeps an opaque hint with the session (where this front end showed it); see
    /// [`lazaret_protocol::messages::layout_hint_ok`].
    pub fn set_layout_hint(&self, session: &SessionId, hint: String) {
        self.send(Cmd::LayoutHint(session.clone(), hint));
    }

    pub fn input(&self, session: &SessionId, bytes: &[u8]) {
        self.send(Cmd::Input(session.clone(), bytes.to_vec()));
    }

    pub fn resize(&self, session: &SessionId, size: (u16, u16)) {
        self.send(Cmd::Resize(session.clone(), size));
    }

    /// Asks for `count` scrollback lines ending `from_end` before the newest
    /// ([`LinkEvent::History`]).
    pub fn history(&self, session: &SessionId, from_end: u32, count: u32) {
        self.send(Cmd::History(session.clone(), from_end, count));
    }

    /// Ends a session (its command is hung up).
    pub fn end(&self, session: &SessionId) {
        self.send(Cmd::End(session.clone()));
    }

    /// Asks for the Domain's sessions ([`LinkEvent::Sessions`]).
    pub fn list(&self) {
        self.send(Cmd::List);
    }

    /// Be offered every session's escalation prompts (a control centre).
    pub fn watch_escalations(&self) {
        self.send(Cmd::Watch);
    }

    /// The developer looked at the session (its pane was focused): its attention is cleared.
    pub fn looked(&self, session: &SessionId) {
        self.send(Cmd::Looked(session.clone()));
    }

    pub fn decide(&self, request_id: String, decision: Decision) {
        self.send(Cmd::Decide(request_id, decision));
    }

    /// Allows a refused destination for the Domain's run (and, by `save`, into the profile);
    /// answered by [`LinkEvent::DestinationAllowed`].
    pub fn allow_destination(&self, target: String, private: bool, save: SaveStep) {
        self.send(Cmd::AllowDestination(target, private, save));
    }

    /// Refuses a destination for the Domain's run (`lazaret net deny`; the answer "no" to a held
    /// connection); answered by [`LinkEvent::DestinationDenied`].
    pub fn deny_destination(&self, target: String) {
        self.send(Cmd::DenyDestination(target));
    }

    /// Closes the connection (every attached session is detached, and runs on); the task
    /// ends once the close went out ([`DomainLink::closed`]).
    pub fn close(&self) {
        self.send(Cmd::Close);
    }

    /// Waits (on the front end's event loop) until the connection's task has ended.
    pub async fn closed(&self) {
        let task = self.task.lock().ok().and_then(|mut t| t.take());
        if let Some(t) = task {
            let _ = t.await;
        }
    }
}

/// What the commands given to an [`DomainLink::unconnected`] link would send.
pub struct LinkProbe(mpsc::UnboundedReceiver<Cmd>);

impl LinkProbe {
    /// The next request sent so far, if any (input and closing send none).
    pub fn next_request(&mut self) -> Option<ClientMessage> {
        let mut routes = Routes::default();
        loop {
            let cmd = self.0.try_recv().ok()?;
            if let Some(msg) = request(&mut routes, cmd) {
                return Some(msg);
            }
        }
    }
}

impl DomainLink {
    /// A link without a connection whose commands are only recorded, as the requests they
    /// would send: for a front end's tests.
    #[doc(hidden)]
    pub fn unconnected(address: DomainAddress) -> (DomainLink, LinkProbe) {
        let (tx, rx) = mpsc::unbounded_channel();
        let link = DomainLink {
            address,
            tx,
            task: std::sync::Mutex::new(None),
        };
        (link, LinkProbe(rx))
    }
}

impl Drop for DomainLink {
    fn drop(&mut self) {
        self.close();
    }
}

/// Sessions of this connection: sinks by session, sessions by channel, pending starts.
#[derive(Default)]
struct Routes {
    sinks: HashMap<String, Arc<dyn SessionSink>>,
    channels: HashMap<u32, Arc<dyn SessionSink>>,
    by_session: HashMap<String, u32>,
    /// Starts not answered yet: where their output goes and at which size they attach.
    starting: HashMap<u64, Starting>,
    /// `list_sessions` sent and not answered yet.
    lists: u32,
}

/// How long closing waits for the coordinator to have served every earlier request.
const CLOSE_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

type Starting = (Arc<dyn SessionSink>, (u16, u16));

async fn run(
    mut conn: Connection,
    mut rx: mpsc::UnboundedReceiver<Cmd>,
    events: &(impl Fn(LinkEvent) + Send),
) -> String {
    let c = &mut conn.conn;
    let mut routes = Routes::default();
    loop {
        tokio::select! {
            cmd = rx.recv() => {
                let Some(cmd) = cmd else { return "closed".into() };
                if let Cmd::Close = cmd {
                    let _ = tokio::time::timeout(CLOSE_WAIT, served(c, &mut routes)).await;
                    let _ = framing::close(c).await;
                    return "closed".into();
                }
                if let Err(e) = command(c, &mut routes, cmd).await {
                    return format!("the connection broke: {e}");
                }
            }
            frame = framing::recv_frame::<_, CoordinatorMessage>(c) => match frame {
                Ok(Frame::Data { channel, bytes }) => {
                    if let Some(sink) = routes.channels.get(&channel) {
                        sink.output(&bytes);
                    }
                }
                Ok(Frame::Message(msg)) => {
                    if let Some(reason) = message(c, &mut routes, msg, events).await {
                        return reason;
                    }
                }
                Err(FrameError::Closed) => return "the coordinator closed the connection".into(),
                Err(e) => return format!("the connection broke: {e}"),
            },
        }
    }
}

/// Waits until the coordinator has served every request sent so far (the layout hints and
/// detaches of a TUI that quits): requests are served in order, so the answer to one more
/// `list_sessions` says so. Meanwhile this side keeps reading, so the coordinator's writes
/// never fail and it never drops the connection before it has read the rest. What arrives
/// meanwhile (output, pushes) is dropped: the front end is leaving.
async fn served(c: &mut crate::open::Conn, routes: &mut Routes) {
    if framing::send(c, &ClientMessage::ListSessions {})
        .await
        .is_err()
    {
        return;
    }
    let mut waiting = routes.lists + 1;
    while waiting > 0 {
        match framing::recv_frame::<_, CoordinatorMessage>(c).await {
            Ok(Frame::Message(CoordinatorMessage::Sessions { .. })) => waiting -= 1,
            Ok(Frame::Message(CoordinatorMessage::Shutdown { .. })) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

async fn command(
    c: &mut crate::open::Conn,
    routes: &mut Routes,
    cmd: Cmd,
) -> Result<(), FrameError> {
    if let Cmd::Input(session, bytes) = &cmd {
        if let Some(ch) = routes.by_session.get(session.as_str()) {
            framing::send_data(c, *ch, bytes).await?;
        }
        return Ok(());
    }
    match request(routes, cmd) {
        Some(msg) => framing::send(c, &msg).await,
        None => Ok(()),
    }
}

/// The request a command sends (none for input, which goes as data, and for close).
fn request(routes: &mut Routes, cmd: Cmd) -> Option<ClientMessage> {
    let msg = match cmd {
        Cmd::Start {
            token,
            argv,
            cwd,
            size,
            fingerprint,
            sink,
        } => {
            routes.starting.insert(token, (sink, size));
            ClientMessage::StartSession {
                token,
                argv,
                cwd: cwd.display().to_string(),
                rows: size.0,
                cols: size.1,
                config_fingerprint: fingerprint,
            }
        }
        Cmd::Attach {
            session,
            size,
            history,
            sink,
        } => {
            routes.sinks.insert(session.as_str().to_owned(), sink);
            ClientMessage::AttachSession {
                session_id: session,
                rows: size.0,
                cols: size.1,
                history,
                updates: Updates::Screen,
            }
        }
        Cmd::Detach(session) => {
            routes.forget(session.as_str());
            ClientMessage::DetachSession {
                session_id: session,
            }
        }
        Cmd::Input(..) | Cmd::Close => return None,
        Cmd::LayoutHint(session, hint) => ClientMessage::SetLayoutHint {
            session_id: session,
            hint,
        },
        Cmd::History(session, from_end, count) => ClientMessage::History {
            session_id: session,
            from_end,
            count,
        },
        Cmd::Resize(session, (rows, cols)) => ClientMessage::ResizeSession {
            session_id: session,
            rows,
            cols,
        },
        Cmd::End(session) => ClientMessage::EndSession {
            session_id: session,
        },
        Cmd::List => {
            routes.lists += 1;
            ClientMessage::ListSessions {}
        }
        Cmd::Watch => ClientMessage::WatchEscalations {},
        Cmd::Looked(session) => ClientMessage::Looked {
            session_id: session,
        },
        Cmd::Decide(request_id, decision) => ClientMessage::EscalationDecision {
            request_id,
            decision,
        },
        Cmd::AllowDestination(target, private, save) => ClientMessage::AllowDestination {
            target,
            private,
            save,
        },
        Cmd::DenyDestination(target) => ClientMessage::DenyDestination { target },
    };
    Some(msg)
}

impl Routes {
    fn forget(&mut self, session: &str) {
        self.sinks.remove(session);
        if let Some(ch) = self.by_session.remove(session) {
            self.channels.remove(&ch);
        }
    }
}

/// Handles a message; Some(reason) when the connection is over.
async fn message(
    c: &mut crate::open::Conn,
    routes: &mut Routes,
    msg: CoordinatorMessage,
    events: &(impl Fn(LinkEvent) + Send),
) -> Option<String> {
    match msg {
        CoordinatorMessage::SessionStarted { token, session } => {
            if let Some((sink, (rows, cols))) = routes.starting.remove(&token) {
                routes
                    .sinks
                    .insert(session.session_id.as_str().to_owned(), sink);
                let attach = ClientMessage::AttachSession {
                    session_id: session.session_id.clone(),
                    rows,
                    cols,
                    history: 0,
                    updates: Updates::Screen,
                };
                if let Err(e) = framing::send(c, &attach).await {
                    return Some(format!("the connection broke: {e}"));
                }
            }
            events(LinkEvent::Started { token, session });
        }
        CoordinatorMessage::StartRefused { token, reason, .. } => {
            routes.starting.remove(&token);
            events(LinkEvent::StartFailed { token, reason });
        }
        CoordinatorMessage::Attached {
            session_id,
            channel,
            rows,
            cols,
        } => {
            if let Some(sink) = routes.sinks.get(session_id.as_str()) {
                routes.channels.insert(channel, sink.clone());
                routes
                    .by_session
                    .insert(session_id.as_str().to_owned(), channel);
            }
            events(LinkEvent::Attached {
                session: session_id,
                rows,
                cols,
            });
        }
        CoordinatorMessage::Detached { session_id } => routes.forget(session_id.as_str()),
        CoordinatorMessage::SessionExited {
            session_id,
            status,
            reason,
            ..
        } => {
            routes.forget(session_id.as_str());
            events(LinkEvent::Exited {
                session: session_id,
                status,
                reason,
            });
        }
        CoordinatorMessage::SessionResized {
            session_id,
            rows,
            cols,
        } => events(LinkEvent::Resized {
            session: session_id,
            rows,
            cols,
        }),
        CoordinatorMessage::Sessions { sessions } => {
            routes.lists = routes.lists.saturating_sub(1);
            events(LinkEvent::Sessions(sessions))
        }
        CoordinatorMessage::DomainState { state } => events(LinkEvent::DomainState(state)),
        CoordinatorMessage::HistoryLines {
            session_id,
            from_end,
            total,
            lines,
        } => events(LinkEvent::History {
            session: session_id,
            from_end,
            total,
            lines,
        }),
        CoordinatorMessage::Denials { entries } => events(LinkEvent::Denials(entries)),
        CoordinatorMessage::SessionActivity {
            session_id,
            activity,
        } => events(LinkEvent::Activity {
            session: session_id,
            activity,
        }),
        CoordinatorMessage::EscalationPrompt { prompt } => events(LinkEvent::Prompt(prompt)),
        CoordinatorMessage::EscalationWithdrawn { request_id, reason } => {
            events(LinkEvent::Withdrawn { request_id, reason })
        }
        CoordinatorMessage::DestinationAllowed {
            target,
            private,
            save,
            answer,
        } => events(LinkEvent::DestinationAllowed {
            target,
            private,
            save,
            answer,
        }),
        CoordinatorMessage::DestinationDenied { target, answer } => {
            events(LinkEvent::DestinationDenied { target, answer })
        }
        CoordinatorMessage::Held { entries } => events(LinkEvent::Held(entries)),
        CoordinatorMessage::Error { message } => events(LinkEvent::Error(message)),
        CoordinatorMessage::Shutdown { reason } => return Some(reason),
        _ => {}
    }
    None
}
