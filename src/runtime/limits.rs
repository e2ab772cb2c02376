//! Resource bounds of the Agent Sandbox (issue #19): which of a profile's `memory`, `pids`,
//! `cpus` and `disk` this host can enforce, and how.
//!
//! Measured on this project's hosts (cgroup v1 hybrid, rootless, no delegation; see
//! `docs/limits.md` and the journal of 2026-12-05):
//! - podman drops `--memory`, `--pids-limit` and `--cpus` from the OCI spec ("not supported on
//!   cgroups V1 rootless"), and runsc runs with `--ignore-cgroups`;
//! - runsc 20240729's `--total-memory` is a `runsc boot` flag derived from the cgroup, and only
//!   changes what `/proc/meminfo` and `sysinfo` report; the Sentry's cgroupfs `memory.limit_in_bytes`
//!   is a stub; its `pids.max` is enforced but cannot be written from the host
//!   (`runsc write-control`: "control file not writable") and the container's cgroupfs is read-only;
//! - what works unprivileged: the Sentry enforces `RLIMIT_NPROC` of the OCI spec (`--ulimit
//!   nproc=N:N`, per user inside, every task counted, `EAGAIN` beyond); the sandbox's host
//!   processes (Sentry, Gofer, ptrace stubs) inherit the CPU affinity of the wrapper's init; and
//!   the application memory of the sandbox lives in one host memfd (`runsc-memory`) whose
//!   allocated blocks the wrapper's init can watch, killing the sandbox beyond the bound (as a
//!   cgroup OOM kill of the Sentry would).
//!
//! The annotations carry the bounds from `podman create` to the wrapper (`lazaret-runsc`), which
//! reads them from the bundle's `config.json` at `runsc create`.

use crate::config::limits::{describe_bytes, describe_cpus, ResourceLimits};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Annotation carrying `memory` in bytes to the wrapper.
pub const MEMORY_ANNOTATION: &str = "io.lazaret.limits.memory";
/// Annotation carrying `cpus` in thousandths to the wrapper.
pub const CPUS_ANNOTATION: &str = "io.lazaret.limits.cpus";
/// Exit status of the sandbox's init when the memory watchdog killed the sandbox.
pub const MEMORY_LIMIT_EXIT: u8 = 251;
/// How often the watchdog looks at the sandbox's memory when close to the bound.
pub const WATCH_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);
/// The name runsc gives its application memory file.
pub const SENTRY_MEMFD: &str = "/memfd:runsc-memory";

/// `podman create` arguments of the bounds (the sandbox's).
pub fn podman_args(limits: &ResourceLimits) -> Vec<String> {
    let mut a = Vec::new();
    if let Some(n) = limits.pids {
        a.push(format!("--ulimit=nproc={n}:{n}"));
    }
    if let Some(m) = limits.memory {
        a.push(format!("--annotation={MEMORY_ANNOTATION}={m}"));
    }
    if let Some(c) = limits.cpus_milli {
        a.push(format!("--annotation={CPUS_ANNOTATION}={c}"));
    }
    a
}

/// The bounds the wrapper applies, read from the OCI spec's annotations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WrapperLimits {
    pub memory: Option<u64>,
    pub cpus_milli: Option<u64>,
}

impl WrapperLimits {
    pub fn from_spec(config: &serde_json::Value) -> WrapperLimits {
        let get = |k: &str| {
            config["annotations"][k]
                .as_str()
                .and_then(|v| v.parse::<u64>().ok())
                .filter(|v| *v > 0)
        };
        WrapperLimits {
            memory: get(MEMORY_ANNOTATION),
            cpus_milli: get(CPUS_ANNOTATION),
        }
    }
}

/// The CPUs the sandbox is bound to for `cpus_milli`: the last ⌈cpus⌉ of `allowed`, or None
/// when that is all of them (no bound to apply).
pub fn choose_cpus(allowed: &[usize], cpus_milli: u64) -> Option<Vec<usize>> {
    let n = usize::try_from(cpus_milli.div_ceil(1000)).ok()?.max(1);
    (n < allowed.len()).then(|| allowed[allowed.len() - n..].to_vec())
}

/// Binds this process (and so every process it starts) to the CPUs [`choose_cpus`] picks.
pub fn bind_cpus(cpus_milli: u64) -> anyhow::Result<Option<Vec<usize>>> {
    use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
    use nix::unistd::Pid;
    let current = sched_getaffinity(Pid::from_raw(0))?;
    let allowed: Vec<usize> = (0..CpuSet::count())
        .filter(|c| current.is_set(*c).unwrap_or(false))
        .collect();
    let Some(chosen) = choose_cpus(&allowed, cpus_milli) else {
        return Ok(None);
    };
    let mut set = CpuSet::new();
    for c in &chosen {
        set.set(*c)?;
    }
    sched_setaffinity(Pid::from_raw(0), &set)?;
    Ok(Some(chosen))
}

/// Opens the Sentry's application memory file (`/proc/<sentry>/fd/N` → `/memfd:runsc-memory`),
/// waiting up to `limit` for the Sentry to create it.
pub fn open_sentry_memory(
    proc_dir: &Path,
    limit: std::time::Duration,
) -> anyhow::Result<std::fs::File> {
    let start = std::time::Instant::now();
    loop {
        if let Ok(entries) = std::fs::read_dir(proc_dir.join("fd")) {
            for e in entries.flatten() {
                let Ok(target) = std::fs::read_link(e.path()) else {
                    continue;
                };
                if target.to_string_lossy().starts_with(SENTRY_MEMFD) {
                    return Ok(std::fs::File::open(e.path())?);
                }
            }
        }
        if start.elapsed() > limit {
            anyhow::bail!(
                "the Sentry's memory file ({SENTRY_MEMFD}) did not appear in {}",
                proc_dir.join("fd").display()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Bytes of memory the file really holds (allocated blocks, not its size: runsc grows it by
/// 1 GiB chunks and punches freed pages out).
pub fn allocated_bytes(file: &std::fs::File) -> std::io::Result<u64> {
    use std::os::unix::fs::MetadataExt;
    Ok(file.metadata()?.blocks().saturating_mul(512))
}

/// Anonymous resident bytes of a process from its `/proc/PID/statm` text: resident minus
/// shared pages (file and shmem-backed, which is where the Sentry's mappings of its memory file
/// are counted), times the page size. None when the text is not a statm line.
pub fn anon_bytes_of_statm(statm: &str, page_size: u64) -> Option<u64> {
    let mut fields = statm.split_whitespace().map(|f| f.parse::<u64>().ok());
    let resident = fields.nth(1)??;
    let shared = fields.next()??;
    Some(resident.saturating_sub(shared).saturating_mul(page_size))
}

/// What the memory bound counts of one sandbox (issue #31): the application memory in the
/// Sentry's memory file plus the Sentry's own anonymous memory (its Go heap, the stacks and
/// buffers it keeps for each task, the file data it caches), which the file does not hold. Both
/// are read through descriptors opened while `/proc` was still there.
pub struct SandboxMemory {
    /// The Sentry's application memory file.
    pub file: std::fs::File,
    /// The Sentry's `/proc/PID/statm`, read again from its start at each look.
    pub statm: Option<std::fs::File>,
}

impl SandboxMemory {
    /// Opens both for the Sentry whose `/proc` directory is `proc_dir` (see
    /// [`open_sentry_memory`] for `limit`).
    pub fn open(proc_dir: &Path, limit: std::time::Duration) -> anyhow::Result<SandboxMemory> {
        let file = open_sentry_memory(proc_dir, limit)?;
        let statm = std::fs::File::open(proc_dir.join("statm")).ok();
        Ok(SandboxMemory { file, statm })
    }

    /// Bytes the sandbox uses now: the memory file's blocks plus the Sentry's anonymous memory
    /// (only the file when the Sentry's statm cannot be read).
    pub fn used(&self) -> std::io::Result<u64> {
        let app = allocated_bytes(&self.file)?;
        let sentry = self.statm.as_ref().and_then(|f| {
            use std::os::unix::fs::FileExt;
            let mut buf = [0u8; 256];
            let n = f.read_at(&mut buf, 0).ok()?;
            anon_bytes_of_statm(std::str::from_utf8(&buf[..n]).ok()?, page_size())
        });
        Ok(app.saturating_add(sentry.unwrap_or(0)))
    }
}

fn page_size() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .and_then(|p| u64::try_from(p).ok())
        .unwrap_or(4096)
}

/// The longest pause between two looks at the sandbox's memory, far from the bound.
pub const WATCH_INTERVAL_MAX: std::time::Duration = std::time::Duration::from_secs(1);
/// The fastest the sandbox is assumed to take memory (measured under ptrace: ~0.5 GiB/s).
const FASTEST_GROWTH: u64 = 1 << 30;

/// When to look again with `used` of `limit` bytes taken: as long as the sandbox, taking
/// memory at [`FASTEST_GROWTH`], needs to reach the bound, between [`WATCH_INTERVAL`] and
/// [`WATCH_INTERVAL_MAX`]. An idle sandbox far below its bound is looked at once a second;
/// one close to it ten times a second.
pub fn next_look(used: u64, limit: u64) -> std::time::Duration {
    let headroom = limit.saturating_sub(used);
    let ms = headroom.saturating_mul(1000) / FASTEST_GROWTH;
    std::time::Duration::from_millis(ms).clamp(WATCH_INTERVAL, WATCH_INTERVAL_MAX)
}

/// Watches what the sandbox uses (`used`), every [`next_look`], and calls `kill` once when it
/// is more than `limit` bytes; returns then (or when it cannot be read any more).
pub fn watch_memory(used: impl Fn() -> std::io::Result<u64>, limit: u64, kill: impl FnOnce()) {
    loop {
        match used() {
            Ok(b) if b > limit => {
                kill();
                return;
            }
            Ok(b) => std::thread::sleep(next_look(b, limit)),
            Err(_) => return,
        }
    }
}

/// The cgroup situation of this host, for deciding and for `lazaret doctor`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HostCgroups {
    /// The unified hierarchy is mounted at `/sys/fs/cgroup` (cgroup v2 only, not hybrid).
    pub v2: bool,
    /// This process's cgroup (v2), relative to `/sys/fs/cgroup`.
    pub own: Option<PathBuf>,
    /// Controllers available in this process's cgroup when that cgroup is writable by this
    /// user (delegated), else none.
    pub delegated: Vec<String>,
}

/// The v2 cgroup of a `/proc/self/cgroup` text (`0::/path`).
pub fn own_v2_cgroup(proc_self_cgroup: &str) -> Option<PathBuf> {
    proc_self_cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(|p| PathBuf::from(p.trim_start_matches('/')))
}

/// Looks at `/sys/fs/cgroup` and `/proc/self/cgroup`.
pub fn detect() -> HostCgroups {
    let root = Path::new("/sys/fs/cgroup");
    let v2 = root.join("cgroup.controllers").is_file();
    if !v2 {
        return HostCgroups::default();
    }
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|t| own_v2_cgroup(&t));
    let delegated = own
        .as_ref()
        .map(|o| root.join(o))
        .filter(|dir| nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok())
        .and_then(|dir| std::fs::read_to_string(dir.join("cgroup.controllers")).ok())
        .map(|t| t.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    HostCgroups { v2, own, delegated }
}

/// How one bound is enforced on this host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Enforcement {
    /// `memory`, `pids`, `cpus` or `disk`.
    pub resource: &'static str,
    /// Whether a profile's bound is enforced on this host (fully or as `how` says).
    pub enforced: bool,
    /// What enforces it.
    pub how: String,
    /// Why the host's own mechanism (cgroups) is not used, when it is not.
    pub why_not_cgroups: Option<String>,
}

/// Why cgroups do not bound the sandbox on a host like `host`.
pub fn why_not_cgroups(host: &HostCgroups, controller: &str) -> String {
    if !host.v2 {
        "cgroup v1/hybrid without delegation: rootless podman drops --memory, --pids-limit and \
         --cpus, runsc runs with --ignore-cgroups"
            .into()
    } else if !host.delegated.iter().any(|c| c == controller) {
        format!(
            "cgroup v2, but the {controller} controller is not delegated to this user (systemd \
             Delegate=); runsc runs with --ignore-cgroups"
        )
    } else {
        format!(
            "cgroup v2 with {controller} delegated, but runsc runs with --ignore-cgroups \
             (cgroup-managed runsc is untested on Lazaret's hosts)"
        )
    }
}

/// What enforces each bound on `host`.
pub fn enforcement(host: &HostCgroups) -> Vec<Enforcement> {
    vec![
        Enforcement {
            resource: "memory",
            enforced: true,
            how: format!(
                "enforced by lazaret-runsc: it looks at the Sentry's memory file and the \
                 Sentry's own anonymous memory (every {} ms near the bound, every {} ms far \
                 from it) and beyond the bound kills the whole sandbox (exit status \
                 {MEMORY_LIMIT_EXIT})",
                WATCH_INTERVAL.as_millis(),
                WATCH_INTERVAL_MAX.as_millis()
            ),
            why_not_cgroups: Some(why_not_cgroups(host, "memory")),
        },
        Enforcement {
            resource: "pids",
            enforced: true,
            how: "enforced by gVisor's RLIMIT_NPROC (podman --ulimit nproc=N:N): fork and clone \
                  fail with EAGAIN beyond N tasks of one uid inside"
                .into(),
            why_not_cgroups: Some(why_not_cgroups(host, "pids")),
        },
        Enforcement {
            resource: "cpus",
            enforced: true,
            how: "enforced by CPU affinity of the sandbox's host processes to ⌈cpus⌉ CPUs (1.5 \
                  → 2; no bound when that is every CPU)"
                .into(),
            why_not_cgroups: Some(why_not_cgroups(host, "cpu")),
        },
        Enforcement {
            resource: "disk",
            enforced: false,
            how: "NOT enforced: checked when `lazaret run` starts the Domain (a note when over) \
                  and watched while it runs (over it, the Domain lists a failure: `lazaret ps`, \
                  the TUI, the `lazaret run` that ran meanwhile); shown by `lazaret state list`; \
                  nothing stops writes"
                .into(),
            why_not_cgroups: Some("no unprivileged quota on the Domain's directories".into()),
        },
    ]
}

/// What the developer is told at start when the Domain's state (State Anchors and Ignored
/// Workspace State) is over `bound` (`disk`); nothing when it is within or no bound is set.
pub fn disk_notice(domain_root: &Path, bound: Option<u64>) -> Option<String> {
    let bound = bound?;
    let anchors = crate::state::listing::tree_size(&domain_root.join("anchors"));
    let ignored = crate::state::listing::tree_size(&domain_root.join("ignored"));
    disk_over(
        anchors.bytes.saturating_add(ignored.bytes),
        anchors.partial || ignored.partial,
        bound,
    )
}

/// The notice of [`disk_notice`] for `used` bytes (`partial`: some entries were unreadable, so
/// the real usage is higher).
pub fn disk_over(used: u64, partial: bool, bound: u64) -> Option<String> {
    (used > bound).then(|| {
        format!(
            "this Domain's state takes {}{}, over the profile's disk = {}: `lazaret state list` \
             shows where, `lazaret state reset --path PATH` forgets one persistent path (the \
             bound is watched, not enforced: nothing stops writes)",
            if partial { "at least " } else { "" },
            describe_bytes(used),
            describe_bytes(bound)
        )
    })
}

/// A profile's bounds in words (`memory 4 GiB, pids 512, cpus 1.5`), or None.
pub fn describe(limits: &ResourceLimits) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(m) = limits.memory {
        parts.push(format!("memory {}", describe_bytes(m)));
    }
    if let Some(p) = limits.pids {
        parts.push(format!("pids {p}"));
    }
    if let Some(c) = limits.cpus_milli {
        parts.push(format!("cpus {}", describe_cpus(c)));
    }
    if let Some(d) = limits.disk {
        parts.push(format!("disk {}", describe_bytes(d)));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn podman_gets_the_rlimit_and_the_annotations() {
        let l = ResourceLimits {
            memory: Some(1 << 30),
            pids: Some(64),
            cpus_milli: Some(1500),
            disk: Some(5 << 30),
        };
        assert_eq!(
            podman_args(&l),
            [
                "--ulimit=nproc=64:64",
                "--annotation=io.lazaret.limits.memory=1073741824",
                "--annotation=io.lazaret.limits.cpus=1500",
            ]
        );
        assert!(podman_args(&ResourceLimits::default()).is_empty());
    }

    #[test]
    fn the_wrapper_reads_the_annotations() {
        let spec = serde_json::json!({"annotations": {
            MEMORY_ANNOTATION: "1073741824", CPUS_ANNOTATION: "1500", "other": "x"}});
        assert_eq!(
            WrapperLimits::from_spec(&spec),
            WrapperLimits {
                memory: Some(1 << 30),
                cpus_milli: Some(1500)
            }
        );
        let bad =
            serde_json::json!({"annotations": {MEMORY_ANNOTATION: "lots", CPUS_ANNOTATION: "0"}});
        assert_eq!(WrapperLimits::from_spec(&bad), WrapperLimits::default());
        assert_eq!(
            WrapperLimits::from_spec(&serde_json::json!({})),
            WrapperLimits::default()
        );
    }

    #[test]
    fn cpus_round_up_and_take_the_last_ones() {
        assert_eq!(choose_cpus(&[0, 1], 1000), Some(vec![1]));
        assert_eq!(choose_cpus(&[0, 1], 500), Some(vec![1]));
        assert_eq!(choose_cpus(&[0, 1], 1500), None);
        assert_eq!(choose_cpus(&[0, 1, 2, 3], 1500), Some(vec![2, 3]));
        assert_eq!(choose_cpus(&[0, 2, 5], 2000), Some(vec![2, 5]));
        assert_eq!(choose_cpus(&[0], 1000), None);
    }

    #[test]
    fn v2_cgroup_of_this_process() {
        let text = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope\n";
        assert_eq!(
            own_v2_cgroup(text),
            Some(PathBuf::from(
                "user.slice/user-1000.slice/user@1000.service/app.slice/x.scope"
            ))
        );
        assert_eq!(own_v2_cgroup("4:memory:/a\n1:cpu:/\n"), None);
        assert_eq!(
            own_v2_cgroup("9:name=systemd:/\n0::/\n"),
            Some(PathBuf::new())
        );
    }

    #[test]
    fn why_cgroups_are_not_used() {
        let v1 = HostCgroups::default();
        assert!(why_not_cgroups(&v1, "memory").contains("cgroup v1/hybrid"));
        let v2 = HostCgroups {
            v2: true,
            own: None,
            delegated: vec!["pids".into()],
        };
        assert!(why_not_cgroups(&v2, "memory").contains("not delegated"));
        assert!(why_not_cgroups(&v2, "pids").contains("untested"));
        let e = enforcement(&v1);
        let names: Vec<_> = e.iter().map(|e| e.resource).collect();
        assert_eq!(names, ["memory", "pids", "cpus", "disk"]);
        assert!(!e[3].enforced);
    }

    #[test]
    fn watchdog_kills_once_beyond_the_bound() {
        use std::io::Write;
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![1u8; 64 * 1024]).unwrap();
        f.sync_all().unwrap();
        let mut killed = 0;
        watch_memory(|| allocated_bytes(&f), 4096, || killed += 1);
        assert_eq!(killed, 1);
        assert!(allocated_bytes(&f).unwrap() >= 64 * 1024);
    }

    #[test]
    fn looks_more_often_the_closer_the_bound() {
        let g = 1u64 << 30;
        assert_eq!(next_look(150 << 20, 4 * g), WATCH_INTERVAL_MAX);
        assert_eq!(next_look(4 * g - (50 << 20), 4 * g), WATCH_INTERVAL);
        assert_eq!(next_look(5 * g, 4 * g), WATCH_INTERVAL);
        let half = next_look(4 * g - g / 2, 4 * g);
        assert!(
            half > WATCH_INTERVAL && half < WATCH_INTERVAL_MAX,
            "{half:?}"
        );
    }

    #[test]
    fn the_sentrys_anonymous_memory_counts_not_its_mappings_of_the_file() {
        // size resident shared text lib data dt, in pages.
        assert_eq!(
            anon_bytes_of_statm("300000 70000 20000 5000 0 90000 0\n", 4096),
            Some(50000 * 4096)
        );
        assert_eq!(anon_bytes_of_statm("1 2 9 0 0 0 0", 4096), Some(0));
        assert_eq!(anon_bytes_of_statm("garbage", 4096), None);
        assert_eq!(anon_bytes_of_statm("", 4096), None);
        // This process: the file's blocks plus its own anonymous memory.
        use std::io::Write;
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![1u8; 64 * 1024]).unwrap();
        f.sync_all().unwrap();
        let m = SandboxMemory {
            file: f,
            statm: std::fs::File::open("/proc/self/statm").ok(),
        };
        let used = m.used().unwrap();
        let file_only = allocated_bytes(&m.file).unwrap();
        assert!(used > file_only, "{used} vs {file_only}");
        // Read again from the start: a second look sees a fresh value, not the end of file.
        assert!(m.used().unwrap() > file_only);
    }

    #[test]
    fn disk_is_checked_against_the_state_size() {
        assert_eq!(disk_over(10 << 20, false, 20 << 20), None);
        let n = disk_over(30 << 20, true, 20 << 20).unwrap();
        assert!(
            n.contains("at least 30 MiB") && n.contains("disk = 20 MiB"),
            "{n}"
        );
        assert!(n.contains("not enforced"), "{n}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ignored")).unwrap();
        std::fs::write(dir.path().join("ignored/big"), vec![7u8; 2 << 20]).unwrap();
        assert!(disk_notice(dir.path(), Some(1 << 20)).is_some());
        assert!(disk_notice(dir.path(), Some(8 << 20)).is_none());
        assert!(disk_notice(dir.path(), None).is_none());
    }

    #[test]
    fn bounds_in_words() {
        let l = ResourceLimits {
            memory: Some(4 << 30),
            pids: Some(512),
            cpus_milli: Some(1500),
            disk: None,
        };
        assert_eq!(
            describe(&l).as_deref(),
            Some("memory 4 GiB, pids 512, cpus 1.5")
        );
        assert_eq!(describe(&ResourceLimits::default()), None);
    }
}
