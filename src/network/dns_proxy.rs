//! The sidecar's DNS forwarder: blocking UDP, std threads, no async runtime.
//!
//! Per query from the sandbox (any source address and port):
//! - unreadable: a message that is at least a header and not a response is answered with a
//!   header-only FORMERR (NOTIMP for other opcodes); shorter ones, responses and messages over
//!   4096 bytes are dropped;
//! - the local name ([`DnsProxy::with_local_name`]): answered here, before any rule;
//! - a name the run's rules ([`DnsProxy::with_run_allowed`], `lazaret net allow` / `deny`) decide:
//!   allowed ones are forwarded and reported like the profile's allowed names, denied ones are
//!   answered REFUSED and reported (reason [`ask::RUN_DENY_REASON`]) — in every mode, before the
//!   profile's rules (the run rules' own most specific pattern decides between their allow and
//!   deny);
//! - a name the profile's rules deny, or an unlisted name under [`DefaultMode::Deny`]: answered
//!   REFUSED and reported through `on_denied(name, reason)`;
//! - an unlisted name under [`DefaultMode::Ask`] is **held** (see below); one that expired
//!   earlier in the run is answered REFUSED at once (reason [`ask::expired_reason`]);
//! - otherwise forwarded unchanged (same id, same bytes) from a fresh socket bound to port 0 (the
//!   kernel picks a random ephemeral port), optionally marked with `SO_MARK`, connected to the
//!   upstream so only the upstream's address and port can answer. An answer counts only if it
//!   parses and carries the query's id and question (anything else is ignored and the wait goes
//!   on — anti-spoofing); none within the timeout (3 s) means SERVFAIL. A matching answer is
//!   relayed unchanged, TC bit included: a client that sees TC retries over TCP, which the
//!   sidecar's policy refuses, so names whose answers do not fit in UDP do not resolve (a known
//!   limitation; the forwarder speaks UDP only). For a name the rules explicitly allow, the A
//!   records are reported through `on_allowed(name, records)` *before* the answer is relayed, so
//!   the caller's address set holds them before the sandbox can connect.
//!
//! Forwarded queries run on their own threads, at most [`MAX_IN_FLIGHT`] at once (queries over
//! the cap are dropped; clients retry), so one slow upstream answer does not hold up others.
//! Refusals are answered on the receiving thread.
//!
//! Held queries (`default = "ask"`, [`super::ask`]) wait on their own threads, at most
//! [`ask::MAX_HELD`] at once ([`DnsProxy::with_max_held`]; over the cap, and without a board
//! ([`DnsProxy::with_held`]), the name is refused like under default deny). The name is on the
//! board [`HeldNames`] while a query for it waits; a second query for a held name shares the
//! first one's deadline (first held + the mode's timeout). Every 100 ms a held query looks at the
//! run's rules: allowed → forwarded and reported like an allowed name (a held thread forwards
//! itself, outside the in-flight cap); denied → REFUSED ([`ask::RUN_DENY_REASON`]); deadline
//! passed → REFUSED ([`ask::expired_reason`] with the timeout in whole seconds, rounded up) and
//! the name is remembered as expired, so later queries for it are refused at once unless the
//! run allows it. A decided name leaves the board before its answer is sent. Refusals decided on
//! held threads are reported through `on_denied` on the serving thread, within about 200 ms.
//! When `stop` is set, held queries end **without an answer** (the client times out or retries
//! against whatever serves next) and leave the board.

use std::io::{self, ErrorKind};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use super::ask;
use super::dns_message::{
    build_local_answer, build_response, error_response, parse_query, parse_response, Query, Rcode,
    MAX_MESSAGE_LEN,
};
use super::held_names::{board_key, HeldNames, Hold, HoldGuard};
use super::name_rules::{NameRules, NameVerdict};

/// How long a forwarded query waits for the upstream's answer.
pub const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(3);
/// The most forwarded queries in flight at once.
pub const MAX_IN_FLIGHT: usize = 64;
/// TTL of the names answered here.
const LOCAL_TTL: u32 = 60;
/// How often [`DnsProxy::serve_until`] looks at its stop flag.
const POLL: Duration = Duration::from_millis(200);
/// How often a held query looks at the run's rules, its deadline and the stop flag.
const HELD_POLL: Duration = Duration::from_millis(100);
/// The ledger's reason for an unlisted name under default deny (or one that cannot be held).
const DEFAULT_DENY_REASON: &str = "no allow rule (default deny)";
/// Why an unlisted name that is not a plain host name is refused, not held, under `ask`.
pub const NOT_ASKABLE_REASON: &str =
    "not a plain host name (an address or a wildcard): refused, not asked (default ask)";

/// Whether the developer may be asked about `name`: only a plain host name, which `lazaret
/// net allow` (and the TUI's `a`) would allow as exactly that name. A query for the literal
/// name `*.example.com` or `203.0.113.7` is refused instead: allowing what the held list shows
/// would open a whole domain or an address's every port.
fn askable(name: &str) -> bool {
    matches!(
        super::run_rules::Target::parse(name),
        Ok(super::run_rules::Target::Name(super::NamePattern::Exact(_)))
    )
}

/// What happens to a name no rule lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultMode {
    /// Forwarded (and not reported: under default-allow no address set is needed).
    Allow,
    /// Refused like a denied name.
    Deny,
    /// Held until the run's rules decide it or `timeout` passes ([`super::ask`]); needs
    /// [`DnsProxy::with_held`], without which it is [`DefaultMode::Deny`].
    Ask { timeout: Duration },
}

/// What the forwarder does with one query's name.
#[derive(Debug, PartialEq, Eq)]
enum Decision {
    /// Forward it; `report` its A records to `on_allowed`.
    Forward { report: bool },
    /// Answer REFUSED and report this reason.
    Refuse(String),
    /// Hold it (default ask) for at most this long.
    Hold(Duration),
}

/// How a held query ended.
enum Held {
    Allowed,
    Refused(String),
    Stopped,
}

/// The forwarder's configuration; [`DnsProxy::serve`] runs it.
#[derive(Debug)]
pub struct DnsProxy {
    listen: UdpSocket,
    upstream: SocketAddr,
    rules: NameRules,
    mode: DefaultMode,
    mark: Option<u32>,
    timeout: Duration,
    max_in_flight: usize,
    /// Names the developer allowed or denied for this run (`lazaret net allow NAME`, `lazaret
    /// net deny NAME`): decided over the profile's rules; allowed ones are reported like the
    /// profile's allowed names. Replaced while serving.
    run_allowed: Option<RunNames>,
    /// The board of held names (default ask).
    held: Option<HeldNames>,
    max_held: usize,
    /// A name answered here, never upstream: `host.lazaret.internal` and its address.
    local: Option<(String, Ipv4Addr)>,
}

/// The run-scoped name rules (allows and denies), shared with whoever applies `lazaret net
/// allow` and `lazaret net deny`.
pub type RunNames = std::sync::Arc<std::sync::RwLock<NameRules>>;

/// Marks `sock`'s packets with `mark` (`SO_MARK`, needs CAP_NET_ADMIN), so nftables rules can
/// tell the forwarder's upstream traffic from the sandbox's.
pub fn set_mark(sock: &UdpSocket, mark: u32) -> io::Result<()> {
    // SAFETY: the descriptor is open for the borrow's lifetime; the option value points at a
    // live u32 whose size is passed alongside it.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MARK,
            (&mark as *const u32).cast(),
            std::mem::size_of::<u32>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// An A record's address and TTL, as reported to `on_allowed`.
pub type ARecord = (Ipv4Addr, u32);

/// Decrements the in-flight count when a forwarding thread ends (or fails to start).
struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl DnsProxy {
    /// A forwarder answering on `listen` and asking `upstream`, with the default timeout and
    /// in-flight cap and no socket mark.
    pub fn new(
        listen: UdpSocket,
        upstream: SocketAddr,
        rules: NameRules,
        mode: DefaultMode,
    ) -> DnsProxy {
        DnsProxy {
            listen,
            upstream,
            rules,
            mode,
            mark: None,
            timeout: UPSTREAM_TIMEOUT,
            max_in_flight: MAX_IN_FLIGHT,
            run_allowed: None,
            held: None,
            max_held: ask::MAX_HELD,
            local: None,
        }
    }

    /// Answers `name` itself with `addr` (an A record; no record of other types), before any
    /// rule: the name of a service of the host (`host.lazaret.internal`).
    pub fn with_local_name(mut self, name: &str, addr: Ipv4Addr) -> DnsProxy {
        self.local = Some((name.trim_end_matches('.').to_ascii_lowercase(), addr));
        self
    }

    /// Allows (and reports) the names `run` allows, and refuses the names it denies, whatever
    /// the profile's rules say; the caller may change `run` while the forwarder serves (held
    /// names are decided by it).
    pub fn with_run_allowed(mut self, run: RunNames) -> DnsProxy {
        self.run_allowed = Some(run);
        self
    }

    /// Holds unlisted names on `board` under [`DefaultMode::Ask`]; the caller keeps a clone to
    /// read it ([`HeldNames::snapshot`]).
    pub fn with_held(mut self, board: HeldNames) -> DnsProxy {
        self.held = Some(board);
        self
    }

    /// The most queries held at once (default [`ask::MAX_HELD`]).
    pub fn with_max_held(mut self, max: usize) -> DnsProxy {
        self.max_held = max;
        self
    }

    /// What the developer decided about `name` for this run.
    fn run_verdict(&self, name: &str) -> NameVerdict {
        self.run_allowed
            .as_ref()
            .map_or(NameVerdict::Unlisted, |r| {
                r.read()
                    .unwrap_or_else(PoisonError::into_inner)
                    .decide(name)
            })
    }

    /// The decision for a name that is not the local one: the run's rules, then the profile's,
    /// then the default.
    fn decide(&self, name: &str) -> Decision {
        match self.run_verdict(name) {
            NameVerdict::Allow => return Decision::Forward { report: true },
            NameVerdict::Deny => return Decision::Refuse(ask::RUN_DENY_REASON.to_string()),
            NameVerdict::Unlisted => {}
        }
        match (self.rules.decide_with_rule(name), self.mode) {
            ((NameVerdict::Allow, _), _) => Decision::Forward { report: true },
            ((NameVerdict::Deny, Some(rule)), _) => Decision::Refuse(format!("deny rule {rule}")),
            ((NameVerdict::Deny, None), _) => Decision::Refuse("deny rule".to_string()),
            ((NameVerdict::Unlisted, _), DefaultMode::Allow) => Decision::Forward { report: false },
            ((NameVerdict::Unlisted, _), DefaultMode::Deny) => {
                Decision::Refuse(DEFAULT_DENY_REASON.to_string())
            }
            ((NameVerdict::Unlisted, _), DefaultMode::Ask { timeout }) if askable(name) => {
                Decision::Hold(timeout)
            }
            ((NameVerdict::Unlisted, _), DefaultMode::Ask { .. }) => {
                Decision::Refuse(NOT_ASKABLE_REASON.to_string())
            }
        }
    }

    /// Marks every upstream socket with `mark` (see [`set_mark`]); a socket that cannot be marked
    /// is not used and the query is answered SERVFAIL.
    pub fn with_mark(mut self, mark: u32) -> DnsProxy {
        self.mark = Some(mark);
        self
    }

    pub fn with_timeout(mut self, timeout: Duration) -> DnsProxy {
        self.timeout = timeout;
        self
    }

    pub fn with_max_in_flight(mut self, max: usize) -> DnsProxy {
        self.max_in_flight = max;
        self
    }

    /// Serves forever (until the listening socket fails). `on_allowed` runs on the forwarding
    /// threads, one call at a time; `on_denied` runs on the calling thread.
    pub fn serve(
        self,
        on_allowed: impl FnMut(&str, &[(Ipv4Addr, u32)]) + Send,
        on_denied: impl FnMut(&str, &str),
    ) -> io::Result<()> {
        // Nothing to look at between queries unless held queries report refusals: the
        // forwarder sleeps in `recv` (an idle Domain costs nothing).
        let poll = self.held.is_some().then_some(POLL);
        self.serve_with(&AtomicBool::new(false), poll, on_allowed, on_denied)
    }

    /// Like [`DnsProxy::serve`], but returns once `stop` is set (checked every 200 ms; this sets a
    /// read timeout on the listening socket) and the queries in flight have been answered.
    pub fn serve_until(
        self,
        stop: &AtomicBool,
        on_allowed: impl FnMut(&str, &[(Ipv4Addr, u32)]) + Send,
        on_denied: impl FnMut(&str, &str),
    ) -> io::Result<()> {
        self.serve_with(stop, Some(POLL), on_allowed, on_denied)
    }

    /// Serves until `stop` is set, looking at it (and at refusals of held queries) every
    /// `poll`; with `None`, only when a query came.
    fn serve_with(
        self,
        stop: &AtomicBool,
        poll: Option<Duration>,
        on_allowed: impl FnMut(&str, &[(Ipv4Addr, u32)]) + Send,
        on_denied: impl FnMut(&str, &str),
    ) -> io::Result<()> {
        self.listen.set_read_timeout(poll)?;
        let on_allowed = Mutex::new(on_allowed);
        let mut on_denied = on_denied;
        let in_flight = AtomicUsize::new(0);
        // Refusals decided on held threads, reported here.
        let (denied_tx, denied_rx) = mpsc::channel::<(String, String)>();
        let this = &self;
        let served = thread::scope(|scope| {
            let mut buf = vec![0u8; MAX_MESSAGE_LEN + 1];
            while !stop.load(Ordering::Acquire) {
                while let Ok((name, reason)) = denied_rx.try_recv() {
                    on_denied(&name, &reason);
                }
                let (len, client) = match this.listen.recv_from(&mut buf) {
                    Ok(got) => got,
                    Err(e) if transient(&e) => continue,
                    Err(e) => return Err(e),
                };
                let Some(msg) = buf.get(..len).filter(|_| len <= MAX_MESSAGE_LEN) else {
                    continue;
                };
                let query = match parse_query(msg) {
                    Ok(query) => query,
                    Err(e) => {
                        if let Some(reply) = error_response(msg, e.rcode) {
                            this.reply(&reply, client);
                        }
                        continue;
                    }
                };
                let name = query.question.name.as_str();
                if let Some((_, addr)) = this
                    .local
                    .as_ref()
                    .filter(|(local, _)| name.trim_end_matches('.').eq_ignore_ascii_case(local))
                {
                    this.reply(&build_local_answer(&query, *addr, LOCAL_TTL), client);
                    continue;
                }
                let report = match this.decide(name) {
                    Decision::Forward { report } => report,
                    Decision::Refuse(reason) => {
                        on_denied(name, &reason);
                        this.reply(&build_response(&query, Rcode::REFUSED), client);
                        continue;
                    }
                    Decision::Hold(timeout) => {
                        let Some(board) = this.held.as_ref() else {
                            on_denied(name, DEFAULT_DENY_REASON);
                            this.reply(&build_response(&query, Rcode::REFUSED), client);
                            continue;
                        };
                        let key = board_key(name);
                        let deadline = match board.hold(&key, timeout, this.max_held) {
                            Hold::Held(deadline) => deadline,
                            Hold::Expired => {
                                on_denied(name, &ask::expired_reason(whole_secs(timeout)));
                                this.reply(&build_response(&query, Rcode::REFUSED), client);
                                continue;
                            }
                            Hold::Full => {
                                on_denied(name, DEFAULT_DENY_REASON);
                                this.reply(&build_response(&query, Rcode::REFUSED), client);
                                continue;
                            }
                        };
                        let guard = HoldGuard {
                            board: board.clone(),
                            key,
                        };
                        let wire = msg.to_vec();
                        let denied = denied_tx.clone();
                        let on_allowed = &on_allowed;
                        // On a spawn failure the closure, and with it the guard, is dropped:
                        // the query leaves the board unanswered (the client retries).
                        let _ = thread::Builder::new().name("dns-held".into()).spawn_scoped(
                            scope,
                            move || {
                                let outcome = this.wait_held(&guard.key, deadline, timeout, stop);
                                // Decided (or stopped): off the board before the answer.
                                drop(guard);
                                match outcome {
                                    Held::Allowed => {
                                        this.forward(&query, &wire, true, client, on_allowed);
                                    }
                                    Held::Refused(reason) => {
                                        let name = query.question.name.clone();
                                        // The serving thread may be gone already (stopping).
                                        let _ = denied.send((name, reason));
                                        this.reply(&build_response(&query, Rcode::REFUSED), client);
                                    }
                                    Held::Stopped => {}
                                }
                            },
                        );
                        continue;
                    }
                };
                if in_flight.fetch_add(1, Ordering::AcqRel) >= this.max_in_flight {
                    in_flight.fetch_sub(1, Ordering::AcqRel);
                    continue;
                }
                let guard = InFlight(&in_flight);
                let wire = msg.to_vec();
                let on_allowed = &on_allowed;
                // On a spawn failure the closure, and with it the guard, is dropped: the
                // query is dropped like one over the cap.
                let _ = thread::Builder::new()
                    .name("dns-forward".into())
                    .spawn_scoped(scope, move || {
                        let _guard = guard;
                        this.forward(&query, &wire, report, client, on_allowed);
                    });
            }
            Ok(())
        });
        // Refusals decided while stopping (the held threads have ended).
        while let Ok((name, reason)) = denied_rx.try_recv() {
            on_denied(&name, &reason);
        }
        served
    }

    /// Waits until the run's rules decide the held name `key`, its `deadline` passes (then it
    /// is remembered as expired) or `stop` is set.
    fn wait_held(
        &self,
        key: &str,
        deadline: Instant,
        timeout: Duration,
        stop: &AtomicBool,
    ) -> Held {
        loop {
            if stop.load(Ordering::Acquire) {
                return Held::Stopped;
            }
            match self.run_verdict(key) {
                NameVerdict::Allow => return Held::Allowed,
                NameVerdict::Deny => return Held::Refused(ask::RUN_DENY_REASON.to_string()),
                NameVerdict::Unlisted => {}
            }
            let now = Instant::now();
            if now >= deadline {
                if let Some(board) = &self.held {
                    board.expire(key);
                }
                return Held::Refused(ask::expired_reason(whole_secs(timeout)));
            }
            thread::sleep(HELD_POLL.min(deadline.saturating_duration_since(now)));
        }
    }

    fn reply(&self, msg: &[u8], client: SocketAddr) {
        // A client that went away is not the forwarder's problem.
        let _ = self.listen.send_to(msg, client);
    }

    fn forward<A>(
        &self,
        query: &Query,
        wire: &[u8],
        report: bool,
        client: SocketAddr,
        on_allowed: &Mutex<A>,
    ) where
        A: FnMut(&str, &[(Ipv4Addr, u32)]),
    {
        let reply = match self.ask_upstream(query, wire) {
            Ok(Some((answer, a_records))) => {
                if report && !a_records.is_empty() {
                    let mut callback = on_allowed.lock().unwrap_or_else(PoisonError::into_inner);
                    (*callback)(&query.question.name, &a_records);
                }
                answer
            }
            Ok(None) | Err(_) => build_response(query, Rcode::SERVFAIL),
        };
        self.reply(&reply, client);
    }

    /// Sends `wire` upstream and waits for the matching answer: `Ok(None)` on timeout.
    fn ask_upstream(
        &self,
        query: &Query,
        wire: &[u8],
    ) -> io::Result<Option<(Vec<u8>, Vec<ARecord>)>> {
        let local: SocketAddr = match self.upstream {
            SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
            SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let sock = UdpSocket::bind(local)?;
        if let Some(mark) = self.mark {
            set_mark(&sock, mark)?;
        }
        sock.connect(self.upstream)?;
        sock.send(wire)?;
        let deadline = Instant::now() + self.timeout;
        let mut buf = vec![0u8; MAX_MESSAGE_LEN + 1];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            sock.set_read_timeout(Some(left))?;
            let len = match sock.recv(&mut buf) {
                Ok(len) => len,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if transient(&e) => return Ok(None),
                Err(e) => return Err(e),
            };
            let Some(msg) = buf.get(..len).filter(|_| len <= MAX_MESSAGE_LEN) else {
                continue;
            };
            match parse_response(msg) {
                Ok(r) if r.id == query.id && r.question == query.question => {
                    return Ok(Some((msg.to_vec(), r.a_records)));
                }
                _ => continue,
            }
        }
    }
}

/// `timeout` in whole seconds, a fraction rounded up (for [`ask::expired_reason`]).
fn whole_secs(timeout: Duration) -> u32 {
    let secs = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
    u32::try_from(secs).unwrap_or(u32::MAX)
}

fn transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
    )
}
