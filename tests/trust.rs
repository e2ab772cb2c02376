//! Issue #32 item 1 on the real stack: behind a proxy that re-signs TLS with its own CA, the
//! built-in `claude` profile's setup succeeds with no trust configuration written by the test:
//! Lazaret adds the CA the host trusts (here: named by the developer's `SSL_CERT_FILE`) to the
//! sandbox's trust store. With `trust_host_cas = false` the same download fails with curl's
//! exit 60.
//!
//! The proxy is the test's own: its CA and a certificate for `registry.npmjs.org` made here,
//! listening on the host's side of the test hosts' veth; the test's resolver answers
//! `registry.npmjs.org` with that address, so every connection of the sandbox to the registry
//! reaches the proxy (its log proves it), which forwards it to the real registry, checking the
//! registry's certificate with the host's own bundle.

mod support;

use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::Duration;
use support::netns::{root, TestHosts, HOST_SIDE, RESOLVER};
use support::Dev;

const REGISTRY: &str = "registry.npmjs.org";
const CA_NAME: &str = "Lazaret test proxy CA";

/// Terminates TLS with the test's certificate, logs each connection (`tls` and the first
/// request line, or `refused` and why), forwards the bytes to the real registry.
const PROXY: &str = r#"
import socket, ssl, sys, threading
cert, key, log_path, addr, upstream = sys.argv[1:6]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
up_ctx = ssl.create_default_context()
lock = threading.Lock()
def log(line):
    with lock:
        with open(log_path, "a") as f:
            f.write(line + "\n")
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.close()
        except OSError:
            pass
def handle(c):
    try:
        t = ctx.wrap_socket(c, server_side=True)
    except Exception as e:
        log("refused " + repr(e))
        c.close()
        return
    try:
        first = t.recv(65536)
        u = up_ctx.wrap_socket(socket.create_connection((upstream, 443), 15), server_hostname=upstream)
        u.sendall(first)
    except Exception as e:
        log("upstream-failed " + repr(e))
        t.close()
        return
    log("tls " + first.split(b"\r\n")[0].decode("ascii", "replace"))
    threading.Thread(target=pipe, args=(u, t), daemon=True).start()
    pipe(t, u)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((addr, 443))
s.listen(64)
log("listening")
while True:
    c, _ = s.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
"#;

/// The test's CA (PEM) and the proxy's certificate and key for `registry.npmjs.org`.
fn make_certs() -> (String, String, String) {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    };
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca.distinguished_name.push(DnType::CommonName, CA_NAME);
    ca.distinguished_name
        .push(DnType::OrganizationName, "Lazaret tests");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_pem = ca.self_signed(&ca_key).expect("CA certificate").pem();
    let issuer = Issuer::new(ca, ca_key);
    let leaf_key = KeyPair::generate().expect("leaf key");
    let mut leaf = CertificateParams::new(vec![REGISTRY.to_owned()]).expect("leaf params");
    leaf.distinguished_name.push(DnType::CommonName, REGISTRY);
    leaf.use_authority_key_identifier_extension = true;
    let leaf_pem = leaf
        .signed_by(&leaf_key, &issuer)
        .expect("leaf certificate")
        .pem();
    (ca_pem, leaf_pem, leaf_key.serialize_pem())
}

/// The proxy, its files and its log; stopped when dropped.
struct Proxy {
    child: Child,
    dir: PathBuf,
    log: PathBuf,
    /// The developer's `SSL_CERT_FILE`: the host's bundle plus the test's CA.
    host_bundle: PathBuf,
    ca_pem: String,
}

impl Proxy {
    fn start() -> Proxy {
        let dir = PathBuf::from(format!("/tmp/lzt-trust-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("proxy dir");
        let (ca_pem, leaf, key) = make_certs();
        let write = |name: &str, text: &str, mode: u32| {
            use std::os::unix::fs::PermissionsExt;
            let p = dir.join(name);
            std::fs::write(&p, text).expect("writing a test file");
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).expect("chmod");
            p
        };
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let system = std::fs::read_to_string("/etc/ssl/certs/ca-certificates.crt")
            .expect("the host's CA bundle");
        let host_bundle = write("host-bundle.pem", &format!("{system}\n{ca_pem}"), 0o644);
        let cert = write("proxy.crt", &format!("{leaf}{ca_pem}"), 0o600);
        let key = write("proxy.key", &key, 0o600);
        let log = dir.join("proxy.log");
        let child = root(&[
            "python3",
            "-c",
            PROXY,
            &cert.display().to_string(),
            &key.display().to_string(),
            &log.display().to_string(),
            HOST_SIDE,
            REGISTRY,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("starting the test proxy");
        let proxy = Proxy {
            child,
            dir,
            log,
            host_bundle,
            ca_pem,
        };
        support::wait_for(Duration::from_secs(10), || {
            proxy.log_text().contains("listening").then_some(())
        })
        .expect("the test proxy listens");
        proxy
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// `SSL_CERT_FILE=…` for the developer's environment.
    fn env(&self) -> String {
        format!("SSL_CERT_FILE={}", self.host_bundle.display())
    }

    /// One base64 line of the test CA, to look for in the sandbox's bundles.
    fn ca_line(&self) -> String {
        self.ca_pem.lines().nth(3).unwrap_or_default().to_owned()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = root(&["kill", "-9", &self.child.id().to_string()]).output();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn config(name: &str, body: &str) -> String {
    format!(
        "default_profile = \"{name}\"\n[profiles.{name}]\n{body}\n\
         [profiles.{name}.network]\nresolvers = [\"{RESOLVER}\"]\n"
    )
}

/// Inside the sandbox: the registry over curl through the system bundle alone, the variables
/// and the bundles they name.
fn inspect_script(ca_line: &str) -> String {
    format!(
        "env -u SSL_CERT_FILE -u CURL_CA_BUNDLE curl -sS -o /dev/null -w 'system=%{{http_code}}\\n' https://{REGISTRY}/; \
         curl -sS -o /dev/null -w 'env=%{{http_code}}\\n' https://{REGISTRY}/; \
         for v in SSL_CERT_FILE NODE_EXTRA_CA_CERTS REQUESTS_CA_BUNDLE CURL_CA_BUNDLE GIT_SSL_CAINFO; do \
           printf '%s=%s\\n' $v \"$(printenv $v)\"; done; \
         grep -qF '{ca_line}' /etc/ssl/certs/ca-certificates.crt && echo bundle-has-ca; \
         node -e 'fetch(\"https://{REGISTRY}/\").then(r => console.log(\"node=\" + r.status))'"
    )
}

#[test]
fn behind_a_re_signing_proxy_the_claude_setup_succeeds_and_the_off_switch_restores_failure() {
    let _hosts = TestHosts::with_names(&[(REGISTRY, HOST_SIDE)]);
    let proxy = Proxy::start();
    let dev = Dev::get();
    let env = proxy.env();

    // The built-in claude profile, only pointed at the test's resolver.
    let ws = dev
        .workspace("trust-claude")
        .with_profile("proxied", &config("proxied", "extends = \"claude\""));
    let started = std::time::Instant::now();
    let run = ws.lazaret_env(
        &[&env],
        &[
            "run",
            "--profile",
            "proxied",
            "--",
            "sh",
            "-c",
            &inspect_script(&proxy.ca_line()),
        ],
    );
    eprintln!(
        "claude setup and checks behind the test proxy: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let log = proxy.log_text();
    eprintln!(
        "test proxy: {} connections re-signed and forwarded, {} refused by the client",
        log.matches("tls ").count(),
        log.matches("refused").count()
    );
    assert_eq!(run.code, Some(0), "{run:?}\nproxy log:\n{log}");
    assert!(
        run.stderr.contains("setup of profile \"proxied\" done"),
        "{run:?}"
    );
    // The downloads went through the test's proxy: the pass is not the machine's own doing.
    assert!(log.contains("tls GET /node-linux-"), "proxy log:\n{log}");
    assert!(log.contains("claude-code"), "proxy log:\n{log}");
    assert!(!log.contains("refused"), "proxy log:\n{log}");
    for line in [
        "system=200",
        "env=200",
        "node=200",
        "bundle-has-ca",
        "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
        "NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt",
        "REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt",
        "CURL_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt",
        "GIT_SSL_CAINFO=/etc/ssl/certs/ca-certificates.crt",
    ] {
        assert!(run.stdout.lines().any(|l| l == line), "{line}: {run:?}");
    }

    // doctor names the CA, with the host file it came from.
    let doctor = ws.lazaret_env(&[&env], &["doctor", "--json"]);
    let checks: serde_json::Value =
        serde_json::from_str(&doctor.stdout).unwrap_or_else(|e| panic!("{e}: {doctor:?}"));
    let trust = checks
        .as_array()
        .and_then(|a| a.iter().find(|c| c["name"] == "trust: host CAs"))
        .unwrap_or_else(|| panic!("no trust check: {doctor:?}"));
    let detail = trust["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains(&format!("CN={CA_NAME}"))
            && detail.contains(&proxy.host_bundle.display().to_string()),
        "{trust}"
    );
    ws.wait_torn_down();

    // The off switch: the same proxy, the image's bundle only.
    let off = dev.workspace("trust-off").with_profile(
        "untrusting",
        &config("untrusting", "extends = \"shell\"\ntrust_host_cas = false"),
    );
    let before = proxy.log_text().matches("refused").count();
    let run = off.lazaret_env(
        &[&env],
        &[
            "run",
            "--profile",
            "untrusting",
            "--",
            "sh",
            "-c",
            &format!(
                "curl -sS -o /dev/null https://{REGISTRY}/; echo curl-exit=$?; \
                 echo ssl-cert-file=${{SSL_CERT_FILE:-unset}}"
            ),
        ],
    );
    assert!(
        run.stdout.contains("curl-exit=60") && run.stdout.contains("ssl-cert-file=unset"),
        "{run:?}"
    );
    let log = proxy.log_text();
    assert!(
        log.matches("refused").count() > before,
        "the refusal did not come from the test proxy:\n{log}"
    );
    off.wait_torn_down();
}
