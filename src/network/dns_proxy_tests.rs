//! End-to-end tests of the forwarder on loopback: a fake upstream on 127.0.0.1, the proxy on
//! 127.0.0.1, a client on 127.0.0.1. Nothing is sent anywhere else.

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use super::dns_message::{parse_response, Rcode, TYPE_A};
use super::dns_message_tests::query_bytes;
use super::dns_proxy::{set_mark, DefaultMode, DnsProxy, RunNames};
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
    let rules = NameRules::parse(&["*.npmjs.org"], &["*.example.com"]).unwrap();
    let upstream = UdpSocket::bind("127.0.0.1:0").unwrap();
    let listen = UdpSocket::bind("127.0.0.1:0").unwrap();
    let proxy_addr = listen.local_addr().unwrap();
    let mut proxy = DnsProxy::new(listen, upstream.local_addr().unwrap(), rules, mode)
        .with_timeout(Duration::from_millis(400));
    if let Some(run) = run {
        proxy = proxy.with_run_allowed(run);
    }
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
