//! Adversarial scenarios: isolation (SR-1, SR-3, SR-12; see main.rs). The agent inside looks
//! for the host — its secrets, paths, descriptors, environment, processes, IPC objects, abstract
//! sockets, terminal — and tries the system calls that break out of containers (`mount`,
//! `mknod`, module and kexec loading, `bpf`, `perf_event_open`, `keyctl`,
//! `open_by_handle_at`, `ptrace`). Every probe prints what happened: `ran` / `made` / `open`
//! when the call succeeded, else the errno, so a probe that was blocked (EPERM, ENOSYS, EACCES,
//! …) is told from one that ran and failed on its arguments (EFAULT, EBADF, EINVAL).

use crate::support::{finish, wait_for, Dev, TestWorkspace, HOLD};
use std::process::Stdio;
use std::time::Duration;

/// Writes `text` to `name` in the workspace, owned by the developer, for the sandbox to run.
fn put(ws: &TestWorkspace, name: &str, text: &str) {
    let path = ws.path.join(name);
    std::fs::write(&path, text).expect("writing a probe script");
    let _ = nix::unistd::chown(&path, Some(nix::unistd::Uid::from_raw(ws.dev.uid)), None);
}

/// Python prelude for system call probes: `probe(tag, nr, *args)` prints `tag=ran` or
/// `tag=<errno name>` (x86_64 numbers).
const SYSCALLS: &str = r#"
import ctypes, errno, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def probe(tag, nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    e = ctypes.get_errno()
    print("%s=%s" % (tag, "ran" if r >= 0 else errno.errorcode.get(e, str(e))))
"#;

/// Runs the probes `body` (after [`SYSCALLS`]) inside; returns `tag -> outcome`.
fn syscall_probes(name: &str, body: &str, args: &[&str]) -> Vec<(String, String)> {
    let dev = Dev::get();
    let ws = dev.workspace(name);
    put(&ws, "probe.py", &format!("{SYSCALLS}{body}"));
    let mut cmd = vec!["python3", "/workspace/probe.py"];
    cmd.extend_from_slice(args);
    let r = ws.run(&cmd);
    assert_eq!(r.code, Some(0), "{r:?}");
    ws.assert_nothing_left();
    r.stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect()
}

/// Asserts every probe of `got` was blocked with one of `blocked`, and that all of `tags` ran.
fn assert_blocked(got: &[(String, String)], tags: &[&str], blocked: &[&str]) {
    let seen: Vec<&str> = got.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(seen, tags, "{got:?}");
    for (tag, outcome) in got {
        assert!(
            blocked.contains(&outcome.as_str()),
            "{tag} was not blocked: {outcome} (blocked means one of {blocked:?}) in {got:?}"
        );
    }
}

/// A host process the sandbox must not reach, alive while this value is: a `sleep` whose pid
/// is above 1000, so that it cannot also name one of the sandbox's few processes (gVisor numbers
/// them from 1). This test's own pid is not used: once the host's pids wrap around (`pid_max`)
/// it can be small (568 in a CI run here).
struct HostProcess(std::process::Child);

impl HostProcess {
    fn start() -> Self {
        for _ in 0..5000 {
            let child = std::process::Command::new("sleep")
                .arg("600")
                .spawn()
                .expect("starting sleep on the host");
            let mut process = Self(child);
            if process.0.id() > 1000 {
                return process;
            }
            process.stop();
        }
        panic!("no host pid above 1000 after 5000 processes");
    }

    fn pid(&self) -> String {
        self.0.id().to_string()
    }

    fn stop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for HostProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Attack: search the file tree — by name everywhere but `/proc`, `/sys`, `/dev`; by content in
/// every writable or host-fed tree (all but the image's `/usr`) — for canaries planted where the
/// developer's secrets and Lazaret's control files live — `~/.ssh`, `~/.aws`, `~/.gnupg`, the
/// host configuration (`config.toml` of this workspace's profile, a comment holding the tag),
/// the Domain's storage, the socket dir `$XDG_RUNTIME_DIR/lazaret` and the running Domain's own
/// runtime dir next to `coordinator.sock` — and for the coordinator's socket itself.
/// Expected: nothing is found; the only Lazaret runtime paths inside are the mailbox mounts.
#[test]
fn host_canaries_are_not_found_by_name_or_content() {
    let dev = Dev::get();
    let tag = format!("lzt-canary-{}", std::process::id());
    let ws = dev.workspace("canaries").with_profile(
        "canaries",
        &format!(
            "# {tag}-config\n[profiles.canaries]\nimage = \"localhost/lazaret/base:bookworm\"\ncommand = [\"bash\"]\n"
        ),
    );
    let script = format!(
        "{HOLD}; find / \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o \
         \\( -name '{tag}*' -o -name coordinator.sock -o -name lifecycle.lock -o -name status.json \
         -o -name policy.nft -o -name denials.jsonl -o -name 'id_lzt*' \\) -print 2>/dev/null; echo ---; \
         grep -rl -e '{tag}' /etc /home /root /run /tmp /var /opt /workspace /mnt /srv /media 2>/dev/null \
         | grep -v '^/workspace/.go$'; echo ---"
    );
    let child = ws.spawn(&["sh", "-c", &script]);
    let runtime = dev.runtime_dir.join("lazaret").join(ws.domain.as_str());
    wait_for(Duration::from_secs(60), || {
        runtime.join("coordinator.sock").exists().then_some(())
    })
    .expect("the Domain's coordinator socket appears");
    let planted = dev.sh(&format!(
        "set -e; for d in \"$HOME/.ssh\" \"$HOME/.aws\" \"$HOME/.gnupg\" \"$HOME/.local/share/lazaret\" \
         \"$XDG_RUNTIME_DIR/lazaret\" '{rt}'; do mkdir -p \"$d\"; echo '{tag}-content' > \"$d/{tag}\"; done; \
         echo '{tag}-key' > \"$HOME/.ssh/id_lzt_{tag}\"",
        rt = runtime.display()
    ));
    assert!(
        planted.status.success(),
        "{}",
        String::from_utf8_lossy(&planted.stderr)
    );
    ws.release();
    let r = finish(child);
    let _ = dev.sh(&format!(
        "rm -f \"$HOME\"/.ssh/*{tag}* \"$HOME/.aws/{tag}\" \"$HOME/.gnupg/{tag}\" \
         \"$HOME/.local/share/lazaret/{tag}\" \"$XDG_RUNTIME_DIR/lazaret/{tag}\""
    ));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout, "---\n---\n", "found inside: {r:?}");
    ws.assert_nothing_left();
}

/// Attack: read `/proc/self/mountinfo` for the host paths behind the sandbox's mounts (the
/// workspace's real location, the home directory, the Domain Root, the runtime dir) to learn
/// the developer's layout. Expected: every mount's root is `/` (cgroup mounts: a container id)
/// and every source is `none`; no host path appears anywhere in the file.
#[test]
fn mountinfo_names_no_host_source_path() {
    let dev = Dev::get();
    let ws = dev.workspace("mountinfo");
    let r = ws.run(&["cat", "/proc/self/mountinfo"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.lines().count() > 10, "{r:?}");
    for line in r.stdout.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let root = fields.get(3).copied().unwrap_or("");
        let cgroup_id = root.len() == 65
            && root.starts_with('/')
            && root[1..].bytes().all(|b| b.is_ascii_hexdigit());
        assert!(root == "/" || cgroup_id, "mount root {root:?} in {line}");
        let source = line
            .split(" - ")
            .nth(1)
            .and_then(|rest| rest.split(' ').nth(1))
            .unwrap_or("");
        assert_eq!(source, "none", "mount source in {line}");
    }
    let domain_root = ws.domain_root();
    for host in [
        ws.path.display().to_string(),
        dev.home.display().to_string(),
        dev.runtime_dir.display().to_string(),
        domain_root.display().to_string(),
        "lazaret-tests".to_owned(),
    ] {
        assert!(
            !r.stdout.contains(&host),
            "mountinfo names {host}: {}",
            r.stdout
        );
    }
    ws.assert_nothing_left();
}

/// Attack: look through every descriptor of every process inside (`/proc/*/fd`, PID 1's
/// included) for one leaked from the host — a directory of the host to `openat` from (runc
/// CVE-2024-21626), a host socket, a host file. gVisor shows descriptors donated by the host as
/// `host:[N]`: those must be stdio — the session's pipes (FIFOs), and PID 1's stdin, the
/// container's `/dev/null` (reads as empty at once) — nothing else.
/// Expected: only pipes (gVisor's or donated stdio FIFOs), `/dev/null` and `/proc` entries.
#[test]
fn no_process_inside_holds_a_host_descriptor() {
    let dev = Dev::get();
    let ws = dev.workspace("fds");
    let r = ws.run_in(
        "",
        &[
            "sh",
            "-c",
            "sleep 30 & for p in /proc/[0-9]*; do for f in $p/fd/*; do \
             echo \"${p#/proc/} ${f##*/} $(stat -L -c %F:%t:%T $f 2>/dev/null | tr ' ' _) $(readlink $f)\"; done; done; kill $!; \
             echo \"stdin1 $(timeout 5 head -c 1 /proc/1/fd/0 2>&1 | wc -c) $?\"",
        ],
        Some(""),
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    let mut pids = std::collections::BTreeSet::new();
    let mut donated = 0;
    let (listing, stdin1) = r.stdout.rsplit_once("stdin1 ").unwrap_or((&r.stdout, ""));
    // PID 1's stdin, a host character device gVisor shows as 0:0, reads as empty at once.
    assert_eq!(stdin1, "0 0\n", "{r:?}");
    for line in listing.lines() {
        let fields: Vec<&str> = line.splitn(4, ' ').collect();
        let [pid, fd, kind, target] = fields[..] else {
            panic!("unexpected line {line:?} in {}", r.stdout);
        };
        pids.insert(pid.to_owned());
        if target.starts_with("host:[") {
            donated += 1;
        }
        let ok = match target {
            // Stdio: the session's pipes; PID 1's stdin is a host character device (podman
            // gives a container without `-i` the host's /dev/null; gVisor shows it as 0:0).
            t if t.starts_with("host:[") => {
                ["0", "1", "2"].contains(&fd)
                    && (kind.starts_with("fifo:")
                        || (pid == "1" && fd == "0" && kind.starts_with("character_special_file:")))
            }
            t if t.starts_with("pipe:[") => kind.starts_with("fifo:"),
            "/dev/null" => true,
            t => t.starts_with("/proc/"),
        };
        assert!(
            ok,
            "process {pid} holds fd {fd}: {kind} {target}\n{}",
            r.stdout
        );
    }
    assert!(pids.contains("1") && pids.len() >= 2, "{r:?}");
    assert!(donated >= 3, "no donated stdio seen: {r:?}");
    ws.assert_nothing_left();
}

/// Attack: read the environment of every process inside, PID 1's included
/// (`/proc/*/environ`), for the host agent socket, cloud keys and tokens the developer had in
/// the shell that started `lazaret run`. Expected: none of them, nor the host's runtime dir or
/// home path, appears in any process's environment.
#[test]
fn no_process_inside_holds_host_secrets_in_its_environment() {
    let dev = Dev::get();
    let ws = dev.workspace("environ");
    let r = ws.run_with_env(
        &[
            "SSH_AUTH_SOCK=/tmp/ssh-lzt/agent.sock",
            "AWS_SECRET_ACCESS_KEY=lzt-aws-secret",
            "GITHUB_TOKEN=lzt-gh-token",
            "ANTHROPIC_API_KEY=lzt-api-key",
        ],
        &[
            "sh",
            "-c",
            "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done; echo; echo pid1=$(tr '\\0' '\\n' < /proc/1/environ | wc -l)",
        ],
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout.contains("pid1=") && !r.stdout.contains("pid1=0"),
        "PID 1's environment was not read: {r:?}"
    );
    for secret in [
        "SSH_AUTH_SOCK",
        "ssh-lzt",
        "AWS_",
        "lzt-aws-secret",
        "GITHUB_TOKEN",
        "lzt-gh-token",
        "ANTHROPIC_API_KEY",
        "lzt-api-key",
        "XDG_RUNTIME_DIR",
        &dev.home.display().to_string(),
    ] {
        assert!(
            !r.stdout.contains(secret),
            "{secret} in an environment inside: {}",
            r.stdout
        );
    }
    ws.assert_nothing_left();
}

/// Attack: connect to the host's abstract unix sockets — an X11-style `@/tmp/.X11-unix/X<n>`
/// and a Lazaret-style `@lazaret-…` name the test listens on in the host's namespaces (abstract
/// names bypass file permissions and mounts). Expected: ECONNREFUSED inside, and the host's
/// listeners never see a connection (while the host itself can connect).
#[test]
fn host_abstract_unix_sockets_are_unreachable() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
    let dev = Dev::get();
    let id = std::process::id();
    let names = [
        format!("/tmp/.X11-unix/X{}", 100 + id % 800),
        format!("lazaret-lzt-{id}"),
    ];
    let listeners: Vec<UnixListener> = names
        .iter()
        .map(|n| {
            let addr = SocketAddr::from_abstract_name(n.as_bytes()).expect("an abstract name");
            let l = UnixListener::bind_addr(&addr).expect("listening on an abstract socket");
            l.set_nonblocking(true).expect("non-blocking");
            l
        })
        .collect();
    let ws = dev.workspace("abstract");
    let mut script = String::from("import socket, errno\n");
    for (i, n) in names.iter().enumerate() {
        script.push_str(&format!(
            "s = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect(\"\\0{n}\"); print(\"s{i}=connected\")\n\
             except OSError as e:\n    print(\"s{i}=\" + errno.errorcode.get(e.errno, str(e.errno)))\n"
        ));
    }
    put(&ws, "abstract.py", &script);
    let r = ws.run(&["python3", "/workspace/abstract.py"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout, "s0=ECONNREFUSED\ns1=ECONNREFUSED\n", "{r:?}");
    for (l, n) in listeners.iter().zip(&names) {
        assert!(l.accept().is_err(), "the host's @{n} was reached");
        let addr = SocketAddr::from_abstract_name(n.as_bytes()).expect("an abstract name");
        assert!(
            UnixStream::connect_addr(&addr).is_ok(),
            "control: the host reaches @{n}"
        );
    }
    ws.assert_nothing_left();
}

/// Attack: find and signal host processes — count `/proc` entries, `kill -0` a host process's
/// pid, look for `/proc/<host pid>`. Expected: only a handful of sandbox processes are
/// visible; `kill -0` fails with "No such process"; the host pid has no `/proc` entry.
#[test]
fn host_processes_are_invisible_and_cannot_be_signalled() {
    let dev = Dev::get();
    let ws = dev.workspace("pids");
    let host = HostProcess::start();
    let pid = host.pid();
    let r = ws.run(&[
        "sh",
        "-c",
        &format!(
            "ls /proc | grep -c '^[0-9]'; kill -0 {pid} 2>&1 && echo signalled || echo refused; \
             test -e /proc/{pid} && echo visible || echo invisible"
        ),
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let got: Vec<&str> = r.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(got.len(), 4, "{r:?}");
    let visible: usize = got[0].trim().parse().unwrap_or(999);
    assert!(visible < 10, "{visible} processes visible: {r:?}");
    assert!(got[1].contains("No such process"), "{r:?}");
    assert_eq!(&got[2..], ["refused", "invisible"], "{r:?}");
    ws.assert_nothing_left();
}

/// Attack: attach to a System V shared memory segment the host created (a key the agent
/// guesses or learns), to read or corrupt a host process's memory. Expected: `shmget` of the
/// host's key fails with ENOENT inside, while the sandbox's own segment works (control).
#[test]
fn host_sysv_ipc_objects_are_invisible() {
    let key: libc::key_t = 0x4c5a_0000 | (std::process::id() as libc::key_t & 0xffff);
    // SAFETY: shmget takes plain integers; the id is removed below.
    let id = unsafe { libc::shmget(key, 4096, libc::IPC_CREAT | libc::IPC_EXCL | 0o666) };
    assert!(
        id >= 0,
        "creating the host segment: {}",
        std::io::Error::last_os_error()
    );
    let got = syscall_probes(
        "sysv",
        &format!(
            "probe(\"host-shmget\", 29, {key}, 0, 0)\n\
             probe(\"own-shmget\", 29, {own}, 4096, 0o1600)\n",
            own = key ^ 0x1
        ),
        &[],
    );
    // SAFETY: removing the segment this test created.
    unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
    assert_eq!(
        got,
        [
            ("host-shmget".to_owned(), "ENOENT".to_owned()),
            ("own-shmget".to_owned(), "ran".to_owned())
        ]
    );
}

/// Attack: write the kernel's control files to reach the host kernel — `core_pattern` (the
/// classic container escape), `drop_caches`, `uevent_helper`, read `/proc/kcore` — and, where
/// gVisor offers its own emulated file, write it hoping it is the host's: `/proc/sysrq-trigger`
/// (a digit sets the console log level), `/proc/sys/kernel/hostname`, a memory cgroup limit and
/// a new cgroup. Expected: the first group is absent or refused; the host's console log level,
/// host name and memory cgroups are unchanged whatever gVisor's emulation accepted (measured:
/// sysrq and hostname writes fail with EIO; gVisor's own cgroupfs accepts the limit and the
/// directory, which exist only inside the Sentry — runsc runs with `--ignore-cgroups`).
#[test]
fn kernel_control_files_do_not_reach_the_host() {
    let dev = Dev::get();
    let ws = dev.workspace("procsys");
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p}: {e}"));
    let printk = read("/proc/sys/kernel/printk");
    let level = printk.split_whitespace().next().unwrap_or("").to_owned();
    let digit = if level == "1" { "2" } else { "1" };
    let pid = std::process::id();
    let hostname = read("/proc/sys/kernel/hostname");
    let memcg = read("/proc/self/cgroup")
        .lines()
        .find_map(|l| l.split_once(":memory:").map(|(_, p)| p.to_owned()))
        .map(|p| format!("/sys/fs/cgroup/memory{p}/memory.limit_in_bytes"));
    let limit = memcg.as_deref().map(read);
    put(
        &ws,
        "ctl.py",
        &format!(
            r#"import errno, os
def out(tag, f):
    try:
        f(); print(tag + "=done")
    except OSError as e:
        print(tag + "=" + errno.errorcode.get(e.errno, str(e.errno)))
def write(path, data):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
for tag, path in [("core_pattern", "/proc/sys/kernel/core_pattern"), ("drop_caches", "/proc/sys/vm/drop_caches"),
                  ("uevent_helper", "/sys/kernel/uevent_helper")]:
    out(tag, lambda: os.close(os.open(path, os.O_WRONLY)))
out("kcore", lambda: os.read(os.open("/proc/kcore", os.O_RDONLY), 16))
out("cgroup-mkdir", lambda: os.mkdir("/sys/fs/cgroup/memory/lzt-{pid}"))
out("sysrq", lambda: write("/proc/sysrq-trigger", b"{digit}"))
out("hostname", lambda: write("/proc/sys/kernel/hostname", b"lzt-evil"))
out("memlimit", lambda: write("/sys/fs/cgroup/memory/memory.limit_in_bytes", b"4096"))
"#
        ),
    );
    let r = ws.run(&["python3", "/workspace/ctl.py"]);
    let printk_after = read("/proc/sys/kernel/printk");
    if printk_after != printk {
        let _ = std::fs::write("/proc/sys/kernel/printk", &level);
    }
    assert_eq!(r.code, Some(0), "{r:?}");
    let got: Vec<(&str, &str)> = r.stdout.lines().filter_map(|l| l.split_once('=')).collect();
    let tags: Vec<&str> = got.iter().map(|(t, _)| *t).collect();
    assert_eq!(
        tags,
        [
            "core_pattern",
            "drop_caches",
            "uevent_helper",
            "kcore",
            "cgroup-mkdir",
            "sysrq",
            "hostname",
            "memlimit"
        ],
        "{r:?}"
    );
    for (tag, outcome) in &got[..4] {
        assert!(
            ["EACCES", "EROFS", "EPERM", "ENOENT"].contains(outcome),
            "{tag}: {outcome} ({r:?})"
        );
    }
    assert_eq!(
        printk_after, printk,
        "the sandbox set the host's console log level"
    );
    assert_eq!(
        read("/proc/sys/kernel/hostname"),
        hostname,
        "host name changed"
    );
    if let (Some(path), Some(before)) = (&memcg, &limit) {
        assert_eq!(
            &read(path),
            before,
            "the host's memory cgroup limit changed"
        );
    }
    let made = format!("lzt-{pid}");
    let found = std::process::Command::new("find")
        .args(["/sys/fs/cgroup", "-maxdepth", "4", "-name", &made])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    assert_eq!(found, "", "a cgroup made inside exists on the host");
    ws.assert_nothing_left();
}

/// Attack: mount a tmpfs or bind-mount `/` over a path, and create device nodes — in the
/// sandbox's own `/tmp`, and in the host-backed workspace and State Anchor (`/opt`) — to open
/// a host device (`/dev/mem` 1:1, a disk 8:0). Expected: both mounts fail with EPERM;
/// `mknod` on host-backed trees fails with EPERM; a node gVisor lets the agent make in its own
/// `/tmp` reaches no host device (opening it fails with ENXIO).
#[test]
fn mount_and_device_nodes_reach_no_host_device() {
    let got = syscall_probes(
        "mount",
        r#"
os.makedirs("/tmp/m", exist_ok=True)
probe("mount-tmpfs", 165, b"none", b"/tmp/m", b"tmpfs", 0, None)
probe("mount-bind", 165, b"/", b"/tmp/m", None, 4096, None)
for tag, path, dev in [("ws-mem", "/workspace/mem", 0x101), ("anchor-mem", "/opt/mem", 0x101),
                       ("tmp-mem", "/tmp/mem", 0x101), ("tmp-disk", "/tmp/disk", 0x800)]:
    try:
        os.mknod(path, 0o20600 if dev != 0x800 else 0o60600, dev)
    except OSError as e:
        print("%s=mknod-%s" % (tag, errno.errorcode[e.errno])); continue
    try:
        fd = os.open(path, os.O_RDWR); os.read(fd, 16); print(tag + "=opened")
    except OSError as e:
        print("%s=open-%s" % (tag, errno.errorcode[e.errno]))
"#,
        &[],
    );
    let want = [
        ("mount-tmpfs", "EPERM"),
        ("mount-bind", "EPERM"),
        ("ws-mem", "mknod-EPERM"),
        ("anchor-mem", "mknod-EPERM"),
        ("tmp-mem", "open-ENXIO"),
        ("tmp-disk", "open-ENXIO"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(got, want);
}

/// Attack: load code into the host kernel or replace it — `init_module`, `finit_module`,
/// `delete_module`, `kexec_load`, `kexec_file_load` — and take the machine down or touch I/O
/// ports: `reboot`, `iopl`, `ioperm`, `swapon`. Expected: each blocked (EPERM or ENOSYS).
#[test]
fn kernel_modules_kexec_reboot_and_io_ports_are_blocked() {
    let got = syscall_probes(
        "modules",
        r#"
buf = ctypes.create_string_buffer(64)
probe("init_module", 175, buf, 64, b"")
probe("finit_module", 313, os.open("/dev/null", os.O_RDONLY), b"", 0)
probe("delete_module", 176, b"ext4", 0)
probe("kexec_load", 246, 0, 0, None, 0)
probe("kexec_file_load", 320, -1, -1, 0, b"", 1)
probe("reboot", 169, 0xfee1dead, 672274793, 0, None)
probe("iopl", 172, 3)
probe("ioperm", 173, 0x80, 1, 1)
probe("swapon", 167, b"/tmp", 0)
"#,
        &[],
    );
    assert_blocked(
        &got,
        &[
            "init_module",
            "finit_module",
            "delete_module",
            "kexec_load",
            "kexec_file_load",
            "reboot",
            "iopl",
            "ioperm",
            "swapon",
        ],
        &["EPERM", "ENOSYS"],
    );
}

/// Attack: run code in the host kernel through eBPF (`bpf(BPF_MAP_CREATE)` with a valid array
/// map) or read host-wide performance counters (`perf_event_open` of a software clock on this
/// process). Expected: blocked — EPERM/ENOSYS, or ENODEV for perf (no event source at all).
#[test]
fn bpf_and_perf_event_open_are_blocked() {
    let got = syscall_probes(
        "bpf",
        r#"
attr = ctypes.create_string_buffer(struct.pack("<IIII", 2, 4, 4, 1) + bytes(48))
probe("bpf", 321, 0, attr, 64)
pattr = ctypes.create_string_buffer(struct.pack("<IIQ", 1, 112, 0) + bytes(96))
probe("perf_event_open", 298, pattr, 0, -1, -1, 0)
"#,
        &[],
    );
    assert_blocked(
        &got,
        &["bpf", "perf_event_open"],
        &["EPERM", "ENOSYS", "EACCES", "ENODEV"],
    );
}

/// Attack: reach the kernel keyrings, where host processes keep credentials — look up the user
/// keyring (`keyctl(KEYCTL_GET_KEYRING_ID, @u)`), add a key to the session keyring, and
/// `request_key` a host key by name. Expected: blocked (ENOSYS / EACCES / EPERM).
#[test]
fn kernel_keyrings_are_blocked() {
    let got = syscall_probes(
        "keyctl",
        r#"
probe("keyctl", 250, 0, -4, 0)
probe("add_key", 248, b"user", b"lzt", b"x", 1, -3)
probe("request_key", 249, b"user", b"lzt-host", None, 0)
"#,
        &[],
    );
    assert_blocked(
        &got,
        &["keyctl", "add_key", "request_key"],
        &["EPERM", "ENOSYS", "EACCES"],
    );
}

/// Attack: "shocker" — get a file handle with `name_to_handle_at` and open the host file
/// system's root inode (handle type 1, inode 2) with `open_by_handle_at`, escaping every
/// mount. Expected: both blocked (EOPNOTSUPP / EPERM / ENOSYS).
#[test]
fn open_by_handle_at_cannot_open_host_inodes() {
    let got = syscall_probes(
        "handles",
        r#"
h = ctypes.create_string_buffer(struct.pack("<Ii", 128, 0) + bytes(128))
mid = ctypes.c_int(0)
probe("name_to_handle_at", 303, -100, b"/workspace", h, ctypes.byref(mid), 0)
shocker = ctypes.create_string_buffer(struct.pack("<IiQ", 8, 1, 2))
probe("open_by_handle_at", 304, os.open("/", os.O_RDONLY), shocker, 0)
"#,
        &[],
    );
    assert_blocked(
        &got,
        &["name_to_handle_at", "open_by_handle_at"],
        &["EOPNOTSUPP", "ENOTSUP", "EPERM", "ENOSYS"],
    );
}

/// Attack: attach to a host process (a `sleep` of this test) with `PTRACE_ATTACH` and
/// `PTRACE_SEIZE`, or signal it with `kill(pid, 0)`, to take it over. Expected: ESRCH — the pid
/// does not exist in the sandbox's PID namespace.
#[test]
fn ptrace_of_a_host_process_fails() {
    let host = HostProcess::start();
    let pid = host.pid();
    let got = syscall_probes(
        "ptrace",
        r#"
pid = int(sys.argv[1])
probe("ptrace-attach", 101, 16, pid, 0, 0)
probe("ptrace-seize", 101, 0x4206, pid, 0, 0)
probe("kill", 62, pid, 0)
"#,
        &[&pid],
    );
    assert_blocked(
        &got,
        &["ptrace-attach", "ptrace-seize", "kill"],
        &["ESRCH", "EPERM"],
    );
}

/// Attack: push keystrokes into the developer's terminal with `TIOCSTI` on fds 0, 1, 2 and
/// on `/dev/tty` (CVE-2017-5226 in bubblewrap), so the host shell runs them after the session.
/// Run as `lazaret run -- …` with a piped stdin. Expected: no descriptor is a terminal
/// (ENOTTY) and there is no controlling terminal (`/dev/tty` fails): nothing injected.
#[test]
fn tiocsti_from_inside_injects_nothing() {
    let dev = Dev::get();
    let ws = dev.workspace("tiocsti");
    put(
        &ws,
        "sti.py",
        r#"import errno, fcntl, os, termios
for fd in (0, 1, 2):
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b"x"); print("fd%d=injected" % fd)
    except OSError as e:
        print("fd%d=%s" % (fd, errno.errorcode.get(e.errno, str(e.errno))))
try:
    fd = os.open("/dev/tty", os.O_RDWR)
    fcntl.ioctl(fd, termios.TIOCSTI, b"x"); print("tty=injected")
except OSError as e:
    print("tty=" + errno.errorcode.get(e.errno, str(e.errno)))
"#,
    );
    let r = ws.run_in("", &["python3", "/workspace/sti.py"], Some("typed\n"));
    assert_eq!(r.code, Some(0), "{r:?}");
    let got: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(got.len(), 4, "{r:?}");
    for line in &got[..3] {
        assert!(line.ends_with("=ENOTTY"), "{r:?}");
    }
    assert!(
        ["tty=ENXIO", "tty=ENOENT", "tty=ENOTTY", "tty=EIO"].contains(&got[3]),
        "{r:?}"
    );
    ws.assert_nothing_left();
}

/// Mount points the sandbox may have: its own file systems, the workspace and its Git Sentry
/// protections, the default profile's State Anchors, podman's files, and Lazaret's control
/// mounts (Escalation Mailbox, Escalation Client and its clipboard-shim names).
/// The image's system CA bundle, which a composed bundle covers when the host trusts more.
const TRUST_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

const ALLOWED_MOUNTS: [&str; 25] = [
    "/",
    "/dev",
    "/dev/pts",
    "/dev/shm",
    "/sys",
    "/sys/fs/cgroup",
    "/proc",
    "/tmp",
    "/workspace",
    // The Domain-private git directory and the host's objects, read-only (issue #30).
    "/workspace/.git",
    "/run/lazaret/git/objects",
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
    // The same executable as the image-paste shim (issue #16).
    "/run/lazaret/bin/xclip",
    "/run/lazaret/bin/wl-paste",
];

/// Attack: look for the developer's secrets and Lazaret's own state from inside — find canary
/// files planted in `~/.ssh`, `~/.config/lazaret`, `~/.local/share/lazaret` and
/// `$XDG_RUNTIME_DIR/lazaret` by name, read `SSH_AUTH_SOCK` / `AWS_SECRET_ACCESS_KEY` set in the
/// CLI's environment, list the mounts and descriptors for host paths or leaked fds (runc
/// CVE-2024-21626). Expected: nothing found, no secret variable, only allowed mount points, no
/// mount naming the home directory, only stdio open.
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
         echo ---; env; echo ---; cut -d' ' -f5,6 /proc/self/mountinfo; echo ---; \
         grep -c '{home}' /proc/self/mountinfo || true; echo ---; \
         grep -c 'PRIVATE KEY' {TRUST_BUNDLE} || true; echo ---; ls /proc/self/fd",
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
    dev.sh(&format!(
        "for d in \"$HOME/.ssh\" \"$HOME/.config/lazaret\" \"$HOME/.local/share/lazaret\" \
         \"$XDG_RUNTIME_DIR/lazaret\"; do rm -f \"$d/{tag}\"; done"
    ));
    assert_eq!(r.code, Some(0), "{r:?}");
    let stdout = r.stdout;
    let parts: Vec<&str> = stdout.split("---\n").collect();
    assert_eq!(parts.len(), 6, "{stdout}");
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
    for line in parts[2].lines() {
        let (mount, options) = line.split_once(' ').unwrap_or((line, ""));
        // The composed trust bundle (issue #32), present when the host has CAs the image lacks:
        // a Lazaret-owned file, read-only, certificates only.
        let trust = mount == TRUST_BUNDLE && options.split(',').any(|o| o == "ro");
        let ok = trust || ALLOWED_MOUNTS.contains(&mount) || mount.starts_with("/sys/fs/cgroup/");
        assert!(
            ok,
            "unexpected mount {line:?} in the sandbox:\n{}",
            parts[2]
        );
    }
    assert_eq!(
        parts[3].trim(),
        "0",
        "mountinfo names a host path under the home directory"
    );
    assert_eq!(
        parts[4].trim(),
        "0",
        "the sandbox's CA bundle holds a private key: only certificates may cross"
    );
    // Only stdio and the directory `ls` itself opened: no descriptor leaked from the host.
    let fds: Vec<&str> = parts[5].lines().collect();
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

/// Attack: share a namespace with the host (mount, IPC, UTS, user, network) to see or touch
/// host objects, and count the processes visible inside. Expected (checked from the host): the
/// sandbox's namespaces all differ from the host's, its network namespace is the sidecar's,
/// and inside only the sandbox's own few processes exist.
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

/// Attack: from inside, break the Sentry (gVisor's kernel, the sandbox's host process) — then
/// whatever namespaces that host process shares with the host are the agent's next view:
/// host PIDs to signal or trace, the host's cgroup tree. SR-12 says the Agent Sandbox joins no
/// host PID or cgroup namespace. Expected (checked from the host on the runsc sandbox process):
/// its PID and cgroup namespaces differ from the host's.
///
/// Measured on podman 4.3.1 + runsc 20240729 rootless (`--ignore-cgroups`): both are the
/// host's, so this scenario fails until the sandbox is started in its own PID and cgroup
/// namespaces (reported to the lead; inside, gVisor's own PID namespace and cgroupfs hide the
/// host — see `host_processes_are_invisible_and_cannot_be_signalled`).
#[test]
fn the_sandbox_host_process_joins_no_host_pid_or_cgroup_namespace() {
    let dev = Dev::get();
    let ws = dev.workspace("pidns");
    let child = ws.spawn(&["sh", "-c", HOLD]);
    let name = format!("lazaret-{}-sandbox", ws.domain);
    let pid = wait_for(Duration::from_secs(60), || {
        let out = dev
            .command("podman")
            .args(["inspect", "--format", "{{.State.Pid}}", &name])
            .stdin(Stdio::null())
            .output()
            .ok()?;
        let pid: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
        (pid > 0).then_some(pid)
    })
    .expect("the sandbox runs");
    let me = u64::from(std::process::id());
    let shared: Vec<&str> = ["pid", "cgroup"]
        .into_iter()
        .filter(|kind| ns(pid, kind) == ns(me, kind))
        .collect();
    ws.release();
    let r = finish(child);
    assert_eq!(r.code, Some(0), "{r:?}");
    ws.assert_nothing_left();
    assert_eq!(
        shared,
        Vec::<&str>::new(),
        "the runsc sandbox process (pid {pid}) shares these namespaces with the host (SR-12)"
    );
}
