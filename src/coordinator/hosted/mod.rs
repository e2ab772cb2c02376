//! Coordinator-owned sessions (issue #14): the Session Coordinator starts each such Client
//! Session's process under a pseudo-terminal it holds and keeps its terminal state, so that the
//! session outlives every client. Clients (`lazaret tui`, `lazaret attach`) attach, detach and
//! re-attach; several may attach to one session at once (the most recent active client's size
//! is the session's). A detached session is still a Client Session for FR-6: the Domain is
//! torn down only when no session remains.

pub mod activity_feed;
pub mod concluded;
pub mod endings;
pub mod hangup;
pub mod idle_stop;
pub mod login_ports;
pub mod net_allow;
pub mod panel_feed;
pub mod ports;
pub mod prompts;
#[cfg(test)]
pub(crate) mod prompts_tests;
pub mod remote_decision;
pub mod screen_state;
pub mod session;
pub mod viewer;

use super::engine::Engine;
use super::event::Event;
use super::viewers::ViewerId;
use crate::coordinator::domain_state;
use crate::domain::Domain;
use crate::escalation::routing::Decided;
use crate::escalation::routing::PromptEvent;
use crate::profile::AgentProfile;
use lazaret_protocol::escalation::Decision;
use lazaret_protocol::messages::{CoordinatorMessage, Refusal, RefusalCode, SessionInfo, Updates};
use lazaret_protocol::{ComponentId, SessionId};
use prompts::PromptBoard;
use session::{HostedSession, Spawn};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, MutexGuard};
use viewer::{Attachment, Feed, OutboundSender, ViewerKey};

/// Scrollback lines the coordinator keeps per session.
pub const SCROLLBACK: usize = 5000;

/// How long a client's decision waits for the core to record it (the request's deciding
/// thread takes it within one receive; this bounds a stuck core, not the normal path).
const RECORD_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// What a session's process needs to start in this Domain.
pub struct SpawnConfig {
    pub domain: Domain,
    pub profile: AgentProfile,
    pub sandbox: String,
    /// The podman binary.
    pub program: String,
    /// runsc directly for the sessions' commands, when this host allows it (else `podman
    /// exec`; see [`crate::runtime::runsc_exec`]).
    pub direct: Option<crate::runtime::runsc_exec::RunscExec>,
    /// Host pids of the sandbox's and the sidecar's main processes, for the Domain panel.
    pub containers: domain_state::ContainerPids,
}

impl SpawnConfig {
    /// How a session's end asks whether the sandbox `sandbox` (Podman's name) stopped under
    /// it: where runsc's state can be read (direct exec configured).
    fn fate(&self, sandbox: &str) -> Option<session::SandboxFate> {
        let target = crate::runtime::sandbox_fate::Target::of(self.direct.as_ref()?);
        let (sandbox, memory) = (sandbox.to_owned(), self.profile.limits.memory);
        Some(Box::new(
            move |code| match crate::runtime::sandbox_fate::after_command(
                &target, &sandbox, memory, code,
            ) {
                crate::runtime::sandbox_fate::Fate::Running => None,
                crate::runtime::sandbox_fate::Fate::Stopped(why) => Some(why),
            },
        ))
    }

    /// The program and arguments that run a session's command: runsc directly while the
    /// sandbox's conmon still runs, else `podman exec`.
    fn session_command(
        &self,
        sandbox: &str,
        req: &crate::runtime::sandbox::ExecRequest,
    ) -> (String, Vec<String>) {
        match &self.direct {
            Some(d) if d.usable() => (d.program(), d.args(req)),
            _ => (
                self.program.clone(),
                crate::runtime::sandbox::exec_args(sandbox, req),
            ),
        }
    }
}

/// Labels of the clients that are a terminal of a session (`lazaret run --detachable`,
/// `lazaret attach`: [`crate::detachable`], `lazaret_ui::attach`), as their `connect` says.
pub const TERMINAL_LABELS: [&str; 2] = ["run", "attach"];

/// A connected client.
struct Viewer {
    label: String,
    client: ComponentId,
    out: OutboundSender,
    /// Its viewer in the protocol model as a control centre (TLA+ `Watch`).
    centre: Option<ViewerId>,
    /// Its viewers in the protocol model, one per attached session (TLA+ `Attach`).
    models: HashMap<String, ViewerId>,
    /// Channel → session it carries.
    channels: HashMap<u32, String>,
    next_channel: u32,
}

pub struct SessionHost {
    engine: Arc<Engine>,
    pub(super) spawn: SpawnConfig,
    /// The last Domain state and denials sent to control centres.
    feed: Arc<Mutex<panel_feed::PanelFeed>>,
    /// The last activity of each session sent to control centres.
    activity: Mutex<activity_feed::ActivityFeed>,
    sessions: Mutex<BTreeMap<String, Arc<HostedSession>>>,
    viewers: Mutex<HashMap<ViewerKey, Viewer>>,
    board: Mutex<PromptBoard>,
    next_viewer: AtomicU64,
    /// Git Sentry watchers of running sessions: stop flag and thread (its messages).
    watchers: Mutex<HashMap<String, GitSentryWatch>>,
    /// Ports of the sandbox published on the host, with their forwarders.
    ports: Mutex<Vec<ports::Forwarder>>,
    /// Ended sessions whose attached clients are not told yet.
    endings: endings::Endings,
    /// Wakes the panel feed when somebody may have started watching (it sleeps while nobody
    /// does: an idle Domain costs nothing).
    feed_wake: tokio::sync::Notify,
}

impl Viewer {
    /// A session's terminal ([`TERMINAL_LABELS`], attached), not a control centre.
    fn is_terminal(&self) -> bool {
        self.centre.is_none()
            && !self.channels.is_empty()
            && TERMINAL_LABELS.contains(&self.label.as_str())
    }
}

type GitSentryWatch = (
    Arc<crate::wake::WakeFlag>,
    std::thread::JoinHandle<Vec<String>>,
);

fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Why a request about a session was refused.
pub fn no_such_session(id: &str) -> String {
    format!("no running session {id} in this Domain (see `lazaret ps`)")
}

impl SessionHost {
    /// A host for the Domain's sessions; must be created inside the coordinator's runtime
    /// (it starts the control centres' panel feed).
    pub fn new(engine: Arc<Engine>, spawn: SpawnConfig) -> Arc<SessionHost> {
        let host = Arc::new(SessionHost {
            engine,
            spawn,
            feed: Default::default(),
            activity: Default::default(),
            sessions: Mutex::new(BTreeMap::new()),
            viewers: Mutex::new(HashMap::new()),
            board: Mutex::new(PromptBoard::default()),
            next_viewer: AtomicU64::new(1),
            watchers: Mutex::new(HashMap::new()),
            ports: Mutex::new(Vec::new()),
            endings: Default::default(),
            feed_wake: tokio::sync::Notify::new(),
        });
        panel_feed::spawn(host.clone(), host.feed.clone());
        spawn_trim(&host);
        host
    }

    /// Whether the profile holds what no rule decides (`default = "ask"`, issue #17): only
    /// then is the sidecar's held list read and sent.
    pub fn asks(&self) -> bool {
        let network = &self.spawn.profile.network;
        network.enabled && network.ask_timeout.is_some()
    }

    /// The queues of the Domain's terminals that are not control centres: clients labelled
    /// [`TERMINAL_LABELS`] attached to a session (`lazaret run --detachable`, `lazaret
    /// attach`). They are sent what the sidecar holds ([`panel_feed`]).
    pub fn terminals(&self) -> Vec<OutboundSender> {
        lock(&self.viewers)
            .values()
            .filter(|v| v.is_terminal())
            .map(|v| v.out.clone())
            .collect()
    }

    /// What the sidecar holds as it changes, for a registered `lazaret run` session; None when
    /// the profile does not ask (nothing is ever held).
    pub fn watch_held(&self) -> Option<tokio::sync::watch::Receiver<panel_feed::HeldList>> {
        let held = self.asks().then(|| lock(&self.feed).watch_held());
        self.feed_wake.notify_one();
        held
    }

    /// The queues of the control centres watching the Domain.
    pub fn centres(&self) -> Vec<OutboundSender> {
        lock(&self.viewers)
            .values()
            .filter(|v| v.centre.is_some())
            .map(|v| v.out.clone())
            .collect()
    }

    /// A client connection opens.
    pub fn connect(&self, label: &str, client: ComponentId, out: OutboundSender) -> ViewerKey {
        let key = self
            .next_viewer
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        lock(&self.viewers).insert(
            key,
            Viewer {
                label: label.to_owned(),
                client,
                out,
                centre: None,
                models: HashMap::new(),
                channels: HashMap::new(),
                next_channel: 1,
            },
        );
        key
    }

    /// A client connection closed (or its terminal went away): it is detached from everything;
    /// its sessions keep running.
    pub fn disconnect(&self, key: ViewerKey) {
        let Some(v) = lock(&self.viewers).remove(&key) else {
            return;
        };
        for sid in v.channels.values() {
            let session = lock(&self.sessions).get(sid).cloned();
            if let Some(s) = session {
                s.detach(key);
                self.publish(&s);
            }
        }
        lock(&self.board).forget(key, None);
        for viewer in v.models.values().chain(v.centre.iter()) {
            self.engine.viewer_step(Event::Detach { viewer: *viewer });
        }
        tracing::info!(client = %v.client, label = %v.label, "client disconnected");
    }

    /// Who a client is, for logs and attribution (FR-5).
    pub fn describe(&self, key: ViewerKey) -> String {
        lock(&self.viewers)
            .get(&key)
            .map(|v| format!("{} {}", v.label, v.client))
            .unwrap_or_else(|| format!("client {key}"))
    }

    /// The queue of a connected client.
    pub fn outbound(&self, key: ViewerKey) -> Option<OutboundSender> {
        lock(&self.viewers).get(&key).map(|v| v.out.clone())
    }

    /// Starts a coordinator-owned session for the client `key`.
    pub async fn start(
        self: &Arc<Self>,
        key: ViewerKey,
        argv: Vec<String>,
        cwd: String,
        size: (u16, u16),
        fingerprint: &str,
    ) -> Result<SessionInfo, Refusal> {
        let (label, client) = {
            let viewers = lock(&self.viewers);
            let v = viewers
                .get(&key)
                .ok_or_else(|| failed("the client is gone"))?;
            (v.label.clone(), v.client.clone())
        };
        let cwd = checked_cwd(&cwd)?;
        let workspace = self.engine.config.workspace.clone();
        let registered = self.engine.register(&client, fingerprint, &workspace)?;
        let argv = if argv.is_empty() {
            self.spawn.profile.command.clone()
        } else {
            argv
        };
        let sandbox = self
            .engine
            .attach_hosted(&registered.session_id, &argv, &label);
        let me = self.clone();
        let (cli, sid, anchor) = (
            registered.cli,
            registered.session_id.clone(),
            registered.session_anchor.clone(),
        );
        let command = argv.clone();
        let spawned = tokio::task::spawn_blocking(move || {
            // A setup still to run runs under the session's own terminal, its progress the
            // pane's first screen (issue #32); the check is one quick exec.
            let setup =
                crate::profile_setup::Plan::of(&me.spawn.domain, &me.spawn.profile, &sandbox);
            let setup = match setup {
                Some(plan) if !plan.done()? => Some(plan),
                _ => None,
            };
            let req = crate::runtime::sandbox::ExecRequest {
                command: command.clone(),
                workdir: cwd,
                tty: true,
                term: Some("xterm-256color".into()),
                env: crate::escalation::mailbox::session_env(&me.spawn.domain.id, &sid, &anchor),
            };
            let (program, args) = me.spawn.session_command(&sandbox, &req);
            let (program, args) = match &setup {
                Some(plan) => crate::cli::setup_then_exec::wrap(plan, program, args)?,
                None => (program, args),
            };
            let spec = Spawn {
                id: sid,
                cli,
                command,
                started_by: label,
                program,
                args,
                size,
                scrollback: SCROLLBACK,
                fate: me.spawn.fate(&sandbox),
            };
            let host = me.clone();
            let on_activity = Arc::downgrade(&me);
            HostedSession::spawn(
                spec,
                Box::new(move |s, told| host.ended(s, told)),
                Box::new(move |s| {
                    if let Some(host) = on_activity.upgrade() {
                        host.publish(s);
                    }
                }),
            )
        })
        .await;
        let session = match spawned {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                self.engine
                    .leave(registered.cli, Some(&registered.session_id));
                return Err(failed(&format!("starting the session: {e:#}")));
            }
            Err(e) => {
                self.engine
                    .leave(registered.cli, Some(&registered.session_id));
                return Err(failed(&format!("starting the session: {e}")));
            }
        };
        let id = session.id.as_str().to_owned();
        lock(&self.sessions).insert(id.clone(), session.clone());
        self.publish(&session);
        self.spawn_prompt_pump(id.clone(), registered.prompts);
        self.spawn_git_sentry_watch(&session);
        tracing::info!(session = %id, by = %self.describe(key), "coordinator-owned session started");
        Ok(session.info())
    }

    /// Attaches `key` to a running session.
    pub fn attach(
        &self,
        key: ViewerKey,
        id: &SessionId,
        size: (u16, u16),
        history: usize,
        updates: Updates,
    ) -> Result<(), String> {
        let session = self.running(id.as_str())?;
        if session.is_ending() {
            return Err(format!(
                "session {} is being ended; it cannot be attached",
                id.as_str().chars().take(12).collect::<String>()
            ));
        }
        let viewer = self.engine.registry().connect_viewer();
        let (attachment, terminal) = {
            let mut viewers = lock(&self.viewers);
            let v = viewers.get_mut(&key).ok_or("the client is gone")?;
            if let Some(old) = v.models.remove(id.as_str()) {
                self.engine.viewer_step(Event::Detach { viewer: old });
            }
            if self.engine.viewer_step(Event::Attach {
                viewer,
                cli: session.cli,
            }) {
                v.models.insert(id.as_str().to_owned(), viewer);
            }
            // One channel per session per client: a second attach replaces the first.
            v.channels.retain(|_, s| s != id.as_str());
            let channel = v.next_channel;
            v.next_channel = v.next_channel.wrapping_add(1).max(1);
            v.channels.insert(channel, id.as_str().to_owned());
            self.feed_wake.notify_one();
            let attachment = Attachment {
                viewer: key,
                label: v.label.clone(),
                channel,
                out: v.out.clone(),
                queued: Arc::new(AtomicUsize::new(0)),
                lagging: Arc::new(AtomicBool::new(false)),
                size,
                feed: match updates {
                    Updates::Bytes => Feed::Bytes,
                    Updates::Screen => Feed::screen(),
                },
            };
            (attachment, v.is_terminal().then(|| v.out.clone()))
        };
        // The waiting prompts of the session are offered by the core's `Attach` (above).
        if !session.attach(attachment, history) {
            return Err(no_such_session(id.as_str()));
        }
        // A terminal learns at once what the sidecar holds (after `attached`).
        if let Some(out) = terminal.filter(|_| self.asks()) {
            lock(&self.feed).greet_held(&out);
        }
        self.publish(&session);
        tracing::info!(session = %id.as_str(), by = %self.describe(key), "attached");
        Ok(())
    }

    /// Detaches `key` from a session (it keeps running).
    pub fn detach(&self, key: ViewerKey, id: &SessionId) -> bool {
        if let Some(v) = lock(&self.viewers).get_mut(&key) {
            v.channels.retain(|_, s| s != id.as_str());
            if let Some(viewer) = v.models.remove(id.as_str()) {
                self.engine.viewer_step(Event::Detach { viewer });
            }
        }
        lock(&self.board).forget(key, Some(id.as_str()));
        let session = lock(&self.sessions).get(id.as_str()).cloned();
        let detached = session.as_ref().is_some_and(|s| s.detach(key));
        if let Some(s) = &session {
            self.publish(s);
        }
        if detached {
            tracing::info!(session = %id.as_str(), by = %self.describe(key), "detached");
        }
        detached
    }

    /// Input from `key` on `channel`.
    pub fn input(&self, key: ViewerKey, channel: u32, bytes: &[u8]) {
        let sid = lock(&self.viewers)
            .get(&key)
            .and_then(|v| v.channels.get(&channel).cloned());
        let Some(sid) = sid else { return };
        let session = lock(&self.sessions).get(&sid).cloned();
        if let Some(s) = session {
            if lazaret_protocol::clipboard::has_paste_key(bytes) {
                self.engine
                    .paste_keys
                    .pressed(&sid, std::time::Instant::now());
            }
            s.input(key, bytes);
            if s.looked() {
                self.publish(&s);
            }
        }
    }

    pub fn resize(&self, key: ViewerKey, id: &SessionId, size: (u16, u16)) {
        let session = lock(&self.sessions).get(id.as_str()).cloned();
        if let Some(s) = session {
            s.resize(key, size);
        }
    }

    /// Keeps a client's opaque layout hint with a running session (published in the status).
    pub fn set_layout_hint(&self, id: &SessionId, hint: String) -> Result<(), String> {
        if !lazaret_protocol::messages::layout_hint_ok(&hint) {
            return Err(format!(
                "a layout hint is at most {} bytes of printable ASCII",
                lazaret_protocol::messages::MAX_LAYOUT_HINT
            ));
        }
        let session = self.running(id.as_str())?;
        session.set_layout_hint(hint);
        self.publish(&session);
        Ok(())
    }

    /// Scrollback lines of a running session: `(total kept, lines)`.
    pub fn history(
        &self,
        id: &SessionId,
        from_end: usize,
        count: usize,
    ) -> Result<(usize, Vec<lazaret_protocol::screen::ScreenLine>), String> {
        Ok(self.running(id.as_str())?.history(from_end, count))
    }

    /// Ends a session: its process is hung up; the rest follows its exit.
    pub fn end(&self, key: ViewerKey, id: &SessionId) -> Result<(), String> {
        let session = self.running(id.as_str())?;
        tracing::info!(session = %id.as_str(), by = %self.describe(key), "session ended by a client");
        self.end_session(session);
        Ok(())
    }

    /// Ends every coordinator-owned session (`idle_stop`); `why` goes to the log.
    pub fn end_all(&self, why: &str) {
        let running: Vec<Arc<HostedSession>> = lock(&self.sessions)
            .values()
            .filter(|s| s.exit().is_none())
            .cloned()
            .collect();
        for session in running {
            tracing::info!(session = %session.id.as_str(), by = why, "session ended");
            self.end_session(session);
        }
    }

    fn end_session(&self, session: Arc<HostedSession>) {
        session.set_ending();
        self.publish(&session);
        // Its processes in the sandbox first (killing `podman exec` leaves them running).
        let (program, sandbox) = (self.spawn.program.clone(), self.spawn.sandbox.clone());
        std::thread::spawn(move || {
            if let Err(e) = hangup::run(&program, &sandbox, &session.id) {
                tracing::warn!("{e:#}");
            }
            session.kill();
        });
    }

    /// Every session of the Domain: coordinator-owned ones, and those a `lazaret run` owns.
    pub fn list(&self) -> Vec<SessionInfo> {
        let mut out: Vec<SessionInfo> = lock(&self.sessions).values().map(|s| s.info()).collect();
        for s in self.engine.status_sessions() {
            if !out.iter().any(|h| h.session_id.as_str() == s.session_id) {
                if let Ok(session_id) = SessionId::parse(&s.session_id) {
                    out.push(SessionInfo {
                        session_id,
                        command: s.command,
                        started_unix_ms: s.started_unix_ms,
                        hosted: false,
                        running: true,
                        exit_status: None,
                        attached: vec!["run".into()],
                        started_by: "run".into(),
                        layout_hint: String::new(),
                        rows: 0,
                        cols: 0,
                    });
                }
            }
        }
        out.sort_by_key(|s| s.started_unix_ms);
        out
    }

    /// `key` is a control centre: it is offered every session's escalation prompts.
    pub fn watch_escalations(&self, key: ViewerKey) {
        // Every waiting prompt is offered by the core's `Watch`.
        self.become_centre(key);
        let Some(out) = self.outbound(key) else {
            return;
        };
        lock(&self.feed).greet(&out);
        lock(&self.activity).greet(&out);
    }

    /// The developer looked at a session in a control centre: its attention is cleared.
    pub fn looked(&self, id: &SessionId) {
        let session = lock(&self.sessions).get(id.as_str()).cloned();
        if let Some(s) = session {
            if s.looked() {
                tracing::info!(session = %id, "attention cleared: looked at in a control centre");
                self.publish(&s);
            }
        }
    }

    /// A client's decision on an escalation prompt: the first one offered the prompt wins.
    pub fn decide(
        &self,
        key: ViewerKey,
        request_id: &str,
        decision: Decision,
    ) -> Result<(), prompts::NotTaken> {
        let by = self.describe(key);
        // Who decides in the protocol model: the client's attachment to the request's session,
        // else the client as a control centre.
        let session = lock(&self.board).session_of(request_id);
        let viewer = lock(&self.viewers).get(&key).and_then(|v| {
            session
                .as_ref()
                .and_then(|s| v.models.get(s).copied())
                .or(v.centre)
        });
        let (recorded, was_recorded) = std::sync::mpsc::channel();
        let decided = Decided::by_viewer(decision.clone(), viewer, recorded);
        let (label, client) = lock(&self.viewers)
            .get(&key)
            .map(|v| (v.label.clone(), v.client.as_str().to_owned()))
            .unwrap_or_default();
        let decider = prompts::Decider {
            label: &label,
            client: &client,
        };
        let taken = lock(&self.board).decide(request_id, key, &decider, decided);
        match &taken {
            Ok(()) => {
                tracing::info!(request = %request_id, ?decision, %by, ?viewer, "developer decided");
                // The core takes the decision only while its viewer sees the prompt: the
                // client (a `lazaret deny` exits at once) may detach only after that step.
                match was_recorded.recv_timeout(RECORD_WAIT) {
                    Ok(true) => {}
                    Ok(false) => {
                        tracing::warn!(request = %request_id, %by, "the core refused the decision")
                    }
                    Err(_) => {
                        tracing::warn!(request = %request_id, %by, "the decision was not recorded in time")
                    }
                }
                if let Some(s) = session {
                    self.publish_id(&s);
                }
            }
            Err(why) => {
                tracing::info!(request = %request_id, ?why, %by, "escalation decision not taken")
            }
        }
        taken
    }

    /// [`Self::publish`] of a running session by its ID.
    fn publish_id(&self, id: &str) {
        let session = lock(&self.sessions).get(id).cloned();
        if let Some(s) = session {
            self.publish(&s);
        }
    }

    /// Tells `lazaret ps` (the status file) who is attached.
    fn publish(&self, s: &HostedSession) {
        let info = s.info();
        let (last_output_unix_ms, attention) = s.activity();
        let pending_escalations = lock(&self.board).pending_of(s.id.as_str());
        let idle_after_ms =
            u64::try_from(self.spawn.profile.idle_after().as_millis()).unwrap_or(u64::MAX);
        let activity = lazaret_protocol::activity::SessionActivity {
            last_output_unix_ms,
            attention: attention.clone(),
            pending_escalations,
            running: info.running,
            idle_after_ms,
        };
        self.engine.set_hosted(
            &s.id,
            crate::coordinator::engine::HostedStatus {
                started_by: s.started_by.clone(),
                attached: info.attached,
                running: info.running,
                layout_hint: info.layout_hint,
                last_output_unix_ms,
                attention,
                pending_escalations,
                idle_after_ms,
            },
        );
        let changed = lock(&self.activity).update(&s.id, activity);
        if let Some(message) = changed {
            for out in self.centres() {
                let _ = out.send(viewer::Outbound::Message(message.clone()));
            }
        }
    }

    fn running(&self, id: &str) -> Result<Arc<HostedSession>, String> {
        match lock(&self.sessions).get(id) {
            Some(s) if s.exit().is_none() => Ok(s.clone()),
            _ => Err(no_such_session(id)),
        }
    }

    /// The session's process ended: it leaves the Domain (the last one tears it down), then
    /// its attached clients are told.
    fn ended(&self, session: &Arc<HostedSession>, told: session::Ended) {
        let _ending = self.endings.begin();
        let id = session.id.as_str().to_owned();
        tracing::info!(session = %id, exit = ?session.exit(), "coordinator-owned session ended");
        lock(&self.sessions).remove(&id);
        lock(&self.activity).forget(&id);
        self.tell_centres_ended(session);
        // The model's Leave detaches the session's viewers by itself.
        for v in lock(&self.viewers).values_mut() {
            v.models.remove(&id);
            v.channels.retain(|_, s| *s != id);
        }
        if let Some((stop, watcher)) = lock(&self.watchers).remove(&id) {
            stop.set();
            for m in watcher.join().unwrap_or_default() {
                tracing::warn!("{m}");
            }
        }
        crate::runtime::git_sentry::guard::after_run_logged(&self.spawn.domain);
        self.engine.leave(session.cli, Some(&session.id));
        crate::fault::pause_point("session-left");
        told.tell(session);
    }

    /// Waits (at most `limit`) until the clients of every session that ended were told: the
    /// coordinator does before it tells them the Domain is shutting down.
    pub fn wait_endings_told(&self, limit: std::time::Duration) {
        if !self.endings.wait_told(limit) {
            tracing::warn!("an ended session's clients were not told within {limit:?}");
        }
    }

    /// Control centres not attached to the session learn that it exited (with its status) as
    /// the attached clients do (`lazaret events`); an attached one is told by the session.
    fn tell_centres_ended(&self, session: &HostedSession) {
        let Some(exit) = session.exit() else { return };
        let message = CoordinatorMessage::SessionExited {
            session_id: session.id.clone(),
            status: exit.status,
            reason: exit.reason,
            sandbox_stopped: exit.sandbox_stopped,
        };
        for v in lock(&self.viewers).values() {
            if v.centre.is_some() && !v.models.contains_key(session.id.as_str()) {
                let _ = v.out.send(viewer::Outbound::Message(message.clone()));
            }
        }
    }

    /// Escalation prompts of the session: the core's `ShowPrompt`, `OfferPrompt` (to its
    /// attached clients and the control centres) and `WithdrawPrompt`, in order.
    fn spawn_prompt_pump(
        self: &Arc<Self>,
        session: String,
        mut prompts: crate::escalation::routing::PromptReceiver,
    ) {
        let me = self.clone();
        tokio::spawn(async move {
            while let Some(event) = prompts.recv().await {
                match event {
                    PromptEvent::Ask { prompt, reply } => {
                        tracing::info!(request = %prompt.request_id, session = %session, "escalation prompt shown");
                        lock(&me.board).ask(&session, prompt, reply, Vec::new());
                        me.publish_id(&session);
                    }
                    PromptEvent::Offer { request_id, viewer } => {
                        let to = lock(&me.viewers)
                            .iter()
                            .find(|(_, v)| {
                                v.centre == Some(viewer) || v.models.values().any(|m| *m == viewer)
                            })
                            .map(|(k, v)| (*k, v.out.clone()));
                        match to {
                            Some((key, out)) => lock(&me.board).offer(&request_id, key, &out),
                            None => {
                                tracing::debug!(request = %request_id, %viewer, "viewer gone before the offer")
                            }
                        }
                    }
                    PromptEvent::Withdraw {
                        request_id,
                        reason,
                        decided,
                    } => {
                        let clients = lock(&me.board).withdraw(&request_id, &reason, decided);
                        me.publish_id(&session);
                        tracing::info!(request = %request_id, %reason, clients, "escalation prompt withdrawn");
                    }
                }
            }
        });
    }

    /// Git Sentry watches the workspace's git control files while the session runs.
    fn spawn_git_sentry_watch(&self, session: &Arc<HostedSession>) {
        let ws = self.spawn.domain.workspace.root.clone();
        let store = crate::runtime::git_sentry::guard::store_of(&self.spawn.domain);
        let stop = Arc::new(crate::wake::WakeFlag::new());
        let flag = stop.clone();
        let watcher = std::thread::spawn(move || {
            crate::runtime::git_sentry::guard::watch(&ws, &store, &flag)
        });
        lock(&self.watchers).insert(session.id.as_str().to_owned(), (stop, watcher));
    }
}

/// How often quiet sessions give back what their emulators cache. (Each tick costs nothing
/// when no session scrolled since the last; a session that keeps scrolling re-allocates its
/// ~1,000 cached rows once per tick, well under a millisecond.)
const TRIM_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Every [`TRIM_EVERY`], each session's emulator drops its row cache if it holds no history
/// (a session whose last output scrolled keeps ~1,000 full-width rows otherwise), and the
/// freed memory goes back to the system.
fn spawn_trim(host: &Arc<SessionHost>) {
    let host = Arc::downgrade(host);
    tokio::spawn(async move {
        let mut every = TRIM_EVERY;
        loop {
            tokio::time::sleep(every).await;
            let Some(host) = host.upgrade() else { return };
            let sessions: Vec<Arc<HostedSession>> =
                lock(&host.sessions).values().cloned().collect();
            drop(host);
            // Without coordinator-owned sessions there is nothing to trim: look less often.
            every = if sessions.is_empty() {
                TRIM_EVERY * 5
            } else {
                TRIM_EVERY
            };
            if sessions.is_empty() {
                continue;
            }
            let freed = sessions.iter().fold(false, |any, s| s.trim() | any);
            // Only after a cache was freed: trimming the heap takes the allocator's locks, and
            // a quiet Domain should cost nothing.
            if freed {
                // SAFETY: malloc_trim only returns free heap pages to the system.
                unsafe {
                    libc::malloc_trim(0);
                }
            }
        }
    });
}

fn failed(why: &str) -> Refusal {
    Refusal {
        code: RefusalCode::Unavailable,
        reason: why.to_owned(),
    }
}

/// A session's working directory must be inside the workspace mount.
fn checked_cwd(cwd: &str) -> Result<String, Refusal> {
    let p = std::path::Path::new(cwd);
    let inside = p.starts_with(crate::domain::workspace::SANDBOX_WORKSPACE)
        && p.components()
            .all(|c| !matches!(c, std::path::Component::ParentDir));
    if inside {
        Ok(cwd.to_owned())
    } else {
        Err(Refusal {
            code: RefusalCode::Binding,
            reason: format!(
                "a session's working directory must be under {}, not {cwd:?}",
                crate::domain::workspace::SANDBOX_WORKSPACE
            ),
        })
    }
}
