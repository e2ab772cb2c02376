//! The safety conditions of `lazaret state verify` and `reset` (SR-14): the Domain's lifecycle
//! lock held by this process, and nothing of the Domain running — no coordinator (so no Client
//! Session and no host process of an escalation), no sandbox or sidecar container, no State
//! Anchor overlay mounted. Whatever holds the Domain is named in the refusal.

use crate::coordinator::status::DomainStatus;
use crate::domain::layout::ensure_private_dir;
use crate::domain::lock::LifecycleLock;
use crate::domain::Domain;
use crate::runtime::podman::Podman;
use anyhow::bail;

/// What keeps a Domain active, if anything does: for messages and `state list`.
pub fn holder(domain: &Domain) -> Option<String> {
    let status = DomainStatus::read(&crate::coordinator::paths::status(domain))?;
    let alive = i32::try_from(status.coordinator_pid)
        .is_ok_and(|p| nix::sys::signal::kill(nix::unistd::Pid::from_raw(p), None).is_ok());
    if !alive {
        return None;
    }
    let sessions = status.sessions.len();
    Some(format!(
        "its Session Coordinator (pid {}) with {sessions} Client Session{}{}",
        status.coordinator_pid,
        if sessions == 1 { "" } else { "s" },
        if sessions == 0 {
            String::new()
        } else {
            format!(
                " ({})",
                status
                    .sessions
                    .iter()
                    .map(|s| {
                        let id: String = s.session_id.chars().take(8).collect();
                        format!("{id}: {}", s.command.join(" "))
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    ))
}

/// How long [`take`] waits for a teardown in progress.
const TEARDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Takes the Domain exclusively for a structural operation, or says what holds it.
pub fn take(domain: &Domain, verb: &str) -> anyhow::Result<LifecycleLock> {
    ensure_private_dir(&domain.runtime_dir)?;
    let refuse = |what: String| -> anyhow::Error {
        anyhow::anyhow!(
            "cannot {verb} the State of {} (profile {}, Domain {}): the Domain is in use by \
             {what}. End its sessions (exit the `lazaret run`s / close `lazaret tui`), then try \
             again",
            domain.workspace.root.display(),
            domain.profile,
            domain.id
        )
    };
    // The last `lazaret run` returns before its Domain's teardown has finished (issue #18):
    // with no coordinator serving sessions, whoever holds the lock is tearing down (or
    // starting, and then soon serving): wait for it, a while.
    let deadline = std::time::Instant::now() + TEARDOWN_WAIT;
    let lock = loop {
        if let Some(lock) = LifecycleLock::try_acquire(&domain.runtime_dir)? {
            break lock;
        }
        if let Some(what) = holder(domain) {
            return Err(refuse(what));
        }
        if std::time::Instant::now() >= deadline {
            return Err(refuse(
                "a Lazaret process starting or tearing it down (it holds the lifecycle lock)"
                    .into(),
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    };
    if let Some(what) = holder(domain) {
        return Err(refuse(what));
    }
    let podman = Podman::default();
    let prefix = format!("lazaret-{}-", domain.id);
    let out = podman
        .command(["ps", "-a", "--format", "{{.Names}}"])
        .stdin(std::process::Stdio::null())
        .output()?;
    if !out.status.success() {
        bail!(
            "listing containers to check the Domain is not running: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let left: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with(&prefix))
        .map(str::to_owned)
        .collect();
    if !left.is_empty() {
        return Err(refuse(format!(
            "container{} {} left by a Domain that did not stop cleanly (the next `lazaret run` \
             there recovers it)",
            if left.len() == 1 { "" } else { "s" },
            left.join(", ")
        )));
    }
    // Overlays left mounted by a killed coordinator: unmounting them is the recovery's first
    // step, safe now that the lock is ours and nothing runs.
    crate::runtime::state_anchor::StateAnchors::release_all(&podman, &domain.runtime_dir)?;
    Ok(lock)
}
