//! Host Escalation on the real stack (SR-7, SR-8, OR-2): `lazaret-escalate` inside the sandbox,
//! signed records through the Escalation Mailbox, auto-approval rules, results; hostile records
//! are rejected by the coordinator with a logged reason and get no result.

mod support;

use std::time::Duration;
use support::{Dev, TestWorkspace};

const RULES: &str = "[profiles.esc]\nextends = \"shell\"\n\
[[profiles.esc.auto_approve]]\nargv = [\"pwd\"]\n\
[[profiles.esc.auto_approve]]\nargv = [\"git\", \"log\"]\ntrailing_args = true\n\
[[profiles.esc.auto_approve]]\nargv = [\"sh\", \"-c\", \"echo to-stderr >&2; exit 7\"]\n";

fn workspace(dev: &Dev, name: &str) -> TestWorkspace {
    let ws = dev.workspace(name).with_profile("esc", RULES);
    ws.host_sh("mkdir -p sub && echo tracked > sub/file && git add sub/file && git -c user.name=t -c user.email=t@l commit -qm sub && echo change >> sub/file");
    ws
}

#[test]
fn an_auto_approved_command_runs_on_the_host_in_the_matching_directory() {
    let dev = Dev::get();
    let ws = workspace(&dev, "esc-auto");
    let r = ws.run_in(
        "sub",
        &[
            "sh",
            "-c",
            "lazaret-escalate -- pwd; echo rc=$?; lazaret-escalate -- git log --format=%s -1; echo rc=$?; \
             lazaret-escalate --justification 'show the status code' -- sh -c 'echo to-stderr >&2; exit 7'; echo rc=$?; \
             lazaret-escalate -- ls; echo rc=$?",
        ],
        None,
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    let host_sub = format!("{}/sub", ws.path.display());
    assert_eq!(
        r.stdout,
        format!("{host_sub}\nrc=0\nsub\nrc=0\nrc=7\nrc=240\n"),
        "{r:?}"
    );
    assert!(r.stderr.contains("to-stderr"), "{r:?}");
    assert!(
        r.stderr.contains("denied") && r.stderr.contains("no terminal"),
        "{r:?}"
    );
    ws.assert_nothing_left();
}

/// Lines of the developer's Lazaret log mentioning `needle`.
fn log_lines(dev: &Dev, needle: &str) -> Vec<String> {
    let log = dev.home.join(".local/state/lazaret/lazaret.log");
    let out = dev.sh(&format!(
        "grep -a -F -- '{needle}' '{}' || true",
        log.display()
    ));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A Python script run inside that plants records in the mailbox. It signs with the session's
/// own anchor where a test needs a valid signature, so the rejection is for the reason tested.
const PLANT: &str = r#"
import hmac, hashlib, json, os, sys, time
env = os.environ
req = "/run/lazaret/mailbox/req"
def body(rid, session=None, created=None):
    return {"v": 1, "domain_id": env["LAZARET_DOMAIN"], "session_id": session or env["LAZARET_SESSION"],
            "request_id": rid, "created_unix_ms": created or int(time.time() * 1000), "argv": ["pwd"],
            "cwd": "/workspace", "justification": "", "timeout_secs": 30}
def sign(b, key=None):
    key = key or bytes.fromhex(env["LAZARET_SESSION_ANCHOR"])
    canon = json.dumps(b, separators=(",", ":")).encode()
    return dict(b, sig=hmac.new(key, canon, hashlib.sha256).hexdigest())
def put(name, data):
    tmp = req + "/." + name[:-5] + ".tmp"  # the client's temporary name (docs/escalation.md)
    with open(tmp, "wb") as f: f.write(data)
    os.rename(tmp, req + "/" + name)
kind, rid = sys.argv[1], sys.argv[2]
if kind == "forged":
    put(rid + ".json", json.dumps(sign(body(rid), key=b"\x00" * 32)).encode())
elif kind == "valid":
    data = json.dumps(sign(body(rid))).encode()
    with open("/tmp/" + rid + ".bytes", "wb") as f: f.write(data)
    put(rid + ".json", data)
elif kind == "replay":
    with open("/tmp/" + rid + ".bytes", "rb") as f: put(rid + ".json", f.read())
elif kind == "stale":
    put(rid + ".json", json.dumps(sign(body(rid, created=int(time.time() * 1000) - 600000))).encode())
elif kind == "other-session":
    put(rid + ".json", json.dumps(sign(body(rid, session="ab" * 32))).encode())
elif kind == "oversize":
    b = body(rid); b["justification"] = "x" * 70000
    put(rid + ".json", json.dumps(sign(b)).encode())
elif kind == "symlink":
    os.symlink("/etc/passwd", req + "/" + rid + ".json")
elif kind == "newline":
    b = body(rid); b["argv"] = ["pwd", "a\nb"]
    put(rid + ".json", json.dumps(sign(b)).encode())
"#;

#[test]
fn hostile_records_are_rejected_with_a_reason_and_get_no_result() {
    let dev = Dev::get();
    let ws = workspace(&dev, "esc-hostile");
    let id = |n: u32| format!("{:08x}{:024x}", std::process::id(), n);
    let cases = [
        ("forged", id(1), "bad signature"),
        ("stale", id(2), "stale"),
        ("other-session", id(3), "not registered"),
        ("oversize", id(4), "over"),
        ("symlink", id(5), "symlink"),
        ("newline", id(6), "newline"),
    ];
    let mut script = format!("cat > /tmp/plant.py <<'EOF'\n{PLANT}\nEOF\n");
    for (kind, rid, _) in &cases {
        script.push_str(&format!("python3 /tmp/plant.py {kind} {rid}; "));
    }
    // A valid record, then the same file again (replay), after its result came.
    let valid = id(7);
    script.push_str(&format!(
        "python3 /tmp/plant.py valid {valid}; \
         for i in $(seq 200); do [ -e /run/lazaret/mailbox/res/{valid}.json ] && break; sleep 0.02; done; \
         echo valid-result=$(test -e /run/lazaret/mailbox/res/{valid}.json && echo yes || echo no); \
         python3 /tmp/plant.py replay {valid}; sleep 1; ls /run/lazaret/mailbox/res/ | sort | tr '\\n' ' '; echo"
    ));
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.contains("valid-result=yes"), "{r:?}");
    // Only the valid request got a result.
    assert!(r.stdout.ends_with(&format!("{valid}.json \n")), "{r:?}");
    std::thread::sleep(Duration::from_millis(200));
    for (kind, rid, reason) in &cases {
        // The coordinator logs as it sweeps; on a busy machine the line may come a little later.
        // Matched by request id, not file name: a sweep may meet the oversize record while it is
        // still `.<id>.tmp` (written, not yet renamed) and reject it under that name.
        let logged = |lines: &Vec<String>| {
            lines
                .iter()
                .any(|l| l.contains("rejected escalation record") && l.contains(reason))
        };
        let lines = support::wait_for(Duration::from_secs(10), || {
            let lines = log_lines(&dev, rid);
            logged(&lines).then_some(lines)
        })
        .unwrap_or_else(|| log_lines(&dev, rid));
        assert!(
            lines
                .iter()
                .any(|l| l.contains("rejected escalation record") && l.contains(reason)),
            "{kind}: no rejection with {reason:?} logged: {lines:#?}"
        );
    }
    let replay = support::wait_for(Duration::from_secs(10), || {
        let lines = log_lines(&dev, &format!("{valid}.json"));
        lines
            .iter()
            .any(|l| l.contains("replayed"))
            .then_some(lines)
    })
    .unwrap_or_else(|| log_lines(&dev, &format!("{valid}.json")));
    assert!(
        replay.iter().any(|l| l.contains("replayed")),
        "replay not rejected: {replay:#?}"
    );
    ws.assert_nothing_left();
}

#[test]
fn a_killed_cli_kills_its_host_command_and_other_sessions_still_escalate() {
    let dev = Dev::get();
    let nap = format!("3{}.5", std::process::id() % 1000);
    let rules = format!("{RULES}[[profiles.esc.auto_approve]]\nargv = [\"sleep\", \"{nap}\"]\n");
    let ws = dev.workspace("esc-kill").with_profile("esc", &rules);
    let a = ws.spawn(&["sh", "-c", &format!("lazaret-escalate -- sleep {nap}")]);
    let b = ws.spawn(&[
        "sh",
        "-c",
        "while [ ! -e /workspace/.go ]; do sleep 0.1; done; lazaret-escalate -- pwd",
    ]);
    // The host command of session A runs on the host, as the developer.
    let host_sleep = support::wait_for(Duration::from_secs(60), || {
        let found: Vec<u32> = support::processes_matching(&format!("sleep {nap}"))
            .into_iter()
            .filter(|(_, cmd)| cmd.starts_with("sleep"))
            .map(|(pid, _)| pid)
            .collect();
        (!found.is_empty()).then_some(found)
    })
    .expect("the approved host command runs");
    let cli: Vec<u32> = support::processes_matching(&format!("lazaret-escalate -- sleep {nap}"))
        .into_iter()
        .filter(|(_, cmd)| cmd.contains("lazaret run") && !cmd.starts_with("runuser"))
        .map(|(pid, _)| pid)
        .collect();
    assert_eq!(cli.len(), 1, "the CLI of session A: {cli:?}");
    let killed = std::process::Command::new("kill")
        .args(["-9", &cli[0].to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let mut a = a;
    let _ = a.wait();
    // Its session is gone: the host command is killed (OR-3).
    let gone = support::wait_for(Duration::from_secs(15), || {
        host_sleep
            .iter()
            .all(|p| !std::path::Path::new(&format!("/proc/{p}")).exists())
            .then_some(())
    });
    assert!(
        gone.is_some(),
        "the host command of the killed session still runs"
    );
    // Session B still gets its escalations.
    ws.release();
    let r = support::finish(b);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout, format!("{}\n", ws.path.display()), "{r:?}");
    ws.assert_nothing_left();
}
