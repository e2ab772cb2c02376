//! Issue #17 item 1: a destination the Network Sidecar refused is allowed for the current run
//! with `lazaret net allow` — in the same running session, no restart, other destinations
//! still refused — and refused again after `lazaret net revoke`. Real stack: the session runs
//! in the gVisor sandbox behind the real sidecar; every address tried is a test host of the
//! test's own network namespace (`support::netns`), DNS goes to the test's own resolver.

mod support;

use std::process::Stdio;
use std::time::Duration;
use support::netns::{host_fetch, TestHosts, BASE, PORT, PRIVATE, PUBLIC, RESOLVER};
use support::tmux::Tmux;
use support::{lazaret_bin, wait_for, Dev, TestWorkspace};

/// What the session inside checks at each phase, one `what=verdict` line each.
const PROBES: &str = r#"
probe() {
  curl -sS -m 5 -o /dev/null http://PUBLIC:PORT/ 2>/dev/null && echo tcp-public=open || echo tcp-public=refused
  python3 -c 'import socket; u=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(3); u.sendto(b"x", ("PUBLIC", PORT)); assert u.recv(64) == b"echo:x"' 2>/dev/null && echo udp-public=open || echo udp-public=refused
  curl -sS -m 5 -o /dev/null http://PRIVATE0:PORT/ 2>/dev/null && echo tcp-private=open || echo tcp-private=refused
  curl -sS -m 5 -o /dev/null http://PRIVATE1:PORT/ 2>/dev/null && echo tcp-other-private=open || echo tcp-other-private=refused
  getent hosts denied.test >/dev/null && echo name=resolved || echo name=unresolved
  curl -sS -m 5 -o /dev/null http://denied.test:PORT/ 2>/dev/null && echo tcp-name=open || echo tcp-name=refused
  getent hosts other.test >/dev/null && echo other-name=resolved || echo other-name=unresolved
}
for phase in a b c d; do
  probe > /workspace/.$phase.tmp; mv /workspace/.$phase.tmp /workspace/$phase
  while [ ! -e /workspace/go-$phase ]; do sleep 0.1; done
done
"#;

/// Waits for the session's results of `phase`, then lets it go on.
fn phase(ws: &TestWorkspace, phase: &str) -> Vec<String> {
    let path = ws.path.join(phase);
    let text = wait_for(Duration::from_secs(120), || {
        std::fs::read_to_string(&path).ok()
    })
    .unwrap_or_else(|| panic!("the session did not report phase {phase}"));
    text.lines().map(str::to_owned).collect()
}

fn go_on(ws: &TestWorkspace, phase: &str) {
    let path = ws.path.join(format!("go-{phase}"));
    std::fs::write(&path, "").expect("go on");
    let _ = nix::unistd::chown(&path, Some(nix::unistd::Uid::from_raw(ws.dev.uid)), None);
}

fn expect(pairs: &[(&str, &str)]) -> Vec<String> {
    pairs.iter().map(|(k, v)| format!("{k}={v}")).collect()
}

fn run_rules(ws: &TestWorkspace) -> Vec<String> {
    let r = ws.lazaret(&["net", "rules", "--json", "--profile", "steer"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    v["run"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| r["target"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// The test hosts and a workspace with profile `steer`: the test's resolver, `denied.test`
/// denied by name, unlisted public destinations refused.
fn steered(dev: &Dev, tag: &str) -> (TestHosts, TestWorkspace) {
    let hosts = TestHosts::create();
    wait_for(Duration::from_secs(10), || host_fetch(PUBLIC).then_some(()))
        .expect("the public test host answers from the host");
    let ws = dev.workspace(tag).with_profile(
        "steer",
        &format!(
            "[profiles.steer]\n{BASE}[profiles.steer.network]\nresolvers = [\"{RESOLVER}\"]\n\
             deny_names = [\"denied.test\"]\ndefault = \"deny\"\n"
        ),
    );
    (hosts, ws)
}

#[test]
fn a_refused_destination_is_allowed_for_the_running_session_and_revoked_again() {
    let dev = Dev::get();
    let (hosts, ws) = steered(&dev, "net-allow");
    let script = PROBES
        .replace("PUBLIC", PUBLIC)
        .replace("PRIVATE0", PRIVATE[0])
        .replace("PRIVATE1", PRIVATE[1])
        .replace("PORT", &PORT.to_string());
    let path = ws.path.join("steer.sh");
    std::fs::write(&path, script).expect("script");
    let _ = nix::unistd::chown(&path, Some(nix::unistd::Uid::from_raw(dev.uid)), None);

    // Without a running Domain there is no run to allow anything for.
    let early = ws.lazaret(&["net", "allow", PUBLIC, "--profile", "steer"]);
    assert_ne!(early.code, Some(0), "{early:?}");
    assert!(early.stderr.contains("no running Domain"), "{early:?}");

    let mut session = ws
        .dev
        .command("env")
        .args(ws.env_args())
        .arg(support::lazaret_bin())
        .args([
            "run",
            "--profile",
            "steer",
            "--",
            "sh",
            "/workspace/steer.sh",
        ])
        .current_dir(&ws.path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lazaret run");

    // a. The profile's policy: everything here refused; the denied name never reaches the
    //    test's resolver.
    let refused_all = [
        ("tcp-public", "refused"),
        ("udp-public", "refused"),
        ("tcp-private", "refused"),
        ("tcp-other-private", "refused"),
        ("name", "unresolved"),
        ("tcp-name", "refused"),
        ("other-name", "unresolved"),
    ];
    assert_eq!(phase(&ws, "a"), expect(&refused_all));
    assert!(!hosts.names_asked().contains("denied.test"));
    assert!(run_rules(&ws).is_empty());

    // b. One port of the public host, and — with the explicit flag — one private host.
    let allowed = ws.lazaret(&[
        "net",
        "allow",
        &format!("{PUBLIC}:{PORT}"),
        "--profile",
        "steer",
    ]);
    assert_eq!(allowed.code, Some(0), "{allowed:?}");
    assert!(allowed.stdout.contains("allowed"), "{allowed:?}");
    let private = ws.lazaret(&["net", "allow", PRIVATE[0], "--profile", "steer"]);
    assert_eq!(private.code, Some(2), "{private:?}");
    assert!(private.stderr.contains("--private"), "{private:?}");
    let private = ws.lazaret(&[
        "net",
        "allow",
        PRIVATE[0],
        "--private",
        "--profile",
        "steer",
    ]);
    assert_eq!(private.code, Some(0), "{private:?}");
    assert!(
        private
            .stderr
            .contains("warning: 10.99.0.1 is in 10.0.0.0/8"),
        "{private:?}"
    );
    assert_eq!(
        run_rules(&ws),
        [format!("{PUBLIC}:{PORT}"), PRIVATE[0].to_owned()]
    );
    go_on(&ws, "a");
    assert_eq!(
        phase(&ws, "b"),
        expect(&[
            ("tcp-public", "open"),
            ("udp-public", "open"),
            ("tcp-private", "open"),
            ("tcp-other-private", "refused"),
            ("name", "unresolved"),
            ("tcp-name", "refused"),
            ("other-name", "unresolved"),
        ])
    );

    // c. Both revoked, and a name the profile denies allowed: it resolves, its answer is
    //    connectable, the other names stay refused.
    for target in [format!("{PUBLIC}:{PORT}"), PRIVATE[0].to_owned()] {
        let r = ws.lazaret(&["net", "revoke", &target, "--profile", "steer"]);
        assert_eq!(r.code, Some(0), "{r:?}");
        assert!(r.stdout.contains("revoked"), "{r:?}");
    }
    let name = ws.lazaret(&[
        "net",
        "allow",
        "denied.test",
        "--any-port",
        "--json",
        "--profile",
        "steer",
    ]);
    assert_eq!(name.code, Some(0), "{name:?}");
    let v: serde_json::Value = serde_json::from_str(&name.stdout).expect("JSON");
    assert_eq!(v["added"], true, "{v}");
    go_on(&ws, "b");
    assert_eq!(
        phase(&ws, "c"),
        expect(&[
            ("tcp-public", "refused"),
            ("udp-public", "refused"),
            ("tcp-private", "refused"),
            ("tcp-other-private", "refused"),
            ("name", "resolved"),
            ("tcp-name", "open"),
            ("other-name", "unresolved"),
        ]),
        "the public host is reachable again only once answered for the allowed name"
    );
    assert!(hosts.names_asked().contains("denied.test"));

    // d. The name revoked: unresolved again, and its answer no longer connectable.
    let r = ws.lazaret(&["net", "revoke", "denied.test", "--profile", "steer"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let again = ws.lazaret(&["net", "revoke", "denied.test", "--profile", "steer"]);
    assert_eq!(again.code, Some(0), "{again:?}");
    assert!(again.stdout.contains("was not allowed"), "{again:?}");
    go_on(&ws, "c");
    assert_eq!(phase(&ws, "d"), expect(&refused_all));

    // Added to the profile on the explicit flag: the exact lines shown, the file's comments
    // kept, the configuration still valid; a port cannot go into a profile.
    let port = ws.lazaret(&[
        "net",
        "allow",
        &format!("{PUBLIC}:{PORT}"),
        "--save",
        "--profile",
        "steer",
    ]);
    assert_eq!(port.code, Some(2), "{port:?}");
    let config =
        std::path::PathBuf::from(format!("{}.config/lazaret/config.toml", ws.path.display()));
    let before = std::fs::read_to_string(&config).expect("config");
    let saved = ws.lazaret(&[
        "net",
        "allow",
        "denied.test",
        "--save",
        "--profile",
        "steer",
    ]);
    assert_eq!(saved.code, Some(0), "{saved:?}");
    for line in [
        "allowed denied.test for this run",
        "added denied.test to profile steer in",
        "  - deny_names = [\"denied.test\"]",
        "  + deny_names = []",
        "  + allow_names = [\"denied.test\"]",
        "applies from its next start",
    ] {
        assert!(saved.stdout.contains(line), "{line:?} in {saved:?}");
    }
    let after = std::fs::read_to_string(&config).expect("config");
    assert_eq!(
        after
            .replace("deny_names = []\n", "deny_names = [\"denied.test\"]\n")
            .replace("allow_names = [\"denied.test\"]\n", ""),
        before,
        "nothing else changed"
    );
    let check = ws.lazaret(&["config", "check"]);
    assert_eq!(check.code, Some(0), "{check:?}");
    go_on(&ws, "d");

    let status = session.wait().expect("lazaret run");
    assert!(status.success(), "{status:?}");
    ws.wait_torn_down();
    // The next run begins without the last run's rules; the profile now allows the name.
    assert!(run_rules(&ws).is_empty());
    let r = ws.lazaret(&["net", "rules", "--json", "--profile", "steer"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(
        v["profile"]["allow_names"],
        serde_json::json!(["denied.test"]),
        "{v}"
    );
    assert_eq!(v["profile"]["deny_names"], serde_json::json!([]), "{v}");
    ws.assert_nothing_left();
    drop(hosts);
}

/// The same from the TUI's denials panel: a refused connection shows up, `a` allows it for the
/// run (a private one only after `y`), and `s` shows the lines it would add to the profile and
/// writes them on `y`.
#[test]
fn the_tui_denials_panel_allows_for_the_run_and_adds_to_the_profile() {
    let dev = Dev::get();
    let (hosts, ws) = steered(&dev, "net-tui");
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "net-tui", "t", &dir, 200, 50);
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; env {} {} tui --profile steer",
            ws.env_args().join(" "),
            lazaret_bin().display()
        ),
    );
    tmux.wait_screen("t", "the pane's shell", |s| s.contains("/workspace#"));
    let probe = |what: &str, url: &str| {
        tmux.type_line(
            "t",
            &format!("clear; curl -sS -m 5 -o /dev/null {url} 2>/dev/null && echo {what}=open || echo {what}=refused"),
        );
    };
    let public = format!("http://{PUBLIC}:{PORT}/");
    let private = format!("http://{}:{PORT}/", PRIVATE[0]);
    probe("public", &public);
    tmux.wait_screen("t", "the refusal", |s| s.contains("public=refused"));
    probe("private", &private);
    tmux.wait_screen("t", "the refusal", |s| s.contains("private=refused"));
    tmux.type_line(
        "t",
        "clear; getent hosts denied.test || echo name=unresolved",
    );
    tmux.wait_screen("t", "the refused name", |s| s.contains("name=unresolved"));

    // The panel, filtered to the public host's denial: `a` allows it for the run.
    let public_target = format!("{PUBLIC}:{PORT}");
    tmux.key("t", "C-b");
    tmux.keys("t", "w");
    tmux.wait_screen("t", "the denials in the panel", |s| {
        s.contains(&public_target)
            && s.contains(&format!("{}:{PORT}", PRIVATE[0]))
            && s.contains("denied.test")
    });
    let select = |filter: &str| {
        tmux.keys("t", "/");
        tmux.keys("t", filter);
        tmux.key("t", "Enter");
    };
    select(PUBLIC);
    tmux.keys("t", "a");
    tmux.wait_screen("t", "the allowed message", |s| {
        s.contains(&format!("allowed {public_target} for this run"))
    });
    // The row says so once the coordinator's next Domain state comes (every 3 s).
    tmux.wait_screen("t", "the row marked allowed", |s| {
        s.contains(&format!("{public_target} allowed for this run"))
    });
    // The private host: asked first.
    tmux.keys("t", "/");
    tmux.key("t", "BSpace");
    for _ in 0..PUBLIC.len() {
        tmux.key("t", "BSpace");
    }
    tmux.keys("t", PRIVATE[0]);
    tmux.key("t", "Enter");
    tmux.keys("t", "a");
    tmux.wait_screen("t", "the private question", |s| {
        s.contains("is private: y allows it")
    });
    tmux.keys("t", "y");
    tmux.wait_screen("t", "the private host allowed", |s| {
        s.contains(&format!("allowed {}:{PORT} for this run", PRIVATE[0]))
    });
    // The name into the profile: the lines first, written on `y`.
    tmux.keys("t", "/");
    for _ in 0..PRIVATE[0].len() {
        tmux.key("t", "BSpace");
    }
    tmux.keys("t", "denied");
    tmux.key("t", "Enter");
    tmux.keys("t", "s");
    tmux.wait_screen("t", "the lines to save", |s| {
        s.contains("+ allow_names = [\"denied.test\"]") && s.contains("y writes")
    });
    let config =
        std::path::PathBuf::from(format!("{}.config/lazaret/config.toml", ws.path.display()));
    assert!(!std::fs::read_to_string(&config)
        .expect("config")
        .contains("allow_names"));
    tmux.keys("t", "y");
    tmux.wait_screen("t", "the saved message", |s| {
        s.contains("allowed denied.test for this run; added to profile steer")
    });
    assert!(std::fs::read_to_string(&config)
        .expect("config")
        .contains("allow_names = [\"denied.test\"]"));

    // Back in the pane: what was allowed opens, in the same session.
    tmux.key("t", "Escape");
    probe("public", &public);
    tmux.wait_screen("t", "the public host open", |s| s.contains("public=open"));
    probe("private", &private);
    tmux.wait_screen("t", "the private host open", |s| s.contains("private=open"));
    tmux.type_line(
        "t",
        "clear; getent hosts denied.test >/dev/null && echo name=resolved",
    );
    tmux.wait_screen("t", "the name resolved", |s| s.contains("name=resolved"));
    let check = ws.lazaret(&["config", "check"]);
    assert_eq!(check.code, Some(0), "{check:?}");
    tmux.quit_tui_ending_sessions("t");
    ws.wait_torn_down();
    ws.assert_nothing_left();
    drop(hosts);
}

/// Issue #17 item 5: each run of a Domain keeps its own denial ledger, and the earlier runs
/// stay readable after the Domain stopped (`--runs`, `--run previous|all|ID`, `--since`).
#[test]
fn the_denial_ledgers_of_three_runs_stay_readable() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    support::netns::wait_answering(&PRIVATE);
    let ws = dev.workspace("net-history");
    for addr in PRIVATE {
        let r = ws.run(&[
            "sh",
            "-c",
            &format!("curl -sS -m 5 -o /dev/null http://{addr}:{PORT}/ 2>/dev/null; sleep 1.5"),
        ]);
        assert_eq!(r.code, Some(0), "{r:?}");
        ws.wait_torn_down();
    }
    let json = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["net", "denials", "--json"];
        all.extend_from_slice(args);
        let r = ws.lazaret(&all);
        assert_eq!(r.code, Some(0), "{r:?}");
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {r:?}"))
    };
    let runs = json(&["--runs"]);
    let ids: Vec<String> = runs
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| r["run"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(ids.len(), 3, "{runs:#}");
    assert_eq!(runs[2]["current"], true, "{runs:#}");
    let addrs = |v: &serde_json::Value| -> Vec<(String, String)> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                (
                    e["run"].as_str().unwrap_or("").to_owned(),
                    e["address"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect()
    };
    // The default: the last run only.
    assert_eq!(addrs(&json(&[])), [(ids[2].clone(), PRIVATE[2].to_owned())]);
    assert_eq!(
        addrs(&json(&["--run", "previous"])),
        [(ids[1].clone(), PRIVATE[1].to_owned())]
    );
    assert_eq!(
        addrs(&json(&["--run", &ids[0]])),
        [(ids[0].clone(), PRIVATE[0].to_owned())]
    );
    let mut all = addrs(&json(&["--run", "all", "--since", "1h"]));
    all.sort();
    let want: Vec<(String, String)> = ids
        .iter()
        .zip(PRIVATE)
        .map(|(id, a)| (id.clone(), a.to_owned()))
        .collect();
    assert_eq!(all, want);
    assert!(addrs(&json(&["--run", "all", "--since", "2999-01-01"])).is_empty());
    let unknown = ws.lazaret(&["net", "denials", "--run", "yesterday"]);
    assert_eq!(unknown.code, Some(2), "{unknown:?}");
    assert!(unknown.stderr.contains("--runs"), "{unknown:?}");
    let human = ws.lazaret(&["net", "denials", "--run", "all"]);
    assert!(human.stdout.starts_with("RUN "), "{human:?}");
    ws.assert_nothing_left();
    drop(hosts);
}

/// Issue #17 item 4: `host_services = ["tcp/PORT"]` lets the sandbox reach exactly that port
/// of the host's loopback, by the name `host.lazaret.internal`; another port of the host's
/// loopback stays refused. The listeners are the test's own, on the host's loopback.
#[test]
fn one_host_service_is_reachable_and_nothing_else_of_the_hosts_loopback() {
    use std::io::{Read, Write};
    let dev = Dev::get();
    let listen = || {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback listener");
        let port = l.local_addr().expect("addr").port();
        std::thread::spawn(move || {
            for mut c in l.incoming().flatten() {
                let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
                let _ = c.read(&mut [0u8; 1024]);
                let _ = c.write_all(
                    format!("HTTP/1.0 200 OK\r\nContent-Length: 15\r\n\r\nhost-port-{port:05}")
                        .as_bytes(),
                );
            }
        });
        port
    };
    let (open, closed) = (listen(), listen());
    let ws = dev.workspace("host-svc").with_profile(
        "svc",
        &format!(
            "[profiles.svc]\n{BASE}[profiles.svc.network]\nhost_services = [\"tcp/{open}\"]\n"
        ),
    );
    let fetch = |what: &str, url: &str| {
        format!("curl -sS -m 5 {url} 2>/dev/null && echo || echo {what}=refused; ")
    };
    let mut script = String::from("getent hosts host.lazaret.internal | cut -d' ' -f1; ");
    script.push_str(&fetch(
        "by-name",
        &format!("http://host.lazaret.internal:{open}/"),
    ));
    script.push_str(&fetch("by-address", &format!("http://10.0.2.2:{open}/")));
    script.push_str(&fetch(
        "other-port",
        &format!("http://host.lazaret.internal:{closed}/"),
    ));
    script.push_str(&fetch(
        "other-port-address",
        &format!("http://10.0.2.2:{closed}/"),
    ));
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let got: Vec<&str> = r.stdout.lines().collect();
    let hello = format!("host-port-{open:05}");
    assert_eq!(
        got,
        [
            "10.0.2.2",
            hello.as_str(),
            hello.as_str(),
            "other-port=refused",
            "other-port-address=refused"
        ],
        "{r:?}"
    );
    // The same listener is not reachable from a profile without host services.
    let plain = dev.workspace("host-svc-none");
    let r = plain.run(&[
        "sh",
        "-c",
        &fetch("none", &format!("http://10.0.2.2:{open}/")),
    ]);
    assert_eq!(r.stdout.trim(), "none=refused", "{r:?}");
    ws.assert_nothing_left();
    plain.assert_nothing_left();
}

/// A free port of the host's loopback (bound and let go: nothing else of the test uses it).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// An HTTP GET of `url` from the host: the body, or None when it cannot connect.
fn host_get(addr: &str, port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect((addr, port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").as_bytes())
        .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    text.split_once("\r\n\r\n").map(|(_, body)| body.to_owned())
}

/// Issue #17 item 3: a server inside (bound to the sandbox's loopback) is reached from the
/// host through `lazaret port publish`, on the host's loopback only; unpublished, it is not.
#[test]
fn a_server_inside_is_published_on_the_hosts_loopback_and_unpublished() {
    let dev = Dev::get();
    let ws = dev.workspace("port-publish");
    let page = ws.path.join("hello.txt");
    std::fs::write(&page, "hello from the sandbox\n").expect("page");
    let _ = nix::unistd::chown(&page, Some(nix::unistd::Uid::from_raw(dev.uid)), None);
    let server = ws.spawn(&[
        "sh",
        "-c",
        &format!(
            "python3 -m http.server 8000 --bind 127.0.0.1 --directory /workspace >/dev/null 2>&1 & {}; kill $!",
            support::HOLD
        ),
    ]);
    let host_port = free_port();
    let publish = wait_for(Duration::from_secs(60), || {
        let r = ws.lazaret(&["port", "publish", &format!("{host_port}:8000")]);
        (r.code == Some(0)).then_some(r)
    })
    .expect("the Domain came up and the port was published");
    assert!(
        publish.stdout.contains(&format!(
            "published 127.0.0.1:{host_port} -> sandbox port 8000"
        )),
        "{publish:?}"
    );
    // Said at once: 127.0.0.1 is the browser's localhost origin, shared with other tools.
    assert!(
        publish.stdout.contains("localhost origin") && publish.stdout.contains("127.0.0.2"),
        "{publish:?}"
    );
    let body = wait_for(Duration::from_secs(30), || {
        host_get("127.0.0.1", host_port, "/hello.txt")
    });
    assert_eq!(body.as_deref(), Some("hello from the sandbox\n"));
    // Only on the host's loopback address it was published on.
    assert_eq!(host_get("127.0.0.2", host_port, "/hello.txt"), None);
    let list = ws.lazaret(&["port", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&list.stdout).expect("JSON");
    assert_eq!(
        v["ports"],
        serde_json::json!([{"address": "127.0.0.1", "host_port": host_port, "port": 8000}]),
        "{list:?}"
    );
    // The same host port twice: refused, and said why.
    let again = ws.lazaret(&["port", "publish", &format!("{host_port}:9000")]);
    assert_eq!(again.code, Some(4), "{again:?}");
    assert!(
        again.stderr.contains("already publishes port 8000"),
        "{again:?}"
    );
    let bad = ws.lazaret(&["port", "publish", "80000"]);
    assert_eq!(bad.code, Some(2), "{bad:?}");

    let un = ws.lazaret(&["port", "unpublish", &host_port.to_string()]);
    assert_eq!(un.code, Some(0), "{un:?}");
    assert_eq!(host_get("127.0.0.1", host_port, "/hello.txt"), None);
    let list = ws.lazaret(&["port", "list"]);
    assert!(list.stdout.contains("no ports published"), "{list:?}");

    // An origin of its own (issue #31): another loopback address, only there, listed so.
    let own = ws.lazaret(&[
        "port",
        "publish",
        &format!("{host_port}:8000"),
        "--address",
        "127.0.0.2",
    ]);
    assert_eq!(own.code, Some(0), "{own:?}");
    assert!(!own.stdout.contains("localhost origin"), "{own:?}");
    let body = wait_for(Duration::from_secs(30), || {
        host_get("127.0.0.2", host_port, "/hello.txt")
    });
    assert_eq!(body.as_deref(), Some("hello from the sandbox\n"));
    assert_eq!(host_get("127.0.0.1", host_port, "/hello.txt"), None);
    let list = ws.lazaret(&["port", "list"]);
    assert!(
        list.stdout
            .contains(&format!("127.0.0.2:{host_port} -> sandbox port 8000")),
        "{list:?}"
    );
    let multicast = ws.lazaret(&["port", "publish", "18001:8000", "--address", "224.0.0.1"]);
    assert_eq!(multicast.code, Some(2), "{multicast:?}");
    assert!(multicast.stderr.contains("127.0.0.N"), "{multicast:?}");
    let un = ws.lazaret(&["port", "unpublish", &host_port.to_string()]);
    assert_eq!(un.code, Some(0), "{un:?}");

    // Published again, and the Domain's end ends it.
    let r = ws.lazaret(&["port", "publish", &format!("{host_port}:8000")]);
    assert_eq!(r.code, Some(0), "{r:?}");
    ws.release();
    let done = support::finish(server);
    assert_eq!(done.code, Some(0), "{done:?}");
    ws.wait_torn_down();
    assert_eq!(host_get("127.0.0.1", host_port, "/hello.txt"), None);
    let forwarders: Vec<String> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("port_forward") && c.contains(&format!(":{host_port}\"")))
        .collect();
    assert!(
        forwarders.is_empty(),
        "a port forwarder outlived its Domain: {forwarders:?}"
    );
    ws.assert_nothing_left();
}

/// The profile's `publish = ["HOST_PORT:PORT"]`: published at every start without a command,
/// shown by `lazaret port list`, ended with the Domain.
#[test]
fn the_profiles_published_ports_come_with_the_domain() {
    let dev = Dev::get();
    let host_port = free_port();
    let ws = dev.workspace("port-profile").with_profile(
        "web",
        &format!(
            "[profiles.web]\n{BASE}[profiles.web.network]\npublish = [\"{host_port}:8000\"]\n"
        ),
    );
    let page = ws.path.join("index.txt");
    std::fs::write(&page, "published at start\n").expect("page");
    let _ = nix::unistd::chown(&page, Some(nix::unistd::Uid::from_raw(dev.uid)), None);
    let server = ws.spawn(&[
        "sh",
        "-c",
        &format!(
            "python3 -m http.server 8000 --bind 127.0.0.1 --directory /workspace >/dev/null 2>&1 & {}; kill $!",
            support::HOLD
        ),
    ]);
    let body = wait_for(Duration::from_secs(60), || {
        host_get("127.0.0.1", host_port, "/index.txt")
    });
    assert_eq!(body.as_deref(), Some("published at start\n"));
    let list = ws.lazaret(&["port", "list", "--json", "--profile", "web"]);
    let v: serde_json::Value = serde_json::from_str(&list.stdout).expect("JSON");
    assert_eq!(v["ports"][0]["host_port"], host_port, "{list:?}");
    ws.release();
    let done = support::finish(server);
    assert_eq!(done.code, Some(0), "{done:?}");
    ws.wait_torn_down();
    assert_eq!(host_get("127.0.0.1", host_port, "/index.txt"), None);
    ws.assert_nothing_left();
}
