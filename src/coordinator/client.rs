//! The Client CLI's side of the coordinator protocol: enroll, mutual TLS, version handshake,
//! register (FR-10), attach, leave — and noticing when the coordinator goes away.

use super::paths;
use super::session_api::{Attached, DomainSession, OpenPrompts, Prompter, SessionCommand};
use crate::domain::Domain;
use crate::terminal::cancel::Cancel;
use anyhow::{bail, Context};
use lazaret_protocol::enrollment::{EnrollRequest, EnrollResponse};
use lazaret_protocol::escalation::Decision;
use lazaret_protocol::framing::{self, FrameError};
use lazaret_protocol::messages::{
    self, ClientMessage, CoordinatorMessage, RefusalCode, SUPPORTED_VERSIONS,
};
use lazaret_protocol::{tls, ComponentId, Credentials, Expectation, SessionId};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::net::UnixStream;

pub type Conn = framing::FramedStream<tokio_rustls::client::TlsStream<UnixStream>>;

/// Why joining a running Domain did not work.
#[derive(Debug)]
pub enum JoinError {
    /// No coordinator listens (none runs, or one died): the caller may start one.
    NotRunning,
    /// The coordinator is starting or tearing down and takes no sessions now: retry.
    Unavailable(String),
    /// Anything else; not worth a retry.
    Failed(anyhow::Error),
}

impl<E: Into<anyhow::Error>> From<E> for JoinError {
    fn from(e: E) -> Self {
        JoinError::Failed(e.into())
    }
}

/// What a registered Client Session needs to know.
pub struct Registration<'a> {
    pub domain: &'a Domain,
    pub profile: &'a str,
    pub fingerprint: &'a str,
}

/// A registered Client Session on the Domain's coordinator.
pub struct ClientSession {
    rt: tokio::runtime::Runtime,
    conn: Conn,
    pub session_id: SessionId,
    pub client_cli_id: ComponentId,
    session_anchor: lazaret_protocol::SessionAnchor,
}

impl ClientSession {
    /// Joins the running coordinator of `reg.domain`.
    pub fn join(reg: &Registration<'_>) -> Result<ClientSession, JoinError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the client's event loop")?;
        let (conn, session_id, client_cli_id, session_anchor) = rt.block_on(register(reg))?;
        Ok(ClientSession {
            rt,
            conn,
            session_id,
            client_cli_id,
            session_anchor,
        })
    }
}

impl DomainSession for ClientSession {
    fn session_id(&self) -> &SessionId {
        &self.session_id
    }

    fn session_anchor(&self) -> &lazaret_protocol::SessionAnchor {
        &self.session_anchor
    }

    fn attach(&mut self, argv: &[String], cwd: &str, tty: bool) -> anyhow::Result<String> {
        let msg = ClientMessage::Attach {
            session_id: self.session_id.clone(),
            argv: argv.to_vec(),
            cwd: Some(cwd.to_owned()),
            tty,
        };
        let conn = &mut self.conn;
        self.rt.block_on(async {
            framing::send(conn, &msg).await?;
            match framing::recv::<_, CoordinatorMessage>(conn).await? {
                CoordinatorMessage::AttachInfo {
                    sandbox_container, ..
                } => Ok(sandbox_container),
                CoordinatorMessage::Shutdown { reason } => bail!("{reason}"),
                CoordinatorMessage::Refused { reason, .. } => bail!("attach refused: {reason}"),
                other => bail!("unexpected answer to attach: {other:?}"),
            }
        })
    }

    fn run_attached(
        &mut self,
        command: SessionCommand,
        prompter: Option<Arc<dyn Prompter>>,
    ) -> anyhow::Result<Attached> {
        let cancel = Cancel::default();
        let for_command = cancel.clone();
        let conn = &mut self.conn;
        let own = self.session_id.as_str().to_owned();
        self.rt.block_on(async {
            let mut task = tokio::task::spawn_blocking(move || command(for_command));
            let (answer, mut answers) =
                tokio::sync::mpsc::unbounded_channel::<(String, Option<Decision>)>();
            let mut open = OpenPrompts::default();
            let reason = loop {
                tokio::select! {
                    done = &mut task => {
                        return Ok(Attached::Exited(done.context("the command's thread")??));
                    }
                    Some((request_id, decision)) = answers.recv() => {
                        open.answered(&request_id);
                        let Some(decision) = decision else { continue };
                        let msg = ClientMessage::EscalationDecision { request_id, decision };
                        if let Err(e) = framing::send(conn, &msg).await {
                            tracing::warn!("sending the escalation decision: {e}");
                        }
                    }
                    msg = framing::recv::<_, CoordinatorMessage>(conn) => match msg {
                        Ok(CoordinatorMessage::EscalationPrompt { prompt }) => {
                            // Only this session's prompts are shown here (FR-5); the
                            // coordinator never sends others, and one that did is refused.
                            let prompter = if prompt.session_id == own {
                                prompter.as_ref()
                            } else {
                                tracing::warn!(request = %prompt.request_id, "denied a prompt of another session");
                                None
                            };
                            let answer = answer.clone();
                            open.open(prompter, prompt, move |id, d| {
                                let _ = answer.send((id, d));
                            });
                        }
                        Ok(CoordinatorMessage::EscalationWithdrawn { request_id, .. }) => {
                            open.withdraw(&request_id);
                        }
                        Ok(CoordinatorMessage::Shutdown { reason }) => break reason,
                        Ok(other) => break format!("unexpected message from the coordinator: {other:?}"),
                        Err(FrameError::Closed) => break "it closed the connection".into(),
                        Err(e) => {
                            tracing::info!("coordinator connection: {e}");
                            break "its connection broke (was it killed?)".into();
                        }
                    },
                }
            };
            drop(open);
            cancel.fire();
            let _ = task.await;
            Ok(Attached::CoordinatorGone(reason))
        })
    }

    fn leave(mut self: Box<Self>) -> anyhow::Result<bool> {
        let msg = ClientMessage::Leave {
            session_id: self.session_id.clone(),
        };
        let this = &mut *self;
        let conn = &mut this.conn;
        this.rt.block_on(async {
            framing::send(conn, &msg).await?;
            let stopping = match framing::recv::<_, CoordinatorMessage>(conn).await {
                Ok(CoordinatorMessage::Left {
                    domain_stopping, ..
                }) => domain_stopping,
                Ok(CoordinatorMessage::Shutdown { .. }) | Err(FrameError::Closed) => true,
                Ok(other) => {
                    tracing::warn!("unexpected answer to leave: {other:?}");
                    true
                }
                Err(e) => {
                    tracing::warn!("leaving: {e}");
                    true
                }
            };
            let _ = framing::close(conn).await;
            Ok(stopping)
        })
    }
}

/// Enrollment, mutual TLS and the version handshake with the coordinator listening on
/// `socket`: a connection authenticated as a new Client CLI of this run.
pub async fn open(
    socket: &std::path::Path,
    profile: &str,
    domain_id: &lazaret_protocol::DomainId,
) -> Result<(Conn, ComponentId), JoinError> {
    let stream = match UnixStream::connect(socket).await {
        Ok(s) => s,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Err(JoinError::NotRunning)
        }
        Err(e) => return Err(JoinError::Failed(e.into())),
    };
    let mut plain = framing::framed(stream);
    let sent = framing::send(
        &mut plain,
        &EnrollRequest::Enroll {
            profile: profile.to_owned(),
        },
    )
    .await;
    let answer = match sent {
        Ok(()) => framing::recv::<_, EnrollResponse>(&mut plain).await,
        Err(e) => Err(e),
    };
    let (client_cli_id, ca_pem, cert_pem, key_pem) = match answer {
        Ok(EnrollResponse::Enrolled {
            client_cli_id,
            ca_pem,
            cert_pem,
            key_pem,
        }) => (client_cli_id, ca_pem, cert_pem, key_pem),
        Ok(EnrollResponse::Refused { reason }) => {
            return Err(JoinError::Failed(anyhow::anyhow!(
                "enrollment refused: {reason}"
            )))
        }
        // A coordinator that closes at once is tearing down: retry.
        Err(FrameError::Closed | FrameError::Io(_)) => {
            return Err(JoinError::Unavailable(
                "the coordinator closed the connection".into(),
            ))
        }
        Err(e) => return Err(JoinError::Failed(e.into())),
    };
    let creds = Credentials::from_pem(cert_pem.as_bytes(), key_pem.as_bytes())?;
    let ca = pem_to_der(&ca_pem)?;
    let config = tls::client_config(&ca, &creds)?;
    let expected = Expectation::coordinator(profile, domain_id);
    let (tls_stream, _coordinator) = tls::connect(config, plain.into_inner(), &expected).await?;
    let mut conn = framing::framed(tls_stream);
    messages::client_handshake(&mut conn, SUPPORTED_VERSIONS, env!("CARGO_PKG_VERSION"))
        .await
        .map_err(anyhow::Error::from)?;
    Ok((conn, client_cli_id))
}

async fn register(
    reg: &Registration<'_>,
) -> Result<
    (
        Conn,
        SessionId,
        ComponentId,
        lazaret_protocol::SessionAnchor,
    ),
    JoinError,
> {
    let socket: PathBuf = paths::socket(reg.domain);
    let (mut conn, client_cli_id) = open(&socket, reg.profile, &reg.domain.id).await?;
    framing::send(
        &mut conn,
        &ClientMessage::Register {
            client_cli_id: client_cli_id.clone(),
            config_fingerprint: reg.fingerprint.to_owned(),
            profile: reg.profile.to_owned(),
            workspace: reg.domain.workspace.root.clone(),
        },
    )
    .await?;
    match framing::recv::<_, CoordinatorMessage>(&mut conn).await {
        Ok(CoordinatorMessage::Registered {
            session_id,
            session_anchor,
            ..
        }) => Ok((conn, session_id, client_cli_id, session_anchor)),
        Ok(CoordinatorMessage::Refused {
            code: RefusalCode::Unavailable,
            reason,
        }) => Err(JoinError::Unavailable(reason)),
        Ok(CoordinatorMessage::Refused { reason, .. }) => {
            Err(JoinError::Failed(anyhow::anyhow!("{reason}")))
        }
        Ok(other) => Err(JoinError::Failed(anyhow::anyhow!(
            "unexpected answer to register: {other:?}"
        ))),
        Err(FrameError::Closed | FrameError::Io(_)) => Err(JoinError::Unavailable(
            "the coordinator closed the connection".into(),
        )),
        Err(e) => Err(JoinError::Failed(e.into())),
    }
}

fn pem_to_der(pem: &str) -> anyhow::Result<rustls::pki_types::CertificateDer<'static>> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::from_pem_slice(pem.as_bytes())
        .map_err(|e| anyhow::anyhow!("the coordinator's CA certificate: {e}"))
}
