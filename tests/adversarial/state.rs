//! Adversarial scenarios: state (SR-13, SR-14; see main.rs). The agent plants hostile entries —
//! symlinks to the developer's secrets (absolute and `../..` chains), FIFOs, sockets, device
//! nodes, hard links, huge sparse files, terminal escapes in names — in the trees the host later
//! reads: State Anchor upper dirs (`/usr`, `/etc`, `/opt`, `/root`, `/var`) and Ignored
//! Workspace State. Then the developer runs `lazaret state list | inspect | verify | reset` and
//! restarts the Domain. Nothing outside may be read, followed, changed or removed; no command
//! may hang on a FIFO; sizes stay sane; names reach the terminal escaped.

use crate::support::anchors::upper;
use crate::support::{lazaret_bin, Dev, Run, TestWorkspace};
use serde_json::Value;
use std::process::Stdio;

/// `lazaret ARGS` for this workspace, killed after 120 s (a FIFO that blocks the host shows as
/// exit 124).
fn timed(ws: &TestWorkspace, args: &[&str]) -> Run {
    let out = ws
        .dev
        .command("timeout")
        .args(["-s", "KILL", "120", "env"])
        .args(ws.env_args())
        .arg(lazaret_bin())
        .args(args)
        .current_dir(&ws.path)
        .stdin(Stdio::null())
        .output()
        .expect("running lazaret");
    Run::from(out)
}

fn json(run: &Run) -> Value {
    assert_eq!(run.code, Some(0), "{run:?}");
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

/// Every change `lazaret state inspect --json` lists, over all anchors.
fn changes(v: &Value) -> Vec<Value> {
    v["anchors"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|a| a["changes"].as_array().cloned().unwrap_or_default())
        .collect()
}

fn change<'a>(all: &'a [Value], path: &str) -> &'a Value {
    all.iter()
        .find(|c| c["path"] == path)
        .unwrap_or_else(|| panic!("{path} not listed: {all:#?}"))
}

/// This workspace's Domain in `lazaret state list --json`.
fn listed(ws: &TestWorkspace) -> Value {
    let v = json(&timed(ws, &["state", "list", "--json"]));
    v["domains"]
        .as_array()
        .and_then(|a| a.iter().find(|d| d["domain_id"] == ws.domain.as_str()))
        .cloned()
        .unwrap_or_else(|| panic!("the Domain is not listed: {v}"))
}

/// A canary directory of the developer's, outside every tree the sandbox sees:
/// `<home>/.ssh-lzt-<pid>-<name>` holding `id_canary` and `keys/inner`.
struct Canary {
    dev: Dev,
    dir: String,
}

impl Canary {
    fn plant(dev: &Dev, name: &str) -> Canary {
        let dir = format!(
            "{}/.ssh-lzt-{}-{name}",
            dev.home.display(),
            std::process::id()
        );
        let out = dev.sh(&format!(
            "set -e; mkdir -p '{dir}/keys'; echo canary-secret > '{dir}/id_canary'; \
             echo inner > '{dir}/keys/inner'; chmod 600 '{dir}/id_canary'"
        ));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Canary {
            dev: dev.clone(),
            dir,
        }
    }

    /// Contents, modes and names, to compare before and after.
    fn snapshot(&self) -> String {
        let out = self.dev.sh(&format!(
            "cd '{}' && find . -printf '%p %m %s\\n' | sort && cat id_canary keys/inner",
            self.dir
        ));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Canary {
    fn drop(&mut self) {
        let _ = self.dev.sh(&format!("rm -rf '{}'", self.dir));
    }
}

/// Attack: plant in `/opt` a symlink to a host file and one to a host directory (absolute host
/// paths), a read-only directory, and a file of another uid, hoping `lazaret state reset`
/// removes through the links or stops half-way. Expected: the reset succeeds, the host file and
/// directory behind the links are intact, and the next launch finds `/opt` empty.
#[test]
fn a_symlink_planted_in_the_upper_dir_is_not_followed_by_reset() {
    let dev = Dev::get();
    let ws = dev.workspace("state-link");
    let canary_dir = format!("{}.canary", ws.path.display());
    dev.sh(&format!(
        "mkdir -p '{canary_dir}/tree' && echo precious > '{canary_dir}/file' && echo deep > '{canary_dir}/tree/inner'"
    ));
    let r = ws.run(&[
        "sh",
        "-c",
        &format!(
            "ln -s '{canary_dir}/file' /opt/file-link && ln -s '{canary_dir}/tree' /opt/dir-link \
             && mkdir -p /opt/ro && touch /opt/ro/f && chmod 500 /opt/ro \
             && touch /opt/other-uid && chown 1234:1234 /opt/other-uid"
        ),
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let up = upper(&ws, "/opt");
    assert!(dev
        .sh(&format!("test -L '{}/dir-link'", up.display()))
        .status
        .success());
    let done = ws.lazaret(&["state", "reset", "--all", "--yes"]);
    assert_eq!(done.code, Some(0), "{done:?}");
    let left = dev.sh(&format!(
        "cat '{canary_dir}/file' '{canary_dir}/tree/inner'"
    ));
    assert_eq!(String::from_utf8_lossy(&left.stdout), "precious\ndeep\n");
    let r = ws.run(&["sh", "-c", "ls -A /opt | wc -l"]);
    assert_eq!(r.stdout.trim(), "0", "{r:?}");
    dev.sh(&format!("rm -rf '{canary_dir}'"));
    ws.assert_nothing_left();
}

/// `../` enough times to climb from any host tree of the Domain to `/`.
const TO_ROOT: &str = "../../../../../../../../../../../../../../../../";

/// Attack: in the State Anchors, plant symlinks to the developer's secrets — `/opt/ssh` to the
/// canary directory by absolute host path, `/opt/up` to it through a `../../..` chain that
/// climbs out of the upper dir on the host, `/etc/id` to the private key itself, a link to a
/// link (`/opt/d/x -> ../up`) — hoping `lazaret state list | inspect | verify` descend into
/// them (disclosing names and sizes) or `reset` removes through them.
/// Expected: every command finishes; the links are reported as symlinks with their raw target
/// and nothing below them is listed; the canary is unchanged after all of it and a reset; the
/// next launch finds /opt empty.
#[test]
fn symlinks_to_host_secrets_in_anchors_are_reported_never_followed() {
    let dev = Dev::get();
    let ws = dev.workspace("state-canary");
    let canary = Canary::plant(&dev, "anchors");
    let before = canary.snapshot();
    let dir = &canary.dir;
    let chain = format!("{TO_ROOT}{}", dir.trim_start_matches('/'));
    let r = ws.run(&[
        "sh",
        "-c",
        &format!(
            "set -e; ln -s '{dir}' /opt/ssh; ln -s '{chain}' /opt/up; ln -s '{dir}/id_canary' /etc/id; \
             mkdir -p /opt/d; ln -s ../up /opt/d/x; ln -s /opt/ssh /root/.ssh-link"
        ),
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    // Control: on the host the chain does lead to the canary.
    let up = upper(&ws, "/opt");
    let via = dev.sh(&format!("cat '{}/up/id_canary'", up.display()));
    assert_eq!(String::from_utf8_lossy(&via.stdout), "canary-secret\n");

    let d = listed(&ws);
    assert_eq!(d["active"], false, "{d}");
    let v = json(&timed(&ws, &["state", "inspect", "--json"]));
    let all = changes(&v);
    for (path, target) in [
        ("/opt/ssh", dir.clone()),
        ("/opt/up", chain.clone()),
        ("/etc/id", format!("{dir}/id_canary")),
        ("/opt/d/x", "../up".to_owned()),
    ] {
        let c = change(&all, path);
        assert_eq!(c["kind"], "symlink", "{c}");
        assert_eq!(c["link_target"], target.as_str(), "{c}");
        assert_eq!(c["size"], target.len(), "{c}");
    }
    for c in &all {
        let p = c["path"].as_str().unwrap_or("");
        assert!(
            !p.starts_with("/opt/ssh/") && !p.starts_with("/opt/up/") && !p.contains("keys"),
            "listed through a link: {p}"
        );
    }
    let human = timed(&ws, &["state", "inspect"]);
    assert_eq!(human.code, Some(0), "{human:?}");
    assert!(human.stdout.contains("/opt/ssh -> "), "{human:?}");
    let verify = json(&timed(&ws, &["state", "verify", "--json"]));
    assert_eq!(verify["ok"], true, "{verify}");
    for out in [&human.stdout, &v.to_string(), &d.to_string()] {
        assert!(
            !out.contains("canary-secret") && !out.contains("inner"),
            "{out}"
        );
    }
    assert_eq!(canary.snapshot(), before, "the canary changed");
    let reset = timed(&ws, &["state", "reset", "--all", "--yes"]);
    assert_eq!(reset.code, Some(0), "{reset:?}");
    assert_eq!(canary.snapshot(), before, "the reset changed the canary");
    let r = ws.run(&[
        "sh",
        "-c",
        "ls -A /opt | wc -l; test -e /etc/id || echo id-gone",
    ]);
    assert_eq!(r.stdout, "0\nid-gone\n", "{r:?}");
    ws.assert_nothing_left();
}

/// Attack: plant FIFOs and a unix socket in the anchors (`/opt/fifo`, `/etc/fifo`,
/// `/opt/sock`) and a device node (`/opt/mem`, 1:1), so that a host command opening them blocks
/// forever or reads a device. Measured: gVisor keeps FIFOs and sockets made on gofer-backed
/// mounts inside the Sentry — they never reach the host's upper dir — and `mknod` is refused;
/// so, standing in for a runtime that would write them through, the test also plants FIFOs and
/// a socket straight into the host's upper dirs.
/// Expected: none of the sandbox's special files exists on the host; with the planted ones,
/// `state list | inspect | verify`, a Domain restart and `reset` all finish (none killed by the
/// 120 s timeout); inspect reports them as `other`; after the reset they are gone.
#[test]
fn fifos_sockets_and_device_nodes_in_anchors_do_not_hang_the_host() {
    let dev = Dev::get();
    let ws = dev.workspace("state-fifo");
    let r = ws.run(&[
        "sh",
        "-c",
        "set -e; mkfifo /opt/fifo /etc/fifo; \
         python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"/opt/sock\")'; \
         mknod /opt/mem c 1 1 2>/dev/null && echo mknod=made || echo mknod=refused",
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout, "mknod=refused\n", "{r:?}");
    let (opt, etc) = (upper(&ws, "/opt"), upper(&ws, "/etc"));
    for path in [
        opt.join("fifo"),
        opt.join("sock"),
        opt.join("mem"),
        etc.join("fifo"),
    ] {
        assert!(
            std::fs::symlink_metadata(&path).is_err(),
            "{} reached the host",
            path.display()
        );
    }
    let planted = dev.sh(&format!(
        "set -e; mkfifo '{o}/hostfifo' '{e}/hostfifo'; \
         python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"{o}/hostsock\")'",
        o = opt.display(),
        e = etc.display()
    ));
    assert!(
        planted.status.success(),
        "{}",
        String::from_utf8_lossy(&planted.stderr)
    );
    listed(&ws);
    let v = json(&timed(&ws, &["state", "inspect", "--json"]));
    let all = changes(&v);
    for path in ["/opt/hostfifo", "/etc/hostfifo", "/opt/hostsock"] {
        let c = change(&all, path);
        assert_eq!(
            (&c["kind"], &c["change"]),
            (&"other".into(), &"added".into()),
            "{c}"
        );
    }
    let human = timed(&ws, &["state", "inspect"]);
    assert_eq!(human.code, Some(0), "{human:?}");
    let verify = json(&timed(&ws, &["state", "verify", "--json"]));
    assert_eq!(verify["ok"], true, "{verify}");
    // A Domain restart mounts the anchors with the FIFOs in them.
    let again = timed(
        &ws,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "test -p /opt/hostfifo && test -p /etc/hostfifo && echo fifos",
        ],
    );
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(again.stdout, "fifos\n", "{again:?}");
    let reset = timed(&ws, &["state", "reset", "--all", "--yes"]);
    assert_eq!(reset.code, Some(0), "{reset:?}");
    let r = ws.run(&[
        "sh",
        "-c",
        "ls -A /opt | wc -l; test -e /etc/hostfifo || echo gone",
    ]);
    assert_eq!(r.stdout, "0\ngone\n", "{r:?}");
    ws.assert_nothing_left();
}

/// Attack: fill Ignored Workspace State (`node_modules/`) with a FIFO, a unix socket, a
/// symlink to the developer's secrets by absolute path and through a `../..` chain, and a
/// 1 TiB sparse file, then let the developer list state and restart the Domain — hoping the
/// host blocks on the FIFO, follows a link when it plans the next launch's mounts, or counts
/// the sparse file as a terabyte. (gVisor keeps the FIFO and socket inside the Sentry; the test
/// plants a FIFO in the host's storage as a stand-in.)
/// Expected: `state list` finishes with a small allocated size; the restart finds the entries
/// as they were (the links still links, the planted FIFO a FIFO); the canary is unchanged; the
/// host workspace's own `node_modules/` stays empty.
#[test]
fn fifos_links_and_sparse_files_in_ignored_state_survive_a_restart_harmlessly() {
    let dev = Dev::get();
    let ws = dev.workspace("ignored-hostile");
    ws.host_sh(
        "printf 'node_modules/\\n' > .gitignore && git add .gitignore && \
         git -c user.name=t -c user.email=t@l commit -qm ignore && mkdir node_modules",
    );
    let canary = Canary::plant(&dev, "ignored");
    let before = canary.snapshot();
    let dir = &canary.dir;
    let r = ws.run(&[
        "sh",
        "-c",
        &format!(
            "set -e; cd /workspace/node_modules; mkfifo fifo; ln -s '{dir}' ssh; \
             ln -s '{TO_ROOT}{rel}' up; truncate -s 1T huge; mkdir pkg; echo x > pkg/index.js; \
             python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"sock\")'",
            rel = dir.trim_start_matches('/')
        ),
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let storage = ws.domain_root().join("ignored/node_modules");
    let planted = dev.sh(&format!("mkfifo '{}/hostfifo'", storage.display()));
    assert!(
        planted.status.success(),
        "{}",
        String::from_utf8_lossy(&planted.stderr)
    );
    let d = listed(&ws);
    let size = &d["ignored_state"];
    assert!(
        size["bytes"].as_u64().unwrap_or(u64::MAX) < 16 << 20,
        "the sparse file counted at its length: {size}"
    );
    assert!(size["files"].as_u64().unwrap_or(0) >= 5, "{size}");
    let again = timed(
        &ws,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "cd /workspace/node_modules && LC_ALL=C ls -A | tr '\\n' ' '; echo; test -p hostfifo && test -L ssh && test -L up && echo kept; \
             stat -c %s huge; cat ssh/id_canary 2>/dev/null || echo unreadable",
        ],
    );
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(
        again.stdout, "hostfifo huge pkg ssh up \nkept\n1099511627776\nunreadable\n",
        "{again:?}"
    );
    assert_eq!(canary.snapshot(), before, "the canary changed");
    assert_eq!(
        ws.host_sh("ls -A node_modules"),
        "",
        "host node_modules changed"
    );
    ws.assert_nothing_left();
}

/// Attack: a 1 TiB sparse file (`truncate -s 1T /opt/huge`) to make `state list` report — or
/// read — a terabyte, and hard links: one inside the anchor (`/opt/b` to `/opt/a`) and two
/// across into other trees (`/workspace/.git/HEAD`, `/etc/passwd` of another anchor), so that a
/// later reset of `/opt` truncates or removes a file elsewhere.
/// Expected: the cross-tree links fail (EXDEV); list reports allocated bytes (small); inspect
/// reports the sparse file's length without reading it, both links of the pair; resetting
/// `/opt` leaves the workspace's `.git/HEAD` and `/etc` untouched.
#[test]
fn sparse_files_and_hard_links_in_an_anchor_are_sized_and_reset_sanely() {
    let dev = Dev::get();
    let ws = dev.workspace("state-sparse");
    let head = ws.host_sh("cat .git/HEAD");
    let r = ws.run(&[
        "sh",
        "-c",
        "truncate -s 1T /opt/huge && echo data > /opt/a && ln /opt/a /opt/b && echo etc > /etc/lzt-mine; \
         ln /workspace/.git/HEAD /opt/head 2>/dev/null && echo head=linked || echo head=refused; \
         ln /etc/lzt-mine /opt/mine 2>/dev/null && echo etc=linked || echo etc=refused",
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout, "head=refused\netc=refused\n", "{r:?}");
    let d = listed(&ws);
    let opt = d["anchors"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["container"] == "/opt"))
        .cloned()
        .unwrap_or_else(|| panic!("no /opt anchor: {d}"));
    assert!(
        opt["size"]["bytes"].as_u64().unwrap_or(u64::MAX) < 16 << 20,
        "{opt}"
    );
    let started = std::time::Instant::now();
    let v = json(&timed(&ws, &["state", "inspect", "--json"]));
    assert!(
        started.elapsed().as_secs() < 60,
        "inspect took {:?}",
        started.elapsed()
    );
    let all = changes(&v);
    assert_eq!(change(&all, "/opt/huge")["size"], 1u64 << 40);
    assert_eq!(change(&all, "/opt/a")["size"], 5);
    assert_eq!(change(&all, "/opt/b")["size"], 5);
    let reset = timed(&ws, &["state", "reset", "--path", "/opt", "--yes"]);
    assert_eq!(reset.code, Some(0), "{reset:?}");
    assert_eq!(ws.host_sh("cat .git/HEAD"), head);
    let r = ws.run(&["sh", "-c", "ls -A /opt | wc -l; cat /etc/lzt-mine"]);
    assert_eq!(r.stdout, "0\netc\n", "{r:?}");
    ws.assert_nothing_left();
}

/// Attack: name files in an anchor with terminal escapes — OSC 52 (write the developer's
/// clipboard), `ESC[2J ESC[H` (clear the screen and draw a fake listing), a bidi override
/// (`U+202E`), a newline (a fake second line), invalid UTF-8 — and give a symlink an OSC 0
/// target (retitle the window), so that `lazaret state inspect` writes them to the host
/// terminal. Expected: the human output holds no control or bidi character and shows each
/// escaped (`\u{1b}`, `\n`, `\u{202e}`); `--json` is valid JSON whose strings hold the raw
/// names (JSON-escaped), invalid bytes as U+FFFD.
#[test]
fn escapes_in_planted_names_are_shown_escaped_by_state_inspect() {
    let dev = Dev::get();
    let ws = dev.workspace("state-escapes");
    let script = r#"import os
for name in [b"\x1b]52;c;ZXZpbA==\x07", b"\x1b[2J\x1b[Hfake", "\u202egnp.exe".encode(), b"line\nbreak", b"bad-\xff\xfe"]:
    open(b"/opt/" + name, "w").close()
os.symlink("\x1b]0;pwned\x07", "/opt/title-link")
"#;
    let path = ws.path.join("names.py");
    std::fs::write(&path, script).expect("writing the script");
    let _ = nix::unistd::chown(&path, Some(nix::unistd::Uid::from_raw(dev.uid)), None);
    let r = ws.run(&["python3", "/workspace/names.py"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let human = timed(&ws, &["state", "inspect"]);
    assert_eq!(human.code, Some(0), "{human:?}");
    let bad = |c: char| {
        (c.is_control() && c != '\n')
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    };
    assert!(
        !human.stdout.chars().any(bad),
        "a control character reached the terminal: {:?}",
        human.stdout
    );
    for shown in [
        "/opt/\\u{1b}]52;c;ZXZpbA==\\u{7}",
        "/opt/\\u{1b}[2J\\u{1b}[Hfake",
        "/opt/\\u{202e}gnp.exe",
        "/opt/line\\nbreak",
        "/opt/title-link -> \\u{1b}]0;pwned\\u{7}",
    ] {
        assert!(
            human.stdout.contains(shown),
            "{shown} not shown: {}",
            human.stdout
        );
    }
    let list = timed(&ws, &["state", "list"]);
    assert_eq!(list.code, Some(0), "{list:?}");
    assert!(!list.stdout.chars().any(bad), "{:?}", list.stdout);
    let v = json(&timed(&ws, &["state", "inspect", "--json"]));
    let all = changes(&v);
    change(&all, "/opt/\u{1b}]52;c;ZXZpbA==\u{7}");
    change(&all, "/opt/line\nbreak");
    change(&all, "/opt/bad-\u{fffd}\u{fffd}");
    assert_eq!(
        change(&all, "/opt/title-link")["link_target"],
        "\u{1b}]0;pwned\u{7}"
    );
    ws.assert_nothing_left();
}

/// Attack: create Git-ignored paths in the workspace as symlinks to the developer's secrets
/// (`evil.log -> <canary>/id_canary`, `keys.log -> <canary>`; `*.log` is ignored), so that the
/// next launch, planning Ignored Workspace State, follows them — mounting the host directory
/// into the sandbox or creating storage through them.
/// Expected: the next launch leaves them as they are — no mount over or through them, no
/// storage entry for them; inside, the links lead nowhere (the canary cannot be read); the
/// canary is unchanged.
#[test]
fn symlinked_ignored_workspace_paths_are_left_alone_by_the_next_launch() {
    let dev = Dev::get();
    let ws = dev.workspace("ignored-links");
    ws.host_sh(
        "printf '*.log\\n' > .gitignore && git add .gitignore && \
         git -c user.name=t -c user.email=t@l commit -qm ignore",
    );
    let canary = Canary::plant(&dev, "links");
    let before = canary.snapshot();
    let dir = &canary.dir;
    let r = ws.run(&[
        "sh",
        "-c",
        &format!(
            "ln -s '{dir}/id_canary' /workspace/evil.log && ln -s '{dir}' /workspace/keys.log"
        ),
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let next = timed(
        &ws,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "cat /workspace/evil.log 2>/dev/null || echo evil-unreadable; \
             ls /workspace/keys.log/ 2>/dev/null || echo keys-unreadable; \
             grep -c '\\.log' /proc/self/mountinfo || true",
        ],
    );
    assert_eq!(next.code, Some(0), "{next:?}");
    assert_eq!(
        next.stdout, "evil-unreadable\nkeys-unreadable\n0\n",
        "{next:?}"
    );
    for name in ["evil.log", "keys.log"] {
        assert!(
            std::fs::symlink_metadata(ws.domain_root().join("ignored").join(name)).is_err(),
            "storage made for {name}"
        );
    }
    assert_eq!(canary.snapshot(), before, "the canary changed");
    ws.assert_nothing_left();
}

/// Attack: race the host's walk (Rust CVE-2022-21658 style). While a session runs, the agent
/// swaps a directory for a symlink to the developer's secrets in a tight loop — in Ignored
/// Workspace State (`node_modules/d`) and in the `/opt` anchor (`/opt/d`) — while the developer
/// runs `lazaret state list` (which works on a live Domain) and `state inspect`, hoping one walk
/// checks `d` as a directory and then descends through the symlink into 300 canary files.
/// Expected: the swap loop ran; no listing ever counts the canary's files or names one of them;
/// the canary is unchanged.
#[test]
fn swapping_a_directory_for_a_symlink_during_state_listing_leads_nowhere() {
    let dev = Dev::get();
    let ws = dev.workspace("state-race");
    ws.host_sh(
        "printf 'node_modules/\\n' > .gitignore && git add .gitignore && \
         git -c user.name=t -c user.email=t@l commit -qm ignore && mkdir node_modules",
    );
    let canary = Canary::plant(&dev, "race");
    let fill = dev.sh(&format!(
        "cd '{}/keys' && for i in $(seq 1 300); do echo x > lztc-$i; done",
        canary.dir
    ));
    assert!(fill.status.success());
    let before = canary.snapshot();
    let keys = format!("{}/keys", canary.dir);
    let script = format!(
        r#"import os, threading
stop = "/workspace/.go"
def race(top, counts):
    os.chdir(top)
    os.makedirs("d", exist_ok=True)
    for i in range(5):
        open("d/f%d" % i, "w").close()
    n = 0
    while not os.path.exists(stop):
        os.rename("d", "d.old"); os.symlink("{keys}", "d"); os.unlink("d"); os.rename("d.old", "d")
        n += 1
    counts.append(n)
counts = []
threads = [threading.Thread(target=race, args=(t, counts)) for t in ("/workspace/node_modules", "/opt")]
for t in threads:
    t.start()
open("/workspace/.racing", "w").close()
for t in threads:
    t.join()
print("swaps=%d" % min(counts))
"#
    );
    let path = ws.path.join("race.py");
    std::fs::write(&path, script).expect("writing the script");
    let _ = nix::unistd::chown(&path, Some(nix::unistd::Uid::from_raw(dev.uid)), None);
    let child = ws.spawn(&["python3", "/workspace/race.py"]);
    crate::support::wait_for(std::time::Duration::from_secs(60), || {
        ws.path.join(".racing").exists().then_some(())
    })
    .expect("the race starts");
    let mut inspected = Vec::new();
    for _ in 0..15 {
        let d = listed(&ws);
        let ignored = d["ignored_state"]["files"].as_u64().unwrap_or(u64::MAX);
        assert!(ignored < 100, "the walk went through the link: {d}");
        for a in d["anchors"].as_array().into_iter().flatten() {
            let files = a["size"]["files"].as_u64().unwrap_or(u64::MAX);
            assert!(files < 100, "the walk went through the link: {a}");
        }
        let inspect = timed(&ws, &["state", "inspect", "--json"]);
        assert!(
            !inspect.stdout.contains("lztc-"),
            "inspect listed the canary: {}",
            inspect.stdout
        );
        inspected.push(inspect.code);
    }
    ws.release();
    let r = crate::support::finish(child);
    assert_eq!(r.code, Some(0), "{r:?}");
    let swaps: u64 = r
        .stdout
        .trim()
        .strip_prefix("swaps=")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(swaps > 10, "the swap loop hardly ran: {r:?}");
    assert_eq!(canary.snapshot(), before, "the canary changed");
    eprintln!("swaps per tree: {swaps}; inspect exit codes while active: {inspected:?}");
    ws.assert_nothing_left();
}
