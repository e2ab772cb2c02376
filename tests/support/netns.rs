//! Test hosts for network tests (SR-5, SR-6): a network namespace of the test's own with a veth
//! pair, addresses from TEST-NET-2 (public stand-in), RFC 1918 ranges (private), the metadata
//! address and a unique-local IPv6 address, with connected routes only, so no packet a test
//! sends can leave the machine. The namespace runs an HTTP server, a UDP echo and the test's own
//! DNS resolver, which logs every name it was asked for. Building it needs root (CI runs the
//! tests as root); as a normal user it uses `sudo -n`.

use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

pub const PUBLIC: &str = "198.51.100.1";
pub const PRIVATE: [&str; 3] = ["10.99.0.1", "172.16.99.1", "192.168.99.1"];
/// The cloud metadata address, also a test host of the test's own.
pub const METADATA: &str = "169.254.169.254";
/// The test's own DNS resolver (a test host too).
pub const RESOLVER: &str = "198.51.100.53";
/// The host's side of the veth on the "public" test network: a server of the test's own on the
/// host (e.g. a TLS proxy that must reach the internet) listens here.
pub const HOST_SIDE: &str = "198.51.100.254";
pub const V6: &str = "fd99:99::1";
pub const PORT: u16 = 18080;
/// A second TCP port of the test hosts (an allow for one port must not open the other).
pub const PORT2: u16 = 18090;

/// The test hosts use fixed addresses on the host's side too: one test at a time builds them,
/// across test binaries (a lock file), and within one binary (the lock is per open file).
static HOSTS: std::sync::Mutex<()> = std::sync::Mutex::new(());
const LOCK: &str = "/tmp/lazaret-test-hosts.lock";

/// Runs a command as root (directly, or through passwordless sudo).
pub fn root(args: &[&str]) -> Command {
    if super::is_root() {
        let mut c = Command::new(args[0]);
        c.args(&args[1..]);
        c
    } else {
        let mut c = Command::new("sudo");
        c.arg("-n").args(args);
        c
    }
}

pub fn root_ok(args: &[&str]) {
    let out = root(args).output().expect("running a root command");
    assert!(
        out.status.success(),
        "{args:?} failed (the network test needs root or passwordless sudo): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Test hosts in their own network namespace, reachable from the host over a veth pair.
pub struct TestHosts {
    ns: String,
    veth: String,
    server: Option<Child>,
    /// Every name the test's resolver was asked for, one per line (`\DDD`-escaped).
    pub dns_log: PathBuf,
    _file_lock: Option<nix::fcntl::Flock<File>>,
    _serial: std::sync::MutexGuard<'static, ()>,
}

/// The test hosts' servers. The resolver knows a few names (case-insensitively): `rebind.test`
/// answers the public host first, the private one after (TTL 0: DNS rebinding), every name
/// under `exfil.test` and `allowed.test.evil.test` answer the public host, anything else is
/// NXDOMAIN; [`TestHosts::with_names`] adds names of the test's own.
const SERVER: &str = r#"
import socket, threading
def serve(family, addr, port=PORT):
    s = socket.socket(family)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind((addr, port)); s.listen(32)
    while True:
        c, _ = s.accept()
        try:
            c.settimeout(2); c.recv(4096)
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 12\r\n\r\ntest-host-ok")
        except OSError:
            pass
        c.close()
def show(label):
    out = ""
    for b in label:
        ch = chr(b)
        if ch.isascii() and (ch.isalnum() or ch in "-_"):
            out += ch
        else:
            out += "\\%03d" % b
    return out
def dns():
    names = {b"allowed.test": "198.51.100.1", b"private.test": "10.99.0.1",
             b"other.test": "198.51.100.1", b"denied.test": "198.51.100.1",
             b"allowed.test.evil.test": "198.51.100.1"EXTRA_NAMES}
    asked = {}
    log = open("LOG", "a")
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("198.51.100.53", 53))
    while True:
        q, peer = u.recvfrom(512)
        try:
            i, labels = 12, []
            while q[i]:
                labels.append(q[i + 1:i + 1 + q[i]]); i += 1 + q[i]
            qtype = q[i + 1:i + 3]
        except IndexError:
            continue
        question = q[12:i + 5]
        log.write(".".join(show(l) for l in labels) + "\n"); log.flush()
        name = b".".join(labels).lower()
        ttl = 300
        addr = names.get(name)
        if name.endswith(b".exfil.test"):
            addr = "198.51.100.1"
        if name == b"rebind.test":
            ttl = 0
            if qtype == b"\x00\x01":
                asked[name] = asked.get(name, 0) + 1
            addr = "198.51.100.1" if asked.get(name, 0) <= 1 else "10.99.0.1"
        flags = b"\x81\x80" if addr else b"\x81\x83"
        answer = b""
        if addr and qtype == b"\x00\x01":
            answer = b"\xc0\x0c\x00\x01\x00\x01" + ttl.to_bytes(4, "big") + b"\x00\x04" + socket.inet_aton(addr)
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
threading.Thread(target=serve, args=(socket.AF_INET, "0.0.0.0", SECOND_TCP), daemon=True).start()
serve(socket.AF_INET, "0.0.0.0")
"#;

impl TestHosts {
    pub fn create() -> TestHosts {
        TestHosts::with_names(&[])
    }

    /// As [`TestHosts::create`], the resolver also answering each `(name, IPv4 address)`.
    pub fn with_names(names: &[(&str, &str)]) -> TestHosts {
        let id = std::process::id() % 100_000;
        let serial = HOSTS.lock().unwrap_or_else(|p| p.into_inner());
        let file_lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(LOCK)
            .ok()
            .and_then(|f| nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusive).ok());
        let dns_log = PathBuf::from(format!("/tmp/lzt-dns-{id}.log"));
        let _ = std::fs::remove_file(&dns_log);
        let mut hosts = TestHosts {
            ns: format!("lzt-hosts-{id}"),
            veth: format!("lzt{id}"),
            server: None,
            dns_log,
            _file_lock: file_lock,
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
        let script = SERVER
            .replace("SECOND_TCP", &PORT2.to_string())
            .replace("PORT", &PORT.to_string())
            .replace("LOG", &hosts.dns_log.display().to_string())
            .replace(
                "EXTRA_NAMES",
                &names
                    .iter()
                    .map(|(n, a)| format!(", b\"{}\": \"{a}\"", n.to_ascii_lowercase()))
                    .collect::<String>(),
            );
        let server = root(&["ip", "netns", "exec", &hosts.ns, "python3", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("starting the test host's server");
        hosts.server = Some(server);
        hosts
    }

    /// The names the test's resolver was asked for so far.
    pub fn names_asked(&self) -> String {
        std::fs::read_to_string(&self.dns_log).unwrap_or_default()
    }
}

impl Drop for TestHosts {
    fn drop(&mut self) {
        if let Some(mut s) = self.server.take() {
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
        let _ = std::fs::remove_file(&self.dns_log);
    }
}

/// Whether the test host at `addr` answers HTTP from the host (the control of every refusal).
pub fn host_fetch(addr: &str) -> bool {
    let url = format!("http://{addr}:{PORT}/");
    Command::new("curl")
        .args(["-sS", "-m", "3", &url])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout) == "test-host-ok")
        .unwrap_or(false)
}

/// Waits until each of `addrs` answers from the host; panics naming the one that does not.
pub fn wait_answering(addrs: &[&str]) {
    for addr in addrs {
        super::wait_for(std::time::Duration::from_secs(10), || {
            host_fetch(addr).then_some(())
        })
        .unwrap_or_else(|| panic!("test host {addr} does not answer from the host"));
    }
}

/// The verdicts of curl, bash /dev/tcp, a Python TCP socket and a UDP datagram for `addr`,
/// one line each: `<tool>-<addr>=open|refused`.
pub fn probes(addr: &str) -> String {
    format!(
        "curl -sS -m 5 -o /dev/null http://{addr}:{PORT}/ 2>/dev/null && echo curl-{addr}=open || echo curl-{addr}=refused; \
         bash -c 'exec 3<>/dev/tcp/{addr}/{PORT}' 2>/dev/null && echo devtcp-{addr}=open || echo devtcp-{addr}=refused; \
         python3 -c 'import socket; s=socket.create_connection((\"{addr}\", {PORT}), 5)' 2>/dev/null && echo py-{addr}=open || echo py-{addr}=refused; \
         python3 -c 'import socket; u=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(3); u.sendto(b\"x\", (\"{addr}\", {PORT})); assert u.recv(64) == b\"echo:x\"' 2>/dev/null && echo udp-{addr}=open || echo udp-{addr}=refused; "
    )
}

pub fn verdicts(addr: &str, verdict: &str) -> Vec<String> {
    ["curl", "devtcp", "py", "udp"]
        .iter()
        .map(|t| format!("{t}-{addr}={verdict}"))
        .collect()
}

/// The start of a profile definition on the base image.
pub const BASE: &str = "image = \"localhost/lazaret/base:bookworm\"\ncommand = [\"bash\"]\n";
