//! Adversarial scenarios: decisions bound to what the developer was shown (DX-4, SR-8,
//! issue #31). The sandbox chooses every byte of its mailbox records, including the request
//! ID it names its file by; it must not choose the ID the developer decides by.
//!
//! A detached coordinator-owned session (`lazaret run --detachable`) makes its requests with
//! a forged client — Python signing records with the session's own anchor, as a hostile agent
//! would — so that the IDs are the sandbox's choice; the developer decides from another
//! terminal (`lazaret escalations`, `lazaret approve`), as the phone script in the docs does.

use crate::support::tmux::Tmux;
use crate::support::{wait_for, Dev, TestWorkspace};
use std::time::Duration;

/// A profile without rules: every host command goes to the developer.
const ASK: &str = "[profiles.ask]\nextends = \"shell\"\n";

/// The prefix the sandbox gives both of its requests' IDs.
const CHOSEN: &str = "3fa9c1d2";

/// A forged client in the sandbox: `send(argv, rid, timeout)` writes a request signed with the
/// session's anchor under the ID `rid` the sandbox chose.
const PY: &str = r#"
import hmac, hashlib, json, os, sys, time
env = os.environ
req = "/run/lazaret/mailbox/req"
def anchor():
    return bytes.fromhex(env["LAZARET_SESSION_ANCHOR"])
def send(argv, rid, timeout):
    b = {"v": 1, "domain_id": env["LAZARET_DOMAIN"], "session_id": env["LAZARET_SESSION"],
         "request_id": rid, "created_unix_ms": int(time.time() * 1000), "argv": argv,
         "cwd": "/workspace", "justification": "", "timeout_secs": timeout}
    canon = json.dumps(b, separators=(",", ":")).encode()
    rec = json.dumps(dict(b, sig=hmac.new(anchor(), canon, hashlib.sha256).hexdigest()))
    tmp = req + "/." + rid + ".tmp"
    with open(tmp, "w") as f: f.write(rec)
    os.rename(tmp, req + "/" + rid + ".json")
"#;

/// Waits until the one waiting request of this Domain runs `text`; returns it.
fn wait_only(ws: &TestWorkspace, text: &str) -> serde_json::Value {
    wait_for(Duration::from_secs(90), || {
        match ws.escalations().as_slice() {
            [one] if one["argv"][2].as_str().is_some_and(|a| a.contains(text)) => Some(one.clone()),
            _ => None,
        }
    })
    .unwrap_or_else(|| panic!("no request for {text} alone: {:#?}", ws.escalations()))
}

fn field(v: &serde_json::Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_owned()
}

/// Attack: the sandbox names a benign request `3fa9c1d2…`, lets the developer see it, lets it
/// time out, and sends a malicious one whose ID starts the same, hoping the developer's
/// `lazaret approve 3fa9c1d2` (read off the listing, or typed from a phone) approves it. The
/// developer decides by IDs the coordinator minted: neither the sandbox's prefix nor the
/// prefix of the request that was shown approves the new one; a script bound to the listed
/// command's digest refuses it; the request approved by its own ID says what it ran.
#[test]
fn a_request_id_the_sandbox_chose_never_names_what_the_developer_approves() {
    let dev = Dev::get();
    let ws = dev.workspace("adv-ids").with_profile("ask", ASK);
    let dir = ws.path.display().to_string();
    let tmux = Tmux::start(&dev, "advids", "a", &dir, 120, 40);
    tmux.start_detachable("a", &ws);
    let script = format!(
        "{PY}\nsend(['sh', '-c', 'echo benign >> marker'], '{CHOSEN}' + '0' * 24, 6)\n\
         time.sleep(12)\nsend(['sh', '-c', 'echo evil >> marker'], '{CHOSEN}' + '1' * 24, 120)\n"
    );
    tmux.type_line(
        "a",
        &format!("cat > /tmp/forge.py <<'EOF'\n{script}EOF\npython3 /tmp/forge.py; echo forged"),
    );
    tmux.key("a", "C-b");
    tmux.keys("a", "d");
    tmux.wait_screen("a", "the detach", |s| s.contains("cli-rc=0"));

    // The benign request, as the developer sees it: an ID the coordinator minted.
    let benign = wait_only(&ws, "echo benign");
    let shown = field(&benign, "request_id");
    assert!(
        !shown.starts_with(CHOSEN),
        "the listed ID is the sandbox's choice: {benign:#}"
    );
    let table = ws.lazaret(&["escalations"]);
    assert!(table.stdout.contains(&shown), "{table:?}");
    let prefix = shown[..8].to_owned();

    // It times out; the malicious one arrives.
    let evil = wait_only(&ws, "echo evil");
    let evil_id = field(&evil, "request_id");
    assert!(!evil_id.starts_with(CHOSEN), "{evil:#}");
    assert!(
        !evil_id.starts_with(&prefix),
        "a minted prefix was reused: {evil:#}"
    );

    // The prefix the developer read, and the sandbox's own prefix: nothing is approved.
    for typed in [prefix.as_str(), CHOSEN] {
        let approve = ws.lazaret(&["approve", typed]);
        assert_eq!(approve.code, Some(3), "approve {typed}: {approve:?}");
        assert!(
            approve
                .stderr
                .contains("no waiting escalation request starts with"),
            "{approve:?}"
        );
    }
    // A script bound to the benign command's digest refuses the other command.
    let bound = ws.lazaret(&[
        "approve",
        &evil_id,
        "--expect-argv-hash",
        &field(&benign, "argv_hash"),
    ]);
    assert_eq!(bound.code, Some(6), "{bound:?}");
    assert!(bound.stderr.contains("echo evil"), "{bound:?}");
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        !std::fs::read_to_string(ws.path.join("marker"))
            .unwrap_or_default()
            .contains("evil"),
        "the malicious request ran"
    );
    assert_eq!(ws.escalations().len(), 1, "it still waits");

    // Approved by its own ID and digest: the command line says exactly what it approved.
    let ok = ws.lazaret(&[
        "approve",
        &evil_id,
        "--expect-argv-hash",
        &field(&evil, "argv_hash"),
    ]);
    assert_eq!(ok.code, Some(0), "{ok:?}");
    assert!(
        ok.stdout
            .contains(r#"["sh", "-c", "echo evil >> marker"] in "#),
        "{ok:?}"
    );
    let ran = wait_for(Duration::from_secs(30), || {
        std::fs::read_to_string(ws.path.join("marker"))
            .ok()
            .filter(|m| m.contains("evil"))
    });
    assert!(ran.is_some(), "the approved request did not run");
}
