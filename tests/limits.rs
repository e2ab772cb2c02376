//! Resource bounds of a profile on the real stack (issue #19): `pids`, `cpus`, `memory` and
//! `disk`, as this host (cgroup v1 hybrid, rootless, no delegation) enforces them — see
//! `docs/limits.md`. Every test is short and bounded: the fork bomb runs 8 s under `pids` and
//! `cpus`; the memory hog asks for 900 MiB at most.

mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{finish, wait_for, Dev, TestWorkspace};

/// Host pid of the sandbox's recorded process (the wrapper's PID namespace init), once running.
fn sandbox_init(ws: &TestWorkspace) -> Option<u32> {
    let out = ws
        .dev
        .command("podman")
        .args(["ps", "--format", "{{.ID}}", "--filter"])
        .arg(format!("label=lazaret.domain={}", ws.domain))
        .args(["--filter", "label=lazaret.role=sandbox"])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if id.is_empty() {
        return None;
    }
    let out = ws
        .dev
        .command("podman")
        .args(["inspect", "--format", "{{.State.Pid}}", &id])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .ok()
        .filter(|p| *p > 0)
}

fn cpus_allowed(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|v| v.trim().to_owned())
}

fn online_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A fork bomb inside, under `pids = 64` and `cpus = 1`: fork fails beyond the bound (a
/// counted spawn of 150 gets fewer than 64), the sandbox's host processes stay bounded and on
/// one CPU, and the host stays responsive (a trivial host command keeps starting quickly).
#[test]
fn a_fork_bomb_under_pids_and_cpus_is_contained_and_the_host_stays_responsive() {
    let dev = Dev::get();
    let ws = dev.workspace("limits-bomb").with_profile(
        "bounded",
        "[profiles.bounded]\nextends = \"shell\"\npids = 64\ncpus = 1\n",
    );
    let shown = ws.lazaret(&["profile", "show", "bounded"]);
    assert!(
        shown
            .stdout
            .lines()
            .any(|l| l.starts_with("limits:") && l.ends_with("pids 64, cpus 1")),
        "{shown:?}"
    );
    // Counted: perl's fork returns undef at the bound (no retry), the children are reaped.
    let script = support::fork_bomb_script(150, 30);
    let child = ws.spawn(&["bash", "-c", &script]);
    let started = Instant::now();
    let init =
        wait_for(Duration::from_secs(60), || sandbox_init(&ws)).expect("the sandbox did not start");

    // Sample while the session runs (bounded: the bomb is killed after 8 s): the host's
    // latency in a thread of its own, the sandbox's host processes here.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut latencies = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let t = Instant::now();
                let ok = Command::new("/bin/true")
                    .status()
                    .is_ok_and(|s| s.success());
                latencies.push(t.elapsed());
                assert!(ok, "/bin/true failed on the host");
                std::thread::sleep(Duration::from_millis(50));
            }
            latencies
        })
    };
    let mut most_processes = 0;
    let mut affinities = std::collections::BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Path::new(&format!("/proc/{init}")).exists() && Instant::now() < deadline {
        let procs = support::process_tree(init);
        most_processes = most_processes.max(procs.len());
        for p in procs.iter().skip(1) {
            if let Some(a) = cpus_allowed(*p) {
                affinities.insert(a);
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut latencies = sampler.join().expect("the latency sampler");
    let r = finish(child);
    let took = started.elapsed();
    assert!(r.stdout.contains("bomb-end"), "{r:?}");
    assert!(
        took > Duration::from_secs(8),
        "the bomb did not run its 8 s: {took:?}"
    );
    let spawned: usize = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("spawned "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count in {r:?}"));
    assert!(
        (5..64).contains(&spawned),
        "pids = 64 let {spawned} of 150 forks through"
    );
    // The sandbox's host processes: init, Sentry, Gofer, the ptrace stub of each address
    // space inside. Without a bound a fork bomb makes thousands.
    assert!(
        most_processes <= 64 + 16,
        "the sandbox had {most_processes} host processes"
    );
    if online_cpus() >= 2 {
        assert_eq!(
            affinities.len(),
            1,
            "the sandbox's processes ran on {affinities:?}"
        );
        let only = affinities.iter().next().cloned().unwrap_or_default();
        assert!(
            !only.contains('-') && !only.contains(','),
            "cpus = 1 bound the sandbox to {only:?}"
        );
    }
    latencies.sort();
    let p95 = latencies[latencies.len() * 95 / 100];
    let max = latencies[latencies.len() - 1];
    eprintln!(
        "fork bomb: {} samples in {took:?}, /bin/true p95 {p95:?} max {max:?}, \
         at most {most_processes} host processes, affinity {affinities:?}, spawned {spawned}",
        latencies.len()
    );
    assert!(latencies.len() >= 20, "only {} samples", latencies.len());
    assert!(
        p95 < Duration::from_millis(300) && max < Duration::from_secs(2),
        "the host became slow: /bin/true p95 {p95:?}, max {max:?}"
    );
    ws.wait_torn_down();
}

use std::path::Path;

/// A memory hog inside, under `memory = "512m"`: 200 MiB is fine; 900 MiB makes the wrapper
/// kill the whole sandbox (as a cgroup OOM kill of the Sentry would), so the command never
/// finishes, `lazaret run` says so (exit 125) and the Domain is torn down.
#[test]
fn a_memory_hog_beyond_memory_stops_the_sandbox() {
    let dev = Dev::get();
    let ws = dev.workspace("limits-memory").with_profile(
        "small",
        "[profiles.small]\nextends = \"shell\"\nmemory = \"512m\"\n",
    );
    let started = Instant::now();
    let r = ws.run(&[
        "sh",
        "-c",
        "perl -e '$x = \"a\" x (200 << 20); print \"small-ok\\n\"'; \
         perl -e '$x = \"a\" x (900 << 20); print \"big-ok\\n\"'; echo after-big",
    ]);
    let took = started.elapsed();
    eprintln!("memory hog: {r:?} in {took:?}");
    assert!(r.stdout.contains("small-ok"), "{r:?}");
    assert!(
        !r.stdout.contains("big-ok"),
        "the hog got its 900 MiB: {r:?}"
    );
    assert!(
        !r.stdout.contains("after-big"),
        "the sandbox survived: {r:?}"
    );
    // Lazaret's own failure (125), saying why — not runsc's status passed on as the command's.
    assert_eq!(r.code, Some(125), "{r:?}");
    assert!(
        r.stderr
            .contains("the Agent Sandbox stopped while the command ran: it went over the profile's memory limit (512 MiB)"),
        "{r:?}"
    );
    assert!(took < Duration::from_secs(120), "took {took:?}");
    ws.wait_torn_down();
}

/// `disk` is watched while the Domain runs: going over it is listed as the Domain's failure
/// (`lazaret ps`) and the `lazaret run` whose command ran meanwhile warns at its end; and it is
/// checked at start: over it, the starting `lazaret run` says so (and runs). Writes are not
/// stopped.
#[test]
fn a_domain_over_its_disk_bound_is_told_while_it_runs_and_at_start() {
    let dev = Dev::get();
    let ws = dev.workspace("limits-disk").with_profile(
        "capped",
        "[profiles.capped]\nextends = \"shell\"\ndisk = \"1m\"\n",
    );
    ws.host_sh("echo 'deps/' > .gitignore && git add .gitignore && git -c user.name=t -c user.email=t@localhost commit -qm ignore && mkdir -p deps");
    // The coordinator looks every 300 ms here (30 s at least otherwise).
    let running = ws.spawn_in(
        "",
        &["LAZARET_TEST_DISK_LOOK_MS=300"],
        &[
            "sh",
            "-c",
            &format!(
                "head -c 3000000 /dev/zero > /workspace/deps/blob && echo wrote; {}",
                support::HOLD
            ),
        ],
        false,
    );
    let listed = support::wait_for(Duration::from_secs(60), || {
        let ps = ws.lazaret(&["ps"]);
        ps.stdout
            .lines()
            .any(|l| {
                l.contains("failure: this Domain's state takes")
                    && l.contains("MiB, over the profile's disk = 1 MiB")
            })
            .then_some(ps)
    });
    ws.release();
    let r = support::finish(running);
    assert!(listed.is_some(), "`lazaret ps` listed no disk failure");
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.contains("wrote"), "{r:?}");
    assert!(
        r.stderr.contains(
            "warning: the Domain reported while the command ran: this Domain's state takes"
        ),
        "{r:?}"
    );
    ws.wait_torn_down();
    let r = ws.run(&["true"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stderr.contains("over the profile's disk = 1 MiB"),
        "no note at start: {r:?}"
    );
    ws.wait_torn_down();
}

/// What the agent writes into the Domain's state is hostile to the host-side walks that size it
/// (the disk watch, `lazaret state list`, the control centre's panel): a symlink to the host's
/// root, a directory swapped for one over and over while the walks run, 300 hard links to one
/// 3 MB file, a FIFO, a tree deeper than the walk goes. None of it makes the Domain's size
/// bigger (a link followed, a file counted per link: gigabytes, over the 16 MiB bound) or hides
/// it (the walk stuck or given up: the 20 MB written after must still be reported).
#[test]
fn a_hostile_tree_in_the_domain_state_neither_inflates_nor_hides_its_size() {
    let dev = Dev::get();
    let ws = dev.workspace("limits-hostile-tree").with_profile(
        "capped",
        "[profiles.capped]\nextends = \"shell\"\ndisk = \"16m\"\n",
    );
    ws.host_sh("echo 'deps/' > .gitignore && git add .gitignore && git -c user.name=t -c user.email=t@localhost commit -qm ignore && mkdir -p deps");
    let tree = "set -e; cd /workspace/deps; head -c 3000000 /dev/zero > big; \
        i=0; while [ $i -lt 300 ]; do ln big l$i; i=$((i+1)); done; \
        ln -s / root; ln -s /workspace/.. up; ln -s loop loop; mkfifo fifo; \
        mkdir -p $(printf 'd/%.0s' $(seq 140)); \
        (while :; do rm -rf swap; mkdir -p swap/x; rm -rf swap; ln -s / swap; done) & sw=$!; \
        touch /workspace/.tree-written";
    let cmd = format!(
        "{tree}; {hold}; kill $sw; wait $sw || true; \
         head -c 20000000 /dev/zero > /workspace/deps/more && touch /workspace/.more-written; \
         while [ ! -e /workspace/.go2 ]; do sleep 0.1; done; echo done",
        hold = support::HOLD
    );
    let running = ws.spawn_in(
        "",
        &["LAZARET_TEST_DISK_LOOK_MS=300"],
        &["sh", "-c", &cmd],
        false,
    );
    let written = wait_for(Duration::from_secs(90), || {
        ws.path.join(".tree-written").exists().then_some(())
    });
    // Ten looks of the watch (every 300 ms here) over the tree, the swapper running.
    std::thread::sleep(Duration::from_secs(3));
    let ps_before = ws.lazaret(&["ps"]);
    let list = ws.lazaret(&["state", "list", "--json"]);
    ws.release();
    let more = wait_for(Duration::from_secs(60), || {
        ws.path.join(".more-written").exists().then_some(())
    });
    let listed = wait_for(Duration::from_secs(60), || {
        let ps = ws.lazaret(&["ps"]);
        ps.stdout
            .contains("failure: this Domain's state takes")
            .then_some(ps)
    });
    ws.host_sh("touch .go2");
    let r = finish(running);
    assert!(written.is_some(), "the agent's tree was not written: {r:?}");
    assert!(
        !ps_before.stdout.contains("failure:"),
        "the hostile tree was counted over 16 MiB: {ps_before:?}"
    );
    let v: serde_json::Value = serde_json::from_str(&list.stdout)
        .unwrap_or_else(|e| panic!("state list --json: {e}: {list:?}"));
    let d = v["domains"]
        .as_array()
        .and_then(|a| a.iter().find(|d| d["domain_id"] == ws.domain.as_str()))
        .unwrap_or_else(|| panic!("the Domain is not listed: {v}"));
    let ignored = &d["ignored_state"];
    let bytes = ignored["bytes"].as_u64().unwrap_or(0);
    assert!(
        (3_000_000..8_000_000).contains(&bytes),
        "the 3 MB file once, not per link, nothing behind a symlink: {ignored}"
    );
    assert_eq!(
        ignored["partial"], true,
        "the too-deep tree is said: {ignored}"
    );
    assert!(more.is_some(), "the agent did not go on: {r:?}");
    let listed = listed.unwrap_or_else(|| panic!("the 20 MB after the tree went unseen: {r:?}"));
    assert!(
        listed.stdout.contains("over the profile's disk = 16 MiB"),
        "{listed:?}"
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.contains("done"), "{r:?}");
    ws.wait_torn_down();
}

/// `lazaret doctor` says for each bound whether this host enforces it, and how; `config check`
/// refuses malformed bounds saying what is accepted.
#[test]
fn doctor_and_config_check_speak_of_the_bounds() {
    let dev = Dev::get();
    let ws = dev.workspace("limits-doctor").with_profile(
        "bad",
        "[profiles.bad]\nextends = \"shell\"\nmemory = \"lots\"\npids = 2\ncpus = 0.0001\n",
    );
    let r = ws.lazaret(&["doctor", "--json"]);
    let checks: serde_json::Value = serde_json::from_str(&r.stdout).expect("doctor --json");
    let named = |n: &str| {
        checks
            .as_array()
            .and_then(|a| a.iter().find(|c| c["name"] == n).cloned())
            .unwrap_or_else(|| panic!("no {n} in {checks:#}"))
    };
    for (name, word) in [
        ("limits: memory", "memory file"),
        ("limits: pids", "RLIMIT_NPROC"),
        ("limits: cpus", "affinity"),
    ] {
        let c = named(name);
        assert_eq!(c["status"], "ok", "{c}");
        assert!(c["detail"].as_str().unwrap_or("").contains(word), "{c}");
    }
    let disk = named("limits: disk");
    assert_eq!(disk["status"], "warn", "{disk}");
    assert!(disk["detail"]
        .as_str()
        .unwrap_or("")
        .contains("NOT enforced"));
    let r = ws.lazaret(&["config", "check"]);
    assert_ne!(r.code, Some(0), "{r:?}");
    let all = format!("{}{}", r.stdout, r.stderr);
    for said in ["not a size", "use 16 to", "at most 3 decimals"] {
        assert!(all.contains(said), "{said:?} not in {all}");
    }
}

/// Orphans are reaped by the sandbox's PID 1: under `pids = 64`, a hundred processes orphaned
/// one after the other (daemons, `cmd &` in a shell that exits) leave no zombie to count
/// against the bound, so the sandbox can still fork.
#[test]
fn orphans_are_reaped_so_they_do_not_use_up_pids() {
    let dev = Dev::get();
    let ws = dev.workspace("limits-orphans").with_profile(
        "bounded",
        "[profiles.bounded]\nextends = \"shell\"\npids = 64\n",
    );
    let r = ws.run(&[
        "sh",
        "-c",
        "for i in $(seq 100); do sh -c 'sleep 0 &' || exit 3; done; sleep 1; \
         echo zombies=$(ps -e -o stat= | grep -c Z)",
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.contains("zombies=0"), "{r:?}");
    ws.wait_torn_down();
}
