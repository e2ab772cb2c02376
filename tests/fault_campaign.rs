//! Randomized fault injection on the real stack (issue #19, part 2; OR-2, FR-7, SR-14, OR-5).
//!
//! Each trial starts a Domain of a profile with persistent State Anchors (`/opt`, `/root`) and
//! auto-approval rules for three host commands, drives a random mix — sessions joining and
//! leaving (`lazaret run -- sleep N`), escalation loops inside (`lazaret-escalate -- touch …`,
//! `-- true`, `-- sleep 2.5`, each client's status and stderr recorded in a workspace file),
//! DNS lookups of names the sidecar refuses (`default = "deny"`, no name allowed: nothing leaves
//! the host), `lazaret ps --json`, `lazaret state list --json` — and SIGKILLs one component at a
//! random moment: a `lazaret run` CLI, the Session Coordinator, the sidecar's process, a conmon,
//! runsc's sandbox process, or a host command an escalation started. Then it waits (bounded) for
//! the CLIs, runs the next `lazaret run` (it must recover, FR-7, and find the State Anchor's
//! known files intact: their sha256 sums, computed inside), and checks that nothing of the Domain
//! is left (containers, processes, mounts, runtime and runsc state), that every escalation a
//! client logged got a result or a clear error within its bound (no hang, no exit 0 without the
//! command having run), and that every coordinator trace of the trial conforms to the model.
//!
//! `LAZARET_FAULT_TRIALS` (default 3), `LAZARET_FAULT_SEED` (printed; trial 0 of a campaign
//! uses it as is, so `LAZARET_FAULT_SEED=<a trial's seed> LAZARET_FAULT_TRIALS=1` replays that
//! trial's plan), `LAZARET_FAULT_MAX_SECS` (start no trial after that long). `scripts/fault-campaign`
//! runs the long campaign; docs/reliability.md describes it.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::Child;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use support::{lazaret_bin, wait_for, Dev, Run, TestWorkspace};

const PROFILE: &str = "fault";

const CONFIG: &str = r#"[profiles.fault]
extends = "shell"
persistent = ["/opt", "/root"]

[profiles.fault.network]
default = "deny"

[[profiles.fault.auto_approve]]
argv = ["true"]

[[profiles.fault.auto_approve]]
argv = ["sleep", "2.5"]

[[profiles.fault.auto_approve]]
argv = ["touch"]
trailing_args = true
"#;

/// `--timeout` of every escalation; the client gives up 10 s after it (docs/escalation.md).
const ESCALATION_TIMEOUT_SECS: u64 = 8;
/// The longest an escalation may take, as its client logged it, before it counts as a hang.
const ESCALATION_BOUND_MS: u64 = (ESCALATION_TIMEOUT_SECS + 10 + 10) * 1000;
/// How long the CLIs of a trial may take to exit after the kill.
const CLI_BOUND: Duration = Duration::from_secs(90);
/// How long a target may take to appear after its moment came.
const TARGET_BOUND: Duration = Duration::from_secs(30);

/// The State Anchor's known file set, written once (first run of the campaign), summed inside.
const KNOWN_FILES: &str = "mkdir -p /opt/fault/sub /root/fault && \
     head -c 262144 /dev/urandom > /opt/fault/random.bin && seq 1 20000 > /opt/fault/sub/seq.txt && \
     cp /bin/ls /opt/fault/ls && echo known > /root/fault/known.txt && \
     head -c 4096 /dev/urandom > /root/fault/small.bin && ln -s ../known.txt /opt/fault/link";
const SUMS: &str = "cd / && sha256sum opt/fault/random.bin opt/fault/sub/seq.txt opt/fault/ls \
     root/fault/known.txt root/fault/small.bin && readlink opt/fault/link";

/// xorshift64* (as `src/test_rng.rs`, which integration tests cannot reach).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// The seed of trial `i` of a campaign seeded `seed` (trial 0: the seed itself).
fn trial_seed(seed: u64, i: u64) -> u64 {
    if i == 0 {
        return seed;
    }
    let mut z = seed.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)).max(1)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Component {
    Cli,
    Coordinator,
    Sidecar,
    Conmon,
    RunscSandbox,
    HostCommand,
    /// A `lazaret tui` whose first pane runs the primary session (a coordinator-owned one).
    Tui,
}

const COMPONENTS: [Component; 7] = [
    Component::Cli,
    Component::Tui,
    Component::Coordinator,
    Component::Sidecar,
    Component::Conmon,
    Component::RunscSandbox,
    Component::HostCommand,
];

impl Component {
    fn name(self) -> &'static str {
        match self {
            Component::Cli => "cli",
            Component::Coordinator => "coordinator",
            Component::Sidecar => "sidecar",
            Component::Conmon => "conmon",
            Component::RunscSandbox => "runsc-sandbox",
            Component::HostCommand => "host-command",
            Component::Tui => "tui",
        }
    }
}

/// What one session of a trial runs.
#[derive(Clone, Debug)]
enum Work {
    /// `sleep N` (seconds).
    Sleep(u64),
    /// An escalation loop: `t` touch (verifiable on the host), `e` true, `s` sleep 2.5 on the
    /// host, `d` a DNS lookup the sidecar refuses.
    Loop(String),
}

#[derive(Clone, Debug)]
enum Event {
    Spawn(usize),
    Ps,
    StateList,
    Kill,
}

/// A trial's plan, all of it drawn from its seed.
#[derive(Debug)]
struct Plan {
    seed: u64,
    component: Component,
    /// Sessions: index 0 is the primary (spawned at 0 ms).
    sessions: Vec<Work>,
    /// (ms after the primary's spawn, event), sorted.
    events: Vec<(u64, Event)>,
    kill_at_ms: u64,
    /// The kill waits for every CLI to exit, then for the target (3 s at most).
    at_teardown: bool,
    /// The primary's pause between its steps (ms) and its hold after them (s): the Domain
    /// lives through most kill moments.
    pace_ms: u64,
    hold_s: u64,
    /// Which conmon (sandbox or sidecar), which CLI among the live ones.
    pick: u64,
}

fn plan(seed: u64) -> Plan {
    let mut rng = Rng::new(seed);
    let component = *rng.pick(&COMPONENTS);
    let loop_of = |rng: &mut Rng, n: u64, host_sleeps: bool| -> String {
        (0..n)
            .map(|_| {
                let kinds: &[char] = if host_sleeps {
                    &['s', 's', 't', 'e', 'd']
                } else {
                    &['t', 't', 'e', 's', 'd']
                };
                *rng.pick(kinds)
            })
            .collect()
    };
    let n = 3 + rng.below(6);
    let mut primary = loop_of(&mut rng, n, component == Component::HostCommand);
    if component == Component::HostCommand && !primary.contains('s') {
        primary.push('s');
    }
    let mut sessions = vec![Work::Loop(primary)];
    let mut events = Vec::new();
    for _ in 0..rng.below(4) {
        let work = if rng.below(3) == 0 {
            let n = 2 + rng.below(3);
            Work::Loop(loop_of(&mut rng, n, false))
        } else {
            Work::Sleep(1 + rng.below(5))
        };
        events.push((rng.below(4000), Event::Spawn(sessions.len())));
        sessions.push(work);
    }
    for _ in 0..rng.below(4) {
        let e = if rng.below(2) == 0 {
            Event::Ps
        } else {
            Event::StateList
        };
        events.push((rng.below(6000), e));
    }
    let kill_at_ms = rng.below(6000);
    let pace_ms = *rng.pick(&[0, 200, 500]);
    let hold_s = rng.below(5);
    // A quarter of the coordinator, sidecar and conmon kills aim at the teardown instead: the
    // moment every CLI has exited (the coordinator removes the containers and anchors then).
    let at_teardown = matches!(
        component,
        Component::Coordinator | Component::Sidecar | Component::Conmon
    ) && rng.below(4) == 0;
    let kill_at_ms = if at_teardown { 6000 } else { kill_at_ms };
    events.push((kill_at_ms, Event::Kill));
    events.sort_by_key(|(t, _)| *t);
    Plan {
        seed,
        component,
        sessions,
        events,
        kill_at_ms,
        at_teardown,
        pace_ms,
        hold_s,
        pick: rng.next_u64(),
    }
}

/// One process as /proc shows it.
#[derive(Clone, Debug)]
struct Proc {
    pid: u32,
    ppid: u32,
    uid: u32,
    zombie: bool,
    argv: Vec<String>,
    cwd: Option<PathBuf>,
}

impl Proc {
    fn cmdline(&self) -> String {
        self.argv.join(" ")
    }
    fn base(&self) -> &str {
        self.argv
            .first()
            .map(|a| a.rsplit('/').next().unwrap_or(a))
            .unwrap_or("")
    }
}

fn procs() -> Vec<Proc> {
    use std::os::unix::fs::MetadataExt;
    let mut all = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(meta) = std::fs::metadata(entry.path()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command's closing parenthesis: state, ppid, …
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r.to_owned()) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() < 2 {
            continue;
        }
        let argv: Vec<String> = std::fs::read(entry.path().join("cmdline"))
            .unwrap_or_default()
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        all.push(Proc {
            pid,
            ppid: fields[1].parse().unwrap_or(0),
            uid: meta.uid(),
            zombie: fields[0] == "Z",
            argv,
            cwd: std::fs::read_link(entry.path().join("cwd")).ok(),
        });
    }
    all
}

/// Is `pid` `ancestor` or one of its descendants?
fn descends(table: &[Proc], mut pid: u32, ancestor: u32) -> bool {
    for _ in 0..64 {
        if pid == ancestor {
            return true;
        }
        match table.iter().find(|p| p.pid == pid) {
            Some(p) if p.ppid > 1 => pid = p.ppid,
            _ => return false,
        }
    }
    false
}

/// What identifies this Domain's processes: its ID (container names), the workspace path, the
/// container IDs its conmons named, the sidecar's network namespace.
struct Tokens {
    domain: String,
    workspace: PathBuf,
    uid: u32,
    ids: BTreeSet<String>,
}

impl Tokens {
    /// Learns the container IDs from the conmons naming this Domain's containers.
    fn learn(&mut self, table: &[Proc]) {
        let needle = format!("lazaret-{}-", self.domain);
        for p in table.iter().filter(|p| p.base() == "conmon") {
            if p.argv.iter().any(|a| a.starts_with(&needle)) {
                if let Some(i) = p.argv.iter().position(|a| a == "-c") {
                    if let Some(id) = p.argv.get(i + 1) {
                        self.ids.insert(id.clone());
                    }
                }
            }
        }
    }

    /// Live processes of this Domain: named by a token, working in the workspace, or below one
    /// of those.
    fn mine(&self, table: &[Proc]) -> Vec<Proc> {
        let direct: Vec<u32> = table
            .iter()
            .filter(|p| !p.zombie)
            .filter(|p| {
                let line = p.cmdline();
                line.contains(&self.domain)
                    || line.contains(self.workspace.to_string_lossy().as_ref())
                    || self.ids.iter().any(|id| line.contains(id.as_str()))
                    || (p.uid == self.uid
                        && p.cwd
                            .as_ref()
                            .is_some_and(|c| c.starts_with(&self.workspace)))
            })
            .map(|p| p.pid)
            .collect();
        table
            .iter()
            .filter(|p| !p.zombie)
            .filter(|p| direct.iter().any(|d| descends(table, p.pid, *d)))
            .cloned()
            .collect()
    }
}

/// The process to kill for `component` now, if there is one.
fn find_target(
    component: Component,
    pick: u64,
    ws: &TestWorkspace,
    table: &[Proc],
) -> Option<Proc> {
    let domain = ws.domain.as_str();
    let conmon = |which: &str| {
        let name = format!("lazaret-{domain}-{which}");
        table
            .iter()
            .find(|p| !p.zombie && p.base() == "conmon" && p.argv.contains(&name))
            .cloned()
    };
    let candidates: Vec<Proc> = match component {
        Component::Cli => lazaret_in_workspace(ws, table, "run"),
        // The TUI of the trial (its primary's launcher): `lazaret tui` in the workspace.
        Component::Tui => lazaret_in_workspace(ws, table, "tui"),
        Component::Coordinator => {
            let path = ws.path.to_string_lossy().into_owned();
            table
                .iter()
                .filter(|p| {
                    !p.zombie
                        && p.argv.get(1).map(String::as_str) == Some("__coordinator")
                        && p.argv.contains(&path)
                })
                .cloned()
                .collect()
        }
        Component::Sidecar => conmon("sidecar")
            .map(|c| {
                table
                    .iter()
                    .filter(|p| !p.zombie && p.ppid == c.pid && p.base() == "lazaret-sidecar")
                    .cloned()
                    .collect()
            })
            .unwrap_or_default(),
        Component::Conmon => {
            let which = if pick.is_multiple_of(2) {
                "sandbox"
            } else {
                "sidecar"
            };
            conmon(which).into_iter().collect()
        }
        Component::RunscSandbox => conmon("sandbox")
            .map(|c| {
                table
                    .iter()
                    .filter(|p| {
                        !p.zombie
                            && p.argv.first().map(String::as_str) == Some("runsc-sandbox")
                            && descends(table, p.pid, c.pid)
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default(),
        Component::HostCommand => table
            .iter()
            .filter(|p| {
                !p.zombie
                    && p.uid == ws.dev.uid
                    && p.base() == "sleep"
                    && p.argv.get(1).map(String::as_str) == Some("2.5")
                    && p.cwd.as_deref() == Some(ws.path.as_path())
            })
            .cloned()
            .collect(),
    };
    if candidates.is_empty() {
        return None;
    }
    let i = (pick / 2) as usize % candidates.len();
    Some(candidates[i].clone())
}

/// The sandbox script of a session.
fn script(tag: &str, work: &Work, pace_ms: u64, hold_s: u64) -> String {
    match work {
        Work::Sleep(n) => format!("sleep {n}"),
        Work::Loop(kinds) => {
            let kinds: Vec<String> = kinds.chars().map(String::from).collect();
            format!(
                "tag={tag}; log=/workspace/esc/$tag.log; mkdir -p /workspace/esc /opt/scratch; i=0; \
                 for c in {kinds}; do i=$((i+1)); echo \"$tag $i\" >> /opt/scratch/log; \
                 case $c in \
                 d) getent hosts probe-$i.fault.invalid >/dev/null 2>&1; echo \"dns $i $?\" >> $log; continue;; \
                 t) set -- touch esc/$tag-$i.ran;; s) set -- sleep 2.5;; *) set -- true;; esac; \
                 sleep {pace}; t0=$(date +%s%3N); echo \"start $i $c $t0\" >> $log; \
                 lazaret-escalate --timeout {ESCALATION_TIMEOUT_SECS} -- \"$@\" >/dev/null 2>/tmp/$tag-$i.err; rc=$?; \
                 echo \"end $i $c $rc $t0 $(date +%s%3N) $(tr '\\n' ' ' < /tmp/$tag-$i.err | head -c 300)\" >> $log; \
                 done; echo done >> $log; sleep {hold_s}",
                kinds = kinds.join(" "),
                pace = pace_ms as f64 / 1000.0
            )
        }
    }
}

/// How a session's CLI ended.
struct Ended {
    index: usize,
    run: Run,
    /// The lazaret process the trial killed was this CLI's.
    killed: bool,
}

/// Escalation outcomes as the clients logged them.
#[derive(Default, Clone, Copy)]
struct Tally {
    /// Status 0 (the host command ran).
    completed: u32,
    /// 128+9: the host command the trial killed.
    host_killed: u32,
    /// 240–244 with the client's message.
    refused: u32,
    /// Started, never ended: the client went with its session (its CLI did not exit 0).
    interrupted: u32,
}

impl Tally {
    fn add(&mut self, o: Tally) {
        self.completed += o.completed;
        self.host_killed += o.host_killed;
        self.refused += o.refused;
        self.interrupted += o.interrupted;
    }
    fn total(&self) -> u32 {
        self.completed + self.host_killed + self.refused + self.interrupted
    }
}

struct Outcome {
    killed: Option<String>,
    moment_ms: Option<u64>,
    phase: String,
    codes: Vec<String>,
    escalations: Tally,
    failures: Vec<String>,
}

fn panic_text(e: Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into())
}

/// Runs `f`, turning a panic of the support's assertions into a failure.
fn check(failures: &mut Vec<String>, what: &str, f: impl FnOnce()) {
    if let Err(e) = catch_unwind(AssertUnwindSafe(f)) {
        failures.push(format!("{what}: {}", panic_text(e)));
    }
}

fn runtime_leftovers(ws: &TestWorkspace, tokens: &Tokens) -> Vec<String> {
    let mut left = Vec::new();
    // Files that say something of the Domain still runs (the rest of the runtime dir — lock
    // files, empty mount points — stays by design).
    for name in [
        "coordinator.sock",
        "status.json",
        "resources",
        "direct-exec",
    ] {
        if ws.runtime_dir().join(name).exists() {
            left.push(format!("runtime dir: {name}"));
        }
    }
    // runsc's and runc's state of this Domain's containers.
    for dir in ["runsc", "runc"] {
        for e in std::fs::read_dir(ws.dev.runtime_dir.join(dir))
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            if tokens.ids.iter().any(|id| name.contains(id.as_str())) {
                left.push(format!("{dir} state: {name}"));
            }
        }
    }
    // Container mounts (shm) in the rootless pause process's mount namespace.
    let pause = ws.dev.runtime_dir.join("libpod/tmp/pause.pid");
    if let Ok(pid) = std::fs::read_to_string(pause) {
        let info =
            std::fs::read_to_string(format!("/proc/{}/mountinfo", pid.trim())).unwrap_or_default();
        for line in info.lines() {
            if tokens.ids.iter().any(|id| line.contains(id.as_str())) {
                left.push(format!("mount: {line}"));
            }
        }
    }
    left
}

/// Checks the escalation log of session `tag`, whose CLI ended as `ended`.
fn check_log(
    workspace: &std::path::Path,
    tag: &str,
    ended: &Ended,
    component: Component,
    failures: &mut Vec<String>,
) -> Tally {
    let text = std::fs::read_to_string(workspace.join("esc").join(format!("{tag}.log")))
        .unwrap_or_default();
    let completed = ended.run.code == Some(0);
    // Sessions whose run nothing fatal touched must get every result: host command killed, or
    // another CLI killed.
    let unharmed = completed
        && matches!(
            component,
            Component::Cli | Component::HostCommand | Component::Tui
        )
        && !ended.killed;
    let mut started: BTreeMap<String, String> = BTreeMap::new();
    let mut tally = Tally::default();
    if std::env::var_os("LAZARET_FAULT_VERBOSE").is_some() {
        println!("  {tag} (exit {:?}):\n{text}", ended.run.code);
    }
    for line in text.lines() {
        let f: Vec<&str> = line.splitn(7, ' ').collect();
        match f.as_slice() {
            ["start", i, c, _] => {
                started.insert(i.to_string(), c.to_string());
            }
            ["end", i, c, rc, t0, t1, rest @ ..] => {
                started.remove(*i);
                let err = rest.first().copied().unwrap_or("");
                let rc: i32 = rc.parse().unwrap_or(-1);
                let took: u64 = t1
                    .parse::<u64>()
                    .unwrap_or(0)
                    .saturating_sub(t0.parse().unwrap_or(0));
                if took > ESCALATION_BOUND_MS {
                    failures.push(format!(
                        "{tag} #{i} ({c}): its client took {took} ms (bound {ESCALATION_BOUND_MS})"
                    ));
                }
                let host_killed = *c == "s" && rc == 128 + 9 && component == Component::HostCommand;
                match rc {
                    0 => tally.completed += 1,
                    _ if host_killed => tally.host_killed += 1,
                    240..=244 if err.contains("lazaret-escalate") => tally.refused += 1,
                    _ => {}
                }
                match rc {
                    0 => {
                        if *c == "t" && !workspace.join(format!("esc/{tag}-{i}.ran")).exists() {
                            failures.push(format!(
                                "{tag} #{i}: lazaret-escalate -- touch said 0, the file is not there"
                            ));
                        }
                    }
                    _ if host_killed => {}
                    240..=244 if err.contains("lazaret-escalate") => {
                        if unharmed {
                            failures.push(format!(
                                "{tag} #{i} ({c}): status {rc} though nothing fatal happened to its session: {err}"
                            ));
                        }
                    }
                    _ => failures.push(format!(
                        "{tag} #{i} ({c}): status {rc} without a clear error: {err:?}"
                    )),
                }
            }
            ["dns", i, rc] => {
                if *rc == "0" {
                    failures.push(format!("{tag}: refused name probe-{i} resolved"));
                }
            }
            ["done"] => {}
            _ => failures.push(format!("{tag}: unreadable log line {line:?}")),
        }
    }
    if completed {
        if !text.lines().any(|l| l == "done") {
            failures.push(format!(
                "{tag}: its CLI exited 0 but the loop did not finish: {text:?}"
            ));
        }
        for (i, c) in &started {
            failures.push(format!(
                "{tag} #{i} ({c}): started, never ended, yet its CLI exited 0"
            ));
        }
    }
    tally.interrupted += started.len() as u32;
    tally
}

fn check_new_traces(ws: &TestWorkspace, seen: &mut BTreeSet<String>, failures: &mut Vec<String>) {
    let dir = ws.dev.home.join(".local/state/lazaret/traces");
    let mut new = 0;
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with(ws.domain.as_str()) || seen.contains(&name) {
            continue;
        }
        new += 1;
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        match lazaret::coordinator::trace::Trace::from_jsonl(&text) {
            Ok(trace) => {
                if let Err(e) = lazaret::coordinator::trace::replay(&trace) {
                    failures.push(format!(
                        "trace {name} does not conform to the model: {e}\n{text}"
                    ));
                }
            }
            Err(e) => failures.push(format!("trace {name} unreadable: {e}")),
        }
        seen.insert(name);
    }
    if new == 0 {
        failures.push(format!("no new trace of the Domain in {}", dir.display()));
    }
}

fn spawn(ws: &TestWorkspace, index: usize, cmd: &str, tx: &mpsc::Sender<(usize, Run)>) -> u32 {
    let child: Child = ws.spawn(&["sh", "-c", cmd]);
    let pid = child.id();
    let tx = tx.clone();
    std::thread::spawn(move || {
        let _ = tx.send((index, support::finish(child)));
    });
    pid
}

/// The developer's `lazaret SUBCOMMAND` processes working in the trial's workspace.
fn lazaret_in_workspace(ws: &TestWorkspace, table: &[Proc], subcommand: &str) -> Vec<Proc> {
    let bin = lazaret_bin().to_string_lossy().into_owned();
    table
        .iter()
        .filter(|p| {
            !p.zombie
                && p.uid == ws.dev.uid
                && p.argv.first() == Some(&bin)
                && p.argv.get(1).map(String::as_str) == Some(subcommand)
                && p.cwd.as_deref() == Some(ws.path.as_path())
        })
        .cloned()
        .collect()
}

/// `lazaret tui -- sh -c CMD` on a terminal of its own (`script`, 120×40): its first pane is a
/// session the coordinator owns, which outlives the TUI. The TUI stays open after the pane's
/// command ends (as it does for a developer): the trial ends it (the kill), or, when the
/// kill found no TUI, [`end_tui`] does.
fn spawn_tui(ws: &TestWorkspace, index: usize, cmd: &str, tx: &mpsc::Sender<(usize, Run)>) -> u32 {
    let quote = |a: &str| format!("'{}'", a.replace('\'', "'\\''"));
    let mut inner: Vec<String> = vec!["env".into()];
    inner.extend(ws.env_args());
    inner.push(lazaret_bin().to_string_lossy().into_owned());
    inner.push("tui".into());
    if let Some(p) = &ws.profile {
        inner.extend(["--profile".to_owned(), p.clone()]);
    }
    inner.extend([
        "--".to_owned(),
        "sh".to_owned(),
        "-c".to_owned(),
        cmd.to_owned(),
    ]);
    let line = format!(
        "stty rows 40 cols 120; exec {}",
        inner.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
    );
    let mut child = ws
        .dev
        .command("script")
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .current_dir(&ws.path)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawning lazaret tui under script");
    let pid = child.id();
    let tx = tx.clone();
    std::thread::spawn(move || {
        // The terminal's input stays open while the TUI runs (an EOF would be typed into it).
        let input = child.stdin.take();
        let run = support::finish(child);
        drop(input);
        let _ = tx.send((index, run));
    });
    pid
}

/// Ends the trial's TUI when the kill did not (SIGTERM: it detaches, as on a closed window).
fn end_tui(ws: &TestWorkspace) {
    if let Some(p) = find_target(Component::Tui, 0, ws, &procs()) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(p.pid as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
}

fn last_line(s: &str) -> String {
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(160)
        .collect()
}

fn trial(
    n: u64,
    plan: &Plan,
    ws: &TestWorkspace,
    sums: &str,
    traces: &mut BTreeSet<String>,
) -> Outcome {
    let mut failures = Vec::new();
    let mut tokens = Tokens {
        domain: ws.domain.as_str().to_owned(),
        workspace: ws.path.clone(),
        uid: ws.dev.uid,
        ids: BTreeSet::new(),
    };
    let tag = |i: usize| {
        if i == 0 {
            format!("t{n}-p")
        } else {
            format!("t{n}-x{i}")
        }
    };
    let (tx, rx) = mpsc::channel::<(usize, Run)>();
    let start = Instant::now();
    let mut launchers: BTreeMap<usize, u32> = BTreeMap::new();
    let primary = script(&tag(0), &plan.sessions[0], plan.pace_ms, plan.hold_s);
    let launch = if plan.component == Component::Tui {
        spawn_tui
    } else {
        spawn
    };
    launchers.insert(0, launch(ws, 0, &primary, &tx));
    let mut done: BTreeMap<usize, Run> = BTreeMap::new();
    let mut killed: Option<Proc> = None;
    let mut killed_index: Option<usize> = None;
    let mut moment_ms = None;
    let mut phase = String::from("-");
    for (at, event) in &plan.events {
        let due = start + Duration::from_millis(*at);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        match event {
            Event::Spawn(i) => {
                launchers.insert(
                    *i,
                    spawn(ws, *i, &script(&tag(*i), &plan.sessions[*i], 0, 0), &tx),
                );
            }
            Event::Ps => {
                let r = ws.lazaret(&["ps", "--json"]);
                if r.code != Some(0)
                    || serde_json::from_str::<serde_json::Value>(&r.stdout).is_err()
                {
                    failures.push(format!("lazaret ps --json during the trial: {r:?}"));
                }
            }
            Event::StateList => {
                let r = ws.lazaret(&["state", "list", "--json"]);
                if r.code != Some(0)
                    || serde_json::from_str::<serde_json::Value>(&r.stdout).is_err()
                {
                    failures.push(format!("lazaret state list --json during the trial: {r:?}"));
                }
            }
            Event::Kill => {
                if plan.at_teardown {
                    let deadline = Instant::now() + CLI_BOUND;
                    while done.len() < launchers.len() && Instant::now() < deadline {
                        if let Ok((i, run)) = rx.recv_timeout(Duration::from_millis(10)) {
                            done.insert(i, run);
                        }
                    }
                }
                let bound = if plan.at_teardown {
                    Duration::from_secs(3)
                } else {
                    TARGET_BOUND
                };
                // Until the target is there, or every CLI so far has exited (no Domain).
                let found = wait_for(bound, || {
                    while let Ok((i, run)) = rx.try_recv() {
                        done.insert(i, run);
                    }
                    if done.len() == launchers.len() && !plan.at_teardown {
                        return Some(None);
                    }
                    let table = procs();
                    tokens.learn(&table);
                    find_target(plan.component, plan.pick, ws, &table).map(|p| Some((p, table)))
                });
                if let Some(None) = found {
                    phase = "every-cli-exited".into();
                }
                if let Some(Some((target, table))) = found {
                    phase = if plan.at_teardown {
                        "after-the-last-cli".into()
                    } else if ws.runtime_dir().join("status.json").exists() {
                        "published".into()
                    } else if ws.runtime_dir().join("resources").exists() {
                        "starting-or-stopping".into()
                    } else {
                        "no-resources".into()
                    };
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(target.pid as i32),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                    moment_ms = Some(start.elapsed().as_millis() as u64);
                    killed_index = launchers
                        .iter()
                        .find(|(_, l)| descends(&table, target.pid, **l))
                        .map(|(i, _)| *i)
                        .filter(|_| matches!(plan.component, Component::Cli | Component::Tui));
                    killed = Some(target);
                    // The coordinator notices a dead sidecar while the Domain runs: the
                    // Domain lists the failure (observation 4 of the campaign's journal).
                    if plan.component == Component::Sidecar && phase == "published" {
                        let noticed = wait_for(Duration::from_secs(5), || {
                            let r = ws.lazaret(&["ps", "--json"]);
                            if r.stdout.contains("the Network Sidecar exited") {
                                return Some(true);
                            }
                            (!ws.runtime_dir().join("status.json").exists()).then_some(false)
                        });
                        if noticed.is_none() {
                            failures.push(
                                "the sidecar was killed; `lazaret ps --json` listed no failure"
                                    .into(),
                            );
                        }
                    }
                }
            }
        }
    }
    // A TUI the kill did not find is detached now (its pane's session runs on).
    if plan.component == Component::Tui && killed.is_none() {
        end_tui(ws);
    }
    // Every CLI exits, within the bound.
    let deadline = Instant::now() + CLI_BOUND;
    while done.len() < launchers.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((i, run)) => {
                done.insert(i, run);
            }
            Err(_) => break,
        }
        tokens.learn(&procs());
    }
    let mut ended: BTreeMap<usize, Ended> = done
        .into_iter()
        .map(|(i, run)| {
            let killed = killed_index == Some(i);
            (
                i,
                Ended {
                    index: i,
                    killed,
                    run,
                },
            )
        })
        .collect();
    if ended.len() < launchers.len() {
        let hung: Vec<String> = launchers
            .keys()
            .filter(|i| !ended.contains_key(i))
            .map(|i| tag(*i))
            .collect();
        failures.push(format!(
            "CLIs still running {CLI_BOUND:?} after the kill: {hung:?}"
        ));
        for pid in launchers.values() {
            let table = procs();
            for p in table.iter().filter(|p| descends(&table, p.pid, *pid)) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(p.pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
        while ended.len() < launchers.len() {
            match rx.recv_timeout(Duration::from_secs(30)) {
                Ok((i, run)) => {
                    ended.insert(
                        i,
                        Ended {
                            index: i,
                            killed: true,
                            run,
                        },
                    );
                }
                Err(_) => break,
            }
        }
    }
    let mut codes = Vec::new();
    for e in ended.values() {
        let code = e
            .run
            .code
            .map(|c| c.to_string())
            .unwrap_or_else(|| "signal".into());
        if e.run.code == Some(0) {
            codes.push(format!("{}={code}", tag(e.index)));
        } else {
            codes.push(format!(
                "{}={code} ({})",
                tag(e.index),
                last_line(&e.run.stderr)
            ));
        }
        // A CLI that failed says why (the one the trial killed cannot).
        if e.run.code != Some(0) && !e.killed && e.run.stderr.trim().is_empty() {
            failures.push(format!(
                "{}: exit {:?} with nothing on stderr",
                tag(e.index),
                e.run.code
            ));
        }
        // A sandbox that went away is Lazaret's failure, said as such (125), never the status
        // of runsc, nsenter or podman passed on as the command's (observation 3): the commands
        // of a trial end 0 otherwise.
        if plan.component == Component::RunscSandbox
            && killed.is_some()
            && !matches!(e.run.code, Some(0) | Some(125))
        {
            failures.push(format!(
                "{}: exit {:?} (not the command's) after runsc-sandbox was killed: {}",
                tag(e.index),
                e.run.code,
                last_line(&e.run.stderr)
            ));
        }
        // Killing one CLI, a TUI or one host command harms no other session.
        if matches!(
            plan.component,
            Component::Cli | Component::HostCommand | Component::Tui
        ) && killed.is_some()
            && !e.killed
            && e.run.code != Some(0)
        {
            failures.push(format!(
                "{}: exit {:?} after the {} was killed: {}",
                tag(e.index),
                e.run.code,
                plan.component.name(),
                last_line(&e.run.stderr)
            ));
        }
    }
    // The next run recovers (FR-7) and finds the known files intact (SR-14, OR-5).
    let next = ws.run(&["sh", "-c", SUMS]);
    tokens.learn(&procs());
    if next.code != Some(0) {
        failures.push(format!("the next lazaret run failed: {next:?}"));
    } else if next.stdout != sums {
        failures.push(format!(
            "State Anchor data changed:\nexpected {sums}\nfound {}",
            next.stdout
        ));
    }
    // Nothing of the Domain is left.
    check(&mut failures, "teardown", || ws.wait_torn_down());
    let left = wait_for(Duration::from_secs(15), || {
        let table = procs();
        let mine = tokens.mine(&table);
        mine.is_empty().then_some(())
    });
    if left.is_none() {
        let table = procs();
        let mine: Vec<String> = tokens
            .mine(&table)
            .iter()
            .map(|p| format!("{} {}", p.pid, p.cmdline()))
            .collect();
        failures.push(format!("processes left: {mine:#?}"));
    }
    let stale = runtime_leftovers(ws, &tokens);
    if !stale.is_empty() {
        failures.push(format!("runtime state left: {stale:?}"));
    }
    // Every escalation got its result or a clear error.
    let mut escalations = Tally::default();
    for e in ended.values() {
        if matches!(plan.sessions[e.index], Work::Loop(_)) {
            escalations.add(check_log(
                &ws.path,
                &tag(e.index),
                e,
                plan.component,
                &mut failures,
            ));
        }
    }
    // The session of a killed TUI's pane is the coordinator's: it ran to its end.
    if plan.component == Component::Tui {
        let log = std::fs::read_to_string(ws.path.join("esc").join(format!("{}.log", tag(0))))
            .unwrap_or_default();
        if !log.is_empty() && !log.lines().any(|l| l == "done") {
            failures.push(format!(
                "the TUI's pane session did not outlive the TUI: its log ends {:?}",
                last_line(&log)
            ));
        }
    }
    check_new_traces(ws, traces, &mut failures);
    if !failures.is_empty() {
        clean_up(ws, &tokens);
    }
    Outcome {
        killed: killed.map(|p| {
            format!(
                "{} {}",
                p.pid,
                p.cmdline().chars().take(80).collect::<String>()
            )
        }),
        moment_ms,
        phase,
        codes,
        escalations,
        failures,
    }
}

/// After a failed trial: kill what is left of the Domain and let a run recover the rest, so
/// the next trial starts clean.
fn clean_up(ws: &TestWorkspace, tokens: &Tokens) {
    for p in tokens.mine(&procs()) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(p.pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let _ = ws.run(&["true"]);
    let _ = catch_unwind(AssertUnwindSafe(|| ws.wait_torn_down()));
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

#[test]
fn random_kills_leak_nothing_lose_no_result_and_keep_the_state_anchor() {
    let trials = env_u64("LAZARET_FAULT_TRIALS").unwrap_or(3);
    let seed = env_u64("LAZARET_FAULT_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
            .max(1)
    });
    let max = env_u64("LAZARET_FAULT_MAX_SECS").map(Duration::from_secs);
    // Debugging: every trial kills this component (its plan otherwise unchanged).
    let only = std::env::var("LAZARET_FAULT_COMPONENT").ok().map(|n| {
        *COMPONENTS
            .iter()
            .find(|c| c.name() == n)
            .unwrap_or_else(|| panic!("no component {n}"))
    });
    println!("fault campaign: LAZARET_FAULT_SEED={seed} LAZARET_FAULT_TRIALS={trials}");
    let dev = Dev::get();
    let ws = dev.workspace("fault").with_profile(PROFILE, CONFIG);
    let first = ws.run(&["sh", "-c", &format!("{KNOWN_FILES} && {SUMS}")]);
    assert_eq!(first.code, Some(0), "writing the known file set: {first:?}");
    let sums = first.stdout.clone();
    assert_eq!(sums.lines().count(), 6, "{first:?}");
    ws.wait_torn_down();
    let mut traces = BTreeSet::new();
    let mut first_failures = Vec::new();
    check_new_traces(&ws, &mut traces, &mut first_failures);
    assert!(first_failures.is_empty(), "{first_failures:#?}");

    let began = Instant::now();
    let mut per: BTreeMap<Component, (u32, u32, u32)> = BTreeMap::new();
    let mut failed: Vec<String> = Vec::new();
    let mut ran = 0;
    let mut escalations = Tally::default();
    for n in 0..trials {
        if max.is_some_and(|m| began.elapsed() > m) {
            println!("stopping: LAZARET_FAULT_MAX_SECS reached after {ran} trials");
            break;
        }
        let mut p = plan(trial_seed(seed, n));
        if let Some(c) = only {
            p.component = c;
            if let (Component::HostCommand, Work::Loop(k)) = (c, &mut p.sessions[0]) {
                k.push('s');
            }
        }
        if std::env::var_os("LAZARET_FAULT_AT_TEARDOWN").is_some() {
            p.at_teardown = true;
        }
        let t0 = Instant::now();
        let o = trial(n, &p, &ws, &sums, &mut traces);
        ran += 1;
        escalations.add(o.escalations);
        let entry = per.entry(p.component).or_default();
        entry.0 += 1;
        if o.killed.is_some() {
            entry.1 += 1;
        }
        if !o.failures.is_empty() {
            entry.2 += 1;
        }
        println!(
            "trial {n} seed={} kill={} planned_at={} killed_at={} phase={} target={} sessions={} escalations={}/{}/{}/{} clis=[{}] took={:.1}s outcome={}",
            p.seed,
            p.component.name(),
            if p.at_teardown {
                "teardown".to_owned()
            } else {
                format!("{}ms", p.kill_at_ms)
            },
            o.moment_ms.map(|m| format!("{m}ms")).unwrap_or_else(|| "never (absent)".into()),
            o.phase,
            o.killed.as_deref().unwrap_or("-"),
            p.sessions.len(),
            o.escalations.completed,
            o.escalations.host_killed,
            o.escalations.refused,
            o.escalations.interrupted,
            o.codes.join(" "),
            t0.elapsed().as_secs_f64(),
            if o.failures.is_empty() { "ok" } else { "FAILED" }
        );
        for f in &o.failures {
            println!("  failure: {f}");
            failed.push(format!(
                "trial {n} (seed {}, {}): {f}",
                p.seed,
                p.component.name()
            ));
        }
    }
    println!(
        "fault campaign: {ran} trials, {} escalations logged: {} completed, {} host command killed (137), \
         {} refused with the client's message (240-244), {} interrupted with their session; {:.0}s",
        escalations.total(),
        escalations.completed,
        escalations.host_killed,
        escalations.refused,
        escalations.interrupted,
        began.elapsed().as_secs_f64()
    );
    for (c, (planned, killed, bad)) in &per {
        println!(
            "  {:<14} trials {planned:>3}  killed {killed:>3}  failed {bad:>3}",
            c.name()
        );
    }
    println!("  failures: {}", failed.len());
    assert!(
        failed.is_empty(),
        "fault campaign (seed {seed}) failures:\n{}",
        failed.join("\n")
    );
    ws.assert_nothing_left();
}

#[test]
fn trial_plans_are_reproducible_from_their_seed() {
    let a = plan(trial_seed(42, 7));
    let b = plan(trial_seed(42, 7));
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    assert_eq!(trial_seed(42, 0), 42);
    // Over many seeds every component is chosen and the kill moment spreads.
    let plans: Vec<Plan> = (0..200).map(|i| plan(trial_seed(7, i))).collect();
    let components: BTreeSet<Component> = plans.iter().map(|p| p.component).collect();
    assert_eq!(components.len(), COMPONENTS.len());
    assert!(plans.iter().any(|p| p.kill_at_ms < 500));
    assert!(plans.iter().any(|p| p.at_teardown));
    assert!(plans.iter().any(|p| p.kill_at_ms > 5000));
    assert!(plans
        .iter()
        .filter(|p| p.component == Component::HostCommand)
        .all(|p| matches!(&p.sessions[0], Work::Loop(k) if k.contains('s'))));
}

fn kill(pid: u32) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
}

/// Regression (found by the campaign): podman has the OCI runtime delete a container's state
/// only through the container's conmon, so with conmon killed `podman rm` left runsc's state,
/// lock and socket (sandbox) and runc's state dir (sidecar) in `$XDG_RUNTIME_DIR` — on an
/// orderly teardown, on the next run's recovery after a dead coordinator, and when the sidecar's
/// conmon is killed during the teardown itself (held there by `LAZARET_TEST_PAUSE_AT`).
#[test]
fn killed_conmons_leave_no_oci_runtime_state_after_teardown_or_recovery() {
    let dev = Dev::get();
    let ws = dev.workspace("fault-conmon").with_profile(PROFILE, CONFIG);
    for case in ["teardown", "recovery", "during-teardown"] {
        let env: &[&str] = if case == "during-teardown" {
            &["LAZARET_TEST_PAUSE_AT=stop-sidecar"]
        } else {
            &[]
        };
        let holder = ws.spawn_in("", env, &["sh", "-c", support::HOLD], false);
        let mut tokens = Tokens {
            domain: ws.domain.as_str().to_owned(),
            workspace: ws.path.clone(),
            uid: dev.uid,
            ids: BTreeSet::new(),
        };
        wait_for(TARGET_BOUND, || (ws.sessions().len() == 1).then_some(()))
            .expect("the session is registered");
        // pick 0: the sandbox's conmon, 1: the sidecar's.
        let picks: &[u64] = if case == "during-teardown" {
            &[]
        } else {
            &[0, 1]
        };
        for pick in picks {
            let target = wait_for(TARGET_BOUND, || {
                let table = procs();
                tokens.learn(&table);
                find_target(Component::Conmon, *pick, &ws, &table)
            })
            .expect("the Domain's conmon processes");
            kill(target.pid);
        }
        tokens.learn(&procs());
        assert_eq!(tokens.ids.len(), 2, "{case}: {:?}", tokens.ids);
        match case {
            "recovery" => {
                let coordinator = wait_for(TARGET_BOUND, || {
                    find_target(Component::Coordinator, 0, &ws, &procs())
                })
                .expect("the coordinator");
                kill(coordinator.pid);
                let r = support::finish(holder);
                assert_eq!(r.code, Some(125), "{r:?}");
                let next = ws.run(&["true"]);
                assert_eq!(next.code, Some(0), "{next:?}");
                assert!(next.stderr.contains("recovered the Domain"), "{next:?}");
            }
            "during-teardown" => {
                ws.release();
                let r = support::finish(holder);
                assert_eq!(r.code, Some(0), "{r:?}");
                // The sandbox has stopped; the coordinator pauses before removing the sidecar.
                let conmon = find_target(Component::Conmon, 1, &ws, &procs())
                    .expect("the sidecar's conmon while the teardown pauses");
                kill(conmon.pid);
            }
            _ => {
                ws.release();
                let r = support::finish(holder);
                assert_eq!(r.code, Some(0), "{r:?}");
            }
        }
        ws.wait_torn_down();
        assert_eq!(
            runtime_leftovers(&ws, &tokens),
            Vec::<String>::new(),
            "{case}"
        );
        let _ = ws.host_sh("rm -f .go");
    }
}

/// The log checks catch what they are for: a client's exit 0 without the host command having
/// run, an error status without the client's message, a hang, a result missing though the CLI
/// exited 0, an error where nothing fatal happened, a refused name that resolved.
#[test]
fn escalation_log_checks_catch_lost_silent_and_hung_results() {
    let dir = tempfile::tempdir().expect("tempdir");
    let esc = dir.path().join("esc");
    std::fs::create_dir_all(&esc).expect("esc dir");
    std::fs::write(esc.join("ok-1.ran"), "").expect("ran");
    let ended = |code: Option<i32>, killed: bool| Ended {
        index: 0,
        killed,
        run: Run {
            code,
            stdout: String::new(),
            stderr: String::new(),
        },
    };
    let run = |log: &str, e: &Ended, c: Component| {
        std::fs::write(esc.join("x.log"), log).expect("log");
        let mut failures = Vec::new();
        let tally = check_log(dir.path(), "x", e, c, &mut failures);
        (tally, failures)
    };
    let fine = "start 1 t 1000\nend 1 t 0 1000 1100 \nstart 2 s 1200\nend 2 s 137 1200 1300 \ndns 3 2\ndone\n";
    std::fs::write(esc.join("x-1.ran"), "").expect("ran");
    let (t, f) = run(fine, &ended(Some(0), false), Component::HostCommand);
    assert_eq!(f, Vec::<String>::new());
    assert_eq!(
        (t.completed, t.host_killed, t.refused, t.interrupted),
        (1, 1, 0, 0)
    );
    let cases: [(&str, Option<i32>, Component, &str); 7] = [
        (
            "start 2 t 1\nend 2 t 0 1 2 \ndone\n",
            Some(0),
            Component::Coordinator,
            "the file is not there",
        ),
        (
            "start 1 e 1\nend 1 e 241 1 2 \n",
            Some(125),
            Component::Coordinator,
            "without a clear error",
        ),
        (
            "start 1 e 1\nend 1 e 0 1 60000 \ndone\n",
            Some(0),
            Component::Sidecar,
            "took",
        ),
        ("start 1 e 1\n", Some(0), Component::Sidecar, "never ended"),
        (
            "start 1 e 1\nend 1 e 242 1 2 lazaret-escalate: cancelled\ndone\n",
            Some(0),
            Component::Cli,
            "though nothing fatal",
        ),
        ("dns 1 0\ndone\n", Some(0), Component::Conmon, "resolved"),
        (
            "start 1 s 1\nend 1 s 137 1 2 \ndone\n",
            Some(0),
            Component::Coordinator,
            "without a clear error",
        ),
    ];
    for (log, code, c, expect) in cases {
        let (_, f) = run(log, &ended(code, false), c);
        assert!(f.iter().any(|x| x.contains(expect)), "{log:?}: {f:?}");
    }
    // A client that went with its killed session is interrupted, not a failure.
    let (t, f) = run("start 1 e 1\n", &ended(None, true), Component::Cli);
    assert_eq!(f, Vec::<String>::new());
    assert_eq!(t.interrupted, 1);
}

/// Regression (found by the campaign, seed 1796502490185256705): the sandbox's conmon killed
/// while `lazaret-runsc create` runs — the Domain's start fails (125, podman's error) — left
/// the wrapper's init with runsc's sandbox and gofer running after the teardown: podman had no
/// pid of them, so `podman rm` did not stop them; their runsc state stayed too.
#[test]
fn a_conmon_killed_while_the_sandbox_is_created_leaves_no_runsc_behind() {
    let dev = Dev::get();
    let ws = dev.workspace("fault-create").with_profile(PROFILE, CONFIG);
    let mut tokens = Tokens {
        domain: ws.domain.as_str().to_owned(),
        workspace: ws.path.clone(),
        uid: dev.uid,
        ids: BTreeSet::new(),
    };
    let holder = ws.spawn(&["sh", "-c", support::HOLD]);
    let name = format!("lazaret-{}-sandbox", ws.domain.as_str());
    let deadline = Instant::now() + Duration::from_secs(60);
    let killed = loop {
        let table = procs();
        let conmon = table
            .iter()
            .find(|p| !p.zombie && p.base() == "conmon" && p.argv.contains(&name));
        // runsc's sandbox process has started below the wrapper's `create`: podman does not
        // know its pid yet (conmon tells it once `create` returns).
        let creating = conmon.and_then(|c| {
            table.iter().find(|p| {
                !p.zombie
                    && p.argv.first().map(String::as_str) == Some("runsc-sandbox")
                    && descends(&table, p.pid, c.pid)
            })
        });
        if let (Some(c), Some(_)) = (conmon, creating) {
            tokens.learn(&table);
            kill(c.pid);
            break true;
        }
        if Instant::now() > deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    assert!(killed, "never saw the sandbox being created");
    ws.release();
    let r = support::finish(holder);
    // Killed within `create` (the usual case), the start fails; a machine slow enough to let
    // `create` return first runs the session instead. Nothing may be left either way.
    if r.code != Some(0) {
        assert!(r.stderr.contains("lazaret: error"), "{r:?}");
    } else {
        println!("the sandbox's create had returned before its conmon was killed");
    }
    ws.wait_torn_down();
    let left = wait_for(Duration::from_secs(10), || {
        tokens.mine(&procs()).is_empty().then_some(())
    });
    let mine: Vec<String> = tokens
        .mine(&procs())
        .iter()
        .map(|p| p.cmdline().chars().take(120).collect())
        .collect();
    assert!(left.is_some(), "processes left: {mine:#?}");
    assert_eq!(runtime_leftovers(&ws, &tokens), Vec::<String>::new());
    // And the Domain starts again.
    let next = ws.run(&["true"]);
    assert_eq!(next.code, Some(0), "{next:?}");
    ws.wait_torn_down();
}

/// Regression (observation 3 of the campaign): `runsc-sandbox` killed under a running command
/// made `lazaret run` exit 128 with only runsc's `WaitPID` error — runsc's own status, read as
/// the command's. Now the CLI sees the sandbox is gone and says so as Lazaret's failure (125);
/// the next run starts a new sandbox.
#[test]
fn a_killed_runsc_sandbox_is_reported_as_the_sandbox_stopping_not_as_the_command_s_status() {
    let dev = Dev::get();
    let ws = dev.workspace("fault-sandbox-gone");
    let started = ws.path.join(".started");
    let holder = ws.spawn(&["sh", "-c", &format!("touch .started; {}", support::HOLD)]);
    let name = format!("lazaret-{}-sandbox", ws.domain.as_str());
    let until = Instant::now() + Duration::from_secs(90);
    while !started.exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(started.exists(), "the command never started");
    let table = procs();
    let sandbox = table
        .iter()
        .find(|p| !p.zombie && p.base() == "conmon" && p.argv.contains(&name))
        .and_then(|c| {
            table.iter().find(|p| {
                !p.zombie
                    && p.argv.first().map(String::as_str) == Some("runsc-sandbox")
                    && descends(&table, p.pid, c.pid)
            })
        })
        .map(|p| p.pid);
    let Some(sandbox) = sandbox else {
        panic!("no runsc-sandbox below the sandbox's conmon");
    };
    kill(sandbox);
    let r = support::finish(holder);
    assert_eq!(r.code, Some(125), "{r:?}");
    assert!(
        r.stderr.contains(
            "the Agent Sandbox stopped while the command ran: its runsc-sandbox process was \
             killed by signal 9 (SIGKILL)"
        ),
        "{r:?}"
    );
    ws.wait_torn_down();
    let next = ws.run(&["true"]);
    assert_eq!(next.code, Some(0), "{next:?}");
    ws.wait_torn_down();
}

/// The two sides' branches, tags and `HEAD` as one text: the host's (`host`), or printed inside.
const REFS: &str = "git for-each-ref --format='%(objectname) %(refname)' refs/heads refs/tags; \
                    git symbolic-ref -q HEAD || git rev-parse HEAD";

/// The git boundary killed at any moment (issue #30): SIGKILL of the coordinator while its
/// rounds carry an agent's commits, at random moments, and the boundary's own kill point between
/// the host's transaction and the sandbox's (in the coordinator's first round and in the CLI's
/// last). Each time both repositories stay valid (`git fsck` on the host and inside), the next
/// start converges (the same branches, tags and `HEAD` on both sides), and every commit the
/// agent made reached the host.
#[test]
fn a_git_boundary_killed_at_any_moment_leaves_both_repositories_valid_and_converges() {
    let dev = Dev::get();
    let ws = dev.workspace("fault-git");
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    println!("git boundary faults: seed {seed}");
    let mut rng = seed;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut made: Vec<String> = Vec::new();
    let check = |made: &[String], what: &str| {
        let fsck = ws.host_sh("git fsck --no-dangling >/dev/null 2>&1 && echo ok || echo BROKEN");
        assert_eq!(fsck, "ok\n", "{what}: the host repository is broken");
        let r = ws.run(&[
            "sh",
            "-c",
            &format!("git fsck --no-dangling >/dev/null 2>&1 || echo BROKEN; {REFS}"),
        ]);
        assert_eq!(r.code, Some(0), "{what}: {r:?}");
        let host = ws.host_sh(REFS);
        assert_eq!(
            r.stdout, host,
            "{what}: the two sides did not converge: {r:?}"
        );
        let log = ws.host_sh("git log --all --format=%s");
        for m in made {
            assert!(
                log.lines().any(|l| l == m),
                "{what}: the agent's commit {m} never reached the host"
            );
        }
        ws.wait_torn_down();
    };
    // 1. The kill point between the two sides, in every boundary process of a run (after a
    //    first run made the private directory, so the round that carries k0 is the first
    //    with anything to do).
    assert_eq!(ws.run(&["true"]).code, Some(0));
    ws.wait_torn_down();
    let r = ws.run_with_env(
        &["LAZARET_TEST_KILL_AT=git-boundary-between-sides"],
        &[
            "sh",
            "-c",
            "git -c user.name=a -c user.email=b commit -q --allow-empty -m k0",
        ],
    );
    println!("kill point run: {:?}", r.code);
    made.push("k0".into());
    let _ = dev.sh(&format!(
        "pkill -9 -f -- '__coordinator .*{}' || true",
        ws.path.display()
    ));
    ws.host_sh("git -c user.name=d -c user.email=d@l commit -q --allow-empty -m dev0");
    check(&made, "after the kill point");
    // 2. SIGKILL of the coordinator at random moments of an agent's commit loop.
    for trial in 0..3 {
        let n = 20;
        let loop_ = format!(
            "for i in $(seq {n}); do git -c user.name=a -c user.email=b commit -q --allow-empty -m t{trial}-$i \
             && echo t{trial}-$i; git branch -f b{trial} HEAD; sleep 0.1; done; sleep 30"
        );
        let child = ws.spawn(&["sh", "-c", &loop_]);
        let at = Duration::from_millis(800 + next() % 2500);
        std::thread::sleep(at);
        let coordinators: Vec<u32> = support::processes_matching("__coordinator")
            .into_iter()
            .filter(|(_, c)| c.contains(&ws.path.display().to_string()))
            .map(|(p, _)| p)
            .collect();
        for pid in &coordinators {
            kill(*pid);
        }
        let run = support::finish(child);
        let before = made.len();
        made.extend(run.stdout.lines().map(str::to_owned));
        println!(
            "trial {trial}: coordinator killed after {at:?} ({coordinators:?}), cli {:?}, {} agent commits made",
            run.code,
            made.len() - before
        );
        check(&made, &format!("trial {trial}"));
    }
    ws.assert_nothing_left();
}
