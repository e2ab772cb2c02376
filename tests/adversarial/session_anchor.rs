//! Session Anchors kept from other sessions (issue #31, SR-7): an agent in one session of a
//! Domain wants another session's anchor, to sign Host Escalation requests as that session (so
//! that they are shown on that session's terminal, where the developer trusts what they see).
//! Every process inside runs as root: until issue #31 the anchor was in every session process's
//! environment, and `/proc/*/environ` gave it away.

use crate::support::{finish, wait_for, Dev, HOLD};
use std::time::Duration;

/// Session 2 looks everywhere it can for a secret of session 1's: every process's environment
/// and command line, and every descriptor of every process it can reopen through
/// `/proc/PID/fd/N` (and by `MSG_PEEK` on what it opened); and it tries to trace the other
/// session's processes, whose memory holds the anchor. It prints the SHA-256 of every
/// 64-hex-digit token it found, how many processes of the other session it saw and how many it
/// could trace.
const SCAVENGE: &str = r#"
import hashlib, os, re, socket, sys
me = os.environ.get("LAZARET_SESSION", "")
tok = re.compile(rb"[0-9a-f]{64}")
found, others = set(), set()
def take(data):
    for t in tok.findall(data or b""):
        found.add(hashlib.sha256(t).hexdigest())
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        env = open("/proc/%s/environ" % pid, "rb").read()
    except OSError:
        env = b""
    m = re.search(rb"LAZARET_SESSION=([^\0]*)", env)
    if m and m.group(1).decode() != me:
        others.add(pid)
    take(env)
    try:
        take(open("/proc/%s/cmdline" % pid, "rb").read())
    except OSError:
        pass
    try:
        fds = os.listdir("/proc/%s/fd" % pid)
    except OSError:
        fds = []
    for fd in fds:
        path = "/proc/%s/fd/%s" % (pid, fd)
        try:
            f = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            try:
                take(os.pread(f, 4096, 0))
            except OSError:
                try:
                    take(socket.socket(fileno=os.dup(f)).recv(4096, socket.MSG_PEEK | socket.MSG_DONTWAIT))
                except OSError:
                    pass
        finally:
            os.close(f)
# Trace the other session's processes (their memory holds the anchor): PTRACE_SEIZE.
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
attached, why = 0, set()
for pid in others:
    if libc.ptrace(0x4206, int(pid), 0, 0) == 0:
        attached += 1
        libc.ptrace(17, int(pid), 0, 0)
    else:
        why.add(os.strerror(ctypes.get_errno()))
print("attached", attached)
print("refused", sorted(why))
print("others", len(others))
for h in sorted(found):
    print("token", h)
"#;

/// Session 1 proves it still holds its anchor — it peeks it from its socket (or, before issue
/// #31, reads it from its environment) and leaves its SHA-256 in the workspace — then waits.
/// Session 2 scavenges. None of the tokens it found may be session 1's anchor; and session 1's
/// processes were in its view.
#[test]
fn another_session_cannot_read_this_sessions_anchor() {
    let dev = Dev::get();
    let ws = dev.workspace("adv-session-anchor");
    let own = "import hashlib, os, socket\n\
               a = os.environ.get('LAZARET_SESSION_ANCHOR')\n\
               if a is None:\n\
               \x20   s = socket.socket(fileno=os.dup(int(os.environ['LAZARET_SESSION_ANCHOR_FD'])))\n\
               \x20   a = s.recv(256, socket.MSG_PEEK).decode().strip()\n\
               open('/workspace/s1.sha', 'w').write(hashlib.sha256(a.encode()).hexdigest())\n";
    let script = format!("python3 -c \"{own}\" && {HOLD}");
    let first = ws.spawn(&["sh", "-c", &script]);
    let theirs = wait_for(Duration::from_secs(90), || {
        std::fs::read_to_string(ws.path.join("s1.sha"))
            .ok()
            .filter(|s| s.len() == 64)
    })
    .expect("session 1 did not read its own anchor");
    let r = ws.run(&["python3", "-c", SCAVENGE]);
    eprintln!(
        "session 2 saw: {}",
        r.stdout
            .lines()
            .filter(|l| !l.starts_with("token "))
            .collect::<Vec<_>>()
            .join("; ")
    );
    ws.release();
    let first = finish(first);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(first.code, Some(0), "{first:?}");
    let others: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("others "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    assert!(
        others >= 1,
        "session 2 saw none of session 1's processes: {r:?}"
    );
    assert!(
        r.stdout.contains("attached 0\n"),
        "session 2 could trace session 1's processes: {r:?}"
    );
    let tokens: Vec<&str> = r
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("token "))
        .collect();
    assert!(
        !tokens.contains(&theirs.trim()),
        "session 2 found session 1's Session Anchor (among {} tokens)",
        tokens.len()
    );
    ws.wait_torn_down();
}
