//! `lazaret ps`: the running Domains and their Client Sessions.

use crate::coordinator::activity::Activity;
use crate::coordinator::status::{DomainStatus, SessionStatus};
use crate::domain::layout::Layout;
use clap::Args;

/// List the running Domains and their Client Sessions
///
/// Lists the running Domains of this user: workspace, profile, coordinator and Client Sessions.
#[derive(Debug, Args)]
pub struct PsArgs {
    /// Print a JSON array of Domains (domain_id, profile, workspace, coordinator_pid, coordinator_id,
    /// sandbox, failures, sessions[{session_id, client_cli_id, command, started_unix_ms, hosted,
    /// attached, started_by, running}]). `hosted`: owned by the coordinator (attachable with
    /// `lazaret attach`); `attached`: labels of the clients attached now (empty: detached);
    /// `running`: the session's process still runs; `activity` (coordinator-owned sessions,
    /// as the host observed them): `escalation` (`pending_escalations` requests wait),
    /// `attention` (then `attention` says why: `bell` or `notification: TEXT`, escaped),
    /// `working`, `idle` or `ending`, with `last_output_unix_ms`.
    /// Every character outside printable ASCII is a \uXXXX escape. Schema: docs/coordinator.md.
    #[arg(long)]
    pub json: bool,
}

/// Status files of Domains whose coordinator is alive.
pub fn running(layout: &Layout) -> anyhow::Result<Vec<DomainStatus>> {
    let root = layout.runtime_root()?;
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Ok(found);
    };
    for entry in entries.flatten() {
        let Some(status) = DomainStatus::read(&entry.path().join("status.json")) else {
            continue;
        };
        if lazaret_client::locate::coordinator_runs(status.coordinator_pid) {
            found.push(status);
        }
    }
    found.sort_by(|a, b| a.workspace.cmp(&b.workspace));
    Ok(found)
}

/// A line on stdout; a reader that went away (`lazaret ps | head -1`) ends the listing quietly
/// instead of failing it.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            return Ok(0);
        }
    }};
}

fn activity_of(s: &SessionStatus, now_ms: u64) -> Activity {
    Activity::of(s, now_ms)
}

/// The activity for the table. The coordinator escaped the reason; should a status file hold
/// anything a terminal would act on all the same, it is escaped here.
fn shown(a: &Activity) -> String {
    use crate::terminal::escape::{is_escaped, visible};
    match a {
        Activity::Attention(why) if why.chars().any(is_escaped) => {
            format!("needs you: {}", visible(why))
        }
        Activity::Attention(why) => format!("needs you: {why}"),
        Activity::Escalation(n) => format!("{n} escalation(s) waiting: lazaret attach to decide"),
        other => other.word().to_owned(),
    }
}

pub fn execute(layout: &Layout, args: PsArgs) -> anyhow::Result<i32> {
    let mut domains = running(layout)?;
    let now = crate::coordinator::status::now_unix_ms();
    if args.json {
        for s in domains.iter_mut().flat_map(|d| d.sessions.iter_mut()) {
            s.activity = s.hosted.then(|| activity_of(s, now).word().to_owned());
        }
        outln!("{}", super::safe_json::to_string(&domains)?);
        return Ok(0);
    }
    if domains.is_empty() {
        outln!("no running Domains");
        return Ok(0);
    }
    for d in &domains {
        outln!(
            "{}  {}  profile {}  coordinator pid {}  {} session(s)",
            d.domain_id,
            d.workspace.display(),
            d.profile,
            d.coordinator_pid,
            d.sessions.len()
        );
        for s in &d.sessions {
            let how = if !s.running {
                "its process ended; leaving the Domain".to_owned()
            } else if !s.hosted {
                "running on its `lazaret run` terminal".to_owned()
            } else if s.attached.is_empty() {
                format!(
                    "running, detached (started by {}); {}",
                    s.started_by,
                    shown(&activity_of(s, now))
                )
            } else {
                format!(
                    "running, attached: {}; {}",
                    s.attached.join(", "),
                    shown(&activity_of(s, now))
                )
            };
            outln!(
                "    session {}  {}  [{}]",
                s.session_id,
                crate::terminal::escape::argv(&s.command),
                how
            );
        }
        // What went wrong in the running Domain (e.g. its Network Sidecar exited), escaped.
        for f in &d.failures {
            outln!("    failure: {}", crate::terminal::escape::visible(f));
        }
    }
    Ok(0)
}
