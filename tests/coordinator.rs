//! The Session Coordinator on the real stack (issue #3): one coordinator per Domain shared by
//! concurrent CLIs (FR-2, OR-1), isolation between Domains (SR-11), recovery after a killed
//! coordinator (FR-7), teardown on last leave (FR-6), host-private socket dir (SR-10),
//! `lazaret exec --json`, `lazaret ps --json`, and trace conformance against the model.

mod support;

use std::collections::BTreeSet;
use std::process::{Child, Stdio};
use std::time::Duration;
use support::{
    assert_traces_conform, processes_matching, ps_json, wait_for, Dev, TestWorkspace, HOLD,
};

fn coordinators_of(ws: &TestWorkspace) -> Vec<u32> {
    let needle = format!(
        "__coordinator --profile shell --workspace {}",
        ws.path.display()
    );
    processes_matching(&needle)
        .into_iter()
        .map(|(pid, _)| pid)
        .collect()
}

#[test]
fn ten_clis_at_once_share_one_coordinator_sidecar_and_sandbox() {
    let dev = Dev::get();
    let ws = dev.workspace("ten");
    // Each prints the sandbox's hostname (its container ID) and holds on until the test has
    // seen all ten registered and drops `.go` into the workspace.
    let hold = format!("hostname; {HOLD}");
    let children: Vec<Child> = (0..10).map(|_| ws.spawn(&["sh", "-c", &hold])).collect();
    let seen = wait_for(Duration::from_secs(60), || {
        let ps = ps_json(&dev);
        let mine = ps
            .as_array()?
            .iter()
            .find(|d| d["domain_id"] == ws.domain.as_str())?
            .clone();
        (mine["sessions"].as_array()?.len() == 10).then_some(mine)
    });
    let Some(seen) = seen else {
        ws.release();
        let outputs: Vec<String> = children
            .into_iter()
            .map(|c| match c.wait_with_output() {
                Ok(out) => format!(
                    "{:?}: {}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ),
                Err(e) => e.to_string(),
            })
            .collect();
        panic!("the ten sessions were never registered at once: {outputs:#?}");
    };
    let one_coordinator = coordinators_of(&ws).len();
    let containers = ws.containers();
    ws.release();
    assert_eq!(one_coordinator, 1, "exactly one coordinator");
    assert_eq!(
        containers.len(),
        2,
        "one sidecar and one sandbox: {containers:?}"
    );
    assert_eq!(seen["sessions"].as_array().map(Vec::len), Some(10));
    let mut hostnames = BTreeSet::new();
    for child in children {
        let out = child.wait_with_output().expect("lazaret run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        hostnames.insert(String::from_utf8_lossy(&out.stdout).trim().to_owned());
    }
    assert_eq!(
        hostnames.len(),
        1,
        "all ten saw the same sandbox: {hostnames:?}"
    );
    ws.assert_nothing_left();
    assert!(coordinators_of(&ws).is_empty(), "the coordinator exited");
    assert!(!assert_traces_conform(&ws).is_empty());
}

#[test]
fn two_workspaces_are_two_domains_that_share_nothing() {
    let dev = Dev::get();
    let a = dev.workspace("iso-a");
    let b = dev.workspace("iso-b");
    let probe = [
        "sh",
        "-c",
        "hostname; readlink /proc/self/ns/net; ls /workspace; touch /workspace/mine; sleep 3",
    ];
    std::fs::write(a.path.join("only-in-a"), "a").expect("write");
    let run_a = a.spawn(&probe);
    let run_b = b.spawn(&probe);
    let out_a = run_a.wait_with_output().expect("run a");
    let out_b = run_b.wait_with_output().expect("run b");
    assert_eq!(
        out_a.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out_a.stderr)
    );
    assert_eq!(
        out_b.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out_b.stderr)
    );
    let (sa, sb) = (
        String::from_utf8_lossy(&out_a.stdout),
        String::from_utf8_lossy(&out_b.stdout),
    );
    let la: Vec<&str> = sa.lines().collect();
    let lb: Vec<&str> = sb.lines().collect();
    assert_ne!(la[0], lb[0], "different sandboxes");
    assert!(
        sa.contains("only-in-a") && !sb.contains("only-in-a"),
        "workspaces are separate"
    );
    assert_ne!(a.domain, b.domain);
    assert_ne!(
        a.dev.runtime_dir.join("lazaret").join(a.domain.as_str()),
        b.dev.runtime_dir.join("lazaret").join(b.domain.as_str())
    );
    a.assert_nothing_left();
    b.assert_nothing_left();
}

#[test]
fn killed_coordinator_ends_sessions_clearly_and_the_next_run_recovers() {
    let dev = Dev::get();
    let ws = dev.workspace("kill9");
    let child = ws.spawn(&["sleep", "60"]);
    let pid = wait_for(Duration::from_secs(60), || {
        let ps = ps_json(&dev);
        let d = ps
            .as_array()?
            .iter()
            .find(|d| d["domain_id"] == ws.domain.as_str())?
            .clone();
        (d["sessions"].as_array()?.len() == 1).then(|| d["coordinator_pid"].as_u64())?
    })
    .expect("the session is registered");
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let out = child.wait_with_output().expect("lazaret run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(stderr.contains("Session Coordinator went away"), "{stderr}");
    assert!(stderr.contains("recovers the Domain"), "{stderr}");
    // The dead coordinator's containers are still there: nothing assumed they vanished (FR-7).
    assert_eq!(ws.containers().len(), 2, "{:?}", ws.containers());
    let r = ws.run(&["echo", "recovered"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout, "recovered\n");
    assert!(r.stderr.contains("recovered the Domain"), "{r:?}");
    ws.assert_nothing_left();
    assert_traces_conform(&ws);
}

#[test]
fn a_loose_runtime_dir_is_refused() {
    let dev = Dev::get();
    let ws = dev.workspace("loose");
    let dir = dev.runtime_dir.join("lazaret").join(ws.domain.as_str());
    let out = dev.sh(&format!(
        "mkdir -p '{0}' && chmod 0755 '{0}'",
        dir.display()
    ));
    assert!(out.status.success());
    let r = ws.run(&["true"]);
    assert_eq!(r.code, Some(125), "{r:?}");
    assert!(r.stderr.contains("must be private to you"), "{r:?}");
    assert!(r.stderr.contains("chmod 700"), "{r:?}");
    assert!(ws.containers().is_empty(), "nothing started");
    let _ = dev.sh(&format!("chmod 0700 '{}'", dir.display()));
}

#[test]
fn exec_json_reports_status_output_and_session() {
    let dev = Dev::get();
    let ws = dev.workspace("exec");
    let out = dev
        .lazaret()
        .args(["exec", "--json", "--max-output", "10", "--", "sh", "-c"])
        .arg("printf 0123456789ABCDEF; echo oops >&2; exit 4")
        .current_dir(&ws.path)
        .stdin(Stdio::null())
        .output()
        .expect("lazaret exec");
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["exit_code"], 4);
    assert_eq!(v["stdout"], "0123456789", "cut at --max-output");
    assert_eq!(v["stderr"], "oops\n");
    assert_eq!(v["truncated"], true);
    assert_eq!(v["session_id"].as_str().map(str::len), Some(64));
    assert!(v["duration_ms"].as_u64().is_some());
    let log = v["stdout_log"].as_str().expect("full log path reported");
    let full = dev.sh(&format!("cat '{log}'"));
    assert_eq!(String::from_utf8_lossy(&full.stdout), "0123456789ABCDEF");
    ws.assert_nothing_left();
}

/// Waits until the Domain shows `n` sessions in `lazaret ps --json`; returns the coordinator pid.
fn wait_sessions(ws: &TestWorkspace, n: usize) -> u64 {
    wait_for(Duration::from_secs(60), || {
        let ps = ps_json(&ws.dev);
        let d = ps
            .as_array()?
            .iter()
            .find(|d| d["domain_id"] == ws.domain.as_str())?
            .clone();
        (d["sessions"].as_array()?.len() == n).then(|| d["coordinator_pid"].as_u64())?
    })
    .unwrap_or_else(|| panic!("{n} session(s) registered"))
}

#[test]
fn a_killed_cli_leaves_and_the_domain_is_torn_down() {
    let dev = Dev::get();
    let ws = dev.workspace("cli-kill9");
    let marker = format!("sleep 61{}", std::process::id() % 1000);
    let child = ws.spawn(&["sh", "-c", &marker]);
    let coordinator = wait_sessions(&ws, 1);
    let cli: Vec<u32> = processes_matching(&format!("lazaret run -- sh -c {marker}"))
        .into_iter()
        .filter(|(_, cmd)| !cmd.starts_with("runuser"))
        .map(|(pid, _)| pid)
        .collect();
    assert_eq!(cli.len(), 1, "the CLI process: {cli:?}");
    let killed = std::process::Command::new("kill")
        .args(["-9", &cli[0].to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let _ = child.wait_with_output();
    // The coordinator sees the session's connection drop: the last session is gone (FR-6).
    let gone = wait_for(Duration::from_secs(30), || {
        let alive = std::path::Path::new(&format!("/proc/{coordinator}")).exists();
        (!alive).then_some(())
    });
    assert!(
        gone.is_some(),
        "the coordinator tore the Domain down and exited"
    );
    ws.assert_nothing_left();
    assert_traces_conform(&ws);
}

#[test]
fn a_terminated_coordinator_tells_its_sessions_why() {
    let dev = Dev::get();
    let ws = dev.workspace("term");
    let child = ws.spawn(&["sleep", "60"]);
    let coordinator = wait_sessions(&ws, 1);
    let term = std::process::Command::new("kill")
        .args(["-TERM", &coordinator.to_string()])
        .status()
        .expect("kill");
    assert!(term.success());
    let out = child.wait_with_output().expect("lazaret run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(stderr.contains("the Domain is shutting down"), "{stderr}");
    // An orderly shutdown tears down itself: nothing for the next run to recover.
    let marker = ws.runtime_dir().join("resources");
    wait_for(Duration::from_secs(30), || {
        (ws.containers().is_empty() && !marker.exists()).then_some(())
    })
    .expect("containers removed and State Anchors unmounted");
    // The status file is gone and stays gone: its sessions left during the teardown and did
    // not write it again (a stale one named a pid that other processes reuse; `lazaret ps`
    // listed such Domains as running).
    let status = marker.with_file_name("status.json");
    std::thread::sleep(Duration::from_millis(500));
    assert!(!status.exists(), "{} after the teardown", status.display());
    ws.assert_nothing_left();
    assert_traces_conform(&ws);
}

const FOREIGN_CLIENT: &str = r#"
import json, socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
body = json.dumps({"type": "enroll", "profile": "shell"}).encode()
s.settimeout(10)
try:
    s.sendall(struct.pack(">I", len(body)) + body)
    data = s.recv(65536)
except OSError:
    data = b""
print("answered" if data else "refused")
"#;

#[test]
fn a_peer_of_another_uid_is_refused_before_enrollment() {
    let dev = Dev::get();
    let ws = dev.workspace("peer-uid");
    let child = ws.spawn(&["sh", "-c", HOLD]);
    wait_sessions(&ws, 1);
    let socket = ws.runtime_dir().join("coordinator.sock");
    // Root (uid 0, not the developer) can open the 0700 dir, but the coordinator checks
    // SO_PEERCRED and closes the connection without enrolling it (SR-10).
    let mut foreign = if support::is_root() {
        std::process::Command::new("python3")
    } else {
        let mut c = std::process::Command::new("sudo");
        c.args(["-n", "python3"]);
        c
    };
    let out = foreign
        .args(["-c", FOREIGN_CLIENT])
        .arg(&socket)
        .output()
        .expect("python3 as root (the test needs root or passwordless sudo)");
    let verdict = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    // The developer's own uid is answered: the refusal is the uid check's.
    let own = dev
        .command("python3")
        .args(["-c", FOREIGN_CLIENT])
        .arg(&socket)
        .output()
        .expect("python3 as the developer");
    let own_verdict = String::from_utf8_lossy(&own.stdout).trim().to_owned();
    ws.release();
    let _ = child.wait_with_output();
    assert_eq!(
        verdict,
        "refused",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        own_verdict,
        "answered",
        "{}",
        String::from_utf8_lossy(&own.stderr)
    );
    ws.assert_nothing_left();
}
