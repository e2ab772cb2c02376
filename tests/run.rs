//! `lazaret run` on the real stack: rootless podman, runsc, the Network Sidecar, real git.
//! Issue #2's "must show" list; spec SR-1, FR-1, FR-6, DX-1.

mod support;

use std::os::unix::fs::MetadataExt;
use support::{is_root, lazaret_bin, Dev};

#[test]
fn writes_reach_the_host_as_the_developer_and_the_kernel_is_gvisor() {
    let dev = Dev::get();
    let ws = dev.workspace("write");
    let r = ws.run(&["sh", "-c", "echo hi > /workspace/from-sandbox; dmesg"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    // gVisor's kernel banner: proof that the command ran in the Sentry, not on the host kernel.
    assert!(
        r.stdout.contains("Starting gVisor"),
        "no gVisor banner in {r:?}"
    );
    let file = ws.path.join("from-sandbox");
    let meta = std::fs::metadata(&file).expect("from-sandbox exists on the host");
    assert_eq!(meta.uid(), dev.uid, "owned by the developer");
    assert_eq!(std::fs::read_to_string(&file).ok().as_deref(), Some("hi\n"));
    ws.assert_nothing_left();
}

#[test]
fn exit_status_is_the_commands() {
    let dev = Dev::get();
    let ws = dev.workspace("exit");
    let r = ws.run(&["sh", "-c", "exit 7"]);
    assert_eq!(r.code, Some(7), "{r:?}");
    ws.assert_nothing_left();
}

#[test]
fn stdin_and_stdout_are_pipes_when_not_a_terminal() {
    let dev = Dev::get();
    let ws = dev.workspace("pipe");
    let r = ws.run_in("", &["cat"], Some("abc\n"));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout, "abc\n");
    ws.assert_nothing_left();
}

#[test]
fn working_directory_maps_to_the_same_relative_path_and_git_works() {
    let dev = Dev::get();
    let ws = dev.workspace("subdir");
    let made = dev.sh(&format!("mkdir -p '{}/src/deep'", ws.path.display()));
    assert!(made.status.success());
    let r = ws.run_in(
        "src/deep",
        &[
            "sh",
            "-c",
            "pwd; git rev-parse --show-toplevel; ls -ld /workspace | cut -c1",
        ],
        None,
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines, ["/workspace/src/deep", "/workspace", "d"], "{r:?}");
    ws.assert_nothing_left();
}

#[test]
fn sandbox_has_no_network_administration_and_no_ipv6() {
    let dev = Dev::get();
    let ws = dev.workspace("netadmin");
    // CAP_NET_ADMIN is bit 12, CAP_NET_RAW bit 13 of the effective set.
    let r = ws.run(&[
        "sh",
        "-c",
        "caps=$(grep CapEff /proc/self/status | cut -f2); \
         echo net_admin=$(( (0x$caps >> 12) & 1 )) net_raw=$(( (0x$caps >> 13) & 1 )); \
         ip route add 192.0.2.0/24 dev lo 2>/dev/null && echo route-added || echo route-refused; \
         ip -6 addr show | grep -c inet6 || true",
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines,
        ["net_admin=0 net_raw=0", "route-refused", "0"],
        "{r:?}"
    );
    ws.assert_nothing_left();
}

#[test]
fn refuses_root_and_starts_nothing() {
    let dev = Dev::get();
    let ws = dev.workspace("root");
    let home = tempfile::tempdir().expect("temp home");
    // As root for real when the tests run as root; otherwise root of a user namespace.
    let mut c = if is_root() {
        std::process::Command::new(lazaret_bin())
    } else {
        let mut c = std::process::Command::new("unshare");
        c.arg("-r").arg(lazaret_bin());
        c
    };
    let out = c
        .args(["run", "--", "true"])
        .current_dir(&ws.path)
        .env("HOME", home.path())
        .env("XDG_RUNTIME_DIR", home.path())
        .output()
        .expect("running lazaret as root");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(stderr.contains("refusing to run as root"), "{stderr}");
    assert!(
        stderr.contains("scripts/setup"),
        "the message says what to do: {stderr}"
    );
    let written: Vec<_> = std::fs::read_dir(home.path()).expect("read home").collect();
    assert!(
        written.is_empty(),
        "nothing written, not even a log: {written:?}"
    );
    ws.assert_nothing_left();
}

#[test]
fn doctor_reports_every_check_in_json() {
    let dev = Dev::get();
    let out = dev
        .lazaret()
        .args(["doctor", "--json"])
        .output()
        .expect("doctor");
    let text = String::from_utf8_lossy(&out.stdout);
    let checks: serde_json::Value = serde_json::from_str(&text).expect("doctor --json is JSON");
    let checks = checks.as_array().expect("an array");
    let names: Vec<&str> = checks.iter().filter_map(|c| c["name"].as_str()).collect();
    for want in [
        "podman",
        "runsc",
        "subuid",
        "xdg-runtime-dir",
        "/dev/net/tun",
        "base-image",
    ] {
        assert!(names.contains(&want), "{want} checked: {names:?}");
    }
    let failing: Vec<_> = checks.iter().filter(|c| c["status"] == "fail").collect();
    assert!(failing.is_empty(), "this host is set up: {failing:?}");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn doctor_prints_the_fix_for_a_failing_check() {
    let dev = Dev::get();
    // Without XDG_RUNTIME_DIR the runtime-dir check fails and says how to fix it.
    let out = dev
        .command("env")
        .args(["-u", "XDG_RUNTIME_DIR"])
        .arg(lazaret_bin())
        .arg("doctor")
        .output()
        .expect("doctor");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("FAIL xdg-runtime-dir"), "{text}");
    assert!(text.contains("fix: install -d -m 0700"), "{text}");
}

/// Leaves a process in the sandbox that rewrites `/workspace/tick` without pause.
const TICKER: &str = "(i=0; while :; do i=$((i+1)); echo $i > /workspace/tick; done) \
                      >/dev/null 2>&1 & sleep 0.3; echo started";

/// The ticker no longer writes: nothing of the sandbox runs.
fn assert_ticker_stopped(ws: &support::TestWorkspace) {
    let tick = ws.path.join("tick");
    let first = std::fs::read_to_string(&tick).expect("the ticker wrote");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(
        std::fs::read_to_string(&tick).ok().as_deref(),
        Some(first.as_str()),
        "a sandbox process still wrote the workspace after the CLI returned"
    );
}

/// Issue #18: the last `lazaret run` returns as soon as the Agent Sandbox has stopped — the
/// sidecar and the State Anchors go after it — and not before: a process the command left
/// running in the sandbox writes the workspace without pause until the sandbox stops, and nothing
/// of it may change the workspace once the CLI returned (its Git Sentry check ran last).
#[test]
fn the_last_run_returns_once_the_sandbox_stopped_and_the_rest_goes_after() {
    let dev = Dev::get();
    let ws = dev.workspace("early-return");
    let r = ws.run(&["sh", "-c", TICKER]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout, "started\n");
    assert_ticker_stopped(&ws);
    ws.assert_nothing_left();
}

/// Issue #18: `--linger` keeps the Domain up after its last session, the next `lazaret run`
/// joins the same sandbox, and once it has lingered without a session it is torn down — with
/// the Git Sentry's end-of-run check run by the coordinator, because the CLIs returned while
/// the sandbox still ran (here a process left behind makes a nested repository after they did:
/// moved to the quarantine by the teardown's check).
#[test]
fn a_lingering_domain_is_joined_then_torn_down_with_its_git_sentry_check() {
    let dev = Dev::get();
    let ws = dev.workspace("linger");
    let r = ws.lazaret(&[
        "run",
        "--linger",
        "3s",
        "--",
        "sh",
        "-c",
        "echo one > /tmp/mark; \
         (sleep 1; mkdir -p /workspace/n && cd /workspace/n && git init -q) >/dev/null 2>&1 &",
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(ws.containers().len(), 2, "the Domain lingers");
    let r = ws.run(&["cat", "/tmp/mark"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout, "one\n", "the second run joined the same sandbox");
    ws.wait_torn_down();
    assert!(
        ws.host_sh("ls -A n").lines().all(|l| l != ".git"),
        "the sandbox's repository stayed: host git in n/ would obey it"
    );
    let quarantined = ws.host_sh("ls -A .git/lazaret-quarantine | grep -vc 'origin$' || true");
    assert_eq!(quarantined.trim(), "1");
    let bad = ws.lazaret(&["run", "--linger", "soon", "--", "true"]);
    assert_eq!(bad.code, Some(2), "{bad:?}");
    assert!(
        bad.stderr.contains("\"30s\""),
        "says what to write: {bad:?}"
    );
    let long = ws.lazaret(&["run", "--linger", "2d", "--", "true"]);
    assert_eq!(long.code, Some(2), "{long:?}");
    assert!(
        long.stderr.contains("\"1h\""),
        "says the longest it takes: {long:?}"
    );
    ws.assert_nothing_left();
}

/// Issue #18 (FR-7): the coordinator is killed after the last session left, before it stopped
/// the sandbox. The sandbox lock is released without saying the sandbox stopped, so the last
/// CLI recovers the Domain itself before it returns: nothing of the sandbox writes the
/// workspace after that, and nothing is left.
#[test]
fn the_last_run_stops_the_sandbox_itself_when_the_coordinator_died_first() {
    let dev = Dev::get();
    let ws = dev.workspace("early-return-killed");
    let r = ws.run_with_env(
        &["LAZARET_TEST_KILL_AT=coordinator-teardown"],
        &["sh", "-c", TICKER],
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stderr
            .contains("ended before it stopped the Agent Sandbox"),
        "{r:?}"
    );
    assert_ticker_stopped(&ws);
    assert!(ws.containers().is_empty(), "{:?}", ws.containers());
    ws.assert_nothing_left();
}

/// Issue #18: `lazaret run` on pipes is run by runsc directly with pipes the CLI relays — not
/// the caller's own, which runsc would hand to the sandbox: a process the command leaves
/// behind (here while another session keeps the Domain up) must not hold the caller's pipe
/// open, so the caller sees the end of the output when the command ends; its status and
/// output are the command's, and stdin reaches it.
#[test]
fn a_run_on_pipes_ends_with_its_command_though_it_left_a_process_behind() {
    let dev = Dev::get();
    let ws = dev.workspace("pipes-direct");
    let holder = ws.spawn(&["sh", "-c", support::HOLD]);
    let up = support::wait_for(std::time::Duration::from_secs(60), || {
        ws.runtime_dir().join("direct-exec").exists().then_some(())
    });
    assert!(up.is_some(), "the Domain did not publish its sandbox");
    let mut child = ws.spawn_in(
        "",
        &[],
        &[
            "sh",
            "-c",
            "sleep 600 & read line; echo \"got $line\"; exit 3",
        ],
        true,
    );
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        stdin.write_all(b"hello\n").expect("writing stdin");
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(support::finish(child));
    });
    let r = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the run did not end with its command: something holds its output open");
    assert_eq!(r.code, Some(3), "{r:?}");
    assert_eq!(r.stdout, "got hello\n");
    ws.release();
    let held = support::finish(holder);
    assert_eq!(held.code, Some(0), "{held:?}");
    ws.assert_nothing_left();
}
