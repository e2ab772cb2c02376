//! A client connection to one Domain's Session Coordinator (`connect`): enrollment, mutual TLS
//! and the version handshake, then requests about coordinator-owned sessions.

use crate::open::{open, Conn, JoinError};
use lazaret_protocol::escalation::{DecideAnswer, Decision, PendingEscalation};
use lazaret_protocol::framing::{self, Frame, FrameError};
use lazaret_protocol::messages::{ClientMessage, CoordinatorMessage, RefusalCode, SessionInfo};
use lazaret_protocol::{ComponentId, DomainId};
use std::path::Path;

/// Where a Domain's coordinator listens and what it is.
#[derive(Clone, Debug)]
pub struct DomainAddress {
    pub socket: std::path::PathBuf,
    pub profile: String,
    pub domain_id: DomainId,
    pub workspace: std::path::PathBuf,
}

/// An open client connection.
pub struct Connection {
    pub conn: Conn,
    pub client_cli_id: ComponentId,
}

/// Connects as a client labelled `label` ("tui", "attach", "ps", …).
pub async fn connect(addr: &DomainAddress, label: &str) -> Result<Connection, JoinError> {
    let (mut conn, client_cli_id) = open(&addr.socket, &addr.profile, &addr.domain_id).await?;
    let hello = ClientMessage::Connect {
        client_cli_id: client_cli_id.clone(),
        profile: addr.profile.clone(),
        workspace: addr.workspace.clone(),
        label: label.to_owned(),
    };
    framing::send(&mut conn, &hello).await?;
    match framing::recv::<_, CoordinatorMessage>(&mut conn).await {
        Ok(CoordinatorMessage::Connected { .. }) => Ok(Connection {
            conn,
            client_cli_id,
        }),
        Ok(CoordinatorMessage::Refused { reason, .. }) => {
            Err(JoinError::Failed(anyhow::anyhow!("{reason}")))
        }
        Ok(other) => Err(JoinError::Failed(anyhow::anyhow!(
            "unexpected answer to connect: {other:?}"
        ))),
        Err(FrameError::Closed | FrameError::Io(_)) => Err(JoinError::Unavailable(
            "the coordinator closed the connection".into(),
        )),
        Err(e) => Err(JoinError::Failed(e.into())),
    }
}

impl Connection {
    /// Waits for the answer to a request, skipping what is not an answer (output of sessions
    /// attached earlier, prompts are not expected before the first attach).
    async fn answer(&mut self) -> Result<CoordinatorMessage, JoinError> {
        loop {
            match framing::recv_frame::<_, CoordinatorMessage>(&mut self.conn).await {
                Ok(Frame::Message(m)) => return Ok(m),
                Ok(Frame::Data { .. }) => continue,
                Err(FrameError::Closed | FrameError::Io(_)) => {
                    return Err(JoinError::Unavailable(
                        "the coordinator closed the connection".into(),
                    ))
                }
                Err(e) => return Err(JoinError::Failed(e.into())),
            }
        }
    }

    /// The Domain's sessions.
    pub async fn list(&mut self) -> Result<Vec<SessionInfo>, JoinError> {
        framing::send(&mut self.conn, &ClientMessage::ListSessions {}).await?;
        match self.answer().await? {
            CoordinatorMessage::Sessions { sessions } => Ok(sessions),
            other => Err(unexpected("list_sessions", other)),
        }
    }

    /// Starts a coordinator-owned session. A Domain that is tearing down answers Unavailable:
    /// the caller starts again.
    pub async fn start(
        &mut self,
        argv: &[String],
        cwd: &Path,
        size: (u16, u16),
        fingerprint: &str,
    ) -> Result<SessionInfo, JoinError> {
        let msg = ClientMessage::StartSession {
            token: 1,
            argv: argv.to_vec(),
            cwd: cwd.display().to_string(),
            rows: size.0,
            cols: size.1,
            config_fingerprint: fingerprint.to_owned(),
        };
        framing::send(&mut self.conn, &msg).await?;
        match self.answer().await? {
            CoordinatorMessage::SessionStarted { session, .. } => Ok(session),
            CoordinatorMessage::StartRefused {
                code: RefusalCode::Unavailable,
                reason,
                ..
            } => Err(JoinError::Unavailable(reason)),
            CoordinatorMessage::StartRefused { reason, .. } => {
                Err(JoinError::Failed(anyhow::anyhow!("{reason}")))
            }
            other => Err(unexpected("start_session", other)),
        }
    }

    /// Ends a session.
    pub async fn end(&mut self, session: &lazaret_protocol::SessionId) -> anyhow::Result<()> {
        let msg = ClientMessage::EndSession {
            session_id: session.clone(),
        };
        framing::send(&mut self.conn, &msg).await?;
        // Errors come back as `error`; success is silent: ask for the list to be sure the
        // request was read before closing.
        framing::send(&mut self.conn, &ClientMessage::ListSessions {}).await?;
        match self.answer().await.map_err(join_err)? {
            CoordinatorMessage::Error { message } => anyhow::bail!("{message}"),
            _ => Ok(()),
        }
    }

    /// The Domain's escalation prompts waiting for a decision.
    pub async fn escalations(&mut self) -> Result<Vec<PendingEscalation>, JoinError> {
        framing::send(&mut self.conn, &ClientMessage::ListEscalations {}).await?;
        match self.answer().await? {
            CoordinatorMessage::Escalations { pending } => Ok(pending),
            CoordinatorMessage::Error { message } => {
                Err(JoinError::Failed(anyhow::anyhow!("{message}")))
            }
            other => Err(unexpected("list_escalations", other)),
        }
    }

    /// Decides the prompt of `request_id`: the coordinator's answer says whether this
    /// decision was the first, or what became of the request.
    /// Publishes, unpublishes or lists the Domain's published ports (`msg` is one of
    /// `PublishPort`, `UnpublishPort`, `ListPorts`): the ports after it, and why the change
    /// was not made.
    pub async fn ports(
        &mut self,
        msg: ClientMessage,
    ) -> Result<
        (
            Vec<lazaret_protocol::messages::PublishedPort>,
            Option<String>,
        ),
        JoinError,
    > {
        framing::send(&mut self.conn, &msg).await?;
        match self.answer().await? {
            CoordinatorMessage::Ports { ports, error } => Ok((ports, error)),
            CoordinatorMessage::Error { message } => {
                Err(JoinError::Failed(anyhow::anyhow!("{message}")))
            }
            other => Err(unexpected("ports", other)),
        }
    }

    pub async fn decide(
        &mut self,
        request_id: &str,
        decision: Decision,
    ) -> Result<DecideAnswer, JoinError> {
        let msg = ClientMessage::DecideEscalation {
            request_id: request_id.to_owned(),
            decision,
        };
        framing::send(&mut self.conn, &msg).await?;
        loop {
            match self.answer().await? {
                CoordinatorMessage::EscalationDecided {
                    request_id: r,
                    answer,
                } if r == request_id => return Ok(answer),
                // Deciding makes this client a control centre: it is offered the prompts and
                // told what control centres are told (the decision itself changes the
                // session's activity).
                CoordinatorMessage::EscalationPrompt { .. }
                | CoordinatorMessage::EscalationWithdrawn { .. }
                | CoordinatorMessage::SessionActivity { .. }
                | CoordinatorMessage::SessionExited { .. }
                | CoordinatorMessage::DomainState { .. }
                | CoordinatorMessage::Denials { .. }
                | CoordinatorMessage::Held { .. } => continue,
                CoordinatorMessage::Error { message } => {
                    return Err(JoinError::Failed(anyhow::anyhow!("{message}")))
                }
                other => return Err(unexpected("decide_escalation", other)),
            }
        }
    }

    /// Becomes a control centre that only watches (`lazaret events`): told every session's
    /// activity, offered every waiting prompt, told when prompts are withdrawn and sessions
    /// exit. It starts nothing and attaches to nothing, so it keeps no Domain up (FR-6).
    pub async fn watch(&mut self) -> Result<(), JoinError> {
        framing::send(&mut self.conn, &ClientMessage::WatchEscalations {}).await?;
        Ok(())
    }

    /// The next message the coordinator sends (a watching client's receive loop).
    pub async fn next(&mut self) -> Result<CoordinatorMessage, JoinError> {
        self.answer().await
    }

    pub async fn close(mut self) {
        let _ = framing::close(&mut self.conn).await;
    }
}

fn unexpected(what: &str, got: CoordinatorMessage) -> JoinError {
    JoinError::Failed(anyhow::anyhow!("unexpected answer to {what}: {got:?}"))
}

/// A [`JoinError`] as a plain error.
pub fn join_err(e: JoinError) -> anyhow::Error {
    match e {
        JoinError::NotRunning => anyhow::anyhow!("the Domain is not running"),
        JoinError::Unavailable(why) => anyhow::anyhow!("the Domain is not available: {why}"),
        JoinError::Failed(e) => e,
    }
}
