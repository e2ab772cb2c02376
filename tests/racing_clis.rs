//! Twenty racing CLIs across two Domains on the real stack (issue #19, FR-2, OR-1, FR-6, FR-7):
//! `lazaret run`s that start, join and leave, coordinator-owned sessions ended by a racing
//! `lazaret kill`, and CLIs killed with SIGKILL, all started at seeded random moments so that
//! Domains go up, down and up again while others join. Checked: exactly one Agent Sandbox per
//! Domain at a time (every session that ran while a `lazaret run` of the same Domain ran saw
//! that run's sandbox), no lost session (every run passes its status through, every killed
//! session leaves), nothing leaked, every coordinator's trace conforms to the model.
//!
//! The seed is printed; `LAZARET_RACE_SEED=N` replays one.

mod support;

use std::collections::BTreeMap;
use std::io::Read;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{assert_traces_conform, lazaret_bin, wait_for, Dev, TestWorkspace};

/// What one racer does.
#[derive(Clone, Copy, Debug)]
enum Racer {
    /// `lazaret run` of a short command: starts or joins the Domain, then leaves.
    Run { secs_tenths: u64 },
    /// `lazaret run --detachable` (on a pseudo-terminal), ended by its [`Racer::Kill`].
    Detachable,
    /// `lazaret kill` of the detachable session with the same tag, once it is listed.
    Kill,
    /// `lazaret run` whose CLI is killed with SIGKILL after a moment.
    Abrupt { after_ms: u64 },
}

/// One racer's outcome, for the checks and the report.
#[derive(Debug)]
struct Outcome {
    domain: usize,
    tag: String,
    racer: Racer,
    status: Option<i32>,
    stderr: String,
}

/// xorshift64* (as `lazaret::test_rng`), seeded per run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// The command every racer's session runs: it notes its sandbox and when it started and ended
/// in the workspace (the sandbox's clock is the host's), then waits `secs`.
fn noted(tag: &str, secs: &str) -> String {
    format!(
        "echo \"{tag} start $(hostname) $(date +%s%N)\" >> /workspace/.race; sleep {secs}; \
         echo \"{tag} end $(hostname) $(date +%s%N)\" >> /workspace/.race"
    )
}

fn output(mut child: Child, limit: Duration) -> (Option<i32>, String) {
    let exited = wait_for(limit, || child.try_wait().ok().flatten());
    if exited.is_none() {
        let _ = child.kill();
    }
    let status = child.wait().ok().and_then(|s| s.code());
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    if exited.is_none() {
        stderr.push_str("\n[the test: did not end in time]");
    }
    (status, stderr)
}

/// The `lazaret` process (not its `runuser` wrapper) running in `ws` with `marker` among its
/// arguments.
fn cli_pid(ws: &TestWorkspace, marker: &str) -> Option<u32> {
    support::processes_in(&ws.path, &["run", marker])
        .into_iter()
        .find(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim() == "lazaret")
        })
}

fn race(ws: &TestWorkspace, domain: usize, tag: String, racer: Racer) -> Outcome {
    let (status, stderr) = match racer {
        Racer::Run { secs_tenths } => {
            let secs = format!("{}.{}", secs_tenths / 10, secs_tenths % 10);
            let child = ws.spawn(&["sh", "-c", &noted(&tag, &secs)]);
            output(child, Duration::from_secs(120))
        }
        Racer::Detachable => {
            // `script` gives it the terminal a detachable session needs.
            let line = format!(
                "{} run --detachable -- sh -c '{}'",
                lazaret_bin().display(),
                noted(&tag, &format!("600 # {tag}"))
            );
            let child = ws
                .dev
                .command("script")
                .args(["-qfec", &line, "/dev/null"])
                .current_dir(&ws.path)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("script");
            output(child, Duration::from_secs(120))
        }
        Racer::Kill => {
            let target = tag.replacen("kill", "detach", 1);
            let id = wait_for(Duration::from_secs(90), || {
                ws.sessions().into_iter().find_map(|s| {
                    let cmd = s["command"].to_string();
                    cmd.contains(&format!("# {target}"))
                        .then(|| s["session_id"].as_str().map(str::to_owned))
                        .flatten()
                })
            });
            match id {
                Some(id) => {
                    let run = ws.lazaret(&["kill", &id[..16]]);
                    (run.code, run.stderr)
                }
                None => (None, format!("{target} was never listed")),
            }
        }
        Racer::Abrupt { after_ms } => {
            let marker = format!("600 # {tag}");
            let child = ws.spawn(&["sh", "-c", &noted(&tag, &marker)]);
            let script = noted(&tag, &marker);
            let pid = wait_for(Duration::from_secs(90), || {
                // Registered (listed), then killed a moment later.
                let listed = ws
                    .sessions()
                    .iter()
                    .any(|s| s["command"].to_string().contains(&format!("# {tag}")));
                listed.then(|| cli_pid(ws, &script)).flatten()
            });
            std::thread::sleep(Duration::from_millis(after_ms));
            let killed = pid.is_some_and(|pid| {
                nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                )
                .is_ok()
            });
            let (status, mut stderr) = output(child, Duration::from_secs(60));
            if !killed {
                stderr.push_str("\n[the test: its CLI was never found to kill]");
            }
            (status, stderr)
        }
    };
    Outcome {
        domain,
        tag,
        racer,
        status,
        stderr,
    }
}

/// (tag, start or end, sandbox, nanoseconds) from a workspace's notes.
fn notes(ws: &TestWorkspace) -> Vec<(String, String, String, u128)> {
    std::fs::read_to_string(ws.path.join(".race"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [tag, what, host, ns] => Some((
                    tag.to_string(),
                    what.to_string(),
                    host.to_string(),
                    ns.parse().ok()?,
                )),
                _ => None,
            }
        })
        .collect()
}

#[test]
fn twenty_racing_clis_across_two_domains_keep_one_sandbox_each_and_lose_nothing() {
    let seed = std::env::var("LAZARET_RACE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64 | 1)
        });
    println!("LAZARET_RACE_SEED={seed}");
    let mut rng = Rng(seed);
    let dev = Dev::get();
    let workspaces = [dev.workspace("race-a"), dev.workspace("race-b")];

    // Per Domain: five runs, two detachable sessions and their two killers, one abrupt end.
    let mut plan = Vec::new();
    for (d, _) in workspaces.iter().enumerate() {
        for i in 0..5 {
            let secs_tenths = 1 + rng.below(15);
            plan.push((d, format!("run{d}{i}"), Racer::Run { secs_tenths }));
        }
        for i in 0..2 {
            plan.push((d, format!("detach{d}{i}"), Racer::Detachable));
            plan.push((d, format!("kill{d}{i}"), Racer::Kill));
        }
        let after_ms = 100 + rng.below(2000);
        plan.push((d, format!("abrupt{d}"), Racer::Abrupt { after_ms }));
    }
    assert_eq!(plan.len(), 20);
    // Over eight seconds, with short runs: a Domain goes down and up again while others join
    // (the detachable sessions, which hold it until killed, come in the second half).
    let delays: Vec<u64> = plan
        .iter()
        .map(|(_, _, racer)| match racer {
            Racer::Detachable | Racer::Kill => 4000 + rng.below(4000),
            _ => rng.below(8000),
        })
        .collect();

    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let begun = Instant::now();
    std::thread::scope(|scope| {
        for ((d, tag, racer), delay) in plan.into_iter().zip(delays) {
            let ws = &workspaces[d];
            let outcomes = outcomes.clone();
            scope.spawn(move || {
                std::thread::sleep(Duration::from_millis(delay));
                let o = race(ws, d, tag, racer);
                outcomes.lock().unwrap_or_else(|p| p.into_inner()).push(o);
            });
        }
    });
    let outcomes = std::mem::take(&mut *outcomes.lock().unwrap_or_else(|p| p.into_inner()));
    println!("raced for {:?}", begun.elapsed());
    for o in &outcomes {
        println!(
            "domain {} {} {:?}: exit {:?}",
            o.domain, o.tag, o.racer, o.status
        );
    }

    // No lost session: each says how it ended.
    let mut failures = Vec::new();
    for o in &outcomes {
        let fine = match o.racer {
            Racer::Run { .. } | Racer::Kill => o.status == Some(0),
            // Hung up by `lazaret kill`: the command's status, not the coordinator going away.
            Racer::Detachable => o.status.is_some() && !o.stderr.contains("went away"),
            // The CLI itself was killed (its `runuser` wrapper passes that on as a failure).
            Racer::Abrupt { .. } => o.status != Some(0) && !o.stderr.contains("[the test"),
        };
        if !fine {
            failures.push(format!(
                "{} {:?}: {:?}\n{}",
                o.tag, o.racer, o.status, o.stderr
            ));
        }
    }

    for (d, ws) in workspaces.iter().enumerate() {
        // Every session started and the runs ended in the sandbox they started in.
        let notes = notes(ws);
        let started: BTreeMap<&str, (&str, u128)> = notes
            .iter()
            .filter(|n| n.1 == "start")
            .map(|n| (n.0.as_str(), (n.2.as_str(), n.3)))
            .collect();
        for o in outcomes.iter().filter(|o| o.domain == d) {
            if !matches!(o.racer, Racer::Kill) && !started.contains_key(o.tag.as_str()) {
                failures.push(format!("{}: its session never started", o.tag));
            }
        }
        let sandboxes: std::collections::BTreeSet<&str> = started.values().map(|s| s.0).collect();
        println!(
            "domain {d}: {} sandbox(es) one after the other",
            sandboxes.len()
        );
        // One sandbox at a time: whatever started while a run was in its sandbox is in it.
        for end in notes
            .iter()
            .filter(|n| n.1 == "end" && n.0.starts_with("run"))
        {
            let Some((sandbox, from)) = started.get(end.0.as_str()) else {
                continue;
            };
            for (tag, (other, at)) in &started {
                if at > from && *at < end.3 && other != sandbox {
                    failures.push(format!(
                        "domain {d}: {tag} started in sandbox {other} while {} ran in {sandbox}",
                        end.0
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "seed {seed}:\n{}",
        failures.join("\n---\n")
    );
    for ws in &workspaces {
        ws.wait_torn_down();
        assert!(!assert_traces_conform(ws).is_empty());
    }
}
