//! What the Domain-state and network-denial panels show, polled off the UI thread: the
//! coordinator's status file, which Domain containers run, the State Anchors' sizes, the
//! denial ledger.

use super::event::{AppEvent, AppSender};
use crate::coordinator::status::DomainStatus;
use crate::runtime::denial_ledger;
use crate::session::SessionPlan;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A State Anchor: its container path and the size of what the Domain changed in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnchorSize {
    pub path: PathBuf,
    pub bytes: u64,
    /// Some entries could not be read (owned by another uid of the sandbox): at least `bytes`.
    pub partial: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainView {
    pub domain_id: String,
    pub profile: String,
    pub workspace: PathBuf,
    pub fingerprint: String,
    /// The coordinator's pid and whether it is alive (None: no status file, not running).
    pub coordinator: Option<(u32, bool)>,
    pub sandbox_running: bool,
    pub sidecar_running: bool,
    /// Session IDs and their commands.
    pub sessions: Vec<(String, Vec<String>)>,
    pub anchors: Vec<AnchorSize>,
    pub failures: Vec<String>,
}

/// Which Domain the panels show: the focused pane's (set by the UI, read by the pollers).
pub type Shown = Arc<std::sync::Mutex<Arc<SessionPlan>>>;

fn shown_now(shown: &Shown) -> Arc<SessionPlan> {
    shown.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Polls the Domain named by `shown` until the receiving side is gone: denials every 0.5 s,
/// the rest every 3 s (at once when `shown` changes).
pub fn spawn_pollers(shown: Shown, events: AppSender) {
    let denials = events.clone();
    let for_denials = shown.clone();
    std::thread::spawn(move || {
        let mut last = None;
        loop {
            let plan = shown_now(&for_denials);
            let ledger = denial_ledger::path(&crate::runtime::sidecar::status_dir(&plan.domain));
            let text = std::fs::read_to_string(&ledger).unwrap_or_default();
            let entries = denial_ledger::aggregate(&text);
            if last.as_ref() != Some(&entries) {
                last = Some(entries.clone());
                if denials.send(AppEvent::Denials(entries)).is_err() {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    });
    std::thread::spawn(move || loop {
        let plan = shown_now(&shown);
        if events
            .send(AppEvent::Domain(Box::new(gather(&plan))))
            .is_err()
        {
            return;
        }
        for _ in 0..30 {
            std::thread::sleep(Duration::from_millis(100));
            if !Arc::ptr_eq(&plan, &shown_now(&shown)) {
                break;
            }
        }
    });
}

/// The Domain's state now.
pub fn gather(plan: &SessionPlan) -> DomainView {
    let domain = &plan.domain;
    let status = DomainStatus::read(&crate::coordinator::paths::status(domain));
    let running = running_containers(&format!("lazaret-{}-", domain.id));
    let alive = |pid: u32| {
        i32::try_from(pid)
            .is_ok_and(|p| nix::sys::signal::kill(nix::unistd::Pid::from_raw(p), None).is_ok())
    };
    DomainView {
        domain_id: domain.id.to_string(),
        profile: plan.profile.name.clone(),
        workspace: domain.workspace.root.clone(),
        fingerprint: plan.fingerprint.clone(),
        coordinator: status
            .as_ref()
            .map(|s| (s.coordinator_pid, alive(s.coordinator_pid))),
        sandbox_running: running.contains(&domain.container_name("sandbox")),
        sidecar_running: running.contains(&domain.container_name("sidecar")),
        sessions: status
            .as_ref()
            .map(|s| {
                s.sessions
                    .iter()
                    .map(|x| (x.session_id.clone(), x.command.clone()))
                    .collect()
            })
            .unwrap_or_default(),
        anchors: plan
            .profile
            .persistent
            .iter()
            .map(|p| {
                let anchor = domain
                    .root
                    .join("anchors")
                    .join(crate::runtime::state_anchor::anchor_name(p));
                // The current generation (`current` is a symlink Lazaret wrote: `gen-<n>`).
                let (bytes, partial) = tree_size(&anchor.join("current").join("upper"));
                AnchorSize {
                    path: p.clone(),
                    bytes,
                    partial,
                }
            })
            .collect(),
        failures: status.map(|s| s.failures).unwrap_or_default(),
    }
}

/// Names of the running containers whose name starts with `prefix`.
fn running_containers(prefix: &str) -> Vec<String> {
    let out = crate::runtime::podman::Podman::default()
        .command(["ps", "--format", "{{.Names}}"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.starts_with(prefix))
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// Allocated bytes under `dir` without following symlinks; `partial` when something could not
/// be read.
fn tree_size(dir: &Path) -> (u64, bool) {
    use std::os::unix::fs::MetadataExt;
    let mut bytes = 0u64;
    let mut partial = false;
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            partial |= d != dir || dir.exists();
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            // A huge tree is summed in later polls' time budget, not here.
            if seen > 200_000 {
                return (bytes, true);
            }
            match e.path().symlink_metadata() {
                Ok(m) => {
                    bytes += m.blocks() * 512;
                    if m.is_dir() {
                        stack.push(e.path());
                    }
                }
                Err(_) => partial = true,
            }
        }
    }
    (bytes, partial)
}
