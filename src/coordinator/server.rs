//! The coordinator's endpoint: a Unix socket in the host-private runtime dir, peer uid checked,
//! enrollment, then mutual TLS (SR-9, SR-10) and the session protocol (FR-2, FR-10), driving
//! the [`Engine`].

use super::engine::Engine;
use crate::escalation::routing::{PromptEvent, PromptReceiver};
use anyhow::Context;
use lazaret_protocol::enrollment::{EnrollRequest, EnrollResponse};
use lazaret_protocol::framing::{self, FrameError};
use lazaret_protocol::messages::{
    self, ClientMessage, CoordinatorMessage, RefusalCode, SUPPORTED_VERSIONS,
};
use lazaret_protocol::{
    tls, ComponentId, Credentials, Expectation, ProtocolIdentity, Role, SessionId, TrustAnchor,
};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::UnixStream;
use tokio::sync::watch;

/// How long a connection may take to enroll, handshake and register.
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(10);

/// The socket side of a coordinator: its engine and this run's trust material.
pub struct Endpoint {
    pub engine: Arc<Engine>,
    /// Coordinator-owned sessions (issue #14).
    pub host: Arc<super::hosted::SessionHost>,
    pub anchor: TrustAnchor,
    pub server_config: Arc<rustls::ServerConfig>,
    /// The developer's uid: the only peer accepted (SR-10).
    pub uid: u32,
}

pub(super) type Conn = framing::FramedStream<tokio_rustls::server::TlsStream<UnixStream>>;

/// Serves one connection until its session ends.
pub async fn handle(endpoint: Arc<Endpoint>, stream: UnixStream) {
    if let Err(e) = serve(&endpoint, stream).await {
        tracing::info!("connection ended: {e:#}");
    }
}

async fn serve(endpoint: &Endpoint, stream: UnixStream) -> anyhow::Result<()> {
    let cred = stream
        .peer_cred()
        .context("reading the peer's credentials")?;
    if cred.uid() != endpoint.uid {
        anyhow::bail!("refused a connection from uid {} (SR-10)", cred.uid());
    }
    let opened = match tokio::time::timeout(SETUP_TIMEOUT, setup(endpoint, stream)).await {
        Ok(r) => r?,
        Err(_) => anyhow::bail!("the client took too long to register"),
    };
    let (mut conn, registered, client_cli_id) = match opened {
        Opened::Session(conn, registered, id) => (conn, registered, id),
        Opened::Client(conn, id, label) => {
            return super::client_conn::serve(endpoint, conn, id, label).await;
        }
    };
    let engine = &endpoint.engine;
    let super::engine::Registered {
        cli,
        session_id,
        prompts,
        ..
    } = registered;
    let mut shutdown = engine.subscribe_shutdown();
    let mut prompts = Prompts {
        events: prompts,
        waiting: HashMap::new(),
    };
    let held = endpoint.host.watch_held();
    let result = session_loop(
        engine,
        &mut conn,
        &session_id,
        &mut shutdown,
        &mut prompts,
        held,
    )
    .await;
    // Whatever ended the session (leave, disconnect, shutdown): the Client Session is gone,
    // and with it every prompt it was asked (their requests are cancelled).
    drop(prompts);
    let stopping = engine.leave(cli, Some(&session_id));
    tracing::info!(client_cli = %client_cli_id, session = %session_id.as_str(), "session ended");
    if let Ok(Ended::Left) = result {
        let left = CoordinatorMessage::Left {
            session_id,
            domain_stopping: stopping,
        };
        let _ = framing::send(&mut conn, &left).await;
        let _ = framing::close(&mut conn).await;
    }
    result.map(|_| ())
}

/// What a connection opened as.
enum Opened {
    /// `register`: a Client Session whose command its CLI runs (`lazaret run`, `lazaret exec`).
    Session(Conn, super::engine::Registered, ComponentId),
    /// `connect`: a client of coordinator-owned sessions (`lazaret tui`, `attach`, `ps`, `kill`).
    Client(Conn, ComponentId, String),
}

/// Enrollment, mutual TLS, version handshake, registration.
async fn setup(endpoint: &Endpoint, stream: UnixStream) -> anyhow::Result<Opened> {
    let engine = &endpoint.engine;
    let profile_name = &engine.config.profile;
    let domain_id = &engine.config.domain_id;
    let mut plain = framing::framed(stream);
    let EnrollRequest::Enroll { profile } = framing::recv(&mut plain).await?;
    if &profile != profile_name {
        let reason =
            format!("this coordinator runs Agent Profile {profile_name:?}, not {profile:?}");
        let refused = EnrollResponse::Refused {
            reason: reason.clone(),
        };
        framing::send(&mut plain, &refused).await?;
        anyhow::bail!(reason);
    }
    let client_cli_id = ComponentId::generate()?;
    let identity = ProtocolIdentity::new(
        Role::ClientCli,
        profile_name,
        domain_id.clone(),
        client_cli_id.clone(),
    )?;
    let creds: Credentials = endpoint.anchor.issue(&identity)?;
    let enrolled = EnrollResponse::Enrolled {
        client_cli_id: client_cli_id.clone(),
        ca_pem: endpoint.anchor.ca_pem(),
        cert_pem: creds.cert_pem(),
        key_pem: creds.key_pem(),
    };
    framing::send(&mut plain, &enrolled).await?;
    if !plain.read_buffer().is_empty() {
        anyhow::bail!("the client sent data before the TLS handshake");
    }
    let expected =
        Expectation::client_cli(profile_name, domain_id).with_component(client_cli_id.clone());
    let (tls, peer) = tls::accept(
        endpoint.server_config.clone(),
        plain.into_inner(),
        &expected,
    )
    .await?;
    let mut conn = framing::framed(tls);
    messages::server_handshake(&mut conn, SUPPORTED_VERSIONS).await?;

    let (named, config_fingerprint, profile, workspace) = match framing::recv(&mut conn).await? {
        ClientMessage::Register {
            client_cli_id,
            config_fingerprint,
            profile,
            workspace,
        } => (client_cli_id, config_fingerprint, profile, workspace),
        ClientMessage::Connect {
            client_cli_id: named,
            profile,
            workspace,
            label,
        } => {
            if let Err(r) = messages::check_register_binding(&peer, &named, &profile) {
                refuse(&mut conn, r.code, r.reason.clone()).await;
                anyhow::bail!(r.reason);
            }
            if workspace != engine.config.workspace {
                let reason = format!(
                    "this coordinator serves the workspace {}, not {}",
                    engine.config.workspace.display(),
                    workspace.display()
                );
                refuse(&mut conn, RefusalCode::Binding, reason.clone()).await;
                anyhow::bail!(reason);
            }
            let label: String = label
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
                .take(32)
                .collect();
            let answer = CoordinatorMessage::Connected {
                client_cli_id: client_cli_id.clone(),
            };
            framing::send(&mut conn, &answer).await?;
            return Ok(Opened::Client(conn, client_cli_id, label));
        }
        _ => {
            let reason = "the first request must be register or connect".to_owned();
            refuse(&mut conn, RefusalCode::Binding, reason.clone()).await;
            anyhow::bail!(reason);
        }
    };
    if let Err(r) = messages::check_register_binding(&peer, &named, &profile) {
        refuse(&mut conn, r.code, r.reason.clone()).await;
        anyhow::bail!(r.reason);
    }
    let registered = match engine.register(&client_cli_id, &config_fingerprint, &workspace) {
        Ok(r) => r,
        Err(r) => {
            refuse(&mut conn, r.code, r.reason.clone()).await;
            anyhow::bail!(r.reason);
        }
    };
    let answer = CoordinatorMessage::Registered {
        session_id: registered.session_id.clone(),
        session_anchor: registered.session_anchor.clone(),
    };
    if let Err(e) = framing::send(&mut conn, &answer).await {
        engine.leave(registered.cli, Some(&registered.session_id));
        return Err(e.into());
    }
    Ok(Opened::Session(conn, registered, client_cli_id))
}

pub(super) async fn refuse(conn: &mut Conn, code: RefusalCode, reason: String) {
    let _ = framing::send(conn, &CoordinatorMessage::Refused { code, reason }).await;
    let _ = framing::close(conn).await;
}

/// The next change of the held list (never, without one or once its feed is gone).
async fn held_changed(
    held: &mut Option<watch::Receiver<super::hosted::panel_feed::HeldList>>,
) -> Option<Vec<lazaret_protocol::held::HeldEntry>> {
    let Some(rx) = held.as_mut() else {
        return std::future::pending().await;
    };
    loop {
        if rx.changed().await.is_err() {
            return std::future::pending().await;
        }
        let now = rx.borrow_and_update().clone();
        if now.is_some() {
            return now;
        }
    }
}

/// How a session loop ended.
enum Ended {
    /// The client asked to leave (it gets `left` once the engine has been updated).
    Left,
    /// Disconnected, cancelled, or told to go by a shutdown.
    Gone,
}

/// The session's escalation prompts: routed to this connection only (FR-5), each answered
/// at most once.
struct Prompts {
    events: PromptReceiver,
    /// Prompts sent and not answered yet: where each answer goes.
    waiting: HashMap<String, std::sync::mpsc::Sender<crate::escalation::routing::Decided>>,
}

/// Answers the session's requests until it leaves, disconnects, or the Domain shuts down.
/// Under `default = "ask"` (`held` is then Some), once its command is attached it is told what
/// the sidecar holds: at once, then on each change.
async fn session_loop(
    engine: &Engine,
    conn: &mut Conn,
    session_id: &SessionId,
    shutdown: &mut watch::Receiver<Option<String>>,
    prompts: &mut Prompts,
    mut to_watch: Option<watch::Receiver<super::hosted::panel_feed::HeldList>>,
) -> anyhow::Result<Ended> {
    let mut held = None;
    loop {
        tokio::select! {
            Some(entries) = held_changed(&mut held) => {
                framing::send(conn, &CoordinatorMessage::Held { entries }).await?;
            }
            Some(event) = prompts.events.recv() => {
                let msg = match event {
                    PromptEvent::Ask { prompt, reply } => {
                        prompts.waiting.insert(prompt.request_id.clone(), reply);
                        CoordinatorMessage::EscalationPrompt { prompt }
                    }
                    // This session's prompts show on its own terminal only: it has no viewers,
                    // and a control centre is offered prompts of coordinator-owned sessions.
                    PromptEvent::Offer { request_id, viewer } => {
                        tracing::debug!(request = %request_id, %viewer, "offer of a `lazaret run` session's prompt not shown");
                        continue;
                    }
                    // Answered here already: the terminal closed the prompt itself.
                    PromptEvent::Withdraw { request_id, reason, .. } => {
                        if prompts.waiting.remove(&request_id).is_none() {
                            continue;
                        }
                        CoordinatorMessage::EscalationWithdrawn { request_id, reason }
                    }
                };
                framing::send(conn, &msg).await?;
            }
            changed = shutdown.changed() => {
                let reason = shutdown.borrow().clone();
                if changed.is_err() || reason.is_some() {
                    let reason = reason.unwrap_or_else(|| "the coordinator is stopping".into());
                    let _ = framing::send(conn, &CoordinatorMessage::Shutdown { reason }).await;
                    let _ = framing::close(conn).await;
                    return Ok(Ended::Gone);
                }
            }
            msg = framing::recv::<_, ClientMessage>(conn) => match msg {
                Ok(ClientMessage::Attach { session_id: sid, argv, tty, .. }) if &sid == session_id => {
                    let sandbox_container = engine.attach(&sid, &argv, tty);
                    let info = CoordinatorMessage::AttachInfo { session_id: sid, sandbox_container };
                    framing::send(conn, &info).await?;
                    if let Some(mut rx) = to_watch.take() {
                        let now = rx.borrow_and_update().clone();
                        if let Some(entries) = now {
                            framing::send(conn, &CoordinatorMessage::Held { entries }).await?;
                        }
                        held = Some(rx);
                    }
                }
                Ok(ClientMessage::Leave { session_id: sid }) if &sid == session_id => {
                    return Ok(Ended::Left);
                }
                Ok(ClientMessage::EscalationDecision { request_id, decision }) => {
                    match prompts.waiting.remove(&request_id) {
                        Some(reply) => {
                            tracing::info!(request = %request_id, ?decision, "developer decided");
                            let _ = reply.send(crate::escalation::routing::Decided::own(decision));
                        }
                        // Withdrawn in the meantime, or never asked: nothing to decide.
                        None => tracing::info!(request = %request_id, "late or unknown escalation decision ignored"),
                    }
                }
                Ok(ClientMessage::Cancel {}) => {
                    framing::send(conn, &CoordinatorMessage::Cancelled {}).await?;
                    let _ = framing::close(conn).await;
                    return Ok(Ended::Gone);
                }
                Ok(other) => {
                    let message = format!("unexpected request for this session: {other:?}");
                    let error = CoordinatorMessage::Error { message: message.clone() };
                    let _ = framing::send(conn, &error).await;
                    anyhow::bail!(message);
                }
                Err(FrameError::Closed) => return Ok(Ended::Gone),
                Err(e) => return Err(e.into()),
            },
        }
    }
}
