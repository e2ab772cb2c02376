//! `lazaret net deny` and `lazaret net held`: refuse a destination for the current run, and
//! list what the sidecar holds under `default = "ask"` (issue #17; see
//! [`crate::network::ask`]).

use super::rules::{running, BAD_TARGET};
use crate::domain::layout::Layout;
use crate::network::ask::read_held;
use crate::network::run_rules::Target;
use crate::runtime::run_rules_store;
use crate::runtime::sidecar::status_dir;
use crate::terminal::escape;
use clap::Args;
use std::io::Write;

/// Refuse a destination for this run of the Domain
///
/// Takes ADDR, ADDR:PORT or NAME, like `lazaret net allow`. Under default = "ask" this is
/// the answer "no" to a held connection (`lazaret net held` lists them): it is refused at
/// once and recorded in the denial ledger. Under any default it closes the destination for
/// the rest of the run, over every allow rule of the profile (an allow of the same target for
/// this run ends). `lazaret net revoke` takes it back.
#[derive(Debug, Args)]
pub struct DenyArgs {
    /// ADDR, ADDR:PORT or NAME.
    pub target: String,
    /// Agent Profile of the Domain (default: the configuration's default profile).
    #[arg(long)]
    pub profile: Option<String>,
    /// Print {target, added (false: it was refused already), deny, rules} as JSON.
    #[arg(long)]
    pub json: bool,
}

/// What the Domain holds under default = "ask", waiting for you
///
/// Connections (ADDR:PORT, tcp or udp) and DNS names the profile's rules do not decide, each
/// with the seconds left before it is refused. Answer with `lazaret net allow TARGET` (the
/// held connection proceeds at its next retransmission) or `lazaret net deny TARGET`.
#[derive(Debug, Args)]
pub struct HeldArgs {
    /// Agent Profile of the Domain (default: the configuration's default profile).
    #[arg(long)]
    pub profile: Option<String>,
    /// Print {held: [{target, protocol, since, deadline, count}]} as JSON (Unix seconds).
    #[arg(long)]
    pub json: bool,
}

pub fn deny(layout: &Layout, args: &DenyArgs) -> anyhow::Result<i32> {
    // A name is refused whatever the port: `NAME:PORT` refuses `NAME` (its resolution).
    let target = match Target::parse(&args.target).map(Target::any_port) {
        Ok(t) => t,
        Err(e) => {
            crate::say!("lazaret: {e}");
            return Ok(BAD_TARGET);
        }
    };
    let run = running(layout, args.profile.as_deref())?;
    let dir = status_dir(&run.domain);
    let shown = target.to_string();
    let now = crate::runtime::denial_ledger::unix_now();
    let added = run_rules_store::change(&dir, |r| r.deny(target.clone(), now))?;
    tracing::info!(target = %shown, added, profile = %run.profile.name, "network destination refused for this run");
    let rules = run_rules_store::load(&dir)?;
    let mut out = crate::terminal::say::stdout();
    if args.json {
        let v = serde_json::json!({
            "target": shown, "added": added, "deny": rules.deny, "rules": rules.allow,
        });
        writeln!(out, "{}", crate::cli::safe_json::to_line(&v)?)?;
    } else if added {
        writeln!(
            out,
            "refused {shown} for this run of the Domain (profile {}); `lazaret net revoke \
             {shown}` takes it back",
            run.profile.name
        )?;
    } else {
        writeln!(out, "{shown} was refused for this run already")?;
    }
    Ok(0)
}

pub fn held(layout: &Layout, args: &HeldArgs) -> anyhow::Result<i32> {
    let run = running(layout, args.profile.as_deref())?;
    let file = read_held(&status_dir(&run.domain));
    let mut out = crate::terminal::say::stdout();
    if args.json {
        writeln!(out, "{}", crate::cli::safe_json::to_line(&file)?)?;
        return Ok(0);
    }
    if run.profile.network.ask_timeout.is_none() {
        writeln!(
            out,
            "profile {} does not ask (network default = \"{}\"): nothing is ever held",
            run.profile.name,
            run.profile.network.default_word()
        )?;
        return Ok(0);
    }
    if file.held.is_empty() {
        writeln!(out, "nothing held")?;
        return Ok(0);
    }
    let now = crate::runtime::denial_ledger::unix_now();
    writeln!(
        out,
        "{:<40} {:<5} {:>6} {:>5}",
        "TARGET", "PROTO", "LEFT", "TRIES"
    )?;
    for h in &file.held {
        writeln!(
            out,
            "{:<40} {:<5} {:>5}s {:>5}",
            escape::visible(&h.target),
            escape::visible(&h.protocol),
            h.deadline.saturating_sub(now),
            h.count
        )?;
    }
    writeln!(
        out,
        "answer with `lazaret net allow TARGET` or `lazaret net deny TARGET`"
    )?;
    Ok(0)
}
