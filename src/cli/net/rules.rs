//! `lazaret net allow`, `lazaret net revoke`, `lazaret net rules`: destinations the developer
//! allows for the current run of a Domain, on top of its profile's policy (issue #17; see
//! [`crate::network::run_rules`]).

use crate::config::HostConfig;
use crate::domain::layout::Layout;
use crate::domain::Domain;
use crate::network::run_rules::{RunRules, Target};
use crate::profile::AgentProfile;
use crate::runtime::run_rules_store;
use crate::runtime::sidecar::status_dir;
use crate::terminal::escape;
use anyhow::bail;
use clap::Args;
use std::io::Write;

/// Exit status of a target that cannot be allowed as written (usage-like, as clap's 2).
const BAD_TARGET: i32 = 2;

/// Allow a refused destination for this run of the Domain
///
/// Takes what `lazaret net denials` shows: ADDR (every port of an IPv4 address), ADDR:PORT
/// (TCP and UDP to that port) or a DNS NAME (`registry.example.org`, `*.example.org`). The
/// rule is in force when the command returns — no restart, other connections untouched — and
/// ends with the run: the next start of the Domain begins without it. To keep it, add it to
/// the profile's [network] table.
///
/// An address rule comes before every prefix rule of the policy, so it also opens a denied
/// range; private, link-local, CGNAT and 0.0.0.0/8 addresses need --private. DNS goes
/// through the sidecar's forwarder whatever is allowed. An allowed name's answers are
/// connectable (under default = "deny"), except private addresses (no rebinding): allow those
/// by address with --private.
#[derive(Debug, Args)]
pub struct AllowArgs {
    /// ADDR, ADDR:PORT or NAME.
    pub target: String,
    /// Allow a private, link-local, CGNAT or 0.0.0.0/8 address (a way into your network).
    #[arg(long)]
    pub private: bool,
    /// Agent Profile of the Domain (default: the configuration's default profile).
    #[arg(long)]
    pub profile: Option<String>,
    /// Print {target, added (false: it was allowed already), rules} as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Take back a destination allowed for this run
///
/// Connections already open stay open; new ones are refused again as the profile says. For a
/// name, the addresses answered for it are no longer connectable either.
#[derive(Debug, Args)]
pub struct RevokeArgs {
    /// ADDR, ADDR:PORT or NAME, as `lazaret net allow` took it (`lazaret net rules` lists them).
    pub target: String,
    /// Agent Profile of the Domain (default: the configuration's default profile).
    #[arg(long)]
    pub profile: Option<String>,
    /// Print {target, revoked (false: it was not allowed), rules} as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The Domain's network rules: the profile's, then this run's
///
/// The profile's [network] policy (default, allow and deny prefixes, allowed and denied names)
/// and the destinations allowed for this run with `lazaret net allow`, oldest first.
#[derive(Debug, Args)]
pub struct RulesArgs {
    /// Agent Profile of the Domain (default: the configuration's default profile).
    #[arg(long)]
    pub profile: Option<String>,
    /// Print {profile: {enabled, default, allow, deny, allow_names, deny_names}, run: [{target,
    /// added_unix}]} as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The Domain of this workspace and profile, running.
struct Running {
    profile: AgentProfile,
    domain: Domain,
}

fn running(layout: &Layout, profile: Option<&str>) -> anyhow::Result<Running> {
    let config = HostConfig::load(layout)?;
    let profile = config.profile(profile)?;
    let cwd = std::env::current_dir()?;
    let domain = Domain::resolve(layout, &profile.name, &cwd)?;
    let status =
        crate::coordinator::status::DomainStatus::read(&crate::coordinator::paths::status(&domain));
    let alive = status.is_some_and(|s| lazaret_client::locate::coordinator_runs(s.coordinator_pid));
    if !alive || !status_dir(&domain).join("ready").exists() {
        bail!(
            "no running Domain for {} with profile {}: rules for a run need the run (start one \
             with `lazaret run` or `lazaret tui`; to allow it for every run, add it to the \
             profile's [network] table)",
            domain.workspace.root.display(),
            profile.name
        );
    }
    if !profile.network.enabled {
        bail!(
            "networking is off for profile {} (network.enabled = false): nothing can be allowed \
             for a run",
            profile.name
        );
    }
    Ok(Running { profile, domain })
}

pub fn allow(layout: &Layout, args: &AllowArgs) -> anyhow::Result<i32> {
    let target = match Target::parse(&args.target).and_then(|t| t.check(args.private).map(|()| t)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("lazaret: {e}");
            return Ok(BAD_TARGET);
        }
    };
    let run = running(layout, args.profile.as_deref())?;
    let dir = status_dir(&run.domain);
    let now = crate::runtime::denial_ledger::unix_now();
    let shown = target.to_string();
    let added = run_rules_store::change(&dir, |r| r.allow(target, now))?;
    tracing::info!(target = %shown, added, profile = %run.profile.name, "network rule allowed for this run");
    let rules = run_rules_store::load(&dir)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let v = serde_json::json!({ "target": shown, "added": added, "rules": rules.allow });
        writeln!(out, "{v}")?;
    } else if added {
        writeln!(
            out,
            "allowed {shown} for this run of the Domain (profile {}); `lazaret net revoke {shown}` \
             takes it back",
            run.profile.name
        )?;
    } else {
        writeln!(out, "{shown} was allowed for this run already")?;
    }
    Ok(0)
}

pub fn revoke(layout: &Layout, args: &RevokeArgs) -> anyhow::Result<i32> {
    let target = match Target::parse(&args.target) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("lazaret: {e}");
            return Ok(BAD_TARGET);
        }
    };
    let run = running(layout, args.profile.as_deref())?;
    let dir = status_dir(&run.domain);
    let shown = target.to_string();
    let revoked = run_rules_store::change(&dir, |r| Ok(r.revoke(&target)))?;
    tracing::info!(target = %shown, revoked, profile = %run.profile.name, "network rule revoked for this run");
    let rules = run_rules_store::load(&dir)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let v = serde_json::json!({ "target": shown, "revoked": revoked, "rules": rules.allow });
        writeln!(out, "{v}")?;
    } else if revoked {
        writeln!(out, "revoked {shown}: refused again as the profile says")?;
    } else {
        writeln!(
            out,
            "{shown} was not allowed for this run (`lazaret net rules` lists what is)"
        )?;
    }
    Ok(0)
}

pub fn rules(layout: &Layout, args: &RulesArgs) -> anyhow::Result<i32> {
    let config = HostConfig::load(layout)?;
    let profile = config.profile(args.profile.as_deref())?;
    let cwd = std::env::current_dir()?;
    let domain = Domain::resolve(layout, &profile.name, &cwd)?;
    let dir = status_dir(&domain);
    // A stopped Domain's last run left its file; only a running one's rules are in force.
    let run = match running(layout, args.profile.as_deref()) {
        Ok(_) => run_rules_store::load(&dir)?,
        Err(_) => RunRules::default(),
    };
    let n = &profile.network;
    let default = if n.default_deny { "deny" } else { "allow" };
    let strings = |v: &[crate::runtime::network_policy::Ipv4Prefix]| -> Vec<String> {
        v.iter().map(ToString::to_string).collect()
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let v = serde_json::json!({
            "profile": {
                "name": profile.name,
                "enabled": n.enabled,
                "default": default,
                "allow": strings(&n.allow),
                "deny": strings(&n.deny),
                "allow_names": n.allow_names,
                "deny_names": n.deny_names,
            },
            "run": run.allow,
        });
        writeln!(out, "{v}")?;
        return Ok(0);
    }
    writeln!(out, "profile {}:", profile.name)?;
    if !n.enabled {
        writeln!(out, "  networking off")?;
    } else {
        writeln!(out, "  default      {default}")?;
        for (label, list) in [
            ("allow", strings(&n.allow)),
            ("deny", strings(&n.deny)),
            ("allow name", n.allow_names.clone()),
            ("deny name", n.deny_names.clone()),
        ] {
            for item in list {
                writeln!(out, "  {label:<12} {}", escape::visible(&item))?;
            }
        }
    }
    if run.allow.is_empty() {
        writeln!(
            out,
            "this run: nothing allowed (lazaret net allow ADDR[:PORT] | NAME)"
        )?;
    } else {
        writeln!(out, "this run:")?;
        for r in &run.allow {
            writeln!(
                out,
                "  allow        {:<32} since {} UTC",
                r.target.to_string(),
                super::utc(r.added_unix)
            )?;
        }
    }
    Ok(0)
}
