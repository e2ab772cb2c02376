//! The coordinator's endpoint: a Unix socket in the host-private runtime dir, peer uid checked,
//! enrollment, then mutual TLS (SR-9, SR-10) and the session protocol (FR-2, FR-10).

use super::event::Event;
use super::registry::Registry;
use super::state::CliId;
use super::status::{now_unix_ms, DomainStatus, SessionStatus};
use anyhow::Context;
use lazaret_protocol::enrollment::{EnrollRequest, EnrollResponse};
use lazaret_protocol::framing::{self, FrameError};
use lazaret_protocol::messages::{
    self, ClientMessage, CoordinatorMessage, Refusal, RefusalCode, SUPPORTED_VERSIONS,
};
use lazaret_protocol::{
    tls, ComponentId, Credentials, Expectation, ProtocolIdentity, Role, SessionAnchor, SessionId,
    TrustAnchor,
};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::UnixStream;
use tokio::sync::{watch, Notify};

/// How long a connection may take to enroll, handshake and register.
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(10);

/// What every connection handler shares.
pub struct Shared {
    pub registry: Mutex<Registry>,
    pub status: Mutex<DomainStatus>,
    pub status_path: PathBuf,
    pub anchor: TrustAnchor,
    pub server_config: Arc<rustls::ServerConfig>,
    pub profile: String,
    pub domain_id: lazaret_protocol::DomainId,
    pub workspace: PathBuf,
    pub fingerprint: String,
    pub sandbox: String,
    pub uid: u32,
    /// Set when the Domain is going away: every session is told why and disconnected.
    pub shutdown: watch::Sender<Option<String>>,
    /// Signalled when the last Client Session left.
    pub empty: Notify,
}

impl Shared {
    pub fn publish_status(&self) {
        if let Ok(status) = self.status.lock() {
            if let Err(e) = status.write(&self.status_path) {
                tracing::warn!("writing {}: {e}", self.status_path.display());
            }
        }
    }
}

/// Serves one connection until its session ends.
pub async fn handle(shared: Arc<Shared>, stream: UnixStream) {
    match serve(&shared, stream).await {
        Ok(()) => {}
        Err(e) => tracing::info!("connection ended: {e:#}"),
    }
}

async fn serve(shared: &Arc<Shared>, stream: UnixStream) -> anyhow::Result<()> {
    let cred = stream
        .peer_cred()
        .context("reading the peer's credentials")?;
    if cred.uid() != shared.uid {
        anyhow::bail!("refused a connection from uid {} (SR-10)", cred.uid());
    }
    let setup = tokio::time::timeout(SETUP_TIMEOUT, setup(shared, stream)).await;
    let (mut conn, cli, session_id, client_cli_id) = match setup {
        Ok(r) => r?,
        Err(_) => anyhow::bail!("the client took too long to register"),
    };
    let mut shutdown = shared.shutdown.subscribe();
    let result = session_loop(shared, &mut conn, &session_id, &mut shutdown).await;
    // Whatever ended the session (leave, disconnect, shutdown): the Client Session is gone. The
    // last one begins the teardown at once, so that no new session can slip in (FR-6).
    let stopping = {
        let mut reg = lock(&shared.registry)?;
        let _ = reg.record(Event::Leave { cli });
        reg.sessions() == 0 && reg.begin_teardown_if_idle()
    };
    if let Ok(mut st) = shared.status.lock() {
        st.sessions.retain(|s| s.session_id != session_id.as_str());
    }
    shared.publish_status();
    tracing::info!(client_cli = %client_cli_id, session = %session_id.as_str(), "session ended");
    if let Ok(Ended::Left) = result {
        let left = CoordinatorMessage::Left {
            session_id: session_id.clone(),
            domain_stopping: stopping,
        };
        let _ = framing::send(&mut conn, &left).await;
        let _ = framing::close(&mut conn).await;
    }
    if stopping {
        shared.empty.notify_one();
    }
    result.map(|_| ())
}

/// How a session loop ended.
enum Ended {
    /// The client asked to leave (it gets `left` once the registry has been updated).
    Left,
    /// Disconnected, cancelled, or told to go by a shutdown.
    Gone,
}

type Conn = framing::FramedStream<tokio_rustls::server::TlsStream<UnixStream>>;

fn lock<T>(m: &Mutex<T>) -> anyhow::Result<std::sync::MutexGuard<'_, T>> {
    m.lock()
        .map_err(|_| anyhow::anyhow!("coordinator state poisoned"))
}

/// Enrollment, mutual TLS, version handshake, registration.
async fn setup(
    shared: &Arc<Shared>,
    stream: UnixStream,
) -> anyhow::Result<(Conn, CliId, SessionId, ComponentId)> {
    let mut plain = framing::framed(stream);
    let EnrollRequest::Enroll { profile } = framing::recv(&mut plain).await?;
    if profile != shared.profile {
        let reason = format!(
            "this coordinator runs Agent Profile {:?}, not {profile:?}",
            shared.profile
        );
        framing::send(
            &mut plain,
            &EnrollResponse::Refused {
                reason: reason.clone(),
            },
        )
        .await?;
        anyhow::bail!(reason);
    }
    let client_cli_id = ComponentId::generate()?;
    let identity = ProtocolIdentity::new(
        Role::ClientCli,
        &shared.profile,
        shared.domain_id.clone(),
        client_cli_id.clone(),
    )?;
    let creds: Credentials = shared.anchor.issue(&identity)?;
    framing::send(
        &mut plain,
        &EnrollResponse::Enrolled {
            client_cli_id: client_cli_id.clone(),
            ca_pem: shared.anchor.ca_pem(),
            cert_pem: creds.cert_pem(),
            key_pem: creds.key_pem(),
        },
    )
    .await?;
    if !plain.read_buffer().is_empty() {
        anyhow::bail!("the client sent data before the TLS handshake");
    }
    let stream = plain.into_inner();
    let expected = Expectation::client_cli(&shared.profile, &shared.domain_id)
        .with_component(client_cli_id.clone());
    let (tls, peer) = tls::accept(shared.server_config.clone(), stream, &expected).await?;
    let mut conn = framing::framed(tls);
    messages::server_handshake(&mut conn, SUPPORTED_VERSIONS).await?;

    let msg: ClientMessage = framing::recv(&mut conn).await?;
    let ClientMessage::Register {
        client_cli_id: named,
        config_fingerprint,
        profile,
        workspace,
    } = msg
    else {
        refuse(
            &mut conn,
            RefusalCode::Binding,
            "the first request must be register".into(),
        )
        .await;
        anyhow::bail!("protocol violation: no register");
    };
    if let Err(r) = messages::check_register_binding(&peer, &named, &profile) {
        refuse(&mut conn, r.code, r.reason.clone()).await;
        anyhow::bail!(r.reason);
    }
    if config_fingerprint != shared.fingerprint {
        let r = Refusal::config_mismatch(&shared.fingerprint, &config_fingerprint);
        refuse(&mut conn, r.code, r.reason.clone()).await;
        anyhow::bail!(r.reason);
    }
    if workspace != shared.workspace {
        let reason = format!(
            "this coordinator serves the workspace {}, not {}",
            shared.workspace.display(),
            workspace.display()
        );
        refuse(&mut conn, RefusalCode::Binding, reason.clone()).await;
        anyhow::bail!(reason);
    }
    let registered = {
        let mut reg = lock(&shared.registry)?;
        match reg.arrive() {
            Ok(cli) => match reg.record(Event::Register { cli }) {
                Ok(()) => Ok(cli),
                Err(e) => {
                    let _ = reg.record(Event::Refuse { cli });
                    Err(e.to_string())
                }
            },
            Err(e) => Err(e.to_string()),
        }
    };
    let cli = match registered {
        Ok(cli) => cli,
        Err(why) => {
            let reason = format!("the Domain takes no new sessions now ({why}); try again");
            refuse(&mut conn, RefusalCode::Unavailable, reason.clone()).await;
            anyhow::bail!(reason);
        }
    };
    let session_id = SessionId::generate()?;
    let session_anchor = SessionAnchor::generate()?;
    framing::send(
        &mut conn,
        &CoordinatorMessage::Registered {
            session_id: session_id.clone(),
            session_anchor,
        },
    )
    .await?;
    if let Ok(mut st) = shared.status.lock() {
        st.sessions.push(SessionStatus {
            session_id: session_id.as_str().to_owned(),
            client_cli_id: client_cli_id.as_str().to_owned(),
            command: Vec::new(),
            started_unix_ms: now_unix_ms(),
        });
    }
    shared.publish_status();
    tracing::info!(client_cli = %client_cli_id, session = %session_id.as_str(), "session registered");
    Ok((conn, cli, session_id, client_cli_id))
}

async fn refuse(conn: &mut Conn, code: RefusalCode, reason: String) {
    let _ = framing::send(conn, &CoordinatorMessage::Refused { code, reason }).await;
    let _ = framing::close(conn).await;
}

/// Answers the session's requests until it leaves, disconnects, or the Domain shuts down.
async fn session_loop(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    session_id: &SessionId,
    shutdown: &mut watch::Receiver<Option<String>>,
) -> anyhow::Result<Ended> {
    loop {
        tokio::select! {
            changed = shutdown.changed() => {
                let reason = shutdown.borrow().clone();
                if changed.is_err() || reason.is_some() {
                    let reason = reason.unwrap_or_else(|| "the coordinator is stopping".into());
                    let _ = framing::send(conn, &CoordinatorMessage::Shutdown { reason }).await;
                    let _ = framing::close(conn).await;
                    return Ok(Ended::Gone);
                }
            }
            msg = framing::recv::<_, ClientMessage>(conn) => {
                match msg {
                    Ok(ClientMessage::Attach { session_id: sid, argv, .. }) if &sid == session_id => {
                        if let Ok(mut st) = shared.status.lock() {
                            if let Some(s) = st.sessions.iter_mut().find(|s| s.session_id == sid.as_str()) {
                                s.command = argv;
                            }
                        }
                        shared.publish_status();
                        framing::send(conn, &CoordinatorMessage::AttachInfo {
                            session_id: sid,
                            sandbox_container: shared.sandbox.clone(),
                        }).await?;
                    }
                    Ok(ClientMessage::Leave { session_id: sid }) if &sid == session_id => {
                        return Ok(Ended::Left);
                    }
                    Ok(ClientMessage::Cancel {}) => {
                        framing::send(conn, &CoordinatorMessage::Cancelled {}).await?;
                        let _ = framing::close(conn).await;
                        return Ok(Ended::Gone);
                    }
                    Ok(other) => {
                        let message = format!("unexpected request for this session: {other:?}");
                        let _ = framing::send(conn, &CoordinatorMessage::Error { message: message.clone() }).await;
                        anyhow::bail!(message);
                    }
                    Err(FrameError::Closed) => return Ok(Ended::Gone),
                    Err(e) => return Err(e.into()),
                }
            }
        }
    }
}
