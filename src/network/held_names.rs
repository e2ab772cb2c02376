//! The board of DNS names the forwarder holds under `default = "ask"` ([`super::ask`]): which
//! names wait for the developer's decision now, since when, until when, and how many queries
//! for each; and which names nobody decided in time (refused for the rest of the run unless the
//! run allows them).
//!
//! The caller creates the board, hands a clone to [`super::DnsProxy::with_held`] and reads it
//! with [`HeldNames::snapshot`] (to write `held.json`). Only the forwarder changes it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The most expired names remembered; past it the oldest is forgotten (a forgotten name is held
/// again, with a fresh deadline, the next time it is asked for).
pub const MAX_EXPIRED: usize = 4096;

/// One held name, as [`HeldNames::snapshot`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldName {
    /// As the rules see it: lower case, no trailing dot.
    pub name: String,
    /// When it was first held (Unix seconds).
    pub since_unix: u64,
    /// When it is refused if nobody decides (Unix seconds).
    pub deadline_unix: u64,
    /// Queries held for it so far (while it stayed on the board).
    pub queries: u64,
}

impl HeldName {
    /// The entry `held.json` carries for this name (protocol `dns`).
    pub fn to_entry(&self) -> lazaret_protocol::held::HeldEntry {
        lazaret_protocol::held::HeldEntry {
            target: self.name.clone(),
            protocol: "dns".to_string(),
            since: self.since_unix,
            deadline: self.deadline_unix,
            count: self.queries,
        }
    }
}

/// The shared board; clones share it.
#[derive(Clone, Debug, Default)]
pub struct HeldNames(Arc<Mutex<Board>>);

#[derive(Debug, Default)]
struct Board {
    held: HashMap<String, Entry>,
    /// Held queries (threads) waiting now, over all names.
    waiting: usize,
    expired: HashSet<String>,
    /// `expired` in the order the names expired, to forget the oldest first.
    expired_order: VecDeque<String>,
}

#[derive(Debug)]
struct Entry {
    since_unix: u64,
    deadline: Instant,
    deadline_unix: u64,
    queries: u64,
    /// Held queries waiting for this name now.
    waiting: usize,
}

/// What [`HeldNames::hold`] decided for one query.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Hold {
    /// Held until this deadline (the name's, shared by every query held for it).
    Held(Instant),
    /// The name expired earlier: refuse it.
    Expired,
    /// `max` queries are held already: refuse it like under default deny.
    Full,
}

/// The board's key for `name`: lower case, no trailing dot (the root stays `.`).
pub(crate) fn board_key(name: &str) -> String {
    let trimmed = name.trim_end_matches('.');
    if trimmed.is_empty() {
        ".".to_string()
    } else {
        trimmed.to_ascii_lowercase()
    }
}

fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl HeldNames {
    pub fn new() -> HeldNames {
        HeldNames::default()
    }

    fn board(&self) -> MutexGuard<'_, Board> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The names held now, oldest first (then by name).
    pub fn snapshot(&self) -> Vec<HeldName> {
        let board = self.board();
        let mut names: Vec<HeldName> = board
            .held
            .iter()
            .map(|(name, e)| HeldName {
                name: name.clone(),
                since_unix: e.since_unix,
                deadline_unix: e.deadline_unix,
                queries: e.queries,
            })
            .collect();
        names.sort_by(|a, b| (a.since_unix, &a.name).cmp(&(b.since_unix, &b.name)));
        names
    }

    /// Whether nobody decided `name` in time (and it is still remembered as such).
    pub fn is_expired(&self, name: &str) -> bool {
        self.board().expired.contains(&board_key(name))
    }

    /// Holds one more query for `key` (see [`board_key`]) unless the name expired (or its
    /// deadline passed: it expires now) or `max` queries wait already. A name not on the board
    /// gets the deadline now + `timeout`.
    pub(crate) fn hold(&self, key: &str, timeout: Duration, max: usize) -> Hold {
        let mut board = self.board();
        let now = Instant::now();
        if board.expired.contains(key) {
            return Hold::Expired;
        }
        if board.held.get(key).is_some_and(|e| e.deadline <= now) {
            board.expire(key);
            return Hold::Expired;
        }
        if board.waiting >= max {
            return Hold::Full;
        }
        board.waiting += 1;
        let entry = board.held.entry(key.to_string()).or_insert_with(|| {
            let wall = SystemTime::now();
            Entry {
                since_unix: unix_secs(wall),
                deadline: now + timeout,
                deadline_unix: unix_secs(wall + timeout),
                queries: 0,
                waiting: 0,
            }
        });
        entry.queries += 1;
        entry.waiting += 1;
        Hold::Held(entry.deadline)
    }

    /// Remembers that nobody decided `key` in time.
    pub(crate) fn expire(&self, key: &str) {
        self.board().expire(key);
    }

    /// One held query for `key` ended; the name leaves the board with its last one.
    pub(crate) fn release(&self, key: &str) {
        let mut board = self.board();
        board.waiting = board.waiting.saturating_sub(1);
        let gone = board.held.get_mut(key).is_some_and(|e| {
            e.waiting = e.waiting.saturating_sub(1);
            e.waiting == 0
        });
        if gone {
            board.held.remove(key);
        }
    }
}

impl Board {
    fn expire(&mut self, key: &str) {
        if self.expired.insert(key.to_string()) {
            self.expired_order.push_back(key.to_string());
            while self.expired_order.len() > MAX_EXPIRED {
                if let Some(oldest) = self.expired_order.pop_front() {
                    self.expired.remove(&oldest);
                }
            }
        }
    }
}

/// Releases one held query when its thread ends (or fails to start).
pub(crate) struct HoldGuard {
    pub(crate) board: HeldNames,
    pub(crate) key: String,
}

impl Drop for HoldGuard {
    fn drop(&mut self) {
        self.board.release(&self.key);
    }
}
