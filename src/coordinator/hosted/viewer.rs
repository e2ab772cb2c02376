//! A client connection that views coordinator-owned sessions: what is queued for it, and how
//! much terminal output it has not taken yet (a slow client never slows a session down: past
//! [`LAG_LIMIT`] its output is dropped and it gets a fresh redraw once it has caught up).
//!
//! An attachment fed screen updates ([`Feed::Screen`], the TUI's panes) gets no output bytes:
//! output marks its screen as changed, and one update (the screen redrawn) is queued — at once
//! when updates are rare, else when the [`Pacer`] allows (at most one per frame under a flood).
//! While one is queued, more output adds nothing: the update is built when the connection's
//! writer takes it, so it shows everything up to then, and a slow client holds at most one.

use super::session::HostedSession;
use lazaret_client::pacer::Pacer;
use lazaret_protocol::messages::CoordinatorMessage;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::mpsc;

/// Output bytes queued for one attachment beyond which it is dropped until a redraw.
pub const LAG_LIMIT: usize = 8 * 1024 * 1024;

/// Time between two screen updates of one attachment under a flood (30 a second: a flood is
/// unreadable at any rate, and each update costs the client a frame; a lone change, such as a
/// key's echo, goes out at once whatever this is).
pub const FLOOD_FRAME: std::time::Duration = std::time::Duration::from_millis(33);

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
    /// The screen of the session attached on `channel`, for an attachment fed screen updates.
    Screen {
        channel: u32,
        session: Arc<HostedSession>,
        feed: Arc<ScreenFeed>,
    },
}

/// How an attachment receives output.
#[derive(Clone)]
pub enum Feed {
    Bytes,
    Screen(Arc<ScreenFeed>),
}

impl Feed {
    pub fn screen() -> Feed {
        Feed::Screen(Arc::new(ScreenFeed {
            state: Mutex::new(FeedState {
                pacer: Pacer::with_frame(Instant::now(), FLOOD_FRAME),
                queued: false,
            }),
            // Attachments are made while serving a connection, on the coordinator's runtime.
            rt: tokio::runtime::Handle::try_current().ok(),
        }))
    }
}

/// The pacing of one attachment's screen updates.
pub struct ScreenFeed {
    state: Mutex<FeedState>,
    /// Where a paced update waits for its turn.
    rt: Option<tokio::runtime::Handle>,
}

struct FeedState {
    pacer: Pacer,
    /// An update is queued (or waits for its turn) and not yet built.
    queued: bool,
}

impl FeedState {
    /// The screen changed at `now`: `None` when an update is already queued (it will show
    /// this change too), else how long the new update waits for its turn.
    fn ask(&mut self, now: Instant) -> Option<std::time::Duration> {
        if self.queued {
            return None;
        }
        self.queued = true;
        Some(self.pacer.wait(now))
    }

    fn taken(&mut self, now: Instant) {
        self.queued = false;
        self.pacer.drew(now);
    }
}

impl ScreenFeed {
    fn state(&self) -> std::sync::MutexGuard<'_, FeedState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The writer builds the queued update now (called under the session's lock, so output
    /// after this asks for the next one).
    pub fn taken(&self, now: Instant) {
        self.state().taken(now);
    }

    /// The screen changed: queues one update unless one is queued. False when the
    /// connection is gone.
    fn changed(
        self: &Arc<Self>,
        out: &OutboundSender,
        channel: u32,
        session: &Arc<HostedSession>,
    ) -> bool {
        let Some(wait) = self.state().ask(Instant::now()) else {
            return !out.is_closed();
        };
        let update = Outbound::Screen {
            channel,
            session: session.clone(),
            feed: self.clone(),
        };
        match &self.rt {
            Some(rt) if !wait.is_zero() => {
                let later = out.clone();
                rt.spawn(async move {
                    tokio::time::sleep(wait).await;
                    let _ = later.send(update);
                });
                !out.is_closed()
            }
            _ => out.send(update).is_ok(),
        }
    }
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
    /// Output bytes, or screen updates.
    pub feed: Feed,
}

impl Attachment {
    /// Queues output; past [`LAG_LIMIT`] it is dropped and one redraw is queued instead. For
    /// an attachment fed screen updates, queues one update (see [`ScreenFeed`]). False when
    /// the connection is gone.
    pub fn send_output(&self, bytes: &[u8], session: &Arc<HostedSession>) -> bool {
        if let Feed::Screen(feed) = &self.feed {
            return feed.changed(&self.out, self.channel, session);
        }
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

    /// The session's screen changed without output (a resize reflowed it): an attachment fed
    /// screen updates gets one; one fed bytes follows the program's own redraw.
    pub fn screen_changed(&self, session: &Arc<HostedSession>) {
        if let Feed::Screen(feed) = &self.feed {
            feed.changed(&self.out, self.channel, session);
        }
    }

    pub fn tell(&self, msg: CoordinatorMessage) {
        let _ = self.out.send(Outbound::Message(msg));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn state(now: Instant) -> FeedState {
        FeedState {
            pacer: Pacer::with_frame(now, FLOOD_FRAME),
            queued: false,
        }
    }

    #[test]
    fn one_update_at_a_time_and_a_change_after_it_was_built_asks_for_the_next() {
        let t0 = Instant::now();
        let mut st = state(t0);
        assert_eq!(st.ask(t0), Some(Duration::ZERO));
        // More output before the writer built it: nothing more is queued.
        for i in 1..100 {
            assert_eq!(st.ask(t0 + Duration::from_micros(i)), None);
        }
        st.taken(t0 + Duration::from_millis(1));
        assert!(st.ask(t0 + Duration::from_millis(2)).is_some());
    }

    #[test]
    fn a_flood_gets_one_update_per_frame_and_a_lone_echo_goes_at_once() {
        let t0 = Instant::now();
        let mut st = state(t0);
        let mut now = t0;
        let mut updates = 0;
        // Output every 100 µs for 200 ms; each update is built as soon as its wait is over.
        while now < t0 + Duration::from_millis(200) {
            if let Some(wait) = st.ask(now) {
                now += wait;
                st.taken(now);
                updates += 1;
            }
            now += Duration::from_micros(100);
        }
        let most = 3 + 200 / FLOOD_FRAME.as_millis() as u32 + 1;
        assert!(updates <= most && updates >= most - 3, "{updates} updates");
        // Quiet for a while, then one echo: no wait.
        let later = now + Duration::from_millis(100);
        assert_eq!(st.ask(later), Some(Duration::ZERO));
    }
}
