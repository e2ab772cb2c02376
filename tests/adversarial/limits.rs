//! Safe default limits (issue #31, SR-5): an agent that wants the host's resources, in a Domain
//! of the built-in default profile (no bound written by the developer). With the ptrace
//! platform every task inside is a host task of the developer, and the Sentry keeps much of the
//! sandbox's memory outside its application memory file: each attack below took the host's
//! tasks or memory before the built-in profiles had `pids` and `memory`, or before the memory
//! bound counted the Sentry's own memory.

use crate::support::{finish, Dev};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Takes 200 MiB, then 256 MiB at a time up to 6 GiB (each chunk written, so really used).
const HOG: &str = r#"
keep = [b'a' * (200 << 20)]
print('small-ok', flush=True)
for i in range(24):
    keep.append(b'a' * (256 << 20))
print('big-ok', flush=True)
"#;

/// Fills a thousand pipes to 1 MiB each and keeps only their read ends.
const PIPES: &str = r#"
import os, fcntl
keep, total, chunk = [], 0, b'x' * 65536
for i in range(1000):
    r, w = os.pipe()
    fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ
    os.set_blocking(w, False)
    try:
        while True:
            total += os.write(w, chunk)
    except BlockingIOError:
        pass
    os.close(w)
    keep.append(r)
print('pipes-ok', total >> 20, 'MiB', flush=True)
"#;

/// Processes and tasks (threads) of `pid` and all its descendants on the host.
fn host_tree(pid: u32) -> (usize, usize) {
    let tree = crate::support::process_tree(pid);
    let tasks = tree
        .iter()
        .map(|p| {
            std::fs::read_dir(format!("/proc/{p}/task"))
                .map(|d| d.count())
                .unwrap_or(0)
        })
        .sum();
    (tree.len(), tasks)
}

/// The built-in profile's bounds as `lazaret profile show` prints them.
fn default_bounds(ws: &crate::support::TestWorkspace) -> (u64, String) {
    let shown = ws.lazaret(&["profile", "show", "shell"]);
    let line = shown
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("limits:"))
        .unwrap_or_else(|| panic!("the default profile has no bounds: {shown:?}"))
        .trim()
        .to_owned();
    let pids = line
        .split(", ")
        .find_map(|p| p.strip_prefix("pids "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no pids in the default profile's {line:?}"));
    let memory = line
        .split(", ")
        .find_map(|p| p.strip_prefix("memory "))
        .unwrap_or_else(|| panic!("no memory in the default profile's {line:?}"))
        .to_owned();
    (pids, memory)
}

/// The agent, in a Domain of the default profile, forks without end: a counted spawn of 600
/// sleeping processes, then a fork bomb (`b(){ b|b& }; b`) for 8 s. Fork fails at the default
/// `pids`; the sandbox's host processes and tasks stay bounded by it; and the developer's own
/// shell on the host can still fork throughout.
#[test]
fn a_fork_bomb_in_a_default_domain_stops_at_the_bound_and_the_developer_can_still_fork() {
    let dev = Dev::get();
    let ws = dev.workspace("adv-limits-bomb");
    let (pids, _) = default_bounds(&ws);
    let spawn = "my @k; for (1..600) { my $p = fork; last unless defined $p; \
                 if ($p == 0) { sleep 60; exit 0 } push @k, $p } \
                 print 'spawned ', scalar(@k), \"\\n\"; kill 'KILL', @k; waitpid($_, 0) for @k;";
    let script = format!(
        "perl -e '{}'; echo bomb-start; timeout -s KILL 12 bash -c 'b(){{ b|b& }}; b; \
         while [ $SECONDS -lt 8 ]; do :; done' 2>/dev/null; echo bomb-end",
        spawn.replace('\'', "'\\''")
    );
    let child = ws.spawn(&["bash", "-c", &script]);
    let init = ws
        .container_pid("sandbox")
        .expect("the sandbox did not start");
    let (mut most_procs, mut most_tasks) = (0, 0);
    let (mut host_forks, mut host_fork_failures) = (0, Vec::new());
    let deadline = Instant::now() + Duration::from_secs(240);
    while std::path::Path::new(&format!("/proc/{init}")).exists() && Instant::now() < deadline {
        let (procs, tasks) = host_tree(init);
        most_procs = most_procs.max(procs);
        most_tasks = most_tasks.max(tasks);
        // The developer's own shell forks a child (as the developer, on the host).
        let out = dev
            .command("sh")
            .args(["-c", "/bin/true & wait $!"])
            .stdin(Stdio::null())
            .output();
        host_forks += 1;
        match out {
            Ok(o) if o.status.success() => {}
            other => host_fork_failures.push(format!("{other:?}")),
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let r = finish(child);
    eprintln!(
        "default pids {pids}: at most {most_procs} host processes, {most_tasks} host tasks; \
         {host_forks} host forks, {} failed; {}",
        host_fork_failures.len(),
        r.stdout.trim()
    );
    assert!(r.stdout.contains("bomb-end"), "{r:?}");
    let spawned: u64 = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("spawned "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count in {r:?}"));
    assert!(
        spawned < pids,
        "pids = {pids} let {spawned} of 600 forks through"
    );
    assert!(
        spawned >= pids / 2,
        "only {spawned} forks under pids = {pids}: the default is too tight"
    );
    // Bounded by the default: one host process per address space inside (a ptrace stub) plus
    // the wrapper, runsc, the Sentry and the Gofer. Tasks add the Sentry's threads and each
    // stub's, one per Sentry thread that ever ran that process: measured 22 to 31 host tasks
    // per process inside under the bomb (docs/limits.md). Without a bound the bomb makes as
    // many as it can in its 8 s (with pids = 1024 it took 32 356 host tasks: every PID of a
    // host whose pid_max is 32 768).
    let pids = usize::try_from(pids).unwrap_or(usize::MAX);
    assert!(
        most_procs <= pids + 64,
        "the sandbox had {most_procs} host processes under pids = {pids}"
    );
    assert!(
        most_tasks <= 40 * pids,
        "the sandbox had {most_tasks} host tasks under pids = {pids}"
    );
    assert!(host_forks >= 10, "only {host_forks} host forks tried");
    assert!(
        host_fork_failures.is_empty(),
        "the developer's shell could not fork {} of {host_forks} times: {host_fork_failures:?}",
        host_fork_failures.len()
    );
    ws.wait_torn_down();
}

/// The agent, in a Domain of the default profile, takes memory 256 MiB at a time up to
/// 6 GiB: the default `memory` bound stops the whole sandbox before it gets there, and
/// `lazaret run` says why.
#[test]
fn a_memory_hog_in_a_default_domain_is_stopped_at_the_default_bound() {
    let dev = Dev::get();
    let ws = dev.workspace("adv-limits-hog");
    let (_, memory) = default_bounds(&ws);
    let started = Instant::now();
    let r = ws.run(&["python3", "-c", HOG]);
    let took = started.elapsed();
    eprintln!("memory hog under the default memory {memory}: {r:?} in {took:?}");
    assert!(r.stdout.contains("small-ok"), "{r:?}");
    assert!(!r.stdout.contains("big-ok"), "the hog got its 6 GiB: {r:?}");
    assert_eq!(r.code, Some(125), "{r:?}");
    let said = format!("it went over the profile's memory limit ({memory})");
    assert!(r.stderr.contains(&said), "{said:?} not in {r:?}");
    ws.wait_torn_down();
}

/// The agent keeps its memory where the memory file does not hold it: in pipe buffers, which
/// the Sentry allocates on its own heap. A thousand pipes filled to 1 MiB each (the reader
/// kept open, the writer closed) hold a GiB under `memory = "512m"`; the bound counts the
/// Sentry's anonymous memory too, so the sandbox is stopped.
#[test]
fn memory_held_in_pipe_buffers_counts_against_the_bound() {
    let dev = Dev::get();
    let ws = dev.workspace("adv-limits-pipes").with_profile(
        "small",
        "[profiles.small]\nextends = \"shell\"\nmemory = \"512m\"\n",
    );
    let r = ws.run(&["python3", "-c", PIPES]);
    eprintln!("pipe buffers under memory = 512m: {r:?}");
    assert!(
        !r.stdout.contains("pipes-ok"),
        "1 GiB held in pipe buffers under memory = 512m: {r:?}"
    );
    assert_eq!(r.code, Some(125), "{r:?}");
    assert!(
        r.stderr
            .contains("it went over the profile's memory limit (512 MiB)"),
        "{r:?}"
    );
    ws.wait_torn_down();
}
