//! A client connection that views coordinator-owned sessions: what is queued for it, and how
//! much terminal output it has not taken yet (a slow client never slows a session down: past
//! [`LAG_LIMIT`] its output is dropped and it gets a fresh redraw once it has caught up).

use super::session::HostedSession;
use lazaret_protocol::messages::CoordinatorMessage;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Output bytes queued for one attachment beyond which it is dropped until a redraw.
pub const LAG_LIMIT: usize = 8 * 1024 * 1024;

/// Identifies a viewer within its coordinator run.
pub type ViewerKey = u64;

/// What the connection's writer sends next.
pub enum Outbound {
    Message(CoordinatorMessage),
    /// Terminal output of the session attached on `channel`.
    Data {
        channel: u32,
        bytes: Vec<u8>,
        queued: Arc<AtomicUsize>,
    },
    /// The attachment fell behind: send the session's current screen, then live output again.
    Redraw {
        channel: u32,
        session: Arc<HostedSession>,
        lagging: Arc<AtomicBool>,
    },
}

pub type OutboundSender = mpsc::UnboundedSender<Outbound>;

/// One viewer's attachment to one session: where its output goes.
#[derive(Clone)]
pub struct Attachment {
    pub viewer: ViewerKey,
    pub label: String,
    pub channel: u32,
    pub out: OutboundSender,
    /// Bytes queued and not yet written to the connection.
    pub queued: Arc<AtomicUsize>,
    /// Set when output was dropped; cleared by the redraw that follows.
    pub lagging: Arc<AtomicBool>,
    /// This client's terminal size for the session.
    pub size: (u16, u16),
}

impl Attachment {
    /// Queues output; past [`LAG_LIMIT`] it is dropped and one redraw is queued instead.
    /// False when the connection is gone.
    pub fn send_output(&self, bytes: &[u8], session: &Arc<HostedSession>) -> bool {
        if self.lagging.load(Ordering::SeqCst) {
            return !self.out.is_closed();
        }
        if self.queued.load(Ordering::SeqCst) > LAG_LIMIT {
            self.lagging.store(true, Ordering::SeqCst);
            return self
                .out
                .send(Outbound::Redraw {
                    channel: self.channel,
                    session: session.clone(),
                    lagging: self.lagging.clone(),
                })
                .is_ok();
        }
        self.queued.fetch_add(bytes.len(), Ordering::SeqCst);
        self.out
            .send(Outbound::Data {
                channel: self.channel,
                bytes: bytes.to_vec(),
                queued: self.queued.clone(),
            })
            .is_ok()
    }

    pub fn tell(&self, msg: CoordinatorMessage) {
        let _ = self.out.send(Outbound::Message(msg));
    }
}
