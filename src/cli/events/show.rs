//! An event as `lazaret events` prints it: one JSON object per line (ASCII only) or one
//! readable line with every sandbox-chosen string escaped.

use super::model::Happened;
use crate::terminal::escape::{argv, quoted, visible};
use serde::Serialize;

/// The Domain an event is about.
#[derive(Clone, Debug, Serialize)]
pub struct DomainRef {
    pub domain_id: String,
    pub profile: String,
    pub workspace: std::path::PathBuf,
}

impl DomainRef {
    pub fn of(status: &lazaret_protocol::status::DomainStatus) -> DomainRef {
        DomainRef {
            domain_id: status.domain_id.clone(),
            profile: status.profile.clone(),
            workspace: status.workspace.clone(),
        }
    }
}

#[derive(Serialize)]
struct Line<'a> {
    time_unix_ms: u64,
    #[serde(flatten)]
    domain: &'a DomainRef,
    #[serde(flatten)]
    what: &'a Happened,
}

/// The `--json` line of an event (docs/coordinator.md, "lazaret events --json").
pub fn json(time_unix_ms: u64, domain: &DomainRef, what: &Happened) -> anyhow::Result<String> {
    super::super::safe_json::to_line(&Line {
        time_unix_ms,
        domain,
        what,
    })
}

fn short(id: &str) -> String {
    visible(id.get(..12).unwrap_or(id))
}

/// The readable line of an event.
pub fn text(time_unix_ms: u64, domain: &DomainRef, what: &Happened) -> String {
    let at = super::super::net::utc(time_unix_ms / 1000);
    let ws = visible(&domain.workspace.display().to_string());
    format!("{at}  {ws}  {}", detail(domain, what))
}

fn detail(domain: &DomainRef, what: &Happened) -> String {
    match what {
        Happened::DomainStarted { coordinator_pid } => format!(
            "Domain {} running (profile {}, coordinator pid {coordinator_pid})",
            short(&domain.domain_id),
            visible(&domain.profile)
        ),
        Happened::DomainStopped {} => format!("Domain {} stopped", short(&domain.domain_id)),
        Happened::SessionStarted {
            session_id,
            command,
            started_by,
            hosted,
            ..
        } => format!(
            "session {} started by {}{}: {}",
            short(session_id),
            visible(started_by),
            if *hosted {
                ""
            } else {
                " (on its own terminal)"
            },
            argv(command)
        ),
        Happened::SessionEnded {
            session_id,
            exit_status,
            reason,
        } => match exit_status {
            Some(code) => format!("session {} exited {code}", short(session_id)),
            None => format!("session {} ended: {}", short(session_id), visible(reason)),
        },
        Happened::Activity {
            session_id,
            activity,
            attention,
            pending_escalations,
            ..
        } => {
            let how = match *activity {
                "attention" => format!("needs you: {}", visible(attention)),
                "escalation" => format!("{pending_escalations} escalation(s) waiting"),
                other => other.to_owned(),
            };
            format!("session {} {how}", short(session_id))
        }
        Happened::EscalationWaiting {
            session_id,
            request_id,
            command,
            cwd,
            justification,
            ..
        } => {
            let why = if justification.is_empty() {
                String::new()
            } else {
                format!(" why {}", quoted(justification))
            };
            format!(
                "escalation {} waiting (session {}): run {} in {}{why}",
                visible(request_id),
                short(session_id),
                command,
                quoted(cwd)
            )
        }
        Happened::EscalationWithdrawn {
            session_id,
            request_id,
            reason,
        } => format!(
            "escalation {} withdrawn (session {}): {}",
            visible(request_id),
            short(session_id),
            visible(reason)
        ),
    }
}

/// For tests: a workspace path.
#[cfg(test)]
pub fn domain(workspace: &str) -> DomainRef {
    DomainRef {
        domain_id: "d0123456789abcdef".into(),
        profile: "default".into(),
        workspace: workspace.into(),
    }
}

#[cfg(test)]
#[path = "show_tests.rs"]
mod tests;
