//! What the Agent Sandbox can and cannot see of the host (SR-3, SR-12), on the real stack.

mod support;

use std::process::Stdio;
use std::time::Duration;
use support::{finish, wait_for, Dev, HOLD};

/// Mount points the sandbox may have: its own file systems, the workspace and its Git Sentry
/// protections, the default profile's State Anchors, podman's files, and Lazaret's control
/// mounts (Escalation Mailbox, Escalation Client).
const ALLOWED_MOUNTS: [&str; 24] = [
    "/",
    "/dev",
    "/dev/pts",
    "/dev/shm",
    "/sys",
    "/sys/fs/cgroup",
    "/proc",
    "/tmp",
    "/workspace",
    "/workspace/.git",
    "/workspace/.git/config",
    "/workspace/.git/hooks",
    "/usr",
    "/etc",
    "/var",
    "/root",
    "/opt",
    "/etc/hosts",
    "/etc/hostname",
    "/etc/resolv.conf",
    "/run/.containerenv",
    "/run/lazaret/mailbox/req",
    "/run/lazaret/mailbox/res",
    "/run/lazaret/bin/lazaret-escalate",
];

#[test]
fn host_secrets_environment_and_paths_stay_outside() {
    let dev = Dev::get();
    let ws = dev.workspace("canary");
    let tag = format!("lazaret-canary-{}", std::process::id());
    // Canaries where secrets and Lazaret's own state live on the host.
    let planted = dev.sh(&format!(
        "set -e; for d in \"$HOME/.ssh\" \"$HOME/.config/lazaret\" \"$HOME/.local/share/lazaret\" \
         \"$XDG_RUNTIME_DIR/lazaret\"; do mkdir -p \"$d\"; echo secret > \"$d/{tag}\"; done"
    ));
    assert!(
        planted.status.success(),
        "{}",
        String::from_utf8_lossy(&planted.stderr)
    );
    let script = format!(
        "find / \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -name '{tag}*' -print 2>/dev/null; \
         echo ---; env; echo ---; cut -d' ' -f5 /proc/self/mountinfo; echo ---; \
         grep -c '{home}' /proc/self/mountinfo || true; echo ---; ls /proc/self/fd",
        home = dev.home.display()
    );
    // Secrets in the CLI's environment must not reach the sandbox.
    let r = ws.run_with_env(
        &[
            "SSH_AUTH_SOCK=/tmp/ssh-agent.sock",
            "AWS_SECRET_ACCESS_KEY=host-secret",
        ],
        &["sh", "-c", &script],
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    let stdout = r.stdout;
    let parts: Vec<&str> = stdout.split("---\n").collect();
    assert_eq!(parts.len(), 5, "{stdout}");
    assert_eq!(parts[0], "", "host canaries found inside: {}", parts[0]);
    for secret in [
        "SSH_AUTH_SOCK",
        "AWS_SECRET_ACCESS_KEY",
        "host-secret",
        "XDG_RUNTIME_DIR",
    ] {
        assert!(
            !parts[1].contains(secret),
            "{secret} leaked into the sandbox: {}",
            parts[1]
        );
    }
    // Of Lazaret's variables only the session's escalation credentials are given to it.
    for var in parts[1].lines().filter(|l| l.starts_with("LAZARET")) {
        let name = var.split('=').next().unwrap_or("");
        assert!(
            [
                "LAZARET_DOMAIN",
                "LAZARET_SESSION",
                "LAZARET_SESSION_ANCHOR",
                "LAZARET_MAILBOX"
            ]
            .contains(&name),
            "{name} leaked into the sandbox"
        );
    }
    for mount in parts[2].lines() {
        let ok = ALLOWED_MOUNTS.contains(&mount) || mount.starts_with("/sys/fs/cgroup/");
        assert!(
            ok,
            "unexpected mount {mount:?} in the sandbox:\n{}",
            parts[2]
        );
    }
    assert_eq!(
        parts[3].trim(),
        "0",
        "mountinfo names a host path under the home directory"
    );
    // Only stdio and the directory `ls` itself opened: no descriptor leaked from the host.
    let fds: Vec<&str> = parts[4].lines().collect();
    assert!(
        fds.len() <= 4 && fds.starts_with(&["0", "1", "2"]),
        "fds: {fds:?}"
    );
    ws.assert_nothing_left();
}

fn ns(pid: u64, kind: &str) -> String {
    std::fs::read_link(format!("/proc/{pid}/ns/{kind}"))
        .map(|p| p.display().to_string())
        .unwrap_or_else(|e| panic!("reading /proc/{pid}/ns/{kind}: {e}"))
}

#[test]
fn sandbox_namespaces_are_not_the_hosts_and_its_network_is_the_sidecars() {
    let dev = Dev::get();
    let ws = dev.workspace("ns");
    let hold = format!("echo $$ > /workspace/.inside-pid; {HOLD}; ls /proc | grep -c '^[0-9]'");
    let child = ws.spawn(&["sh", "-c", &hold]);
    let pids = wait_for(Duration::from_secs(60), || {
        let names = [
            format!("lazaret-{}-sandbox", ws.domain),
            format!("lazaret-{}-sidecar", ws.domain),
        ];
        let out = dev
            .command("podman")
            .args([
                "inspect",
                "--format",
                "{{.State.Pid}}",
                &names[0],
                &names[1],
            ])
            .stdin(Stdio::null())
            .output()
            .ok()?;
        let pids: Vec<u64> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .filter(|p| *p > 0)
            .collect();
        (pids.len() == 2 && ws.path.join(".inside-pid").exists()).then_some(pids)
    })
    .expect("the sandbox and the sidecar run");
    let (sandbox, sidecar) = (pids[0], pids[1]);
    let me = u64::from(std::process::id());
    // SR-12 as measured for the runsc sandbox process (the Sentry) under rootless podman: own
    // mount, IPC, UTS, user and network namespaces; the network one is the sidecar's.
    for kind in ["mnt", "ipc", "uts", "user", "net"] {
        assert_ne!(
            ns(sandbox, kind),
            ns(me, kind),
            "{kind} namespace shared with the host"
        );
    }
    assert_eq!(
        ns(sandbox, "net"),
        ns(sidecar, "net"),
        "joined the sidecar's network namespace"
    );
    ws.release();
    let r = finish(child);
    assert_eq!(r.code, Some(0), "{r:?}");
    let stdout = r.stdout;
    // Inside, only the sandbox's own few processes exist (gVisor's PID namespace).
    let visible: usize = stdout
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(999);
    assert!(
        visible < 10,
        "the sandbox sees {visible} processes: {stdout}"
    );
    ws.assert_nothing_left();
}
