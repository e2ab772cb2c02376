//! A client connection of coordinator-owned sessions (`connect`, issue #14): start, list,
//! attach, detach, resize, end sessions, decide escalation prompts. Terminal bytes travel as
//! data frames (output to the client, input from it); everything else as messages.
//!
//! The connection's writer drains one queue, so a session's output reaches this client in
//! order and a slow client is dropped behind and redrawn instead of slowing the session.

use super::hosted::viewer::Outbound;
use super::hosted::SessionHost;
use super::server::{Conn, Endpoint};
use lazaret_protocol::framing::{self, Frame, FrameError};
use lazaret_protocol::messages::{ClientMessage, CoordinatorMessage};
use lazaret_protocol::ComponentId;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Largest scrollback replay a client may ask for.
const MAX_HISTORY: u32 = 100_000;

/// Serves one client connection until it closes or the Domain shuts down.
pub async fn serve(
    endpoint: &Endpoint,
    mut conn: Conn,
    client: ComponentId,
    label: String,
) -> anyhow::Result<()> {
    let host = endpoint.host.clone();
    let (out, mut queue) = tokio::sync::mpsc::unbounded_channel();
    let key = host.connect(&label, client.clone(), out);
    tracing::info!(client = %client, label = %label, "client connected");
    let mut shutdown = endpoint.engine.subscribe_shutdown();
    let result = loop {
        tokio::select! {
            Some(item) = queue.recv() => {
                if let Err(e) = write(&mut conn, item).await {
                    break Err(e.into());
                }
            }
            changed = shutdown.changed() => {
                let reason = shutdown.borrow().clone();
                if changed.is_err() || reason.is_some() {
                    // What was queued first (a session's last output, its exit) goes out first.
                    while let Ok(item) = queue.try_recv() {
                        if write(&mut conn, item).await.is_err() {
                            break;
                        }
                    }
                    let reason = reason.unwrap_or_else(|| "the coordinator is stopping".into());
                    let _ = framing::send(&mut conn, &CoordinatorMessage::Shutdown { reason }).await;
                    let _ = framing::close(&mut conn).await;
                    break Ok(());
                }
            }
            frame = framing::recv_frame::<_, ClientMessage>(&mut conn) => match frame {
                Ok(Frame::Data { channel, bytes }) => host.input(key, channel, &bytes),
                Ok(Frame::Message(msg)) => {
                    if let Err(e) = request(endpoint, &host, key, &mut conn, msg).await {
                        break Err(e);
                    }
                }
                Err(FrameError::Closed) => break Ok(()),
                Err(e) => break Err(e.into()),
            },
        }
    };
    host.disconnect(key);
    result
}

async fn write(conn: &mut Conn, item: Outbound) -> Result<(), FrameError> {
    match item {
        Outbound::Message(msg) => framing::send(conn, &msg).await,
        Outbound::Data {
            channel,
            bytes,
            queued,
        } => {
            let sent = framing::send_data(conn, channel, &bytes).await;
            queued.fetch_sub(bytes.len(), Ordering::SeqCst);
            sent
        }
        Outbound::Redraw {
            channel,
            session,
            lagging,
        } => {
            let bytes = session.redraw_for(&lagging);
            framing::send_data(conn, channel, &bytes).await
        }
        Outbound::Screen {
            channel,
            session,
            feed,
        } => {
            let bytes = session.screen_update(&feed);
            if bytes.is_empty() {
                // Output that changed nothing on the screen (e.g. a bell, a mode set twice).
                return Ok(());
            }
            framing::send_data(conn, channel, &bytes).await
        }
    }
}

async fn request(
    endpoint: &Endpoint,
    host: &Arc<SessionHost>,
    key: u64,
    conn: &mut Conn,
    msg: ClientMessage,
) -> anyhow::Result<()> {
    let error = |message: String| CoordinatorMessage::Error { message };
    let answer = match msg {
        ClientMessage::StartSession {
            token,
            argv,
            cwd,
            rows,
            cols,
            config_fingerprint,
        } => {
            // A start may take long (profile setup): the connection serves other requests
            // meanwhile, and the answer goes through the connection's queue.
            let (host, out) = (host.clone(), host.outbound(key));
            tokio::spawn(async move {
                let started = host
                    .start(key, argv, cwd, (rows, cols), &config_fingerprint)
                    .await;
                let answer = match started {
                    Ok(session) => CoordinatorMessage::SessionStarted { token, session },
                    Err(r) => CoordinatorMessage::StartRefused {
                        token,
                        code: r.code,
                        reason: r.reason,
                    },
                };
                if let Some(out) = out {
                    let _ = out.send(Outbound::Message(answer));
                }
            });
            return Ok(());
        }
        ClientMessage::AttachSession {
            session_id,
            rows,
            cols,
            history,
            updates,
        } => {
            let history = history.min(MAX_HISTORY) as usize;
            match host.attach(key, &session_id, (rows, cols), history, updates) {
                // `attached` and the screen were queued by the session itself.
                Ok(()) => return Ok(()),
                Err(why) => error(why),
            }
        }
        ClientMessage::DetachSession { session_id } => {
            host.detach(key, &session_id);
            CoordinatorMessage::Detached { session_id }
        }
        ClientMessage::ResizeSession {
            session_id,
            rows,
            cols,
        } => {
            host.resize(key, &session_id, (rows, cols));
            return Ok(());
        }
        ClientMessage::EndSession { session_id } => match host.end(key, &session_id) {
            Ok(()) => return Ok(()),
            Err(why) => error(why),
        },
        ClientMessage::SetLayoutHint { session_id, hint } => {
            match host.set_layout_hint(&session_id, hint) {
                Ok(()) => return Ok(()),
                Err(why) => error(why),
            }
        }
        ClientMessage::History {
            session_id,
            from_end,
            count,
        } => {
            let count = count.min(lazaret_protocol::messages::MAX_HISTORY_LINES);
            match host.history(&session_id, from_end as usize, count as usize) {
                Ok((total, lines)) => CoordinatorMessage::HistoryLines {
                    session_id,
                    from_end,
                    total: u32::try_from(total).unwrap_or(u32::MAX),
                    lines,
                },
                Err(why) => error(why),
            }
        }
        ClientMessage::ListSessions {} => CoordinatorMessage::Sessions {
            sessions: host.list(),
        },
        ClientMessage::WatchEscalations {} => {
            host.watch_escalations(key);
            return Ok(());
        }
        ClientMessage::Looked { session_id } => {
            host.looked(&session_id);
            return Ok(());
        }
        ClientMessage::EscalationDecision {
            request_id,
            decision,
        } => {
            // A late decision is told nothing: the prompt's withdrawal says what happened.
            let _ = host.decide(key, &request_id, decision);
            return Ok(());
        }
        ClientMessage::AllowDestination {
            target,
            private,
            save,
        } => {
            // Waits for the sidecar (up to half a second): off the event loop, the answer
            // through the connection's queue, the connection's other traffic unhindered.
            let (domain, profile, networking) = host.allow_context();
            let out = host.outbound(key);
            tokio::task::spawn_blocking(move || {
                let answer = super::hosted::net_allow::allow_destination(
                    &domain, &profile, networking, &target, private, save,
                );
                if let Some(out) = out {
                    let msg = CoordinatorMessage::DestinationAllowed {
                        target,
                        private,
                        save,
                        answer,
                    };
                    let _ = out.send(super::hosted::viewer::Outbound::Message(msg));
                }
            });
            return Ok(());
        }
        ClientMessage::DenyDestination { target } => {
            // Waits for the sidecar like an allow: off the event loop, through the queue.
            let (domain, profile, networking) = host.allow_context();
            let out = host.outbound(key);
            tokio::task::spawn_blocking(move || {
                let answer = super::hosted::net_allow::deny_destination(
                    &domain, &profile, networking, &target,
                );
                if let Some(out) = out {
                    let msg = CoordinatorMessage::DestinationDenied { target, answer };
                    let _ = out.send(super::hosted::viewer::Outbound::Message(msg));
                }
            });
            return Ok(());
        }
        ClientMessage::PublishPort {
            port,
            host_port,
            address,
        } => {
            // A podman process starts: off the event loop, the answer through the queue.
            let (host, out) = (host.clone(), host.outbound(key));
            tokio::task::spawn_blocking(move || {
                let error = host.publish_port(port, host_port, address).err();
                if let Some(out) = out {
                    let msg = CoordinatorMessage::Ports {
                        ports: host.ports(),
                        error,
                    };
                    let _ = out.send(super::hosted::viewer::Outbound::Message(msg));
                }
            });
            return Ok(());
        }
        ClientMessage::UnpublishPort { host_port } => CoordinatorMessage::Ports {
            error: host.unpublish_port(host_port).err(),
            ports: host.ports(),
        },
        ClientMessage::ListPorts {} => CoordinatorMessage::Ports {
            ports: host.ports(),
            error: None,
        },
        ClientMessage::ListEscalations {} => CoordinatorMessage::Escalations {
            pending: host.escalations(),
        },
        ClientMessage::DecideEscalation {
            request_id,
            decision,
        } => CoordinatorMessage::EscalationDecided {
            answer: host.decide_remote(key, &request_id, decision),
            request_id,
        },
        other => {
            let message = format!("unexpected request on a client connection: {other:?}");
            let _ = framing::send(conn, &error(message.clone())).await;
            let _ = endpoint;
            anyhow::bail!(message);
        }
    };
    framing::send(conn, &answer).await?;
    Ok(())
}
