//! `lazaret events`: session, activity and escalation events of all the developer's running
//! Domains (issue #15), as they are now or, with `--follow`, as they happen. It never starts a
//! Domain: it reads the status files `lazaret ps` reads and watches each running Domain's
//! Session Coordinator as a control centre that only listens.

mod follow;
pub mod model;
pub mod show;
mod watch;

use crate::domain::layout::Layout;
use clap::Args;
use lazaret_client::locate;
use model::{DomainWatch, Happened};
use show::DomainRef;
use std::io::Write;

/// Stream session, activity and escalation events of all running Domains
///
/// Prints what happens in all your running Domains, one line per event: a Domain started or
/// stopped, a session started or ended (with its exit status when known), a session's
/// activity changed (working, idle, attention with its reason, escalation), an escalation
/// request waits for a decision or was withdrawn (decided, timed out). Activity is what the
/// host observed, never what the sandbox claims; everything the sandbox chose (commands,
/// reasons) is shown escaped.
///
/// Without --follow: the current state as events (each running Domain, each session with its
/// activity, each waiting request), then exit. With --follow: then every change until
/// interrupted or until nobody reads the output (like `tail -f`), including Domains that start
/// later. It never starts a Domain and keeps none running. Exit status 0, or 125 when a running
/// Domain could not be asked for its waiting requests (without --follow; named on stderr).
///
/// Examples:
///   lazaret events
///   lazaret events --follow
///   lazaret events --json --follow | jq 'select(.event=="activity" and .activity=="attention")'
///   lazaret events --json --follow | jq -r 'select(.event=="escalation_waiting") | .request_id'
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct EventsArgs {
    /// One JSON object per line: time_unix_ms, event (domain_started, domain_stopped,
    /// session_started, session_ended, activity, escalation_waiting, escalation_withdrawn),
    /// domain_id, profile, workspace, then the event's own fields (session_id, …). Every
    /// character outside printable ASCII is a \uXXXX escape. Schema: docs/coordinator.md.
    #[arg(long)]
    pub json: bool,
    /// Keep printing events as they happen until interrupted.
    #[arg(long)]
    pub follow: bool,
}

/// Where events go: stdout, as text or JSON lines.
pub struct Printer {
    json: bool,
}

impl Printer {
    /// Prints `events` of `domain`; false when stdout's reader is gone.
    pub fn print(&self, domain: &DomainRef, events: &[Happened]) -> anyhow::Result<bool> {
        let now = crate::coordinator::status::now_unix_ms();
        let mut out = std::io::stdout().lock();
        for e in events {
            let line = if self.json {
                show::json(now, domain, e)?
            } else {
                show::text(now, domain, e)
            };
            if writeln!(out, "{line}").is_err() {
                return Ok(false);
            }
        }
        Ok(out.flush().is_ok())
    }
}

pub fn execute(layout: &Layout, args: EventsArgs) -> anyhow::Result<i32> {
    crate::session::refuse_root()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let printer = Printer { json: args.json };
    let root = layout.runtime_root()?;
    if args.follow {
        return rt.block_on(follow::run(&root, &printer));
    }
    let mut unasked = 0;
    for d in locate::domains(&root)? {
        let now = crate::coordinator::status::now_unix_ms();
        let (mut watch, mut events) = DomainWatch::start(&d.status, now);
        match rt.block_on(crate::cli::escalations::pending_in(&d, watch::LABEL)) {
            Ok(prompts) => prompts
                .iter()
                .for_each(|p| events.extend(watch.prompt(&p.prompt))),
            Err(e) => {
                unasked += 1;
                crate::cli::escalations::say_unasked(&d, &e);
            }
        }
        if !printer.print(&DomainRef::of(&d.status), &events)? {
            return Ok(0);
        }
    }
    Ok(if unasked > 0 {
        super::escalations::UNASKED
    } else {
        0
    })
}
