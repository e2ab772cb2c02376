//! Finding a session among the user's running Domains: by its Session ID or a unique prefix of
//! it, or the most recently started coordinator-owned one (`--last`).

use super::connection::DomainAddress;
use anyhow::bail;
use lazaret_protocol::status::{DomainStatus, SessionStatus};
use lazaret_protocol::{DomainId, SessionId};
use std::path::Path;

/// A running Domain: its status and where its coordinator listens.
pub struct RunningDomain {
    pub status: DomainStatus,
    pub address: DomainAddress,
}

/// Whether `pid` is a running Session Coordinator. A status file outlives its coordinator when
/// the coordinator was killed (`kill -9`), and pids are reused — on a busy host by other
/// processes of the same user (runsc's) — so a live pid alone proves nothing.
pub fn coordinator_runs(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    if raw <= 0 || nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None).is_err() {
        return false;
    }
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| c.split(|b| *b == 0).any(|arg| arg == b"__coordinator"))
}

/// The running Domains of this user (their coordinators are alive).
pub fn domains(root: &Path) -> anyhow::Result<Vec<RunningDomain>> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else {
        return Ok(found);
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        let Some(status) = DomainStatus::read(&dir.join("status.json")) else {
            continue;
        };
        if !coordinator_runs(status.coordinator_pid) {
            continue;
        }
        let Some(domain_id) = DomainId::parse(&status.domain_id) else {
            continue;
        };
        found.push(RunningDomain {
            address: DomainAddress {
                socket: dir.join("coordinator.sock"),
                profile: status.profile.clone(),
                domain_id,
                workspace: status.workspace.clone(),
            },
            status,
        });
    }
    found.sort_by(|a, b| a.status.workspace.cmp(&b.status.workspace));
    Ok(found)
}

/// A session and the Domain it runs in.
pub struct Found {
    pub domain: RunningDomain,
    pub session: SessionStatus,
    pub session_id: SessionId,
}

/// The session named by `query` (a Session ID or a unique prefix), or with `last` the most
/// recently started coordinator-owned session.
pub fn find(root: &Path, query: Option<&str>, last: bool) -> anyhow::Result<Found> {
    let mut candidates: Vec<(RunningDomain, SessionStatus)> = Vec::new();
    for d in domains(root)? {
        for s in d.status.sessions.clone() {
            let wanted = match query {
                Some(q) => s.session_id.starts_with(q),
                None => s.hosted,
            };
            if wanted {
                candidates.push((
                    RunningDomain {
                        status: d.status.clone(),
                        address: d.address.clone(),
                    },
                    s,
                ));
            }
        }
    }
    if query.is_none() && !last && candidates.len() > 1 {
        bail!(
            "{} sessions can be attached; name one (lazaret attach SESSION, a unique prefix is \
             enough) or use --last. See `lazaret ps`",
            candidates.len()
        );
    }
    if query.is_some() && candidates.len() > 1 {
        bail!(
            "the prefix names {} sessions; give more of the Session ID",
            candidates.len()
        );
    }
    candidates.sort_by_key(|(_, s)| s.started_unix_ms);
    let Some((domain, session)) = candidates.pop() else {
        match query {
            Some(q) => bail!("no running session {q} (see `lazaret ps`)"),
            None => bail!(
                "no session to attach to: start one with `lazaret run --detachable` or in \
                 `lazaret tui` (see `lazaret ps`)"
            ),
        }
    };
    if !session.hosted {
        bail!(
            "session {} runs on the terminal of its `lazaret run` and cannot be attached; start \
             sessions with `lazaret run --detachable` (or in `lazaret tui`) to attach to them",
            session.session_id
        );
    }
    let session_id = SessionId::parse(&session.session_id)
        .map_err(|e| anyhow::anyhow!("{e}: {}", session.session_id))?;
    Ok(Found {
        domain,
        session,
        session_id,
    })
}

#[cfg(test)]
mod tests {
    use super::coordinator_runs;

    #[test]
    fn a_live_process_that_is_not_a_coordinator_does_not_count() {
        assert!(!coordinator_runs(std::process::id()));
        assert!(!coordinator_runs(0));
        assert!(!coordinator_runs(u32::MAX));
    }
}
