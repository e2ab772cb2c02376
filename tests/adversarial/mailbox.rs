//! Adversarial scenarios: the Escalation Mailbox as a dumping ground, forged results, replays,
//! and what the sandbox learns of the host through the Domain ID (see main.rs; spec SR-7,
//! SR-8, SR-10, SR-14; `docs/escalation.md` "The mailbox as hostile input").
//!
//! Every scenario runs `lazaret run` on the real stack with a profile whose auto-approval rules
//! are `pwd` and one command with a visible host effect (a line appended to `ran.log` in the
//! workspace), so "escalations still answer" and "it ran once" are observable on the host.

use crate::support::{self, Dev, TestWorkspace};
use lazaret_protocol::DomainId;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const RULES: &str = "[profiles.mbx]\nextends = \"shell\"\n\
[[profiles.mbx.auto_approve]]\nargv = [\"pwd\"]\n\
[[profiles.mbx.auto_approve]]\nargv = [\"sh\", \"-c\", \"echo ran >> ran.log\"]\n";

/// Caps of the request dir (src/escalation/mailbox.rs).
const MAX_RECORDS: usize = 64;
const MAX_HELD_BYTES: u64 = 1024 * 1024;
/// Size of the request dir's own tmpfs (src/escalation/mailbox_fs.rs).
const REQ_FS_BYTES: u64 = 8 * 1024 * 1024;

fn workspace(dev: &Dev, name: &str) -> TestWorkspace {
    dev.workspace(name).with_profile("mbx", RULES)
}

/// The host side of the request dir of `ws`'s Domain.
fn host_req(ws: &TestWorkspace) -> PathBuf {
    ws.runtime_dir().join("mailbox/req")
}

/// The request dir as the coordinator sees it while the Domain is up: its tmpfs in podman's
/// rootless namespace, reached through the pause process's root (tests run as root). `None`
/// when no tmpfs is mounted there (the Domain is down).
fn ns_req(ws: &TestWorkspace) -> Option<PathBuf> {
    let pid_file = ws.dev.runtime_dir.join("libpod/tmp/pause.pid");
    let pid = std::fs::read_to_string(pid_file).ok()?;
    let rel = host_req(ws);
    let path = PathBuf::from(format!("/proc/{}/root", pid.trim()))
        .join(rel.strip_prefix("/").unwrap_or(&rel));
    let st = nix::sys::statfs::statfs(&path).ok()?;
    (st.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC).then_some(path)
}

/// Entries and bytes of the request dir: the host's directory and, while mounted, its tmpfs.
fn req_usage(ws: &TestWorkspace) -> (usize, u64) {
    let (n, bytes) = usage(&host_req(ws));
    let (m, more) = ns_req(ws).map(|p| usage(&p)).unwrap_or_default();
    (n + m, bytes + more)
}

/// A canary directory of the developer's, outside the workspace: `<dir>/secret` says "canary".
struct Canary(PathBuf);

impl Canary {
    fn new(ws: &TestWorkspace, name: &str) -> Canary {
        let dir = PathBuf::from(format!("{}.{name}", ws.path.display()));
        ws.host_sh(&format!(
            "mkdir -p '{d}/sub' && echo canary > '{d}/secret' && echo canary > '{d}/sub/deep'",
            d = dir.display()
        ));
        Canary(dir)
    }

    fn assert_intact(&self) {
        for f in ["secret", "sub/deep"] {
            let text = std::fs::read_to_string(self.0.join(f)).unwrap_or_default();
            assert_eq!(text, "canary\n", "{} was changed or removed", f);
        }
    }
}

impl Drop for Canary {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Entries and bytes (regular files) directly in `dir`, read without following anything.
fn usage(dir: &Path) -> (usize, u64) {
    let mut n = 0;
    let mut bytes = 0;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        n += 1;
        if let Ok(m) = e.metadata() {
            if m.is_file() {
                bytes += m.len();
            }
        }
    }
    (n, bytes)
}

/// A Python prelude inside the sandbox: `req`, `put(name, bytes)` (atomic rename), `signed(argv,
/// rid)` (a request signed with the session's own anchor), `wait_empty(secs)` (until the
/// request dir holds nothing the host can see; returns the seconds it took and what was
/// left). A FIFO made there stays in the sandbox: runsc keeps named pipes of a gofer mount in
/// the Sentry (seen on runsc 20240729), so the host never sees — or pays for — it; the host
/// side of the dir is checked by the tests themselves.
const PY: &str = r#"
import hmac, hashlib, json, os, stat, sys, time
env = os.environ
req = "/run/lazaret/mailbox/req"
res = "/run/lazaret/mailbox/res"
def put(name, data):
    # The client's own temporary name for a record name (kept while young), else none.
    if not name.endswith(".json"):
        with open(req + "/" + name, "wb") as f: f.write(data)
        return
    tmp = req + "/." + name[:-5] + ".tmp"
    with open(tmp, "wb") as f: f.write(data)
    os.rename(tmp, req + "/" + name)
def signed(argv, rid, cwd="/workspace"):
    b = {"v": 1, "domain_id": env["LAZARET_DOMAIN"], "session_id": env["LAZARET_SESSION"],
         "request_id": rid, "created_unix_ms": int(time.time() * 1000), "argv": argv,
         "cwd": cwd, "justification": "", "timeout_secs": 30}
    canon = json.dumps(b, separators=(",", ":")).encode()
    key = bytes.fromhex(env["LAZARET_SESSION_ANCHOR"])
    return json.dumps(dict(b, sig=hmac.new(key, canon, hashlib.sha256).hexdigest())).encode()
def host_visible():
    # gVisor keeps a FIFO made on a gofer mount in the sandbox (the host never sees it).
    out = []
    for n in os.listdir(req):
        try:
            if not stat.S_ISFIFO(os.lstat(req + "/" + n).st_mode): out.append(n)
        except OSError: pass
    return out
def wait_empty(secs):
    t = time.time()
    while time.time() - t < secs:
        if not host_visible(): break
        time.sleep(0.005)
    return time.time() - t, host_visible()
def attempt(f, *a):
    try: f(*a)
    except OSError: pass
"#;

/// Runs the Python `script` (after [`PY`]) in the sandbox, then `after` (sh).
fn python_then(ws: &TestWorkspace, script: &str, after: &str) -> support::Run {
    let sh = format!("cat > /tmp/a.py <<'EOF'\n{PY}\n{script}\nEOF\npython3 /tmp/a.py && {after}");
    ws.run(&["sh", "-c", &sh])
}

/// `pwd` through Host Escalation answers with the host workspace path.
const PWD_CHECK: &str = "cd /workspace && lazaret-escalate -- pwd; echo rc=$?";

fn assert_pwd_answered(ws: &TestWorkspace, r: &support::Run) {
    assert!(
        r.stdout.contains(&format!("{}\nrc=0\n", ws.path.display())),
        "an auto-approved pwd did not answer: {r:?}"
    );
}

/// Fills the request dir with 10 000 junk entries (plain and dot-files), 20 directory trees 30
/// levels deep with symlinks to a host canary at every level, record-shaped FIFOs and
/// symlinks, 2 MiB files and non-UTF-8 names — to fill `$XDG_RUNTIME_DIR`, hang the
/// coordinator on a FIFO, or get it to follow a link into the developer's files while it
/// cleans up. Afterwards the request dir is empty within seconds, an auto-approved `pwd`
/// answers, and the canary is untouched.
#[test]
fn a_flood_of_junk_is_cleared_and_escalations_still_answer() {
    let dev = Dev::get();
    let ws = workspace(&dev, "mbx-flood");
    let canary = Canary::new(&ws, "canary");
    let script = format!(
        r#"
canary = "{c}"
t0 = time.time()
for i in range(10000):
    attempt(lambda: open(req + ("/.junk%d" if i % 2 else "/junk%d") % i, "w").close())
for t in range(20):
    p = req + "/.tree%d" % t
    for depth in range(30):
        attempt(os.mkdir, p)
        attempt(os.symlink, canary, p + "/link")
        attempt(os.symlink, canary + "/secret", p + "/file")
        p += "/d"
attempt(os.symlink, canary, req + "/" + "a" * 32 + ".json")
attempt(os.symlink, "../..", req + "/.up")
for i in range(10): attempt(os.mkfifo, req + "/%032x.json" % i)
def big(i):
    with open(req + "/.big%d" % i, "wb") as f: f.write(b"\0" * (2 * 1024 * 1024))
for i in range(5): attempt(big, i)
for i in range(10): attempt(lambda: open(req.encode() + b"/\xff\xfe%d" % i, "w").close())
t1 = time.time()
took, left = wait_empty(60)
print("flood_s=%.2f clear_after_s=%.2f left=%d" % (t1 - t0, took, len(left)))
"#,
        c = canary.0.display()
    );
    let started = Instant::now();
    let r = python_then(&ws, &script, PWD_CHECK);
    eprintln!(
        "{}  (whole run {:?})",
        r.stdout.lines().next().unwrap_or(""),
        started.elapsed()
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout.contains("left=0"),
        "the request dir was not emptied: {r:?}"
    );
    assert_pwd_answered(&ws, &r);
    canary.assert_intact();
    let (n, bytes) = req_usage(&ws);
    assert!(
        n <= MAX_RECORDS && bytes <= MAX_HELD_BYTES,
        "{n} entries, {bytes} bytes left"
    );
    // Nothing outside the mailbox went: the Domain's runtime dir still has its mailbox.
    assert!(host_req(&ws).with_file_name("res").is_dir());
    ws.assert_nothing_left();
}

/// Measures the flood: while a session holds, the sandbox writes N junk files as fast as it
/// can; the host reads the coordinator's CPU time before and after and times how long until
/// the request dir is empty. Asserts the cap holds after the flood and records the numbers
/// (printed; see the journal).
#[test]
fn flood_cost_is_bounded_and_measured() {
    let dev = Dev::get();
    let ws = workspace(&dev, "mbx-measure");
    let n = 20_000;
    let script = format!(
        "cat > /tmp/f.py <<'EOF'\n{PY}\n\
open('/workspace/.ready', 'w').close()\n\
while not os.path.exists('/workspace/.flood'): time.sleep(0.01)\n\
t0 = time.time()\n\
for i in range({n}): attempt(lambda: open(req + '/.j%d' % i, 'w').close())\n\
t1 = time.time()\n\
took, left = wait_empty(120)\n\
print('files=%d write_s=%.2f clear_after_s=%.2f left=%d' % ({n}, t1 - t0, took, len(left)))\n\
open('/workspace/.cleared', 'w').close()\n\
EOF\npython3 /tmp/f.py; {hold}",
        hold = support::HOLD
    );
    let child = ws.spawn(&["sh", "-c", &script]);
    let ready = support::wait_for(Duration::from_secs(120), || {
        ws.path.join(".ready").exists().then_some(())
    });
    assert!(ready.is_some(), "the session did not start");
    let pid = support::processes_matching("__coordinator")
        .into_iter()
        .find(|(_, cmd)| cmd.contains(&ws.path.display().to_string()))
        .map(|(pid, _)| pid)
        .expect("the Domain's coordinator runs");
    let cpu = || -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let fields: Vec<&str> = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        let ticks: u64 = fields.get(11).and_then(|f| f.parse().ok()).unwrap_or(0)
            + fields.get(12).and_then(|f| f.parse().ok()).unwrap_or(0);
        ticks as f64 / 100.0
    };
    let idle0 = (cpu(), Instant::now());
    std::thread::sleep(Duration::from_secs(2));
    let idle = (cpu() - idle0.0) / idle0.1.elapsed().as_secs_f64();
    let before = (cpu(), Instant::now());
    ws.host_sh("touch .flood");
    let cleared = support::wait_for(Duration::from_secs(180), || {
        ws.path.join(".cleared").exists().then_some(())
    });
    let spent = cpu() - before.0;
    let wall = before.1.elapsed().as_secs_f64();
    let (left, bytes) = req_usage(&ws);
    ws.release();
    let r = support::finish(child);
    eprintln!(
        "flood measurement: {} | coordinator CPU {spent:.2} s over {wall:.2} s wall; idle {:.1}% of a core",
        r.stdout.trim(),
        idle * 100.0
    );
    assert!(cleared.is_some(), "the flood was not cleared: {r:?}");
    assert!(r.stdout.contains("left=0"), "{r:?}");
    assert!(
        left <= MAX_RECORDS && bytes <= MAX_HELD_BYTES,
        "{left} entries, {bytes} bytes"
    );
    ws.assert_nothing_left();
}

/// Plants record-shaped entries that are not records — a FIFO (a blocking open would hang the
/// coordinator), a symlink to a host canary, a directory holding a symlink to it, a hardlink
/// of a file — each named `<request id>.json`, then asks for `pwd`. The coordinator neither
/// hangs nor follows anything: the junk is gone, `pwd` answers, the canary is intact.
#[test]
fn record_shaped_fifos_symlinks_dirs_and_hardlinks_are_removed_unfollowed() {
    let dev = Dev::get();
    let ws = workspace(&dev, "mbx-shapes");
    let canary = Canary::new(&ws, "canary");
    let script = format!(
        r#"
c = "{c}"
attempt(os.mkfifo, req + "/" + "1" * 32 + ".json")
attempt(os.symlink, c + "/secret", req + "/" + "2" * 32 + ".json")
attempt(os.mkdir, req + "/" + "3" * 32 + ".json")
attempt(os.symlink, c, req + "/" + "3" * 32 + ".json/x")
attempt(os.symlink, c + "/sub", req + "/" + "4" * 32 + ".json")
with open("/tmp/big", "wb") as f: f.write(b"x" * 70000)
# The coordinator may remove the oversize temporary before it is renamed: either way no
# oversize record is read.
attempt(put, "5" * 32 + ".json", open("/tmp/big", "rb").read())
put("." + "6" * 32 + ".tmp", b"x")
attempt(os.link, req + "/." + "6" * 32 + ".tmp", req + "/" + "6" * 32 + ".json")
took, left = wait_empty(20)
print("left=%d" % len(left))
"#,
        c = canary.0.display()
    );
    let r = python_then(&ws, &script, PWD_CHECK);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.contains("left=0"), "{r:?}");
    assert_pwd_answered(&ws, &r);
    canary.assert_intact();
    ws.assert_nothing_left();
}

/// Races the cleanup: for 5 s, builds a directory full of files and canary symlinks in the
/// request dir, then, while the coordinator removes it, moves it aside and puts a symlink to
/// the developer's canary directory in its place (and back), hoping a path-based removal
/// follows the swap into the canary (Rust CVE-2022-21658 as anchor). The canary is intact,
/// the request dir ends empty, `pwd` answers.
#[test]
fn swapping_a_directory_for_a_symlink_during_cleanup_reaches_nothing_outside() {
    let dev = Dev::get();
    let ws = workspace(&dev, "mbx-race");
    let canary = Canary::new(&ws, "canary");
    let script = format!(
        r#"
c = "{c}"
end = time.time() + 5
rounds = 0
while time.time() < end:
    d = req + "/.race"
    attempt(os.mkdir, d)
    for j in range(50):
        attempt(lambda: open(d + "/f%d" % j, "w").close())
        attempt(os.symlink, c, d + "/l%d" % j)
    attempt(os.rename, d, req + "/.moved")
    attempt(os.symlink, c, d)
    attempt(os.symlink, c, req + "/.moved/sub")
    attempt(os.unlink, d)
    attempt(os.rename, req + "/.moved", d)
    rounds += 1
took, left = wait_empty(20)
print("rounds=%d left=%d" % (rounds, len(left)))
"#,
        c = canary.0.display()
    );
    let r = python_then(&ws, &script, PWD_CHECK);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.contains(" left=0"), "{r:?}");
    assert_pwd_answered(&ws, &r);
    canary.assert_intact();
    ws.assert_nothing_left();
}

/// Writes big files into the request dir — plain, dot-named and record-shaped, 40 of 512 KiB
/// — to fill the host's small `$XDG_RUNTIME_DIR` tmpfs. Between polls the coordinator keeps at
/// most the byte cap: soon after the writes the dir holds nothing, and escalations answer.
#[test]
fn large_files_do_not_accumulate_in_the_runtime_dir() {
    let dev = Dev::get();
    let ws = workspace(&dev, "mbx-bytes");
    let script = r#"
blob = b"\0" * (512 * 1024)
for i in range(40):
    name = ["%032x.json" % i, ".b%d" % i, "b%d" % i][i % 3]
    attempt(lambda: open(req + "/" + name, "wb").write(blob))
took, left = wait_empty(20)
print("left=%d" % len(left))
"#;
    let r = python_then(&ws, script, PWD_CHECK);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.contains("left=0"), "{r:?}");
    assert_pwd_answered(&ws, &r);
    let (n, bytes) = req_usage(&ws);
    assert!(
        n <= MAX_RECORDS && bytes <= MAX_HELD_BYTES,
        "{n} entries, {bytes} bytes"
    );
    ws.assert_nothing_left();
}

/// Files named `name` (deleted or not) held open by any process: (holder pid, link, size,
/// device) of each, read through `/proc/<pid>/fd` (tests run as root). Matched by the link's
/// last component: runsc's gofer and Sentry see the request dir under paths of their own.
fn held_open(name: &str) -> Vec<(u32, String, u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let deleted = format!("/{name} (deleted)");
    let live = format!("/{name}");
    let mut out = Vec::new();
    for p in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        for fd in std::fs::read_dir(p.path().join("fd"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let link = std::fs::read_link(fd.path()).unwrap_or_default();
            let link = link.to_string_lossy().into_owned();
            if link.ends_with(&deleted) || link.ends_with(&live) {
                if let Ok(m) = std::fs::metadata(fd.path()) {
                    out.push((pid, link, m.len(), m.dev()));
                }
            }
        }
    }
    out
}

/// Opens `req/held`, waits until the sweep has removed its name (junk), then writes 64 MiB
/// through the descriptor it kept — bytes the sweep can no longer see, which the host would
/// keep as `req/held (deleted)` in `$XDG_RUNTIME_DIR` for as long as the sandbox likes. The
/// request dir is a tmpfs of its own, and the coordinator empties a file it removed again at
/// each sweep for a while: the write lands in a file that holds (next to) nothing, or fails with
/// ENOSPC at about the tmpfs's size; either way the file the host holds is no bigger than that
/// and not on the runtime dir's file system, and once the file is closed escalations answer
/// again.
#[test]
fn bytes_written_through_a_descriptor_kept_after_the_sweep_are_capped() {
    use std::os::unix::fs::MetadataExt;
    let dev = Dev::get();
    let ws = workspace(&dev, "mbx-held");
    let held = r#"
import errno
# The sweep removes the junk name at once: a create racing it can fail with ENOENT (gVisor
# creates, then opens); try again until the descriptor is ours.
for _ in range(100):
    try:
        fd = os.open(req + "/held", os.O_WRONLY | os.O_CREAT, 0o600)
        break
    except FileNotFoundError:
        time.sleep(0.01)
t = time.time()
while "held" in os.listdir(req) and time.time() - t < 20: time.sleep(0.01)
swept = "held" not in os.listdir(req)
chunk = b"\0" * (1024 * 1024)
written, err = 0, "none"
try:
    while written < 64 * 1024 * 1024: written += os.write(fd, chunk)
except OSError as e:
    err = errno.errorcode.get(e.errno, str(e.errno))
print("swept=%s written=%d err=%s" % (swept, written, err), flush=True)
open("/workspace/.written", "w").close()
while not os.path.exists("/workspace/.checked"): time.sleep(0.01)
os.close(fd)
# gVisor keeps the file (and its host descriptor) cached until a lookup shows it is gone.
os.path.exists(req + "/held")
"#;
    // Space comes back once the Sentry lets go of the closed file: ask until it did.
    let ask = "cd /workspace; for i in $(seq 50); do out=$(lazaret-escalate -- pwd) && break; \
               sleep 0.2; done; echo \"$out\"; echo rc=$?; echo tries=$i";
    let script = format!("cat > /tmp/h.py <<'EOF'\n{PY}\n{held}\nEOF\npython3 /tmp/h.py && {ask}");
    let child = ws.spawn(&["sh", "-c", &script]);
    let written = support::wait_for(Duration::from_secs(120), || {
        ws.path.join(".written").exists().then_some(())
    });
    // While the sandbox still holds the file: what the host holds of it, and where.
    let holders = held_open("held");
    let runtime_dev = std::fs::metadata(&ws.dev.runtime_dir).map(|m| m.dev()).ok();
    let tmpfs_used = ns_req(&ws)
        .and_then(|p| nix::sys::statfs::statfs(&p).ok())
        .map(|st| (st.blocks() - st.blocks_free()) * st.block_size() as u64);
    let (entries, bytes) = usage(&host_req(&ws));
    ws.host_sh("touch .checked");
    let r = support::finish(child);
    eprintln!(
        "held-open write: {} | host holds {holders:?} (runtime dir on dev {runtime_dev:?}); tmpfs used {tmpfs_used:?}",
        r.stdout.lines().next().unwrap_or("")
    );
    assert!(written.is_some(), "the sandbox did not get to write: {r:?}");
    assert_eq!(r.code, Some(0), "{r:?}");
    let line = r.stdout.lines().next().unwrap_or("");
    assert!(
        line.starts_with("swept=True "),
        "the sweep did not remove the name: {r:?}"
    );
    let n: u64 = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("written="))
        .and_then(|w| w.parse().ok())
        .unwrap_or(u64::MAX);
    // Written into a file the coordinator kept emptying (all 64 MiB, or until it stopped
    // keeping it and the tmpfs filled): what the host holds is checked below.
    let stopped = line.ends_with("err=ENOSPC") && n >= REQ_FS_BYTES / 2;
    let emptied = line.ends_with("err=none") && n == 64 * 1024 * 1024;
    assert!(stopped || emptied, "{line}");
    assert!(
        holders.iter().all(|(_, _, len, _)| *len <= REQ_FS_BYTES),
        "the host holds more than the cap: {holders:?}"
    );
    assert!(
        holders.iter().all(|(_, _, _, d)| Some(*d) != runtime_dev),
        "the held file is on the runtime dir's file system: {holders:?}"
    );
    assert!(
        tmpfs_used.is_some_and(|u| u <= REQ_FS_BYTES),
        "the request dir's tmpfs was not found in podman's namespace while the Domain ran"
    );
    assert_eq!(
        (entries, bytes),
        (0, 0),
        "the host dir under the tmpfs was written"
    );
    assert_pwd_answered(&ws, &r);
    ws.assert_nothing_left();
}

/// Writes 3 000 small files into the request dir, 50 at a time, each closed and left for the
/// sweep to remove — what a long session's escalations do, or a sandbox that wants its own
/// request dir's file system exhausted. runsc keeps files the host removed open in its dentry
/// cache (about a thousand per mount, each pinning an inode and a page of the tmpfs), so a
/// tmpfs sized below that cache would refuse new requests after a few hundred (seen with 256
/// inodes: 745 of 1 000 creations failed with ENOSPC). The request dir's size leaves room for
/// the cache: no creation is refused for space, and escalations answer.
#[test]
fn files_removed_by_the_sweep_but_cached_by_runsc_do_not_exhaust_the_request_dir() {
    let dev = Dev::get();
    let ws = workspace(&dev, "mbx-cached");
    let script = r#"
import errno
fails = {}
for b in range(60):
    for i in range(50):
        try:
            with open(req + "/f%d_%d" % (b, i), "wb") as f: f.write(b"x" * 4096)
        except OSError as e:
            k = errno.errorcode.get(e.errno, str(e.errno))
            fails[k] = fails.get(k, 0) + 1
    wait_empty(10)
st = os.statvfs(req)
print("fails=%s free_blocks=%d free_inodes=%d" % (sorted(fails.items()), st.f_bfree, st.f_ffree))
"#;
    let r = python_then(&ws, script, PWD_CHECK);
    eprintln!("cached files: {}", r.stdout.lines().next().unwrap_or(""));
    assert_eq!(r.code, Some(0), "{r:?}");
    // ENOENT is the sweep removing a file between its creation and its close (it is junk).
    assert!(
        !r.stdout.contains("ENOSPC"),
        "creations were refused: {r:?}"
    );
    assert!(r.stdout.starts_with("fails="), "{r:?}");
    assert_pwd_answered(&ws, &r);
    ws.assert_nothing_left();
}

/// Writes 500 record-shaped files of garbage JSON at once, more than the record cap, hoping
/// the coordinator queues them all (memory, log) or starves real requests. They are refused
/// and removed; the request dir empties and a real request answers.
#[test]
fn a_flood_of_record_shaped_garbage_is_refused_and_real_requests_answer() {
    let dev = Dev::get();
    let ws = workspace(&dev, "mbx-garbage");
    let script = r#"
for i in range(500): attempt(put, "%032x.json" % (i + 1000), b'{"v":1,"garbage":true}')
took, left = wait_empty(20)
print("left=%d" % len(left))
"#;
    let r = python_then(&ws, script, PWD_CHECK);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.contains("left=0"), "{r:?}");
    assert_pwd_answered(&ws, &r);
    ws.assert_nothing_left();
}

/// Leaves temporary files `.<id>.tmp` (the client's own naming) that are never renamed into
/// place, hoping they are kept forever as "in flight". They are removed after the grace time.
#[test]
fn temporary_files_never_renamed_are_removed_after_the_grace_time() {
    let dev = Dev::get();
    let ws = workspace(&dev, "mbx-tmp");
    let script = r#"
for i in range(50):
    with open(req + "/.%032x.tmp" % i, "wb") as f: f.write(b"{}")
time.sleep(1)
print("kept_at_1s=%d" % len(os.listdir(req)))
took, left = wait_empty(20)
print("left=%d after %.1f s" % (len(left), took + 1))
"#;
    let r = python_then(&ws, script, PWD_CHECK);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout.contains("kept_at_1s=50"),
        "young temporaries must stay: {r:?}"
    );
    assert!(r.stdout.contains("left=0"), "{r:?}");
    assert_pwd_answered(&ws, &r);
    ws.assert_nothing_left();
}

/// Sends one valid signed request with a visible host effect, keeps a copy of the record and
/// puts it back — at once, after the original was taken, and after its result came — to have
/// the host command run again without asking. It runs exactly once; the copies are logged as
/// replays and get no result.
#[test]
fn a_replayed_request_runs_once_even_after_its_original_was_removed() {
    let dev = Dev::get();
    let ws = workspace(&dev, "mbx-replay");
    let rid = format!("{:08x}{:024x}", std::process::id(), 77);
    let script = format!(
        r#"
rid = "{rid}"
data = signed(["sh", "-c", "echo ran >> ran.log"], rid)
put(rid + ".json", data)
put(rid + ".json", data)
while os.path.exists(req + "/" + rid + ".json"): time.sleep(0.002)
put(rid + ".json", data)
for i in range(2000):
    if os.path.exists(res + "/" + rid + ".json"): break
    time.sleep(0.01)
print("result=%s" % os.path.exists(res + "/" + rid + ".json"))
put(rid + ".json", data)
time.sleep(1)
put(rid + ".json", data)
took, left = wait_empty(10)
time.sleep(1)
print("left=%d" % len(left))
"#
    );
    let r = python_then(&ws, &script, "true");
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout.contains("result=True") && r.stdout.contains("left=0"),
        "{r:?}"
    );
    let ran = std::fs::read_to_string(ws.path.join("ran.log")).unwrap_or_default();
    assert_eq!(
        ran,
        "ran\n",
        "the host command ran {} times",
        ran.lines().count()
    );
    let log = dev.home.join(".local/state/lazaret/lazaret.log");
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let replays = text
        .lines()
        .filter(|l| l.contains(&rid) && l.contains("replayed"))
        .count();
    assert!(
        replays >= 2,
        "replays were not refused as such ({replays} logged)"
    );
    ws.assert_nothing_left();
}

/// Re-points the client at a mailbox the attacker controls (as a root process inside could, by
/// moving `/run/lazaret` aside; here with `LAZARET_MAILBOX`) and answers the client's pending
/// request with a forged result — "completed", exit 0, chosen output — written by a process
/// that does not hold the session's anchor. The client refuses it: no forged output, its
/// client-error status, a message saying why.
#[test]
fn a_forged_result_is_rejected_by_the_client() {
    let dev = Dev::get();
    let ws = workspace(&dev, "mbx-forge");
    let forger = r#"
import json, os, time, base64
fake = "/tmp/fake"
while True:
    names = [n for n in os.listdir(fake + "/req") if n.endswith(".json")]
    if names: break
    time.sleep(0.01)
rid = names[0][:-5]
r = {"v": 1, "request_id": rid, "outcome": "completed", "exit_code": 0,
     "stdout": base64.b64encode(b"FORGED-OUTPUT\n").decode(), "stderr": "", "truncated": False,
     "message": "", "ran_argv": None, "sig": "0" * 64}
with open(fake + "/res/.t", "w") as f: json.dump(r, f)
os.rename(fake + "/res/.t", fake + "/res/" + rid + ".json")
"#;
    let script = format!(
        "mkdir -p /tmp/fake/req /tmp/fake/res; cat > /tmp/forge.py <<'EOF'\n{forger}\nEOF\n\
         env -u LAZARET_SESSION_ANCHOR python3 /tmp/forge.py & \
         LAZARET_MAILBOX=/tmp/fake lazaret-escalate --timeout 5 -- pwd; echo rc=$?; wait"
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert!(
        !r.stdout.contains("FORGED-OUTPUT"),
        "the forged result was shown: {r:?}"
    );
    assert!(r.stdout.contains("rc=244"), "{r:?}");
    assert!(
        r.stderr.contains("not a result from the coordinator"),
        "{r:?}"
    );
    ws.assert_nothing_left();
}

/// Reads `LAZARET_DOMAIN` and hashes guesses of the host workspace path — the real one among
/// them — the way Domain IDs used to be derived (unkeyed SHA-256 of profile and path), to
/// confirm where the workspace lives on the host. No guess matches: the ID is keyed with the
/// developer's Domain Key.
#[test]
fn the_domain_id_inside_cannot_confirm_guesses_of_the_host_path() {
    let dev = Dev::get();
    let ws = workspace(&dev, "mbx-domain");
    let r = ws.run(&["sh", "-c", "echo $LAZARET_DOMAIN"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let inside = r.stdout.trim().to_owned();
    assert_eq!(
        inside,
        ws.domain.as_str(),
        "the sandbox sees the Domain's ID"
    );
    let guesses = [
        ws.path.clone(),
        ws.path.parent().map(Path::to_path_buf).unwrap_or_default(),
        dev.home.join("project"),
        PathBuf::from("/workspace"),
    ];
    for profile in ["mbx", "shell", "default"] {
        for g in &guesses {
            assert_ne!(
                DomainId::derive(profile, g).as_str(),
                inside,
                "the Domain ID confirms the guess {profile} {}",
                g.display()
            );
        }
    }
    ws.assert_nothing_left();
}

/// Searches the sandbox for the developer's Domain Key — by file name across the whole file
/// system, by its value in every environment — to derive Domain IDs of guessed paths itself.
/// It is nowhere to be found.
#[test]
fn the_domain_key_is_not_visible_in_the_sandbox() {
    let dev = Dev::get();
    let ws = workspace(&dev, "mbx-key");
    let key = dev.domain_key();
    let hex: String = key.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
    let script = format!(
        "find / -path /proc -prune -o -name 'domain-id.key' -print 2>/dev/null; \
         echo found-by-name-done; \
         cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c -i '{hex}'; \
         grep -r -l -F '{hex}' /run /workspace /tmp /root 2>/dev/null; echo done"
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(
        r.stdout, "found-by-name-done\n0\ndone\n",
        "the Domain Key is visible inside: {r:?}"
    );
    ws.assert_nothing_left();
}

/// Not an attack but its price: keying the Domain ID must not cost the developer the state of
/// Domains created before (persistent tooling, Ignored Workspace State). A Domain Root named
/// by the unkeyed ID is taken over under the keyed one, its content intact, its metadata
/// rewritten.
#[test]
fn a_domain_root_of_the_unkeyed_id_is_taken_over_with_its_state() {
    let dev = Dev::get();
    let ws = workspace(&dev, "mbx-legacy");
    let old = DomainId::derive("mbx", &ws.path);
    let root = ws.domain_root();
    let old_root = root.with_file_name(old.as_str());
    ws.host_sh(&format!(
        "umask 077 && mkdir -p '{o}/ignored' && echo kept > '{o}/ignored/marker' && \
         printf '{{\"domain_id\": \"{id}\", \"profile\": \"mbx\", \"workspace\": \"{w}\"}}\\n' > '{o}/domain.json'",
        o = old_root.display(),
        id = old,
        w = ws.path.display()
    ));
    let r = ws.run(&["true"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(!old_root.exists(), "the old Domain Root is still there");
    assert_eq!(
        std::fs::read_to_string(root.join("ignored/marker")).unwrap_or_default(),
        "kept\n"
    );
    let meta = std::fs::read_to_string(root.join("domain.json")).unwrap_or_default();
    assert!(meta.contains(ws.domain.as_str()), "{meta}");
    let list = ws.lazaret(&["state", "verify", "--domain", ws.domain.as_str()]);
    assert_eq!(list.code, Some(0), "{list:?}");
    ws.assert_nothing_left();
}
