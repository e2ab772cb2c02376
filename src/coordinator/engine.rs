//! The coordinator's engine: Client Session registration, attach and leave over the protocol
//! core, independent of any transport. Every step of the core goes through [`Engine::step`]
//! (in [`super::driver_steps`]), which carries out its effects. The socket server ([`super::server`]) drives it for
//! Client Sessions and clients; [`super::hosted`] drives it for coordinator-owned sessions.

use super::driver_steps::{bound, refused};
use super::event::Event;
use super::registry::Registry;
use super::state::CliId;
use super::status::{now_unix_ms, DomainStatus, SessionStatus};
use crate::escalation::routing::{self, PromptReceiver, PromptSender};
use lazaret_protocol::messages::{Refusal, RefusalCode};
use lazaret_protocol::{ComponentId, DomainId, SessionAnchor, SessionId};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use tokio::sync::{watch, Notify};

/// What the status shows of a coordinator-owned session (see [`Engine::set_hosted`]).
#[derive(Debug, Clone, Default)]
pub struct HostedStatus {
    pub started_by: String,
    pub attached: Vec<String>,
    pub running: bool,
    pub layout_hint: String,
    pub last_output_unix_ms: u64,
    pub attention: String,
    pub pending_escalations: u32,
    pub idle_after_ms: u64,
}

/// What a Domain's engine serves; fixed for the coordinator's life.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub profile: String,
    pub domain_id: DomainId,
    pub workspace: PathBuf,
    /// Configuration Fingerprint of the configuration that started the Domain.
    pub fingerprint: String,
    /// The Agent Sandbox container sessions run their commands in.
    pub sandbox: String,
    /// Where `lazaret ps` reads the status (none for a purely in-process engine).
    pub status_path: Option<PathBuf>,
    /// How long the Domain stays up after its last session left (`linger`, issue #18): zero
    /// begins the teardown at the last leave; otherwise the daemon begins it once the Domain
    /// has stayed without a session that long.
    pub linger: std::time::Duration,
}

/// A registered Client Session (FR-10): its Client CLI, Session ID and Session Anchor.
#[derive(Debug)]
pub struct Registered {
    pub cli: CliId,
    pub session_id: SessionId,
    pub session_anchor: SessionAnchor,
    /// Escalation prompts for this session (FR-5): whoever shows its terminal reads them.
    pub prompts: PromptReceiver,
}

/// What Host Escalation needs to know of a registered session.
#[derive(Clone, Debug)]
pub struct SessionKeys {
    /// The session's Client CLI in the protocol core.
    pub cli: CliId,
    pub anchor: SessionAnchor,
    /// Whether its command runs on a terminal (interactive approval is possible).
    pub tty: bool,
    /// Set when the session ends (after its `Leave`): requests still waiting for a decision
    /// stop waiting. (Its running host commands are killed by the `Leave`'s
    /// `TerminateHostProcess`, its prompts withdrawn by its `WithdrawPrompt`: OR-3.)
    pub cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Where the session's escalation prompts go.
    pub prompts: PromptSender,
    /// Held while a prompt owns the session's terminal: one prompt at a time (TLA+ `Prompt`).
    pub terminal: std::sync::Arc<Mutex<()>>,
}

pub struct Engine {
    /// The edges the driver carries the core's escalation and prompt effects out through.
    pub(super) edges: super::driver_edges::EdgePorts,
    sessions: Mutex<std::collections::HashMap<String, SessionKeys>>,
    pub config: EngineConfig,
    registry: Mutex<Registry>,
    status: Mutex<DomainStatus>,
    shutdown: watch::Sender<Option<String>>,
    empty: Notify,
    /// The last session left and the Domain lingers (see [`EngineConfig::linger`]).
    idle: Notify,
    /// Sessions registered since the start (a Domain nobody used is torn down).
    registered_ever: std::sync::atomic::AtomicU64,
    /// The status file was withdrawn (teardown): sessions leaving afterwards do not write it
    /// again — a stale file would name a coordinator pid that another process may reuse.
    withdrawn: std::sync::atomic::AtomicBool,
    /// When the developer last pressed the paste key in each hosted session (image paste).
    pub paste_keys: super::paste_keys::PasteKeys,
}

impl Engine {
    /// An engine over a registry whose Domain is already published (phase Ready).
    pub fn new(config: EngineConfig, registry: Registry, status: DomainStatus) -> Engine {
        let (shutdown, _) = watch::channel(None);
        let engine = Engine {
            edges: Default::default(),
            sessions: Mutex::new(std::collections::HashMap::new()),
            config,
            registry: Mutex::new(registry),
            status: Mutex::new(status),
            shutdown,
            empty: Notify::new(),
            idle: Notify::new(),
            registered_ever: Default::default(),
            withdrawn: Default::default(),
            paste_keys: Default::default(),
        };
        engine.publish_status();
        engine
    }

    /// The registry, for lifecycle steps the owner of the engine takes (teardown, recovery):
    /// other steps go through [`Self::step`].
    pub fn registry(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a failure of the running Domain where `lazaret ps` shows it.
    pub fn report_failure(&self, what: String) {
        tracing::error!("{what}");
        if let Ok(mut st) = self.status.lock() {
            st.failures.push(what);
        }
        self.publish_status();
    }

    fn publish_status(&self) {
        let Some(path) = &self.config.status_path else {
            return;
        };
        let status = self.status.lock().unwrap_or_else(|p| p.into_inner());
        if self.withdrawn.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        if let Err(e) = super::status::write(&status, path) {
            tracing::warn!("writing {}: {e}", path.display());
        }
    }

    /// Removes the status file `lazaret ps` reads, for good (teardown begins).
    pub fn withdraw_status(&self) {
        let Some(path) = &self.config.status_path else {
            return;
        };
        // Under the status lock: a write in progress finishes first, none follows.
        let _status = self.status.lock().unwrap_or_else(|p| p.into_inner());
        self.withdrawn
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = std::fs::remove_file(path);
    }

    /// Registers a Client Session for an authenticated Client CLI, or says why not.
    pub fn register(
        &self,
        client_cli_id: &ComponentId,
        fingerprint: &str,
        workspace: &Path,
    ) -> Result<Registered, Refusal> {
        if fingerprint != self.config.fingerprint {
            return Err(Refusal::config_mismatch(
                &self.config.fingerprint,
                fingerprint,
            ));
        }
        if workspace != self.config.workspace {
            return Err(Refusal {
                code: RefusalCode::Binding,
                reason: format!(
                    "this coordinator serves the workspace {}, not {}",
                    self.config.workspace.display(),
                    workspace.display()
                ),
            });
        }
        let unavailable = |why: String| Refusal {
            code: RefusalCode::Unavailable,
            reason: format!("the Domain takes no new sessions now ({why}); try again"),
        };
        let cli = self
            .registry()
            .arrive()
            .map_err(|e| unavailable(e.to_string()))?;
        // BindSession and RefuseSession are this call's to carry out: the caller answers the
        // CLI with the registration, or with the refusal returned here.
        if let Err(e) = self.step(Event::Register { cli }).map(bound) {
            tracing::warn!("protocol step refused: {e}");
            let _ = self.step(Event::Refuse { cli }).map(refused);
            return Err(unavailable(e.to_string()));
        }
        let ids = SessionId::generate().and_then(|s| Ok((s, SessionAnchor::generate()?)));
        let (session_id, session_anchor) = match ids {
            Ok(ids) => ids,
            Err(e) => {
                self.leave(cli, None);
                return Err(unavailable(e.to_string()));
            }
        };
        if let Ok(mut st) = self.status.lock() {
            // Its `lazaret run` starts the process now and leaves when it ends.
            st.sessions.push(SessionStatus::registered(
                session_id.as_str(),
                client_cli_id.as_str(),
                now_unix_ms(),
            ));
        }
        let (prompt_tx, prompts) = routing::channel();
        if let Ok(mut keys) = self.sessions.lock() {
            keys.insert(
                session_id.as_str().to_owned(),
                SessionKeys {
                    cli,
                    anchor: session_anchor.clone(),
                    tty: false,
                    cancel: Default::default(),
                    prompts: prompt_tx,
                    terminal: Default::default(),
                },
            );
        }
        self.registered_ever
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.publish_status();
        tracing::info!(client_cli = %client_cli_id, session = %session_id.as_str(), "session registered");
        Ok(Registered {
            cli,
            session_id,
            session_anchor,
            prompts,
        })
    }

    /// Records what a session runs; returns the sandbox container to run it in.
    pub fn attach(&self, session: &SessionId, argv: &[String], tty: bool) -> String {
        self.attach_as(session, argv, tty, None)
    }

    /// As [`Engine::attach`], for a coordinator-owned session started by `started_by`: the
    /// first status that lists its command already says it is hosted (`lazaret events` and
    /// `ps` never see it as a `lazaret run` of its own).
    pub fn attach_hosted(&self, session: &SessionId, argv: &[String], started_by: &str) -> String {
        self.attach_as(session, argv, true, Some(started_by))
    }

    fn attach_as(
        &self,
        session: &SessionId,
        argv: &[String],
        tty: bool,
        hosted_by: Option<&str>,
    ) -> String {
        if let Some(k) = self
            .sessions
            .lock()
            .ok()
            .as_mut()
            .and_then(|m| m.get_mut(session.as_str()))
        {
            k.tty = tty;
        }
        if let Ok(mut st) = self.status.lock() {
            if let Some(s) = st
                .sessions
                .iter_mut()
                .find(|s| s.session_id == session.as_str())
            {
                s.command = argv.to_vec();
                if let Some(by) = hosted_by {
                    s.hosted = true;
                    s.started_by = by.to_owned();
                }
            }
        }
        self.publish_status();
        self.config.sandbox.clone()
    }

    /// Ends a Client Session (left, cancelled or disconnected). The last one begins the
    /// teardown at once, so that no new session slips in (FR-6); returns whether it did.
    ///
    /// The core's `Leave` withdraws the session's prompts and terminates its host processes
    /// through the driver's ports; its `Disconnect` and `DetachViewer` are the caller's (its
    /// connection closes, or the session host drops the ended session's streams), and so is
    /// the teardown this may begin (the daemon carries it out when this returns true).
    pub fn leave(&self, cli: CliId, session: Option<&SessionId>) -> bool {
        let stopping = self.leave_step(cli, self.config.linger.is_zero());
        if let (Some(session), Ok(mut keys)) = (session, self.sessions.lock()) {
            if let Some(k) = keys.remove(session.as_str()) {
                k.cancel.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        if let (Some(session), Ok(mut st)) = (session, self.status.lock()) {
            st.sessions.retain(|s| s.session_id != session.as_str());
        }
        self.publish_status();
        if stopping {
            self.empty.notify_one();
        } else if self.registry().sessions() == 0 {
            self.idle.notify_one();
        }
        stopping
    }

    /// A coordinator-owned session's clients or activity changed: `lazaret ps` shows them.
    pub fn set_hosted(&self, session: &SessionId, hosted: HostedStatus) {
        let HostedStatus {
            started_by,
            attached,
            running,
            layout_hint,
            last_output_unix_ms,
            attention,
            pending_escalations,
            idle_after_ms,
        } = hosted;
        if let Ok(mut st) = self.status.lock() {
            if let Some(s) = st
                .sessions
                .iter_mut()
                .find(|s| s.session_id == session.as_str())
            {
                s.hosted = true;
                s.started_by = started_by;
                s.attached = attached;
                s.running = running;
                s.layout_hint = layout_hint;
                s.last_output_unix_ms = last_output_unix_ms;
                s.attention = attention;
                s.pending_escalations = pending_escalations;
                s.idle_after_ms = idle_after_ms;
            }
        }
        self.publish_status();
    }

    /// Whether any session ever registered.
    pub fn had_sessions(&self) -> bool {
        self.registered_ever
            .load(std::sync::atomic::Ordering::SeqCst)
            > 0
    }

    /// The sessions as `lazaret ps` shows them.
    pub fn status_sessions(&self) -> Vec<SessionStatus> {
        self.status
            .lock()
            .map(|st| st.sessions.clone())
            .unwrap_or_default()
    }

    /// The keys of a registered session (None once it has ended).
    pub fn session_keys(&self, session_id: &str) -> Option<SessionKeys> {
        self.sessions.lock().ok()?.get(session_id).cloned()
    }

    /// The Domain this engine serves.
    pub fn domain_id(&self) -> &lazaret_protocol::DomainId {
        &self.config.domain_id
    }

    /// Resolves once the last Client Session has left.
    pub async fn wait_empty(&self) {
        self.empty.notified().await;
    }

    /// Resolves once the last Client Session has left a lingering Domain (it may have a new
    /// one by the time this is seen: [`Engine::begin_teardown`] then declines).
    pub async fn wait_idle(&self) {
        self.idle.notified().await;
    }

    /// Tells every session the Domain is going away, and why.
    pub fn shut_down(&self, reason: String) {
        self.shutdown.send_replace(Some(reason));
    }

    pub fn subscribe_shutdown(&self) -> watch::Receiver<Option<String>> {
        self.shutdown.subscribe()
    }
}
