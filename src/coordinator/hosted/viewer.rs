//! A client connection that views coordinator-owned sessions: what is queued for it, and how
//! much terminal output it has not taken yet (a slow client never slows a session down: past
//! [`LAG_LIMIT`] its output is dropped and it gets a fresh redraw once it has caught up).
//!
//! An attachment fed screen updates ([`Feed::Screen`], the TUI's panes) gets no output bytes:
//! output marks its screen as changed, and one update is queued — at once when updates are
//! rare, else when the [`Pacer`] allows. While one is queued, more output adds nothing: the
//! update is built when the connection's writer takes it, so it shows everything up to then,
//! and a slow client holds at most one. An update holds the rows changed since the
//! attachment's previous one (the screen generation it shows), or the whole screen after a
//! scroll, a clear or a resize. Updates of a few rows (typing, a spinner) are paced like the
//! TUI's own frames ([`ROWS_FRAME`]); whole screens (a flood scrolling by) at most one per
//! [`FLOOD_FRAME`].

use super::screen_state::ScreenState;
use super::session::HostedSession;
use lazaret_client::pacer::Pacer;
use lazaret_protocol::messages::CoordinatorMessage;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::mpsc;

/// Output bytes queued for one attachment beyond which it is dropped until a redraw.
pub const LAG_LIMIT: usize = 8 * 1024 * 1024;

/// Time between two whole-screen updates of one attachment under a flood (30 a second: a
/// flood is unreadable at any rate, and each whole screen costs the client a parse and a
/// frame; a lone change goes out at once whatever this is).
pub const FLOOD_FRAME: std::time::Duration = std::time::Duration::from_millis(33);

/// Time between two updates of a few rows under sustained output (the TUI's own frame). Fast
/// typing (a key every 20–30 ms) must never wait: with whole-screen pacing, keys 22 ms apart
/// emptied the bucket and each echo waited ~11 ms for the next 33 ms slot.
pub const ROWS_FRAME: std::time::Duration = lazaret_client::pacer::FRAME;

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
            state: Mutex::new(FeedState::new(Instant::now())),
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
    /// Paces updates of a few rows.
    rows: Pacer,
    /// Paces whole-screen updates.
    whole: Pacer,
    /// An update is queued (or waits for its turn) and not yet built.
    queued: bool,
    /// The screen generation the client shows (0: nothing yet).
    shown: u64,
}

impl FeedState {
    fn new(now: Instant) -> Self {
        Self {
            rows: Pacer::with_frame(now, ROWS_FRAME),
            whole: Pacer::with_frame(now, FLOOD_FRAME),
            queued: false,
            shown: 0,
        }
    }

    /// The screen changed at `now` (`whole`: so much that the update will be the whole
    /// screen): `None` when an update is already queued (it will show this change too), else
    /// how long the new update waits for its turn.
    fn ask(&mut self, now: Instant, whole: bool) -> Option<std::time::Duration> {
        if self.queued {
            return None;
        }
        self.queued = true;
        let pacer = if whole {
            &mut self.whole
        } else {
            &mut self.rows
        };
        Some(pacer.wait(now))
    }

    /// An update was built at `now` (`whole`: the whole screen).
    fn taken(&mut self, now: Instant, whole: bool) {
        self.queued = false;
        self.rows.drew(now);
        if whole {
            self.whole.drew(now);
        }
    }
}

impl ScreenFeed {
    fn state(&self) -> std::sync::MutexGuard<'_, FeedState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The writer built the queued update now, up to screen generation `shown` (`whole`: the
    /// whole screen). Called under the session's lock, so output after this asks for the next
    /// one.
    pub fn taken(&self, now: Instant, shown: u64, whole: bool) {
        let mut st = self.state();
        st.taken(now, whole);
        st.shown = shown;
    }

    /// The screen generation the client shows.
    pub fn shown(&self) -> u64 {
        self.state().shown
    }

    /// The client was sent the whole screen of generation `shown` (on attach).
    pub fn shows(&self, shown: u64) {
        self.state().shown = shown;
    }

    /// The screen changed (`whole`: tells whether the update since a generation will be the
    /// whole screen): queues one update unless one is queued. False when the connection is
    /// gone.
    fn changed(
        self: &Arc<Self>,
        out: &OutboundSender,
        channel: u32,
        session: &Arc<HostedSession>,
        whole: impl FnOnce(u64) -> bool,
    ) -> bool {
        let asked = {
            let mut st = self.state();
            let whole = !st.queued && whole(st.shown);
            st.ask(Instant::now(), whole)
        };
        let Some(wait) = asked else {
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
    /// an attachment fed screen updates, queues one update (see [`ScreenFeed`]; `screen` is
    /// the session's screen after this output). False when the connection is gone.
    pub fn send_output(
        &self,
        bytes: &[u8],
        session: &Arc<HostedSession>,
        screen: &ScreenState,
    ) -> bool {
        if let Feed::Screen(feed) = &self.feed {
            return feed.changed(&self.out, self.channel, session, |shown| {
                screen.is_whole_update(shown)
            });
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
            feed.changed(&self.out, self.channel, session, |_| true);
        }
    }

    pub fn tell(&self, msg: CoordinatorMessage) {
        let _ = self.out.send(Outbound::Message(msg));
    }

    /// Queues the screen's last update now, for an attachment fed screen updates: one held
    /// back by the rate limit would otherwise come after the session's end is told, and the
    /// client, detached by then, would never show the session's last output. (The held-back
    /// one then finds nothing left to send.)
    pub fn flush_screen(&self, session: &Arc<HostedSession>) {
        if let Feed::Screen(feed) = &self.feed {
            let _ = self.out.send(Outbound::Screen {
                channel: self.channel,
                session: session.clone(),
                feed: feed.clone(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn state(now: Instant) -> FeedState {
        FeedState::new(now)
    }

    #[test]
    fn one_update_at_a_time_and_a_change_after_it_was_built_asks_for_the_next() {
        let t0 = Instant::now();
        let mut st = state(t0);
        assert_eq!(st.ask(t0, true), Some(Duration::ZERO));
        // More output before the writer built it: nothing more is queued.
        for i in 1..100 {
            assert_eq!(st.ask(t0 + Duration::from_micros(i), true), None);
        }
        st.taken(t0 + Duration::from_millis(1), true);
        assert!(st.ask(t0 + Duration::from_millis(2), true).is_some());
    }

    #[test]
    fn a_flood_gets_one_update_per_frame_and_a_lone_echo_goes_at_once() {
        let t0 = Instant::now();
        let mut st = state(t0);
        let mut now = t0;
        let mut updates = 0;
        // Output every 100 µs for 200 ms; each update is built as soon as its wait is over.
        while now < t0 + Duration::from_millis(200) {
            if let Some(wait) = st.ask(now, true) {
                now += wait;
                st.taken(now, true);
                updates += 1;
            }
            now += Duration::from_micros(100);
        }
        let most = 3 + 200 / FLOOD_FRAME.as_millis() as u32 + 1;
        assert!(updates <= most && updates >= most - 3, "{updates} updates");
        // Quiet for a while, then one echo: no wait.
        let later = now + Duration::from_millis(100);
        assert_eq!(st.ask(later, true), Some(Duration::ZERO));
    }

    #[test]
    fn fast_typing_never_waits_but_a_flood_of_whole_screens_does() {
        let t0 = Instant::now();
        let mut st = state(t0);
        // A key every 20 ms for 2 s, each echo a row update: none waits.
        for i in 0..100 {
            let now = t0 + Duration::from_millis(20 * i);
            assert_eq!(st.ask(now, false), Some(Duration::ZERO), "key {i}");
            st.taken(now, false);
        }
        // Whole screens at the same rate wait for their 33 ms slots.
        let later = t0 + Duration::from_secs(3);
        let waited = (0..100)
            .filter(|i| {
                let now = later + Duration::from_millis(20 * i);
                let wait = st.ask(now, true).unwrap_or_default();
                st.taken(now + wait, true);
                !wait.is_zero()
            })
            .count();
        assert!(waited > 30, "{waited} whole screens waited");
    }
}
