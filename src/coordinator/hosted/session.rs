//! One coordinator-owned session (issue #14): its command runs in the Agent Sandbox under a
//! pseudo-terminal the coordinator holds; the coordinator keeps its terminal state, and any
//! number of clients attach, detach and re-attach while it runs.
//!
//! A reader thread parses the PTY's output into the [`ScreenState`] and queues it for every
//! attachment while holding the state lock, so an attach (redraw + join) is atomic with respect
//! to the output stream: a client sees every byte after its redraw exactly once.

use super::screen_state::ScreenState;
use super::viewer::{Attachment, ViewerKey};
use crate::coordinator::state::CliId;
use lazaret_protocol::messages::{CoordinatorMessage, SessionInfo};
use lazaret_protocol::SessionId;
use portable_pty::{ChildKiller, MasterPty};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Bytes read from the PTY at a time.
const CHUNK: usize = 64 * 1024;

/// How a session's process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exit {
    pub status: Option<i32>,
    pub reason: String,
    /// The Agent Sandbox stopped under the command (`reason` says why).
    pub sandbox_stopped: bool,
}

struct State {
    screen: ScreenState,
    attachments: Vec<Attachment>,
    exit: Option<Exit>,
    /// A client's opaque hint where it showed the session (`set_layout_hint`).
    layout_hint: String,
    /// What the host observed of the session's activity (issue #15).
    activity: crate::coordinator::activity::Tracker,
    /// When an attached client last sent input (the developer's keys, a paste); None: never.
    last_input: Option<std::time::Instant>,
}

pub struct HostedSession {
    pub id: SessionId,
    /// The session's Client CLI in the protocol core.
    pub cli: CliId,
    pub command: Vec<String>,
    pub started_unix_ms: u64,
    /// Label of the client that started it.
    pub started_by: String,
    state: Mutex<State>,
    writer: Mutex<Option<Box<dyn Write + Send>>>,
    master: Mutex<Option<Box<dyn MasterPty + Send>>>,
    killer: Mutex<Option<Box<dyn ChildKiller + Send + Sync>>>,
    /// The session's `podman exec` process.
    pid: Option<u32>,
    /// A client ended it: its processes are being hung up. It takes no new attachments and is
    /// listed as not running (a TUI starting now must not re-attach it).
    ending: AtomicBool,
}

/// How long an ended session's process may take to go after its hangup before it is killed.
pub const KILL_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs once a session's process has ended, with the clients that were attached: it tells
/// them ([`Ended::tell`]) once the session has left the Domain.
pub type OnExit = Box<dyn FnOnce(&Arc<HostedSession>, Ended) + Send>;

/// The clients attached to a session when its process ended, not yet told.
pub struct Ended(Vec<Attachment>);

impl Ended {
    /// Tells them that the session ended (with its status), then that they are detached.
    pub fn tell(self, session: &Arc<HostedSession>) {
        session.tell_ended(self.0);
    }
}

/// Runs when what the status shows of the session's activity changed.
pub type OnActivity = Box<dyn Fn(&Arc<HostedSession>) + Send>;

/// What to run for a new session.
pub struct Spawn {
    pub id: SessionId,
    pub cli: CliId,
    pub command: Vec<String>,
    pub started_by: String,
    /// The program (podman) and its arguments (`exec -it … sandbox command`).
    pub program: String,
    pub args: Vec<String>,
    pub size: (u16, u16),
    pub scrollback: usize,
    /// Asked with the command's status when it ends: why the Agent Sandbox stopped, if it did
    /// (see [`crate::runtime::sandbox_fate`]).
    pub fate: Option<SandboxFate>,
}

/// Why the sandbox stopped under a command, if it did.
pub type SandboxFate = Box<dyn Fn(i32) -> Option<String> + Send>;

impl HostedSession {
    /// Starts the session's process; `on_exit` runs on the reader thread once it has ended.
    pub fn spawn(
        spec: Spawn,
        on_exit: OnExit,
        on_activity: OnActivity,
    ) -> anyhow::Result<Arc<HostedSession>> {
        let (rows, cols) = (spec.size.0.max(1), spec.size.1.max(1));
        let crate::terminal::pty::PtyChild {
            mut child,
            reader,
            writer,
            master,
        } = crate::terminal::pty::spawn(
            &spec.program,
            &spec.args,
            crate::terminal::pty::size(rows, cols),
        )?;
        // A descriptor of the master of the pump's own, to wait on with a timeout.
        let watch_fd = master.as_raw_fd().and_then(|fd| {
            // SAFETY: the master's descriptor is open while `master` lives (this whole call).
            let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
            nix::unistd::dup(borrowed).ok()
        });
        let session = Arc::new(HostedSession {
            id: spec.id,
            cli: spec.cli,
            command: spec.command,
            started_unix_ms: crate::coordinator::status::now_unix_ms(),
            started_by: spec.started_by,
            state: Mutex::new(State {
                screen: ScreenState::new(rows, cols, spec.scrollback),
                attachments: Vec::new(),
                exit: None,
                layout_hint: String::new(),
                activity: Default::default(),
                last_input: None,
            }),
            writer: Mutex::new(Some(writer)),
            master: Mutex::new(Some(master)),
            killer: Mutex::new(Some(child.clone_killer())),
            pid: child.process_id(),
            ending: AtomicBool::new(false),
        });
        // The command's exit is watched apart from its output: what it leaves behind may hold
        // the terminal open for ever (see `output_end`).
        let exited = Arc::new(crate::wake::WakeFlag::new());
        let waiter = {
            let exited = exited.clone();
            std::thread::Builder::new()
                .name("session-wait".into())
                .spawn(move || {
                    let status = child
                        .wait()
                        .ok()
                        .map(|s| i32::try_from(s.exit_code()).unwrap_or(1));
                    exited.set();
                    status
                })?
        };
        let end = watch_fd.map(|fd| crate::terminal::output_end::OutputEnd::new(fd, exited));
        let me = session.clone();
        let fate = spec.fate;
        std::thread::Builder::new()
            .name("session-pty".into())
            .spawn(move || {
                me.pump(reader, end, &on_activity);
                let status = waiter.join().ok().flatten();
                let stopped = fate.zip(status).and_then(|(ask, code)| ask(code));
                // The session leaves the Domain (and the status `lazaret ps` reads) before its
                // clients hear it ended: a client that then waits for the Domain's teardown
                // never sees it listed any more. `on_exit` tells them.
                let told = Ended(me.ended(status, stopped));
                on_exit(&me, told);
            })?;
        Ok(session)
    }

    /// Parses and forwards output until the PTY closes, or (with `end`) until the command
    /// has exited and its terminal gone quiet.
    fn pump(
        self: &Arc<Self>,
        mut reader: Box<dyn Read + Send>,
        mut end: Option<crate::terminal::output_end::OutputEnd>,
        on_activity: &OnActivity,
    ) {
        let mut buf = vec![0u8; CHUNK];
        loop {
            if let Some(end) = end.as_mut() {
                if !end.wait() {
                    return;
                }
            }
            let n = match reader.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            let mut st = lock(&self.state);
            st.screen.process(&buf[..n]);
            let replies = st.screen.take_replies();
            if !replies.is_empty() {
                self.write(&replies);
            }
            let news = st.activity.scan(&buf[..n], std::time::Instant::now());
            let State {
                screen,
                attachments,
                ..
            } = &mut *st;
            attachments.retain(|a| a.send_output(&buf[..n], self, screen));
            drop(st);
            if news {
                on_activity(self);
            }
        }
    }

    /// When the session last printed (Unix ms, 0: not yet) and why it wants attention (empty:
    /// it does not), for the status.
    pub fn activity(&self) -> (u64, String) {
        let st = lock(&self.state);
        let last = st.activity.last_output().map_or(0, |at| {
            let ago = u64::try_from(at.elapsed().as_millis()).unwrap_or(u64::MAX);
            crate::coordinator::status::now_unix_ms().saturating_sub(ago)
        });
        (last, st.activity.attention().unwrap_or_default().to_owned())
    }

    /// When an attached client last sent input to the session (Unix ms, 0: never), for the
    /// idle stop: what the sandbox prints never counts as the developer being there.
    pub fn last_input_unix_ms(&self) -> u64 {
        lock(&self.state).last_input.map_or(0, |at| {
            let ago = u64::try_from(at.elapsed().as_millis()).unwrap_or(u64::MAX);
            crate::coordinator::status::now_unix_ms().saturating_sub(ago)
        })
    }

    /// A client looked at the session (typed into it); true when that cleared an attention.
    pub fn looked(&self) -> bool {
        lock(&self.state).activity.looked()
    }

    /// The process ended: nothing can be written to it any more; attached clients are told.
    /// Returns the attachments to tell (see [`Self::tell_ended`]).
    fn ended(&self, status: Option<i32>, stopped: Option<String>) -> Vec<Attachment> {
        *lock(&self.writer) = None;
        *lock(&self.master) = None;
        *lock(&self.killer) = None;
        let sandbox_stopped = stopped.is_some();
        let reason = match (stopped, status) {
            (Some(why), _) => format!("the Agent Sandbox stopped while the command ran: {why}"),
            (None, Some(code)) => format!("the command exited with status {code}"),
            (None, None) => "the command ended".to_owned(),
        };
        let mut st = lock(&self.state);
        st.exit = Some(Exit {
            status,
            reason,
            sandbox_stopped,
        });
        st.attachments.drain(..).collect()
    }

    /// Tells the clients that were attached that the session ended.
    fn tell_ended(self: &Arc<Self>, told: Vec<Attachment>) {
        let Some(exit) = self.exit() else { return };
        for a in told {
            a.flush_screen(self);
            a.tell(CoordinatorMessage::SessionExited {
                session_id: self.id.clone(),
                status: exit.status,
                reason: exit.reason.clone(),
                sandbox_stopped: exit.sandbox_stopped,
            });
            a.tell(CoordinatorMessage::Detached {
                session_id: self.id.clone(),
            });
        }
    }

    /// Attaches a client: it gets `attached`, then the current screen, then live output.
    /// The session takes the client's size (the most recent active client's size wins).
    /// False when the session has ended.
    pub fn attach(self: &Arc<Self>, a: Attachment, history: usize) -> bool {
        let mut st = lock(&self.state);
        if st.exit.is_some() {
            return false;
        }
        st.attachments.retain(|x| x.viewer != a.viewer);
        // A terminal attached to this one session shows it: the developer looked. (A control
        // centre attaches every session it has a pane for; it says which one is looked at.)
        if a.label != "tui" {
            st.activity.looked();
        }
        self.apply_size(&mut st, a.size, a.viewer);
        let (rows, cols) = st.screen.size();
        a.tell(CoordinatorMessage::Attached {
            session_id: self.id.clone(),
            channel: a.channel,
            rows,
            cols,
        });
        let redraw = st.screen.redraw(history);
        if let super::viewer::Feed::Screen(feed) = &a.feed {
            feed.shows(st.screen.generation());
        }
        a.queued.fetch_add(redraw.len(), Ordering::SeqCst);
        let _ = a.out.send(super::viewer::Outbound::Data {
            channel: a.channel,
            bytes: redraw,
            queued: a.queued.clone(),
        });
        st.attachments.push(a);
        true
    }

    /// Keeps a client's layout hint (checked by the caller).
    pub fn set_layout_hint(&self, hint: String) {
        lock(&self.state).layout_hint = hint;
    }

    /// Detaches a client; the session keeps running. False when it was not attached.
    pub fn detach(&self, viewer: ViewerKey) -> bool {
        let mut st = lock(&self.state);
        let before = st.attachments.len();
        st.attachments.retain(|a| a.viewer != viewer);
        before != st.attachments.len()
    }

    /// Input from an attached client, which becomes the most recent active one.
    pub fn input(self: &Arc<Self>, viewer: ViewerKey, bytes: &[u8]) {
        {
            let mut st = lock(&self.state);
            let Some(size) = st
                .attachments
                .iter()
                .find(|a| a.viewer == viewer)
                .map(|a| a.size)
            else {
                return;
            };
            st.last_input = Some(std::time::Instant::now());
            self.apply_size(&mut st, size, viewer);
        }
        self.write(bytes);
    }

    /// A client's terminal for the session changed size; the session follows it.
    pub fn resize(self: &Arc<Self>, viewer: ViewerKey, size: (u16, u16)) {
        let mut st = lock(&self.state);
        let Some(a) = st.attachments.iter_mut().find(|a| a.viewer == viewer) else {
            return;
        };
        a.size = size;
        self.apply_size(&mut st, size, viewer);
    }

    fn apply_size(self: &Arc<Self>, st: &mut State, size: (u16, u16), from: ViewerKey) {
        let (rows, cols) = (size.0.max(1), size.1.max(1));
        if st.screen.size() == (rows, cols) {
            return;
        }
        st.screen.resize(rows, cols);
        // The emulator caps absurd sizes: the PTY and the clients get what it took.
        let (rows, cols) = st.screen.size();
        if let Some(m) = lock(&self.master).as_ref() {
            let _ = m.resize(crate::terminal::pty::size(rows, cols));
        }
        for a in &st.attachments {
            if a.viewer != from {
                a.tell(CoordinatorMessage::SessionResized {
                    session_id: self.id.clone(),
                    rows,
                    cols,
                });
            }
            // The reflowed screen, also for the client that resized (a shell at its prompt
            // prints nothing after SIGWINCH).
            a.screen_changed(self);
        }
    }

    fn write(&self, bytes: &[u8]) {
        if let Some(w) = lock(&self.writer).as_mut() {
            let _ = w.write_all(bytes).and_then(|_| w.flush());
        }
    }

    /// The current screen, for an attachment that fell behind; it receives output again.
    pub fn redraw_for(&self, lagging: &std::sync::atomic::AtomicBool) -> Vec<u8> {
        let st = lock(&self.state);
        lagging.store(false, Ordering::SeqCst);
        st.screen.redraw(0)
    }

    /// The update for an attachment fed screen updates ([`super::viewer::Feed::Screen`]): the
    /// rows changed since its last one (or the whole screen); output from now on asks for the
    /// next one.
    pub fn screen_update(&self, feed: &super::viewer::ScreenFeed) -> Vec<u8> {
        let st = lock(&self.state);
        let (bytes, generation, whole) = st.screen.update(feed.shown());
        feed.taken(std::time::Instant::now(), generation, whole);
        bytes
    }

    /// Scrollback lines for a client scrolled back: `(total kept, lines)`.
    pub fn history(
        &self,
        from_end: usize,
        count: usize,
    ) -> (usize, Vec<lazaret_protocol::screen::ScreenLine>) {
        let st = lock(&self.state);
        (
            st.screen.history_len(),
            st.screen.history_range(from_end, count),
        )
    }

    /// Ends the session: its process is hung up, and killed after [`KILL_GRACE`] if it is
    /// still there (a command that ignores SIGHUP cannot keep its session, or the Domain,
    /// alive).
    pub fn kill(self: &Arc<Self>) {
        if let Some(k) = lock(&self.killer).as_mut() {
            let _ = k.kill();
        }
        let me = self.clone();
        std::thread::spawn(move || {
            std::thread::sleep(KILL_GRACE);
            let pid = me.pid.and_then(|p| i32::try_from(p).ok());
            if let (None, Some(pid)) = (me.exit(), pid) {
                tracing::warn!(session = %me.id.as_str(), "the session's process ignored its hangup; killing it");
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        });
    }

    /// Frees what a quiet session's emulator caches (see [`ScreenState::trim`]).
    pub fn trim(&self) -> bool {
        lock(&self.state).screen.trim()
    }

    /// Marks the session as being ended by a client (see [`HostedSession::is_ending`]).
    pub fn set_ending(&self) {
        self.ending.store(true, Ordering::SeqCst);
    }

    pub fn is_ending(&self) -> bool {
        self.ending.load(Ordering::SeqCst)
    }

    pub fn exit(&self) -> Option<Exit> {
        lock(&self.state).exit.clone()
    }

    /// Whether `viewer` is attached.
    pub fn is_attached(&self, viewer: ViewerKey) -> bool {
        lock(&self.state)
            .attachments
            .iter()
            .any(|a| a.viewer == viewer)
    }

    /// Attachments now (to offer them escalation prompts).
    pub fn attachments(&self) -> Vec<Attachment> {
        lock(&self.state).attachments.clone()
    }

    pub fn info(&self) -> SessionInfo {
        let st = lock(&self.state);
        let (rows, cols) = st.screen.size();
        SessionInfo {
            session_id: self.id.clone(),
            command: self.command.clone(),
            started_unix_ms: self.started_unix_ms,
            hosted: true,
            running: st.exit.is_none() && !self.is_ending(),
            exit_status: st.exit.as_ref().and_then(|e| e.status),
            attached: st.attachments.iter().map(|a| a.label.clone()).collect(),
            started_by: self.started_by.clone(),
            layout_hint: st.layout_hint.clone(),
            rows,
            cols,
        }
    }
}
