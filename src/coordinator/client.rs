//! The Client CLI's side of the coordinator protocol: enroll, mutual TLS, version handshake,
//! register (FR-10), attach, leave — and noticing when the coordinator goes away.

use super::paths;
use super::session_api::{
    Attached, DomainSession, HeldSink, OpenPrompts, Prompter, SessionCommand,
};
use crate::domain::Domain;
use crate::terminal::cancel::Cancel;
use anyhow::{bail, Context};
use lazaret_protocol::escalation::Decision;
use lazaret_protocol::framing::{self, FrameError};
use lazaret_protocol::messages::{ClientMessage, CoordinatorMessage, RefusalCode};
use lazaret_protocol::{ComponentId, SessionId};
use std::path::PathBuf;
use std::sync::Arc;

pub use lazaret_client::open::{open, Conn, JoinError};

/// What a registered Client Session needs to know.
pub struct Registration<'a> {
    pub domain: &'a Domain,
    pub profile: &'a str,
    pub fingerprint: &'a str,
    /// `lazaret run --linger`: for the coordinator this CLI may start (None: the profile's).
    pub linger: Option<u64>,
}

/// A registered Client Session on the Domain's coordinator.
pub struct ClientSession {
    rt: tokio::runtime::Runtime,
    conn: Conn,
    pub session_id: SessionId,
    pub client_cli_id: ComponentId,
    session_anchor: lazaret_protocol::SessionAnchor,
    /// Where the coordinator's `held` lists go (none: they are dropped).
    held: Option<HeldSink>,
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
            held: None,
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
            match recv_answer(conn).await? {
                CoordinatorMessage::AttachInfo {
                    sandbox_container, ..
                } => Ok(sandbox_container),
                CoordinatorMessage::Shutdown { reason } => bail!("{reason}"),
                CoordinatorMessage::Refused { reason, .. } => bail!("attach refused: {reason}"),
                other => bail!("unexpected answer to attach: {other:?}"),
            }
        })
    }

    fn watch_held(&mut self, sink: HeldSink) {
        self.held = Some(sink);
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
        let held = self.held.clone();
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
                        Ok(CoordinatorMessage::EscalationWithdrawn { request_id, reason }) => {
                            open.withdraw(&request_id, &reason);
                        }
                        // What the sidecar holds under `default = "ask"`, for this terminal.
                        Ok(CoordinatorMessage::Held { entries }) => {
                            if let Some(sink) = &held {
                                sink(entries);
                            }
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
            let stopping = match recv_answer(conn).await {
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

/// The coordinator's answer to a request, past what it pushes meanwhile (`held`, which only
/// [`DomainSession::run_attached`] shows).
async fn recv_answer(conn: &mut Conn) -> Result<CoordinatorMessage, FrameError> {
    loop {
        match framing::recv::<_, CoordinatorMessage>(conn).await? {
            CoordinatorMessage::Held { .. } => continue,
            other => return Ok(other),
        }
    }
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
