//! Issue #17 item 2: under `default = "ask"` a connection (and a DNS name) no rule decides is
//! held, not refused, while the developer is asked: `lazaret net allow` lets the held
//! connection proceed, `lazaret net deny` refuses it, nobody answering refuses it after the
//! profile's `ask_timeout`; each refusal is recorded in the denial ledger. Real stack: the
//! session runs in the gVisor sandbox behind the real sidecar; every address tried is a test
//! host of the test's own network namespace (`support::netns`), DNS goes to the test's own
//! resolver.

mod support;

use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use support::netns::{host_fetch, TestHosts, BASE, PORT, PUBLIC, RESOLVER};
use support::{wait_for, Dev, TestWorkspace};

/// How long the profile lets a connection wait.
const ASK_TIMEOUT: u64 = 8;

/// Each step waits for its go file, runs one command and reports `RC START_NS END_NS`.
const STEPS: &str = r#"
step() {
  n=$1; shift
  while [ ! -e /workspace/go-$n ]; do sleep 0.05; done
  s=$(date +%s%N); "$@" >/dev/null 2>&1; rc=$?; e=$(date +%s%N)
  echo "$rc $s $e" > /workspace/.$n.tmp; mv /workspace/.$n.tmp /workspace/$n
}
step allow curl -sS -m 90 -o /dev/null http://PUBLIC:PORT/
step deny curl -sS -m 90 -o /dev/null http://PUBLIC:18081/
step expire curl -sS -m 90 -o /dev/null http://PUBLIC:18082/
step expired curl -sS -m 90 -o /dev/null http://PUBLIC:18082/
step name getent hosts other.test
step name-connect curl -sS -m 10 -o /dev/null http://other.test:PORT/
step name-deny getent hosts allowed.test
"#;

struct Step {
    rc: i32,
    start: Duration,
    end: Duration,
}

fn now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

fn go(ws: &TestWorkspace, name: &str) {
    let path = ws.path.join(format!("go-{name}"));
    std::fs::write(&path, "").expect("go");
    let _ = nix::unistd::chown(&path, Some(nix::unistd::Uid::from_raw(ws.dev.uid)), None);
}

fn result(ws: &TestWorkspace, name: &str, within: Duration) -> Step {
    let path = ws.path.join(name);
    let text = wait_for(within, || std::fs::read_to_string(&path).ok())
        .unwrap_or_else(|| panic!("step {name} did not end within {within:?}"));
    let n: Vec<u128> = text
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    assert_eq!(n.len(), 3, "{text:?}");
    let ns = |x: u128| Duration::from_nanos(u64::try_from(x).unwrap_or(0));
    Step {
        rc: i32::try_from(n[0]).unwrap_or(-1),
        start: ns(n[1]),
        end: ns(n[2]),
    }
}

/// What `lazaret net held` lists; empty while the Domain is not (yet) running.
fn held(ws: &TestWorkspace) -> Vec<(String, String)> {
    let r = ws.lazaret(&["net", "held", "--json", "--profile", "asker"]);
    if r.code != Some(0) {
        assert!(r.stderr.contains("no running Domain"), "{r:?}");
        return Vec::new();
    }
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    v["held"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| {
            (
                h["target"].as_str().unwrap_or("").to_owned(),
                h["protocol"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// Waits until `target` is held; returns when it was first seen held.
fn wait_held(ws: &TestWorkspace, target: &str, protocol: &str) -> Duration {
    wait_for(Duration::from_secs(30), || {
        held(ws)
            .iter()
            .any(|(t, p)| t == target && p == protocol)
            .then(now)
    })
    .unwrap_or_else(|| panic!("{target} ({protocol}) was not held: {:?}", held(ws)))
}

fn decide(ws: &TestWorkspace, verb: &str, target: &str) -> Duration {
    let r = ws.lazaret(&["net", verb, target, "--profile", "asker"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    now()
}

/// The ledger's rules for `address:port` (or a name).
fn ledger_rules(ws: &TestWorkspace, port: u16, name: Option<&str>) -> Vec<String> {
    let r = ws.lazaret(&["net", "denials", "--json", "--profile", "asker"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    v.as_array()
        .into_iter()
        .flatten()
        .filter(|e| match name {
            Some(n) => e["name"].as_str() == Some(n),
            None => e["address"].as_str() == Some(PUBLIC) && e["port"] == port,
        })
        .map(|e| e["rule"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn held_connections_proceed_when_allowed_and_are_refused_when_denied_or_unanswered() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_for(Duration::from_secs(10), || host_fetch(PUBLIC).then_some(()))
        .expect("the public test host answers from the host");
    let ws = dev.workspace("net-ask").with_profile(
        "asker",
        &format!(
            "[profiles.asker]\n{BASE}[profiles.asker.network]\nresolvers = [\"{RESOLVER}\"]\n\
             default = \"ask\"\nask_timeout = {ASK_TIMEOUT}\n"
        ),
    );
    let script = STEPS
        .replace("PUBLIC", PUBLIC)
        .replace("PORT", &PORT.to_string());
    let path = ws.path.join("ask.sh");
    std::fs::write(&path, script).expect("script");
    let _ = nix::unistd::chown(&path, Some(nix::unistd::Uid::from_raw(dev.uid)), None);
    let mut session = ws
        .dev
        .command("env")
        .args(ws.env_args())
        .arg(support::lazaret_bin())
        .args(["run", "--profile", "asker", "--", "sh", "/workspace/ask.sh"])
        .current_dir(&ws.path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lazaret run");
    let rules = ws.lazaret(&["net", "rules", "--json", "--profile", "asker"]);
    let v: serde_json::Value = serde_json::from_str(&rules.stdout).unwrap_or_default();
    assert_eq!(v["profile"]["default"], "ask", "{rules:?}");

    // 1. Held, then allowed: the same connection proceeds.
    let target = format!("{PUBLIC}:{PORT}");
    go(&ws, "allow");
    wait_held(&ws, &target, "tcp");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        !ws.path.join("allow").exists(),
        "the held connection neither failed nor went through while nobody answered"
    );
    let allowed_at = decide(&ws, "allow", &target);
    let step = result(&ws, "allow", Duration::from_secs(60));
    assert_eq!(step.rc, 0, "the held connection went through once allowed");
    let added = step.end.saturating_sub(allowed_at);
    eprintln!(
        "held connection: waited {:?} in all, proceeded {:?} after `lazaret net allow` returned",
        step.end.saturating_sub(step.start),
        added
    );
    assert!(added < Duration::from_secs(20), "{added:?}");
    assert!(!held(&ws).iter().any(|(t, _)| *t == target));

    // 2. Held, then denied: refused at once (the next retransmission), recorded.
    let denied = format!("{PUBLIC}:18081");
    go(&ws, "deny");
    wait_held(&ws, &denied, "tcp");
    let denied_at = decide(&ws, "deny", &denied);
    let step = result(&ws, "deny", Duration::from_secs(60));
    assert_eq!(step.rc, 7, "curl: could not connect (refused)");
    assert!(step.end.saturating_sub(denied_at) < Duration::from_secs(20));
    let reason = "refused for this run (lazaret net deny)";
    wait_for(Duration::from_secs(5), || {
        ledger_rules(&ws, 18081, None)
            .iter()
            .any(|r| r == reason)
            .then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "the denial is recorded: {:?}",
            ledger_rules(&ws, 18081, None)
        )
    });

    // 3. Held, nobody answers: refused after the timeout, recorded; afterwards at once.
    let expire = format!("{PUBLIC}:18082");
    go(&ws, "expire");
    wait_held(&ws, &expire, "tcp");
    let step = result(&ws, "expire", Duration::from_secs(80));
    assert_eq!(step.rc, 7, "refused after the wait");
    let waited = step.end.saturating_sub(step.start);
    assert!(
        waited >= Duration::from_secs(ASK_TIMEOUT),
        "held for the whole ask_timeout: {waited:?}"
    );
    let expired_reason = format!("nobody answered within {ASK_TIMEOUT} s (default ask)");
    assert!(
        ledger_rules(&ws, 18082, None).contains(&expired_reason),
        "{:?}",
        ledger_rules(&ws, 18082, None)
    );
    go(&ws, "expired");
    let step = result(&ws, "expired", Duration::from_secs(30));
    assert_eq!(step.rc, 7);
    assert!(
        step.end.saturating_sub(step.start) < Duration::from_secs(3),
        "an unanswered destination is refused at once for the rest of the run"
    );

    // 4. A held name: resolved once allowed, and its address connectable.
    go(&ws, "name");
    wait_held(&ws, "other.test", "dns");
    assert!(
        !hosts.names_asked().contains("other.test"),
        "a held name is not asked upstream before it is allowed"
    );
    // The narrow form (issue #31): the name's addresses on the port it is asked for.
    let allowed_at = decide(&ws, "allow", &format!("other.test:{PORT}"));
    let step = result(&ws, "name", Duration::from_secs(30));
    assert_eq!(step.rc, 0, "the held name resolved once allowed");
    let added = step.end.saturating_sub(allowed_at);
    eprintln!("held name: resolved {added:?} after `lazaret net allow` returned");
    assert!(added < Duration::from_secs(6), "{added:?}");
    go(&ws, "name-connect");
    assert_eq!(result(&ws, "name-connect", Duration::from_secs(30)).rc, 0);

    // 5. A held name denied: never asked upstream, recorded.
    go(&ws, "name-deny");
    wait_held(&ws, "allowed.test", "dns");
    decide(&ws, "deny", "allowed.test");
    let step = result(&ws, "name-deny", Duration::from_secs(30));
    assert_ne!(step.rc, 0, "a denied held name does not resolve");
    assert!(!hosts.names_asked().contains("allowed.test"));
    assert!(ledger_rules(&ws, 53, Some("allowed.test"))
        .iter()
        .any(|r| r == reason));

    let status = session.wait().expect("lazaret run ends");
    assert!(status.success(), "{status:?}");
}

/// The TUI key path: a connection held in a pane shows up as `N held` in the tab bar and as
/// the first row of the denials panel; `a` lets it proceed in the same session, `d` refuses
/// another one at once.
#[test]
fn the_tui_asks_in_its_denials_panel_and_a_or_d_decides() {
    let dev = Dev::get();
    let hosts = TestHosts::create();
    wait_for(Duration::from_secs(10), || host_fetch(PUBLIC).then_some(()))
        .expect("the public test host answers from the host");
    let ws = dev.workspace("net-ask-tui").with_profile(
        "asker",
        &format!(
            "[profiles.asker]\n{BASE}[profiles.asker.network]\nresolvers = [\"{RESOLVER}\"]\n\
             default = \"ask\"\nask_timeout = 120\n"
        ),
    );
    let dir = ws.path.display().to_string();
    let tmux = support::tmux::Tmux::start(&dev, "net-ask-tui", "t", &dir, 200, 50);
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; env {} {} tui --profile asker",
            ws.env_args().join(" "),
            support::lazaret_bin().display()
        ),
    );
    tmux.wait_screen("t", "the pane's shell", |s| s.contains("/workspace#"));
    let target = format!("{PUBLIC}:{PORT}");
    for (port, verdict) in [(PORT, "allow"), (18083, "deny")] {
        tmux.type_line(
            "t",
            &format!(
                "clear; curl -sS -m 100 -o /dev/null http://{PUBLIC}:{port}/ 2>/dev/null; echo {verdict}=$?"
            ),
        );
        let shown = format!("{PUBLIC}:{port}");
        tmux.wait_screen("t", "the held count", |s| s.contains("1 held"));
        tmux.key("t", "C-b");
        tmux.keys("t", "w");
        tmux.wait_screen("t", "the held row", |s| {
            s.contains(&format!("? {shown} tcp")) && s.contains("s left")
        });
        if verdict == "allow" {
            tmux.keys("t", "a");
            tmux.wait_screen("t", "the allowed message", |s| {
                s.contains(&format!("allowed {target} for this run"))
            });
        } else {
            tmux.keys("t", "d");
            tmux.wait_screen("t", "the refused message", |s| {
                s.contains(&format!("refused {shown} for this run"))
            });
        }
        tmux.key("t", "Escape");
        // curl: 0 once allowed (the same connection went through), 7 once refused.
        let want = if verdict == "allow" {
            "allow=0"
        } else {
            "deny=7"
        };
        tmux.wait_screen("t", "the held connection's end", |s| s.contains(want));
        tmux.wait_screen("t", "nothing held", |s| !s.contains(" held"));
    }
    tmux.quit_tui_ending_sessions("t");
    ws.wait_torn_down();
    ws.assert_nothing_left();
    drop(hosts);
}
