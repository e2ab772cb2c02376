//! A fork bomb in a Domain of the built-in default profile (issue #31, SR-5), alone in its
//! test binary: with the ptrace platform each task inside costs the host 22–31 tasks, so even
//! bounded by the default `pids` the bomb takes a few thousand of the machine's PIDs for its
//! 8 s (`kernel.pid_max` is 32 768 here) — which the real-stack tests running next to it in a
//! shared binary felt as `fork: EAGAIN`. `cargo test` runs test binaries one after another.

mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};
use support::{finish, Dev};

/// Processes and tasks (threads) of `pid` and all its descendants on the host.
fn host_tree(pid: u32) -> (usize, usize) {
    let tree = support::process_tree(pid);
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

/// The agent, in a Domain of the default profile, forks without end: a counted spawn of 600
/// sleeping processes, then a fork bomb (`b(){ b|b& }; b`) for 8 s. Fork fails at the default
/// `pids`; the sandbox's host processes and tasks stay bounded by it; and the developer's own
/// shell on the host can still fork throughout.
#[test]
fn a_fork_bomb_in_a_default_domain_stops_at_the_bound_and_the_developer_can_still_fork() {
    let dev = Dev::get();
    let ws = dev.workspace("adv-limits-bomb");
    let (pids, _) = support::default_bounds(&ws);
    let script = support::fork_bomb_script(600, 60);
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
