//! `lazaret-sidecar`: PID 1 of the Network Sidecar, a trusted shell-less runc container that owns
//! the Domain's network namespace (spec §3.5). It loads the policy Lazaret rendered, checks that
//! IPv6 is off, reports `ready` (or `failed: …`) in its host-private status dir, then waits.

use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitCode};

use nix::sys::signal::{SigSet, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;

const DIR: &str = "/run/lazaret";
/// How often the denial sets are read for the ledger.
const POLL: std::time::Duration = std::time::Duration::from_millis(500);
/// The tick while nothing is refused, held or changed, when both wake-ups work (issue #18).
const IDLE_POLL: std::time::Duration = std::time::Duration::from_secs(10);
const NFT: &str = "/usr/sbin/nft";

fn report(name: &str, text: &str) -> std::io::Result<()> {
    let tmp = Path::new(DIR).join(format!(".{name}.tmp"));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, Path::new(DIR).join(name))
}

fn install_policy() -> Result<(), String> {
    let policy = Path::new(DIR).join("policy.nft");
    let out = Command::new(NFT)
        .arg("-f")
        .arg(&policy)
        .output()
        .map_err(|e| format!("cannot run {NFT}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "nft -f {} failed: {}",
            policy.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    for knob in ["all", "default"] {
        let path = format!("/proc/sys/net/ipv6/conf/{knob}/disable_ipv6");
        match std::fs::read_to_string(&path) {
            Ok(v) if v.trim() == "1" => {}
            Ok(v) => return Err(format!("{path} is {} (IPv6 must be disabled)", v.trim())),
            // No IPv6 in this kernel at all: nothing to disable.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("reading {path}: {e}")),
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut signals = SigSet::empty();
    for s in [
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
        Signal::SIGCHLD,
        Signal::SIGUSR1,
    ] {
        signals.add(s);
    }
    if let Err(e) = signals.thread_block() {
        eprintln!("lazaret-sidecar: blocking signals: {e}");
        return ExitCode::FAILURE;
    }
    if let Err(e) = install_policy() {
        eprintln!("lazaret-sidecar: {e}");
        let _ = report("failed", &e);
        return ExitCode::FAILURE;
    }
    let mut run_rules = match start_dns() {
        Ok(run_rules) => run_rules,
        Err(e) => {
            eprintln!("lazaret-sidecar: {e}");
            let _ = report("failed", &e);
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = report("ready", "policy installed\n") {
        eprintln!("lazaret-sidecar: reporting ready: {e}");
        return ExitCode::FAILURE;
    }
    let mut ledger = Ledger::default();
    // Woken by the policy's log when something was refused or held; without that wake-up, the
    // sets are listed every tick as before.
    let woken = start_wakeups();
    // The host's new run rules wake the loop too (see `lazaret::network::rules_watch`).
    let rules_watched = lazaret::network::rules_watch::start(
        Path::new(DIR),
        lazaret::network::run_rules::RULES_FILE,
        || {
            let _ = nix::sys::signal::kill(nix::unistd::getpid(), Signal::SIGUSR1);
        },
    );
    let mut dirty = true;
    // After a wake-up the sets are looked at for a few more ticks: the log is rate-limited, so
    // the last packets of a burst are counted by a later look.
    let mut linger = 0u8;
    loop {
        // Asked-about destinations (`default = "ask"`) keep the tick: held names come from
        // the forwarder's thread, and their deadlines run out.
        let idle = woken && rules_watched && run_rules.held.is_none() && linger == 0 && !dirty;
        let signal = wait_signal(&signals, if idle { IDLE_POLL } else { POLL });
        if let Ok(Some(Signal::SIGUSR1)) = signal {
            linger = 3;
        }
        match signal {
            Ok(None) | Ok(Some(Signal::SIGUSR1)) => {
                dirty |= run_rules.poll();
                let holding = run_rules.held.as_ref().is_some_and(Held::holding);
                let table = if dirty || !woken || holding || linger > 0 {
                    list_table()
                } else {
                    None
                };
                linger = linger.saturating_sub(1);
                dirty = dirty && table.is_none();
                if let Some(table) = &table {
                    ledger.poll(table);
                }
                if let Some(held) = run_rules.held.as_mut() {
                    held.poll(table.as_deref(), &run_rules.current, &mut ledger);
                }
            }
            Ok(Some(Signal::SIGCHLD)) => {
                while let Ok(status) = waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
                    if status == nix::sys::wait::WaitStatus::StillAlive {
                        break;
                    }
                }
            }
            Ok(Some(_)) => return ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("lazaret-sidecar: waiting for signals: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
}

/// Subscribes to the policy's log (see `lazaret::network::nflog`) on a thread that sends this
/// process SIGUSR1 after a refused or held packet (at most about five times a second); false
/// when the subscription failed (the caller then lists its sets every tick).
fn start_wakeups() -> bool {
    use lazaret::network::nflog::LogSocket;
    let sock = match LogSocket::subscribe() {
        Ok(sock) => sock,
        Err(e) => {
            eprintln!(
                "lazaret-sidecar: no wake-ups from the policy's log ({e}); reading the denial sets every {} ms",
                POLL.as_millis()
            );
            return false;
        }
    };
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 8192];
        while sock.recv(&mut buf).is_ok() {
            // Whatever else comes within a moment is the same wake-up.
            std::thread::sleep(std::time::Duration::from_millis(150));
            sock.drain(&mut buf);
            let _ = nix::sys::signal::kill(nix::unistd::getpid(), Signal::SIGUSR1);
        }
        eprintln!(
            "lazaret-sidecar: the policy's log stopped; the ledger may lag until the next change"
        );
    });
    true
}

/// Waits for one of `signals` (blocked) at most `timeout`; `None` when none came.
fn wait_signal(signals: &SigSet, timeout: std::time::Duration) -> nix::Result<Option<Signal>> {
    let ts = libc::timespec {
        tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(1),
        tv_nsec: libc::c_long::from(timeout.subsec_nanos() as i32),
    };
    // SAFETY: the set and the timespec are valid for the call; no siginfo is requested.
    let n = unsafe { libc::sigtimedwait(signals.as_ref(), std::ptr::null_mut(), &ts) };
    if n < 0 {
        return match nix::errno::Errno::last() {
            nix::errno::Errno::EAGAIN | nix::errno::Errno::EINTR => Ok(None),
            e => Err(e),
        };
    }
    Signal::try_from(n).map(Some)
}

/// The denial ledger writer: reads the policy's denial sets and appends what grew.
#[derive(Default)]
struct Ledger {
    tracker: lazaret::runtime::denial_ledger::Tracker,
    full: bool,
}

/// The policy's table as `nft -j list table` prints it (sets with their elements).
fn list_table() -> Option<String> {
    match Command::new(NFT)
        .args([
            "-j",
            "list",
            "table",
            "inet",
            lazaret::runtime::network_policy::TABLE,
        ])
        .output()
    {
        Ok(out) if out.status.success() => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        _ => None,
    }
}

impl Ledger {
    fn poll(&mut self, table: &str) {
        use lazaret::runtime::denial_ledger::{parse_nft, unix_now};
        let entries = parse_nft(table);
        let lines = self.tracker.update(unix_now(), &entries);
        self.write(&lines);
    }

    fn write(&mut self, lines: &[lazaret::runtime::denial_ledger::Denial]) {
        use lazaret::runtime::denial_ledger::{append, LEDGER};
        if lines.is_empty() || self.full {
            return;
        }
        match append(&Path::new(DIR).join(LEDGER), lines) {
            Ok(true) => {}
            Ok(false) => {
                eprintln!(
                    "lazaret-sidecar: the denial ledger is full; later denials are not recorded"
                );
                self.full = true;
            }
            Err(e) => eprintln!("lazaret-sidecar: writing the denial ledger: {e}"),
        }
    }
}

/// Starts the DNS forwarder the sandbox resolves through (name rules, answers for allowed names
/// added to the policy's set before they are relayed). It runs until the sidecar exits; if it
/// fails, name resolution fails closed. Returns what applies the run-scoped rules.
fn start_dns() -> Result<RunRulesApplier, String> {
    use lazaret::network::{DefaultMode, DnsProxy, NameRules};
    use lazaret::runtime::network_policy::DnsSettings;
    let path = Path::new(DIR).join("dns.json");
    let text =
        std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let settings: DnsSettings =
        serde_json::from_str(&text).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let rules = NameRules::parse(&settings.allow_names, &settings.deny_names)?;
    let listen = std::net::UdpSocket::bind(settings.listen)
        .map_err(|e| format!("listening for DNS on {}: {e}", settings.listen))?;
    let mut applier = RunRulesApplier::default();
    let mode = match (settings.default_deny, settings.ask_timeout) {
        (false, _) => DefaultMode::Allow,
        (true, None) => DefaultMode::Deny,
        (true, Some(secs)) => {
            applier.held = Some(Held::new(secs, lazaret::network::HeldNames::default()));
            DefaultMode::Ask {
                timeout: std::time::Duration::from_secs(u64::from(secs)),
            }
        }
    };
    let answered = Answered {
        profile: rules.clone(),
        run: applier.names.clone(),
        run_rules: applier.name_rules.clone(),
        for_run_names: applier.answered.clone(),
    };
    let mut proxy = DnsProxy::new(listen, settings.upstream.into(), rules, mode)
        .with_mark(settings.mark)
        .with_run_allowed(applier.names.clone());
    if let Some((name, addr)) = &settings.host_name {
        proxy = proxy.with_local_name(name, *addr);
    }
    if let Some(held) = &applier.held {
        proxy = proxy.with_held(held.names.clone());
    }
    std::thread::spawn(move || {
        let result = proxy.serve(
            |name, records| answered.allow(name, records),
            |name, reason| {
                ledger_name_denial(name, reason);
            },
        );
        if let Err(e) = result {
            eprintln!("lazaret-sidecar: the DNS forwarder stopped: {e}");
        }
    });
    Ok(applier)
}

/// Where the addresses answered for an allowed name go.
struct Answered {
    /// The profile's name rules: their names' addresses go into the profile's set.
    profile: lazaret::network::NameRules,
    /// The names allowed for this run: theirs go into the run's set, remembered per pattern.
    run: lazaret::network::dns_proxy::RunNames,
    /// The run's name rules (either form): which sets an answer goes into.
    run_rules: RunNameRules,
    for_run_names: std::sync::Arc<std::sync::Mutex<lazaret::network::run_rules::AnsweredForNames>>,
}

/// The run's allowed name rules, shared with the forwarder's answers.
type RunNameRules = std::sync::Arc<std::sync::RwLock<Vec<lazaret::network::run_rules::Target>>>;

impl Answered {
    /// Adds the addresses answered for an allowed name to the policy's set, for the answer's
    /// TTL (at least 60 s, at most a day). Private addresses are added too: the policy's
    /// prefix rules, evaluated before the set, still refuse them unless a CIDR rule allows
    /// them (no rebinding). A name the run allows on one port only (the narrow form) admits
    /// its addresses on that port and protocol only.
    fn allow(&self, name: &str, records: &[(std::net::Ipv4Addr, u32)]) {
        use lazaret::network::NameVerdict;
        use lazaret::runtime::network_policy::DNS_ALLOWED_SET;
        if records.is_empty() {
            return;
        }
        if self.profile.decide(name) == NameVerdict::Allow {
            let elements: Vec<String> = records
                .iter()
                .map(|(addr, ttl)| format!("{addr} timeout {}s", (*ttl).clamp(60, 86_400)))
                .collect();
            add_answered(name, DNS_ALLOWED_SET, &elements);
            return;
        }
        let run = self.run.read().unwrap_or_else(|p| p.into_inner());
        let (NameVerdict::Allow, Some(pattern)) = run.decide_with_rule(name) else {
            return;
        };
        let rules = self
            .run_rules
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        {
            let mut answered = self.for_run_names.lock().unwrap_or_else(|p| p.into_inner());
            let mut new = false;
            for rule in rules.iter().filter(|t| t.name() == Some(pattern)) {
                new |= answered.record(rule, records.iter().map(|(a, _)| *a));
            }
            if new {
                report_answered(&answered);
            }
        }
        let elements = lazaret::network::run_rules::answer_elements(&rules, pattern, records);
        let mut by_set: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
        for (set, element) in elements {
            by_set.entry(set).or_default().push(element);
        }
        for (set, elements) in by_set {
            add_answered(name, set, &elements);
        }
    }
}

/// Tells the host what the run's name rules opened so far (`lazaret net rules`).
fn report_answered(answered: &lazaret::network::run_rules::AnsweredForNames) {
    use lazaret::network::run_rules::ANSWERED_FILE;
    if let Err(e) = report(ANSWERED_FILE, &answered.to_json()) {
        eprintln!("lazaret-sidecar: writing {ANSWERED_FILE}: {e}");
    }
}

fn add_answered(name: &str, set: &str, elements: &[String]) {
    use lazaret::runtime::network_policy::TABLE;
    let element = format!("{{ {} }}", elements.join(", "));
    let out = Command::new(NFT)
        .args(["add", "element", "inet", TABLE, set, &element])
        .output();
    match out {
        Ok(o) if o.status.success() => {}
        Ok(o) => eprintln!(
            "lazaret-sidecar: allowing the answer for {name}: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => eprintln!("lazaret-sidecar: allowing the answer for {name}: {e}"),
    }
}

/// Applies the run-scoped rules the host writes (`lazaret net allow`, see
/// `lazaret::network::run_rules`): each new generation is one nftables transaction on the run
/// sets, the forwarder's run names are replaced, the addresses of revoked names leave the run's
/// answer set, and the generation is acknowledged in `run-rules.applied`.
#[derive(Default)]
struct RunRulesApplier {
    applied: Option<u64>,
    /// The rules in force (the last generation applied).
    current: lazaret::network::run_rules::RunRules,
    /// Under `default = "ask"`: what is held.
    held: Option<Held>,
    names: lazaret::network::dns_proxy::RunNames,
    name_rules: RunNameRules,
    answered: std::sync::Arc<std::sync::Mutex<lazaret::network::run_rules::AnsweredForNames>>,
}

impl RunRulesApplier {
    /// Applies a new generation of the run's rules if there is one; true when it did.
    fn poll(&mut self) -> bool {
        use lazaret::network::run_rules::{RunRules, APPLIED_FILE, MAX_FILE_BYTES, RULES_FILE};
        let path = Path::new(DIR).join(RULES_FILE);
        let text = match std::fs::metadata(&path) {
            Ok(m) if m.len() > MAX_FILE_BYTES => Err(format!(
                "{RULES_FILE} is larger than {MAX_FILE_BYTES} bytes"
            )),
            Ok(_) => {
                std::fs::read_to_string(&path).map_err(|e| format!("reading {RULES_FILE}: {e}"))
            }
            Err(_) => return false,
        };
        let rules = match text.and_then(|t| RunRules::parse(&t)) {
            Ok(rules) => rules,
            Err(e) => {
                // Nothing the host wrote is applied half; the last good rules stay.
                if self.applied != Some(u64::MAX) {
                    eprintln!("lazaret-sidecar: {e}");
                    let _ = report(APPLIED_FILE, &format!("0 failed: {e}\n"));
                    self.applied = Some(u64::MAX);
                }
                return false;
            }
        };
        if self.applied == Some(rules.generation) {
            return false;
        }
        let result = self.apply(&rules);
        let line = match &result {
            Ok(()) => {
                self.current = rules.clone();
                format!("{} ok\n", rules.generation)
            }
            Err(e) => {
                eprintln!("lazaret-sidecar: applying the run's rules: {e}");
                format!("{} failed: {e}\n", rules.generation)
            }
        };
        if let Err(e) = report(APPLIED_FILE, &line) {
            eprintln!("lazaret-sidecar: acknowledging the run's rules: {e}");
        }
        self.applied = Some(rules.generation);
        true
    }

    fn apply(&mut self, rules: &lazaret::network::run_rules::RunRules) -> Result<(), String> {
        use lazaret::network::NameRules;
        use lazaret::runtime::network_policy::TABLE;
        nft_script(&rules.render_nft())?;
        let names = rules.names();
        let name_rules = rules.name_targets();
        let run = NameRules::new(names, rules.denied_names())?;
        *self.name_rules.write().unwrap_or_else(|p| p.into_inner()) = name_rules.clone();
        *self.names.write().unwrap_or_else(|p| p.into_inner()) = run;
        let gone = self
            .answered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .revoke_missing(&name_rules);
        if !gone.is_empty() {
            report_answered(&self.answered.lock().unwrap_or_else(|p| p.into_inner()));
        }
        for (set, element) in gone {
            // An element that timed out meanwhile is gone already: that error is not one.
            let _ = Command::new(NFT)
                .args([
                    "delete",
                    "element",
                    "inet",
                    TABLE,
                    set,
                    &format!("{{ {element} }}"),
                ])
                .output();
        }
        Ok(())
    }
}

/// Runs an nftables script (`nft -f -`): one transaction.
fn nft_script(script: &str) -> Result<(), String> {
    use std::io::Write as _;
    let mut child = Command::new(NFT)
        .args(["-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {NFT}: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(script.as_bytes())
            .map_err(|e| format!("writing to {NFT}: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("waiting for {NFT}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "nft: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A refused name goes into the denial ledger like a refused connection.
fn ledger_name_denial(name: &str, reason: &str) {
    use lazaret::runtime::denial_ledger::{append, unix_now, Denial, LEDGER};
    let line = Denial {
        time: unix_now(),
        protocol: "dns".to_owned(),
        address: std::net::Ipv4Addr::UNSPECIFIED,
        port: 53,
        rule: reason.to_owned(),
        count: 1,
        name: Some(name.to_owned()),
    };
    if let Err(e) = append(&Path::new(DIR).join(LEDGER), &[line]) {
        eprintln!("lazaret-sidecar: writing the denial ledger: {e}");
    }
}

/// Under `default = "ask"`: what the policy and the DNS forwarder hold, refused when its time
/// runs out, reported in `held.json` for the host (see `lazaret::network::ask`).
struct Held {
    connections: lazaret::network::ask::HeldConnections,
    names: lazaret::network::HeldNames,
    /// What `held.json` says now.
    written: Option<Vec<lazaret_protocol::held::HeldEntry>>,
    /// The connections held at the last look at the policy's sets.
    connections_held: Vec<lazaret_protocol::held::HeldEntry>,
}

impl Held {
    fn new(timeout_secs: u32, names: lazaret::network::HeldNames) -> Held {
        Held {
            connections: lazaret::network::ask::HeldConnections::new(timeout_secs),
            names,
            written: None,
            connections_held: Vec::new(),
        }
    }

    /// Whether connections are held (their deadlines need the sets looked at every tick).
    fn holding(&self) -> bool {
        !self.connections_held.is_empty()
    }

    /// With `table` (the policy's sets now): settles, expires and records held connections;
    /// without, reuses the last look. Then writes `held.json` with the held names if it changed.
    fn poll(
        &mut self,
        table: Option<&str>,
        rules: &lazaret::network::run_rules::RunRules,
        ledger: &mut Ledger,
    ) {
        use lazaret::network::ask::{HeldFile, HELD_FILE};
        if let Some(table) = table {
            self.connections_held = self.look(table, rules, ledger);
        }
        let mut held = self.connections_held.clone();
        held.extend(
            self.names
                .snapshot()
                .into_iter()
                .map(|n| lazaret_protocol::held::HeldEntry {
                    target: n.name,
                    protocol: "dns".to_owned(),
                    since: n.since_unix,
                    deadline: n.deadline_unix,
                    count: n.queries,
                }),
        );
        held.sort_by(|a, b| (a.since, &a.target).cmp(&(b.since, &b.target)));
        if self.written.as_ref() != Some(&held) {
            let file = HeldFile { held: held.clone() };
            match serde_json::to_string(&file) {
                Ok(text) => match report(HELD_FILE, &text) {
                    Ok(()) => self.written = Some(held),
                    Err(e) => eprintln!("lazaret-sidecar: writing {HELD_FILE}: {e}"),
                },
                Err(e) => eprintln!("lazaret-sidecar: writing {HELD_FILE}: {e}"),
            }
        }
    }

    /// One look at the held set: what is still held.
    fn look(
        &mut self,
        table: &str,
        rules: &lazaret::network::run_rules::RunRules,
        ledger: &mut Ledger,
    ) -> Vec<lazaret_protocol::held::HeldEntry> {
        use lazaret::network::ask::{EXPIRED_SET, HELD_SET};
        use lazaret::runtime::denial_ledger::{set_elements, unix_now};
        use lazaret::runtime::network_policy::TABLE;
        let elements: Vec<_> = set_elements(table, |name| name == HELD_SET)
            .into_iter()
            .map(|(_, proto, addr, port, packets)| ((addr, proto, port), packets))
            .collect();
        let step = self.connections.update(unix_now(), &elements, rules);
        let element = |(addr, proto, port): &lazaret::network::ask::HeldKey| {
            format!("{{ {addr} . {proto} . {port} }}")
        };
        let mut script = String::new();
        for key in step.expired.iter().chain(&step.settled) {
            script.push_str(&format!(
                "delete element inet {TABLE} {HELD_SET} {}\n",
                element(key)
            ));
        }
        for key in &step.expired {
            script.push_str(&format!(
                "add element inet {TABLE} {EXPIRED_SET} {}\n",
                element(key)
            ));
        }
        if !script.is_empty() {
            if let Err(e) = nft_script(&script) {
                eprintln!("lazaret-sidecar: settling held connections: {e}");
            }
        }
        ledger.write(&step.ledger);
        step.held
    }
}
