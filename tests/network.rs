//! The Network Sidecar's default policy on the real stack (SR-5, SR-6): private IPv4 targets are
//! refused, a public one is reachable, IPv6 goes nowhere, and the sandbox cannot change routes.
//!
//! Every address tried belongs to a test host this test builds itself: a network namespace with
//! a veth pair, addresses from TEST-NET-2 (public stand-in) and RFC 1918 ranges (private), and
//! connected routes only, so no packet can leave the machine. Building it needs root (CI runs
//! the tests as root); as a normal user the test uses `sudo -n`.

mod support;

use std::process::{Child, Command, Stdio};
use std::time::Duration;
use support::{is_root, wait_for, Dev};

const PUBLIC: &str = "198.51.100.1";
const PRIVATE: [&str; 3] = ["10.99.0.1", "172.16.99.1", "192.168.99.1"];
/// The cloud metadata address, also a test host of this test's own.
const METADATA: &str = "169.254.169.254";
/// The test's own DNS resolver (a test host too).
const RESOLVER: &str = "198.51.100.53";

/// The test hosts use fixed addresses on the host's side too: one test at a time builds them.
static HOSTS: std::sync::Mutex<()> = std::sync::Mutex::new(());
const V6: &str = "fd99:99::1";
const PORT: u16 = 18080;

/// Runs a command as root (directly, or through passwordless sudo).
fn root(args: &[&str]) -> Command {
    if is_root() {
        let mut c = Command::new(args[0]);
        c.args(&args[1..]);
        c
    } else {
        let mut c = Command::new("sudo");
        c.arg("-n").args(args);
        c
    }
}

fn root_ok(args: &[&str]) {
    let out = root(args).output().expect("running a root command");
    assert!(
        out.status.success(),
        "{args:?} failed (the network test needs root or passwordless sudo): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A test host in its own network namespace, reachable from the host over a veth pair.
struct TestHosts {
    ns: String,
    veth: String,
    server: Option<Child>,
    _serial: std::sync::MutexGuard<'static, ()>,
}

const SERVER: &str = r#"
import socket, threading
def serve(family, addr):
    s = socket.socket(family)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind((addr, PORT)); s.listen(32)
    while True:
        c, _ = s.accept()
        try:
            c.settimeout(2); c.recv(4096)
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 12\r\n\r\ntest-host-ok")
        except OSError:
            pass
        c.close()
def dns():
    names = {b"allowed.test": "198.51.100.1", b"private.test": "10.99.0.1",
             b"other.test": "198.51.100.1", b"denied.test": "198.51.100.1"}
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("198.51.100.53", 53))
    while True:
        q, peer = u.recvfrom(512)
        i, labels = 12, []
        while q[i]:
            labels.append(q[i + 1:i + 1 + q[i]]); i += 1 + q[i]
        qtype = q[i + 1:i + 3]
        question = q[12:i + 5]
        name = b".".join(labels).lower()
        addr = names.get(name)
        flags = b"\x81\x80" if addr else b"\x81\x83"
        answer = b""
        if addr and qtype == b"\x00\x01":
            answer = b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x01\x2c\x00\x04" + socket.inet_aton(addr)
        count = b"\x00\x01" if answer else b"\x00\x00"
        u.sendto(q[:2] + flags + b"\x00\x01" + count + b"\x00\x00\x00\x00" + question + answer, peer)
threading.Thread(target=dns, daemon=True).start()
def echo():
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("0.0.0.0", PORT))
    while True:
        data, peer = u.recvfrom(2048)
        u.sendto(b"echo:" + data, peer)
threading.Thread(target=serve, args=(socket.AF_INET6, "::"), daemon=True).start()
threading.Thread(target=echo, daemon=True).start()
serve(socket.AF_INET, "0.0.0.0")
"#;

impl TestHosts {
    fn create() -> TestHosts {
        let id = std::process::id() % 100_000;
        let serial = HOSTS.lock().unwrap_or_else(|p| p.into_inner());
        let mut hosts = TestHosts {
            ns: format!("lzt-hosts-{id}"),
            veth: format!("lzt{id}"),
            server: None,
            _serial: serial,
        };
        let peer = format!("{}p", hosts.veth);
        root_ok(&["ip", "netns", "add", &hosts.ns]);
        root_ok(&[
            "ip",
            "link",
            "add",
            &hosts.veth,
            "type",
            "veth",
            "peer",
            "name",
            &peer,
        ]);
        root_ok(&["ip", "link", "set", &peer, "netns", &hosts.ns]);
        let inside = |args: &[&str]| {
            let mut full = vec!["ip", "netns", "exec", hosts.ns.as_str()];
            full.extend_from_slice(args);
            root_ok(&full);
        };
        inside(&["ip", "link", "set", "lo", "up"]);
        inside(&["ip", "link", "set", &peer, "up"]);
        // Host side .254, test host .1, one /24 per range: connected routes only.
        for addr in std::iter::once(PUBLIC).chain(PRIVATE).chain([METADATA]) {
            let net = addr.rsplit_once('.').map(|(n, _)| n).unwrap_or(addr);
            inside(&["ip", "addr", "add", &format!("{addr}/24"), "dev", &peer]);
            root_ok(&[
                "ip",
                "addr",
                "add",
                &format!("{net}.{}/24", if addr.ends_with(".254") { 1 } else { 254 }),
                "dev",
                &hosts.veth,
            ]);
        }
        // The test's own DNS resolver lives on the "public" test network too.
        inside(&["ip", "addr", "add", &format!("{RESOLVER}/24"), "dev", &peer]);
        inside(&[
            "ip",
            "-6",
            "addr",
            "add",
            &format!("{V6}/64"),
            "dev",
            &peer,
            "nodad",
        ]);
        root_ok(&["ip", "link", "set", &hosts.veth, "up"]);
        let _ = root(&[
            "ip",
            "-6",
            "addr",
            "add",
            "fd99:99::254/64",
            "dev",
            &hosts.veth,
            "nodad",
        ])
        .output();
        let script = SERVER.replace("PORT", &PORT.to_string());
        let server = root(&["ip", "netns", "exec", &hosts.ns, "python3", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("starting the test host's server");
        hosts.server = Some(server);
        hosts
    }
}

impl Drop for TestHosts {
    fn drop(&mut self) {
        if let Some(mut s) = self.server.take() {
            let _ = root(&["pkill", "-f", &format!("netns exec {}", self.ns)]).output();
            let _ = root(&["ip", "netns", "pids", &self.ns]).output().map(|o| {
                for pid in String::from_utf8_lossy(&o.stdout).split_whitespace() {
                    let _ = root(&["kill", "-9", pid]).output();
                }
            });
            let _ = s.kill();
            let _ = s.wait();
        }
        let _ = root(&["ip", "link", "del", &self.veth]).output();
        let _ = root(&["ip", "netns", "del", &self.ns]).output();
    }
}

fn host_fetch(addr: &str) -> bool {
    let url = format!("http://{addr}:{PORT}/");
    Command::new("curl")
        .args(["-sS", "-m", "3", &url])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout) == "test-host-ok")
        .unwrap_or(false)
}

#[test]
fn default_policy_refuses_private_targets_and_reaches_public_ones() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    // Control: from the host every target answers, so a refusal below is the policy's.
    for addr in std::iter::once(PUBLIC).chain(PRIVATE) {
        wait_for(Duration::from_secs(10), || host_fetch(addr).then_some(()))
            .unwrap_or_else(|| panic!("test host {addr} does not answer from the host"));
    }
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

/// The verdicts of curl, bash /dev/tcp, a Python TCP socket and a UDP datagram for `addr`,
/// one line each: `<tool>-<addr>=open|refused`.
fn probes(addr: &str) -> String {
    format!(
        "curl -sS -m 5 -o /dev/null http://{addr}:{PORT}/ 2>/dev/null && echo curl-{addr}=open || echo curl-{addr}=refused; \
         bash -c 'exec 3<>/dev/tcp/{addr}/{PORT}' 2>/dev/null && echo devtcp-{addr}=open || echo devtcp-{addr}=refused; \
         python3 -c 'import socket; s=socket.create_connection((\"{addr}\", {PORT}), 5)' 2>/dev/null && echo py-{addr}=open || echo py-{addr}=refused; \
         python3 -c 'import socket; u=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(3); u.sendto(b\"x\", (\"{addr}\", {PORT})); assert u.recv(64) == b\"echo:x\"' 2>/dev/null && echo udp-{addr}=open || echo udp-{addr}=refused; "
    )
}

fn verdicts(addr: &str, verdict: &str) -> Vec<String> {
    ["curl", "devtcp", "py", "udp"]
        .iter()
        .map(|t| format!("{t}-{addr}={verdict}"))
        .collect()
}

const BASE: &str = "image = \"localhost/lazaret/base:bookworm\"\ncommand = [\"bash\"]\n";

#[test]
fn a_more_specific_allow_opens_one_private_host_and_every_tool_agrees() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    for addr in std::iter::once(PUBLIC).chain(PRIVATE).chain([METADATA]) {
        wait_for(Duration::from_secs(10), || host_fetch(addr).then_some(()))
            .unwrap_or_else(|| panic!("test host {addr} does not answer from the host"));
    }
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

#[test]
fn an_equal_prefix_conflict_is_refused_naming_both_rules() {
    let dev = Dev::get();
    let ws = dev.workspace("conflict").with_profile(
        "conflict",
        &format!(
            "[profiles.conflict]\n{BASE}[profiles.conflict.network]\nallow = [\"203.0.113.0/24\"]\ndeny = [\"203.0.113.0/24\"]\n"
        ),
    );
    let r = ws.run(&["true"]);
    assert_eq!(r.code, Some(125), "{r:?}");
    assert!(
        r.stderr.contains("allow 203.0.113.0/24") && r.stderr.contains("deny rule at line 6"),
        "{r:?}"
    );
    assert!(ws.containers().is_empty());
}

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
    let sidecar = format!("lazaret-{}-sidecar", ws.domain);
    let pid = wait_for(Duration::from_secs(60), || {
        let out = dev
            .command("podman")
            .args(["inspect", "--format", "{{.State.Pid}}", &sidecar])
            .stdin(Stdio::null())
            .output()
            .ok()?;
        let pid: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
        (pid > 0).then_some(pid)
    })
    .expect("the sidecar runs");
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
    ws.release();
    let r = support::finish(child);
    assert_eq!(r.code, Some(0), "{r:?}");
    let mut want = verdicts(PUBLIC, "open");
    want.extend(verdicts(PUBLIC, "refused"));
    let got: Vec<String> = r.stdout.lines().map(str::to_owned).collect();
    assert_eq!(got, want, "{r:?}");
    ws.assert_nothing_left();
    drop(hosts);
}

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

#[test]
fn the_sidecar_image_holds_no_shell() {
    let dev = Dev::get();
    let ws = dev.workspace("shellless");
    // A run builds (or finds) the sidecar image of this Lazaret build.
    let r = ws.run(&["true"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let out = dev.sh(
        "set -e; img=$(podman images --format '{{.Repository}}:{{.Tag}}' localhost/lazaret/sidecar | head -1); \
         c=$(podman create --runtime runc \"$img\"); podman export \"$c\" | tar -t; podman rm \"$c\" >/dev/null",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files = String::from_utf8_lossy(&out.stdout);
    assert!(files.contains("lazaret-sidecar"), "{files}");
    assert!(files.contains("usr/sbin/nft"), "{files}");
    for shell in ["bin/sh", "bin/bash", "bin/dash", "bin/busybox", "bin/ash"] {
        assert!(
            !files
                .lines()
                .any(|f| f.trim_end_matches('/').ends_with(shell)),
            "{shell} in the sidecar image:\n{files}"
        );
    }
    ws.assert_nothing_left();
}
