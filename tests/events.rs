//! `lazaret events` (issue #15) on the real stack: `--json --follow`, started before any
//! Domain of the workspace runs, reports the Domain and its detached session starting, the
//! session working then idle (computed with time), its bell (attention), an escalation waiting
//! and withdrawn once `lazaret approve` decided it, the session's exit with its status and the
//! Domain stopping — in that order; once its reader is gone it ends by itself. Without
//! `--follow` and without a running Domain it prints nothing.

mod support;

use std::io::BufRead;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use support::tmux::Tmux;
use support::{lazaret_bin, wait_for, Dev, TestWorkspace};

/// A profile without rules: every host command goes to the developer.
const ASK: &str = "[profiles.ask]\nextends = \"shell\"\n";

/// The coordinator's idle threshold (`IDLE_AFTER`).
const IDLE_AFTER_MS: u64 = 5_000;

/// `lazaret run --detachable --profile ask -- bash` in `target`, then waits for its prompt.
fn start_detachable(tmux: &Tmux<'_>, target: &str, ws: &TestWorkspace) {
    let env = ws.env_args().join(" ");
    let lazaret = lazaret_bin().display().to_string();
    tmux.type_line(
        target,
        &format!(
            "PS1='host$ '; env {env} {lazaret} run --detachable --profile ask -- bash; echo cli-rc=$?"
        ),
    );
    tmux.wait_screen(target, "the sandbox shell", |s| s.contains(":/workspace# "));
    wait_for(Duration::from_secs(30), || {
        tmux.type_line(target, "PS1='sandbox# '");
        std::thread::sleep(Duration::from_millis(500));
        tmux.screen(target).contains("\nsandbox# ").then_some(())
    })
    .unwrap_or_else(|| panic!("no sandbox prompt:\n{}", tmux.screen(target)));
}

/// The events of `lazaret events --json --follow` about one Domain, as they come.
struct Follower {
    lines: mpsc::Receiver<serde_json::Value>,
    seen: Vec<serde_json::Value>,
}

impl Follower {
    /// Waits (up to `timeout`) for an event satisfying `pred`; returns it.
    fn wait(
        &mut self,
        timeout: Duration,
        what: &str,
        pred: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        if let Some(e) = self.seen.iter().find(|e| pred(e)) {
            return e.clone();
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(e) => {
                    self.seen.push(e.clone());
                    if pred(&e) {
                        return e;
                    }
                }
                Err(_) => panic!("no event {what}; seen: {:#?}", self.seen),
            }
        }
    }

    /// Position of the first seen event satisfying `pred`.
    fn index(&self, pred: impl Fn(&serde_json::Value) -> bool) -> usize {
        self.seen
            .iter()
            .position(pred)
            .unwrap_or_else(|| panic!("not seen; seen: {:#?}", self.seen))
    }
}

fn is(e: &serde_json::Value, event: &str) -> bool {
    e["event"] == event
}

#[test]
fn events_follow_a_detached_session_from_start_to_the_domain_stopping() {
    let dev = Dev::get();
    let ws = dev.workspace("events").with_profile("ask", ASK);
    let dir = ws.path.display().to_string();

    // Without --follow and without a running Domain (a runtime dir of its own): nothing.
    let empty = format!("{dir}.rt");
    let made = dev.sh(&format!("mkdir -m 700 -p '{empty}'"));
    assert!(made.status.success(), "{made:?}");
    let none = ws.lazaret_env(
        &[&format!("XDG_RUNTIME_DIR={empty}")],
        &["events", "--json"],
    );
    let _ = dev.sh(&format!("rm -rf '{empty}'"));
    assert_eq!(none.code, Some(0), "{none:?}");
    assert_eq!(none.stdout, "", "{none:?}");

    let mut child = ws
        .dev
        .command("env")
        .args(ws.env_args())
        .arg(lazaret_bin())
        .args(["events", "--json", "--follow"])
        .current_dir(&ws.path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("lazaret events --follow");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    let domain = ws.domain.as_str().to_owned();
    // Reads until this Domain stopped, then lets go of the pipe: its writer's reader is gone.
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            all.push(line.clone());
            assert!(line.is_ascii(), "{line:?}");
            let e: serde_json::Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
            if e["domain_id"] != domain.as_str() {
                continue;
            }
            let stop = is(&e, "domain_stopped");
            if tx.send(e).is_err() || stop {
                break;
            }
        }
        all
    });
    let mut events = Follower {
        lines: rx,
        seen: Vec::new(),
    };

    let tmux = Tmux::start(&dev, "events", "a", &dir, 120, 40);
    start_detachable(&tmux, "a", &ws);
    let started = events.wait(Duration::from_secs(30), "session_started", |e| {
        is(e, "session_started")
    });
    let session = started["session_id"].as_str().expect("an id").to_owned();
    assert_eq!(started["command"], serde_json::json!(["bash"]), "{started}");
    assert_eq!(started["hosted"], true, "{started}");
    assert_eq!(started["workspace"], dir.as_str(), "{started}");
    assert_eq!(started["profile"], "ask", "{started}");
    let mine =
        |e: &serde_json::Value, event: &str| is(e, event) && e["session_id"] == session.as_str();

    // Detached, the session prints for a few seconds, stays quiet, rings the bell, asks to run
    // a command on the host, then exits 3.
    tmux.type_line(
        "a",
        "sleep 2; for i in $(seq 1 25); do echo tick $i; sleep 0.2; done; sleep 8; printf '\\a'; \
         sleep 2; lazaret-escalate -- sh -c 'echo approved-ran > marker'; sleep 1; exit 3",
    );
    tmux.key("a", "C-b");
    tmux.keys("a", "d");
    tmux.wait_screen("a", "the detach", |s| s.contains("cli-rc=0"));

    let idle = events.wait(Duration::from_secs(40), "idle after the ticks", |e| {
        mine(e, "activity")
            && e["activity"] == "idle"
            && e["last_output_unix_ms"].as_u64().unwrap_or(0) > 0
    });
    let bell = events.wait(Duration::from_secs(30), "the bell", |e| {
        mine(e, "activity") && e["activity"] == "attention"
    });
    assert_eq!(bell["attention"], "bell", "{bell}");
    let waiting = events.wait(Duration::from_secs(30), "escalation_waiting", |e| {
        mine(e, "escalation_waiting")
    });
    assert_eq!(
        waiting["argv"],
        serde_json::json!(["sh", "-c", "echo approved-ran > marker"]),
        "{waiting}"
    );
    assert_eq!(
        waiting["command"], r#"["sh", "-c", "echo approved-ran > marker"]"#,
        "{waiting}"
    );
    let request = waiting["request_id"].as_str().expect("an id").to_owned();
    // Without --follow: the state now, as events, then exit.
    let now = ws.lazaret(&["events", "--json"]);
    assert_eq!(now.code, Some(0), "{now:?}");
    let now: Vec<serde_json::Value> = now
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .filter(|e: &serde_json::Value| e["domain_id"] == ws.domain.as_str())
        .collect();
    let kinds: Vec<String> = now
        .iter()
        .map(|e| e["event"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        kinds,
        [
            "domain_started",
            "session_started",
            "activity",
            "escalation_waiting"
        ],
        "{now:#?}"
    );
    assert_eq!(now[2]["activity"], "escalation", "{now:#?}");
    assert_eq!(now[3]["request_id"], request.as_str(), "{now:#?}");
    let text = ws.lazaret(&["events"]);
    assert_eq!(text.code, Some(0), "{text:?}");
    for want in [
        format!("  {dir}  Domain {} running (profile ask", &ws.domain.as_str()[..12]),
        format!("  {dir}  session {} started by run: [\"bash\"]", &session[..12]),
        format!("session {} 1 escalation(s) waiting", &session[..12]),
        format!(
            "escalation {request} waiting (session {}): run [\"sh\", \"-c\", \"echo approved-ran > marker\"] in \"/workspace\"",
            &session[..12]
        ),
    ] {
        assert!(text.stdout.contains(&want), "{want:?} in {text:?}");
    }
    let approve = ws.lazaret(&["approve", &request]);
    assert_eq!(approve.code, Some(0), "{approve:?}");
    let withdrawn = events.wait(Duration::from_secs(30), "escalation_withdrawn", |e| {
        mine(e, "escalation_withdrawn") && e["request_id"] == request.as_str()
    });
    assert!(
        withdrawn["reason"]
            .as_str()
            .is_some_and(|r| r.contains("approved")),
        "{withdrawn}"
    );
    let ended = events.wait(Duration::from_secs(30), "session_ended", |e| {
        mine(e, "session_ended")
    });
    assert_eq!(ended["exit_status"], 3, "{ended}");
    events.wait(Duration::from_secs(60), "domain_stopped", |e| {
        is(e, "domain_stopped")
    });
    assert!(std::fs::read_to_string(ws.path.join("marker"))
        .unwrap_or_default()
        .contains("approved-ran"));

    // In order: the Domain, the session, working, idle (within the threshold and a few
    // seconds of the last output), the bell, the request and its withdrawal, the exit, the
    // Domain stopping.
    let at = |pred: &dyn Fn(&serde_json::Value) -> bool| events.index(pred);
    let order = [
        at(&|e| is(e, "domain_started")),
        at(&|e| mine(e, "session_started")),
        at(&|e| mine(e, "activity") && e["activity"] == "working"),
        at(&|e| *e == idle),
        at(&|e| *e == bell),
        at(&|e| *e == waiting),
        at(&|e| *e == withdrawn),
        at(&|e| *e == ended),
        at(&|e| is(e, "domain_stopped")),
    ];
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "out of order {order:?}: {:#?}",
        events.seen
    );
    let quiet_for = idle["time_unix_ms"].as_u64().unwrap_or(0)
        - idle["last_output_unix_ms"].as_u64().unwrap_or(0);
    assert!(
        (IDLE_AFTER_MS..IDLE_AFTER_MS + 3_000).contains(&quiet_for),
        "idle {quiet_for} ms after the last output: {idle}"
    );
    // The reader went away (the pipe is dropped with the thread): `--follow` ends by itself,
    // also when only `runuser` is killed.
    let lines = reader.join().expect("the reader");
    assert!(!lines.is_empty());
    eprintln!(
        "lazaret events --json --follow printed:\n{}",
        lines.join("\n")
    );
    let _ = child.kill();
    let _ = child.wait();
    let gone = wait_for(Duration::from_secs(10), || {
        support::processes_in(&ws.path, &["events", "--json", "--follow"])
            .is_empty()
            .then_some(())
    });
    assert!(
        gone.is_some(),
        "`lazaret events --follow` outlived its reader"
    );
    // `domain_stopped` comes when the Domain is no longer listed (its teardown began).
    let marker = ws.runtime_dir().join("resources");
    wait_for(Duration::from_secs(60), || {
        (ws.containers().is_empty() && !marker.exists()).then_some(())
    })
    .unwrap_or_else(|| panic!("the Domain was not torn down: {:?}", ws.containers()));
    ws.assert_nothing_left();
}
