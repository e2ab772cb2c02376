//! End-to-end tests of the forwarder on loopback: a fake upstream on 127.0.0.1, the proxy on
//! 127.0.0.1, a client on 127.0.0.1. Nothing is sent anywhere else.

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use super::ask::{expired_reason, RUN_DENY_REASON};
use super::dns_message::{parse_response, Rcode, TYPE_A};
use super::dns_message_tests::query_bytes;
use super::dns_proxy::{set_mark, DefaultMode, DnsProxy, RunNames};
use super::held_names::HeldNames;
use super::name_rules::NameRules;

const ANSWER: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 7);
const SPOOF: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 66);

/// How the fake upstream behaves.
#[derive(Clone, Copy)]
enum Upstream {
    /// A 198.51.100.7 for every name; names starting `slow.` are answered after 800 ms.
    Answer,
    /// First a forged answer with the wrong id, then one for another question, then the real one.
    SpoofFirst,
    /// Never answers.
    Silent,
}

fn answer(query: &[u8], id: [u8; 2], ip: Ipv4Addr) -> Vec<u8> {
    let mut end = 12;
    while let Some(&len) = query.get(end).filter(|&&l| l != 0) {
        end += 1 + usize::from(len);
    }
    let mut r = id.to_vec();
    r.extend_from_slice(&[0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0]);
    r.extend_from_slice(&query[12..end + 5]);
    r.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 1, 0x2c, 0, 4]);
    r.extend_from_slice(&ip.octets());
    r
}

fn fake_upstream(sock: &UdpSocket, stop: &AtomicBool, mode: Upstream) {
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut buf = [0u8; 4096];
    thread::scope(|s| {
        while !stop.load(Ordering::Acquire) {
            let Ok((len, from)) = sock.recv_from(&mut buf) else {
                continue;
            };
            let q = buf[..len].to_vec();
            let id = [q[0], q[1]];
            match mode {
                Upstream::Silent => {}
                Upstream::Answer if q[13..].starts_with(b"slow") => {
                    s.spawn(move || {
                        thread::sleep(Duration::from_millis(800));
                        sock.send_to(&answer(&q, id, ANSWER), from).unwrap();
                    });
                }
                Upstream::Answer => drop(sock.send_to(&answer(&q, id, ANSWER), from)),
                Upstream::SpoofFirst => {
                    let wrong_id = [id[0] ^ 0xff, id[1]];
                    sock.send_to(&answer(&q, wrong_id, SPOOF), from).unwrap();
                    let other = query_bytes(u16::from_be_bytes(id), "other.npmjs.org", TYPE_A);
                    sock.send_to(&answer(&other, id, SPOOF), from).unwrap();
                    sock.send_to(b"garbage", from).unwrap();
                    sock.send_to(&answer(&q, id, ANSWER), from).unwrap();
                }
            }
        }
    });
}

type Allowed = Mutex<Vec<(String, Vec<(Ipv4Addr, u32)>)>>;
type Denied = Mutex<Vec<(String, String)>>;

/// Runs the proxy against a fake upstream, hands `client` the proxy's address, then stops both.
fn with_proxy(
    mode: DefaultMode,
    upstream_mode: Upstream,
    client: impl FnOnce(SocketAddr, &Allowed, &Denied),
) {
    with_proxy_run(mode, upstream_mode, None, client);
}

/// [`with_proxy`] with names allowed for the run.
fn with_proxy_run(
    mode: DefaultMode,
    upstream_mode: Upstream,
    run: Option<RunNames>,
    client: impl FnOnce(SocketAddr, &Allowed, &Denied),
) {
    with_proxy_cfg(
        mode,
        upstream_mode,
        |proxy| match run {
            Some(run) => proxy.with_run_allowed(run),
            None => proxy,
        },
        client,
    );
}

/// [`with_proxy`] with the proxy configured further by `configure`.
fn with_proxy_cfg(
    mode: DefaultMode,
    upstream_mode: Upstream,
    configure: impl FnOnce(DnsProxy) -> DnsProxy,
    client: impl FnOnce(SocketAddr, &Allowed, &Denied),
) {
    let rules = NameRules::parse(&["*.npmjs.org"], &["*.example.com"]).unwrap();
    let upstream = UdpSocket::bind("127.0.0.1:0").unwrap();
    let listen = UdpSocket::bind("127.0.0.1:0").unwrap();
    let proxy_addr = listen.local_addr().unwrap();
    let proxy = configure(
        DnsProxy::new(listen, upstream.local_addr().unwrap(), rules, mode)
            .with_timeout(Duration::from_millis(400)),
    );
    let (allowed, denied, stop) = (
        Allowed::default(),
        Denied::default(),
        AtomicBool::new(false),
    );
    thread::scope(|s| {
        s.spawn(|| fake_upstream(&upstream, &stop, upstream_mode));
        let served = s.spawn(|| {
            proxy.serve_until(
                &stop,
                |name: &str, records: &[(Ipv4Addr, u32)]| {
                    // Slow on purpose: the client must still see this before its answer.
                    thread::sleep(Duration::from_millis(50));
                    allowed
                        .lock()
                        .unwrap()
                        .push((name.to_string(), records.to_vec()));
                },
                |name: &str, reason: &str| {
                    denied
                        .lock()
                        .unwrap()
                        .push((name.to_string(), reason.to_string()));
                },
            )
        });
        client(proxy_addr, &allowed, &denied);
        stop.store(true, Ordering::Release);
        served.join().unwrap().unwrap();
    });
}

fn client_socket() -> UdpSocket {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    sock
}

fn ask(sock: &UdpSocket, proxy: SocketAddr, id: u16, name: &str) -> Vec<u8> {
    sock.send_to(&query_bytes(id, name, TYPE_A), proxy).unwrap();
    let mut buf = [0u8; 4096];
    let (len, from) = sock.recv_from(&mut buf).unwrap();
    assert_eq!(from, proxy);
    buf[..len].to_vec()
}

#[test]
fn allowed_denied_and_unlisted_names() {
    with_proxy(
        DefaultMode::Deny,
        Upstream::Answer,
        |proxy, allowed, denied| {
            let sock = client_socket();
            let bytes = ask(&sock, proxy, 0x1111, "Registry.npmjs.org");
            assert_eq!(
                allowed.lock().unwrap().as_slice(),
                &[("registry.npmjs.org".to_string(), vec![(ANSWER, 300)])]
            );
            let r = parse_response(&bytes).unwrap();
            assert_eq!(
                (r.id, r.rcode, r.a_records),
                (0x1111, Rcode::NOERROR, vec![(ANSWER, 300)])
            );

            let r = parse_response(&ask(&sock, proxy, 0x2222, "evil.example.com")).unwrap();
            assert_eq!(
                (r.id, r.rcode, r.question.name.as_str()),
                (0x2222, Rcode::REFUSED, "evil.example.com")
            );
            let r = parse_response(&ask(&sock, proxy, 0x3333, "unlisted.org")).unwrap();
            assert_eq!((r.id, r.rcode), (0x3333, Rcode::REFUSED));
            assert_eq!(
                denied.lock().unwrap().as_slice(),
                &[
                    (
                        "evil.example.com".to_string(),
                        "deny rule *.example.com".to_string()
                    ),
                    (
                        "unlisted.org".to_string(),
                        "no allow rule (default deny)".to_string()
                    ),
                ]
            );
            assert_eq!(allowed.lock().unwrap().len(), 1);

            // A header that is not a readable query gets FORMERR; shorter junk gets nothing.
            sock.send_to(&[0xab, 0xcd, 1, 0, 0, 9, 0, 0, 0, 0, 0, 0], proxy)
                .unwrap();
            let mut buf = [0u8; 512];
            let (len, _) = sock.recv_from(&mut buf).unwrap();
            assert_eq!(
                &buf[..len],
                &[0xab, 0xcd, 0x81, 0x81, 0, 0, 0, 0, 0, 0, 0, 0]
            );
        },
    );
}

#[test]
fn unlisted_names_are_forwarded_unreported_under_default_allow() {
    with_proxy(
        DefaultMode::Allow,
        Upstream::Answer,
        |proxy, allowed, denied| {
            let sock = client_socket();
            let r = parse_response(&ask(&sock, proxy, 7, "unlisted.org")).unwrap();
            assert_eq!(r.a_records, vec![(ANSWER, 300)]);
            let r = parse_response(&ask(&sock, proxy, 8, "www.example.com")).unwrap();
            assert_eq!(r.rcode, Rcode::REFUSED);
            assert!(allowed.lock().unwrap().is_empty());
            assert_eq!(denied.lock().unwrap().len(), 1);
        },
    );
}

#[test]
fn forged_answers_are_ignored() {
    with_proxy(
        DefaultMode::Deny,
        Upstream::SpoofFirst,
        |proxy, allowed, _| {
            let r = parse_response(&ask(&client_socket(), proxy, 0x5151, "registry.npmjs.org"))
                .unwrap();
            assert_eq!((r.id, r.a_records), (0x5151, vec![(ANSWER, 300)]));
            let allowed = allowed.lock().unwrap();
            assert_eq!(allowed.len(), 1);
            assert_eq!(allowed[0].1, vec![(ANSWER, 300)]);
        },
    );
}

#[test]
fn silent_upstream_means_servfail() {
    with_proxy(DefaultMode::Deny, Upstream::Silent, |proxy, allowed, _| {
        let started = Instant::now();
        let r = parse_response(&ask(&client_socket(), proxy, 9, "registry.npmjs.org")).unwrap();
        assert_eq!((r.id, r.rcode), (9, Rcode::SERVFAIL));
        assert!(started.elapsed() >= Duration::from_millis(400));
        assert!(allowed.lock().unwrap().is_empty());
    });
}

#[test]
fn a_slow_answer_does_not_block_others() {
    with_proxy(DefaultMode::Deny, Upstream::Answer, |proxy, _, _| {
        // The proxy's timeout is 400 ms and the slow answer takes 800 ms: SERVFAIL, but only
        // after the fast query, sent later, has been answered.
        let slow = client_socket();
        slow.send_to(&query_bytes(1, "slow.npmjs.org", TYPE_A), proxy)
            .unwrap();
        let fast = parse_response(&ask(&client_socket(), proxy, 2, "fast.npmjs.org")).unwrap();
        assert_eq!(fast.rcode, Rcode::NOERROR);
        let mut buf = [0u8; 512];
        let (len, _) = slow.recv_from(&mut buf).unwrap();
        assert_eq!(parse_response(&buf[..len]).unwrap().rcode, Rcode::SERVFAIL);
    });
}

#[test]
fn set_mark_needs_net_admin_or_works() {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    match set_mark(&sock, 0x4c5a) {
        Ok(()) => {}
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}"),
    }
}

/// `lazaret net allow NAME`: a name the profile denies, and one it does not list under
/// default-deny, resolve while the run allows them (their answers reported like the profile's
/// allowed names) and are refused again once the run's rules no longer hold them.
#[test]
fn names_allowed_for_the_run_resolve_over_the_profiles_rules_until_revoked() {
    let run: RunNames = std::sync::Arc::new(std::sync::RwLock::new(NameRules::default()));
    with_proxy_run(
        DefaultMode::Deny,
        Upstream::Answer,
        Some(run.clone()),
        |proxy, allowed, denied| {
            let sock = client_socket();
            let rcode = |id, name| parse_response(&ask(&sock, proxy, id, name)).unwrap().rcode;
            assert_eq!(rcode(1, "api.example.com"), Rcode::REFUSED);
            assert_eq!(rcode(2, "unlisted.test"), Rcode::REFUSED);
            *run.write().unwrap() =
                NameRules::parse(&["api.example.com", "*.test"], &[] as &[&str]).unwrap();
            assert_eq!(rcode(3, "api.example.com"), Rcode::NOERROR);
            assert_eq!(rcode(4, "unlisted.test"), Rcode::NOERROR);
            assert_eq!(
                rcode(5, "other.example.com"),
                Rcode::REFUSED,
                "only what was allowed"
            );
            *run.write().unwrap() = NameRules::default();
            assert_eq!(rcode(6, "api.example.com"), Rcode::REFUSED);
            let reported: Vec<String> = allowed
                .lock()
                .unwrap()
                .iter()
                .map(|(n, _)| n.clone())
                .collect();
            assert_eq!(reported, ["api.example.com", "unlisted.test"]);
            assert_eq!(denied.lock().unwrap().len(), 4);
        },
    );
}

/// `host.lazaret.internal` (a profile with host services) is answered by the forwarder itself,
/// in any case and with a trailing dot, never asked upstream; AAAA gets no record.
#[test]
fn the_host_services_name_is_answered_here() {
    let upstream = UdpSocket::bind("127.0.0.1:0").unwrap();
    upstream
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let listen = UdpSocket::bind("127.0.0.1:0").unwrap();
    let proxy_addr = listen.local_addr().unwrap();
    let host = Ipv4Addr::new(10, 0, 2, 2);
    let proxy = DnsProxy::new(
        listen,
        upstream.local_addr().unwrap(),
        NameRules::default(),
        DefaultMode::Deny,
    )
    .with_local_name("host.lazaret.internal", host);
    let stop = AtomicBool::new(false);
    thread::scope(|s| {
        let served = s.spawn(|| proxy.serve_until(&stop, |_, _| {}, |_, _| {}));
        let sock = client_socket();
        for (id, name) in [(1, "host.lazaret.internal"), (2, "HOST.Lazaret.Internal.")] {
            let r = parse_response(&ask(&sock, proxy_addr, id, name)).unwrap();
            assert_eq!(r.rcode, Rcode::NOERROR);
            assert_eq!(r.a_records, [(host, 60)]);
        }
        sock.send_to(&query_bytes(3, "host.lazaret.internal", 28), proxy_addr)
            .unwrap();
        let mut buf = [0u8; 512];
        let (len, _) = sock.recv_from(&mut buf).unwrap();
        let r = parse_response(&buf[..len]).unwrap();
        assert_eq!((r.rcode, r.a_records.len()), (Rcode::NOERROR, 0));
        // Other names are still decided by the rules (default deny here).
        let r = parse_response(&ask(&sock, proxy_addr, 4, "other.internal")).unwrap();
        assert_eq!(r.rcode, Rcode::REFUSED);
        let mut up = [0u8; 512];
        assert!(
            upstream.recv_from(&mut up).is_err(),
            "nothing went upstream"
        );
        stop.store(true, Ordering::Release);
        served.join().unwrap().unwrap();
    });
}

/// Waits (at most 3 s) until `what` holds; the serving thread reports held threads' refusals
/// within about 200 ms.
fn eventually(what: impl Fn() -> bool) {
    let started = Instant::now();
    while !what() {
        assert!(started.elapsed() < Duration::from_secs(3), "timed out");
        thread::sleep(Duration::from_millis(10));
    }
}

fn run_rules(allow: &[&str], deny: &[&str]) -> RunNames {
    std::sync::Arc::new(std::sync::RwLock::new(
        NameRules::parse(allow, deny).unwrap(),
    ))
}

fn set_run(run: &RunNames, allow: &[&str], deny: &[&str]) {
    *run.write().unwrap() = NameRules::parse(allow, deny).unwrap();
}

fn ask_mode(timeout_ms: u64) -> DefaultMode {
    DefaultMode::Ask {
        timeout: Duration::from_millis(timeout_ms),
    }
}

fn recv_rcode(sock: &UdpSocket) -> Rcode {
    let mut buf = [0u8; 4096];
    let (len, _) = sock.recv_from(&mut buf).unwrap();
    parse_response(&buf[..len]).unwrap().rcode
}

/// Default ask: an unlisted name waits on the board (a second query shares the first one's
/// deadline) until the run allows it, then is answered by the upstream and reported first.
#[test]
fn a_held_name_is_forwarded_once_the_run_allows_it() {
    let run = run_rules(&[], &[]);
    let board = HeldNames::new();
    let (run2, board2) = (run.clone(), board.clone());
    with_proxy_cfg(
        ask_mode(5000),
        Upstream::Answer,
        |p| p.with_run_allowed(run2).with_held(board2),
        |proxy, allowed, denied| {
            let (first, second) = (client_socket(), client_socket());
            let started = Instant::now();
            first
                .send_to(&query_bytes(0x10, "Held.Test.", TYPE_A), proxy)
                .unwrap();
            eventually(|| board.snapshot().len() == 1);
            let held = board.snapshot().remove(0);
            assert_eq!((held.name.as_str(), held.queries), ("held.test", 1));
            assert!((5..=6).contains(&(held.deadline_unix - held.since_unix)));
            second
                .send_to(&query_bytes(0x11, "held.test", TYPE_A), proxy)
                .unwrap();
            eventually(|| board.snapshot().first().is_some_and(|h| h.queries == 2));
            assert_eq!(board.snapshot()[0].deadline_unix, held.deadline_unix);
            thread::sleep(Duration::from_millis(300));
            assert!(allowed.lock().unwrap().is_empty());
            let allowed_at = started.elapsed();
            set_run(&run, &["held.test"], &[]);
            for sock in [&first, &second] {
                let mut buf = [0u8; 4096];
                let (len, _) = sock.recv_from(&mut buf).unwrap();
                let r = parse_response(&buf[..len]).unwrap();
                assert_eq!(
                    (r.rcode, r.a_records),
                    (Rcode::NOERROR, vec![(ANSWER, 300)])
                );
                // Reported before it was relayed.
                assert!(!allowed.lock().unwrap().is_empty());
            }
            let waited = started.elapsed();
            assert!(
                waited >= allowed_at && waited < allowed_at + Duration::from_millis(700),
                "waited {waited:?}, allowed after {allowed_at:?}"
            );
            let reported: Vec<String> = allowed
                .lock()
                .unwrap()
                .iter()
                .map(|(n, _)| n.clone())
                .collect();
            assert_eq!(reported.len(), 2);
            assert!(reported.iter().all(|n| n == "held.test"));
            assert!(board.snapshot().is_empty(), "decided: off the board");
            assert!(denied.lock().unwrap().is_empty());
        },
    );
}

/// `lazaret net deny NAME` while the name is held: REFUSED, reported with the run-deny reason.
#[test]
fn a_held_name_is_refused_once_the_run_denies_it() {
    let run = run_rules(&[], &[]);
    let board = HeldNames::new();
    let (run2, board2) = (run.clone(), board.clone());
    with_proxy_cfg(
        ask_mode(5000),
        Upstream::Answer,
        |p| p.with_run_allowed(run2).with_held(board2),
        |proxy, allowed, denied| {
            let sock = client_socket();
            let started = Instant::now();
            sock.send_to(&query_bytes(0x20, "held.test", TYPE_A), proxy)
                .unwrap();
            eventually(|| board.snapshot().len() == 1);
            thread::sleep(Duration::from_millis(200));
            set_run(&run, &[], &["*.test"]);
            assert_eq!(recv_rcode(&sock), Rcode::REFUSED);
            assert!(started.elapsed() < Duration::from_secs(2));
            assert!(board.snapshot().is_empty());
            eventually(|| !denied.lock().unwrap().is_empty());
            assert_eq!(
                denied.lock().unwrap().as_slice(),
                &[("held.test".to_string(), RUN_DENY_REASON.to_string())]
            );
            assert!(allowed.lock().unwrap().is_empty());
        },
    );
}

/// Nobody decides within the timeout: REFUSED with the expired reason, and later queries for
/// the name are refused at once, until the run allows it.
#[test]
fn a_held_name_expires_and_stays_refused() {
    let run = run_rules(&[], &[]);
    let board = HeldNames::new();
    let (run2, board2) = (run.clone(), board.clone());
    with_proxy_cfg(
        ask_mode(300),
        Upstream::Answer,
        |p| p.with_run_allowed(run2).with_held(board2),
        |proxy, allowed, denied| {
            let sock = client_socket();
            let started = Instant::now();
            sock.send_to(&query_bytes(0x30, "late.test", TYPE_A), proxy)
                .unwrap();
            assert_eq!(recv_rcode(&sock), Rcode::REFUSED);
            let waited = started.elapsed();
            assert!(
                waited >= Duration::from_millis(300) && waited < Duration::from_millis(900),
                "{waited:?}"
            );
            assert!(board.snapshot().is_empty());
            assert!(board.is_expired("late.test."));
            let expired = ("late.test".to_string(), expired_reason(1));
            eventually(|| denied.lock().unwrap().len() == 1);
            assert_eq!(denied.lock().unwrap()[0], expired);

            let again = Instant::now();
            let r = parse_response(&ask(&sock, proxy, 0x31, "late.test")).unwrap();
            assert_eq!((r.id, r.rcode), (0x31, Rcode::REFUSED));
            assert!(again.elapsed() < Duration::from_millis(150), "at once");
            assert!(board.snapshot().is_empty(), "not held again");
            assert_eq!(
                denied.lock().unwrap().as_slice(),
                &[expired.clone(), expired]
            );

            // A run allow still comes first.
            set_run(&run, &["late.test"], &[]);
            let r = parse_response(&ask(&sock, proxy, 0x32, "late.test")).unwrap();
            assert_eq!(r.rcode, Rcode::NOERROR);
            assert_eq!(allowed.lock().unwrap().len(), 1);
        },
    );
}

/// `lazaret net deny NAME` refuses a name in every mode, over the profile's allow; the run
/// rules' own most specific pattern decides between their allow and deny; the local name comes
/// before them all.
#[test]
fn run_denies_refuse_over_the_profiles_rules_in_every_mode() {
    for mode in [DefaultMode::Allow, DefaultMode::Deny, ask_mode(5000)] {
        let run = run_rules(
            &["api.example.com"],
            &[
                "registry.npmjs.org",
                "*.example.com",
                "host.lazaret.internal",
            ],
        );
        with_proxy_cfg(
            mode,
            Upstream::Answer,
            |p| {
                p.with_run_allowed(run)
                    .with_held(HeldNames::new())
                    .with_local_name("host.lazaret.internal", Ipv4Addr::new(10, 0, 2, 2))
            },
            |proxy, allowed, denied| {
                let sock = client_socket();
                let rcode = |id, name| parse_response(&ask(&sock, proxy, id, name)).unwrap().rcode;
                assert_eq!(rcode(1, "registry.npmjs.org"), Rcode::REFUSED, "{mode:?}");
                assert_eq!(rcode(2, "x.example.com"), Rcode::REFUSED, "{mode:?}");
                assert_eq!(rcode(3, "api.example.com"), Rcode::NOERROR, "{mode:?}");
                assert_eq!(rcode(4, "other.npmjs.org"), Rcode::NOERROR, "{mode:?}");
                assert_eq!(
                    rcode(5, "host.lazaret.internal"),
                    Rcode::NOERROR,
                    "{mode:?}"
                );
                assert_eq!(
                    denied.lock().unwrap().as_slice(),
                    &[
                        (
                            "registry.npmjs.org".to_string(),
                            RUN_DENY_REASON.to_string()
                        ),
                        ("x.example.com".to_string(), RUN_DENY_REASON.to_string()),
                    ],
                    "{mode:?}"
                );
                assert_eq!(allowed.lock().unwrap().len(), 2, "{mode:?}");
            },
        );
    }
}

/// Over the cap of held queries, and without a board, default ask refuses like default deny.
#[test]
fn over_the_cap_or_without_a_board_ask_refuses_like_deny() {
    let board = HeldNames::new();
    let board2 = board.clone();
    with_proxy_cfg(
        ask_mode(5000),
        Upstream::Answer,
        |p| p.with_held(board2).with_max_held(2),
        |proxy, _, denied| {
            let held = client_socket();
            for (id, name) in [(1, "a.test"), (2, "b.test")] {
                held.send_to(&query_bytes(id, name, TYPE_A), proxy).unwrap();
            }
            eventually(|| board.snapshot().len() == 2);
            let sock = client_socket();
            for (id, name) in [(3, "c.test"), (4, "a.test")] {
                let started = Instant::now();
                let r = parse_response(&ask(&sock, proxy, id, name)).unwrap();
                assert_eq!((r.id, r.rcode), (id, Rcode::REFUSED));
                assert!(started.elapsed() < Duration::from_millis(150));
            }
            let deny = "no allow rule (default deny)".to_string();
            assert_eq!(
                denied.lock().unwrap().as_slice(),
                &[
                    ("c.test".to_string(), deny.clone()),
                    ("a.test".to_string(), deny)
                ]
            );
            let names: Vec<(String, u64)> = board
                .snapshot()
                .into_iter()
                .map(|h| (h.name, h.queries))
                .collect();
            assert_eq!(names.len(), 2);
            assert!(names.contains(&("a.test".to_string(), 1)));
        },
    );
    assert!(board.snapshot().is_empty(), "stopped: off the board");

    with_proxy(ask_mode(5000), Upstream::Answer, |proxy, _, denied| {
        let r = parse_response(&ask(&client_socket(), proxy, 5, "d.test")).unwrap();
        assert_eq!(r.rcode, Rcode::REFUSED);
        assert_eq!(denied.lock().unwrap()[0].1, "no allow rule (default deny)");
    });
}

/// Stopping does not wait for held queries: they end unanswered and leave the board.
#[test]
fn serve_until_returns_promptly_with_held_queries() {
    let board = HeldNames::new();
    let board2 = board.clone();
    let sock = client_socket();
    let stopped_at = Mutex::new(None);
    with_proxy_cfg(
        ask_mode(30_000),
        Upstream::Answer,
        |p| p.with_held(board2),
        |proxy, _, _| {
            for id in 1..=3 {
                sock.send_to(&query_bytes(id, "pending.test", TYPE_A), proxy)
                    .unwrap();
            }
            eventually(|| board.snapshot().first().is_some_and(|h| h.queries == 3));
            *stopped_at.lock().unwrap() = Some(Instant::now());
        },
    );
    let took = stopped_at.lock().unwrap().unwrap().elapsed();
    assert!(took < Duration::from_millis(800), "took {took:?}");
    assert!(board.snapshot().is_empty());
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut buf = [0u8; 512];
    assert!(sock.recv_from(&mut buf).is_err(), "no answer");
}

/// Adversarial: the sandbox asks to resolve the literal names `*.test` or `198.51.100.7`, so
/// that the held list would show a wildcard or an address — allowing what it shows would open
/// a whole domain or every port of an address. Such names are refused at once, never held.
#[test]
fn a_wildcard_or_address_shaped_name_is_refused_not_held() {
    let run = run_rules(&[], &[]);
    let board = HeldNames::new();
    let (run2, board2) = (run.clone(), board.clone());
    with_proxy_cfg(
        ask_mode(5000),
        Upstream::Answer,
        |p| p.with_run_allowed(run2).with_held(board2),
        |proxy, allowed, denied| {
            let sock = client_socket();
            for (id, name) in [(0x70, "*.test"), (0x71, "198.51.100.7")] {
                let started = Instant::now();
                sock.send_to(&query_bytes(id, name, TYPE_A), proxy).unwrap();
                assert_eq!(recv_rcode(&sock), Rcode::REFUSED, "{name}");
                assert!(started.elapsed() < Duration::from_secs(1), "{name}");
            }
            assert!(board.snapshot().is_empty());
            eventually(|| denied.lock().unwrap().len() == 2);
            assert!(denied
                .lock()
                .unwrap()
                .iter()
                .all(|(_, why)| why == crate::network::dns_proxy::NOT_ASKABLE_REASON));
            assert!(allowed.lock().unwrap().is_empty());
        },
    );
}
