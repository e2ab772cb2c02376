//! `lazaret net allow`, `lazaret net revoke`, `lazaret net rules`: destinations the developer
//! allows for the current run of a Domain, on top of its profile's policy (issue #17; see
//! [`crate::network::run_rules`]).

use crate::config::save;
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
pub(super) const BAD_TARGET: i32 = 2;

/// Allow a refused destination for this run of the Domain
///
/// Takes what `lazaret net denials` shows: ADDR (every port of an IPv4 address), ADDR:PORT
/// (TCP and UDP to that port), or a DNS name on a port: NAME:PORT (TCP) or NAME:PORT/udp —
/// the name's answered addresses on that port only (`registry.example.org:443`,
/// `*.example.org:443`). A NAME on every port is the wide form: say --any-port. The
/// rule is in force when the command returns — no restart, other connections untouched — and
/// ends with the run: the next start of the Domain begins without it. To keep it, add it to
/// the profile's [network] table.
///
/// An address rule comes before every prefix rule of the policy, so it also opens a denied
/// range; private, link-local, CGNAT and 0.0.0.0/8 addresses need --private. DNS goes
/// through the sidecar's forwarder whatever is allowed. An allowed name's answers are
/// connectable (under default = "deny"), except private addresses (no rebinding): allow those
/// by address with --private. A name's owner chooses its addresses, and every other name on
/// one of them shares it (a CDN's other tenants): that is what a name allow opens.
#[derive(Debug, Args)]
pub struct AllowArgs {
    /// ADDR, ADDR:PORT, NAME:PORT, NAME:PORT/udp, or NAME with --any-port.
    pub target: String,
    /// The wide form of a name: its answered addresses on every port, TCP and UDP (NAME:PORT
    /// opens one port). `--save` keeps a name on every port anyway (profile rules have no ports).
    #[arg(long)]
    pub any_port: bool,
    /// Allow a private, link-local, CGNAT or 0.0.0.0/8 address (a way into your network).
    #[arg(long)]
    pub private: bool,
    /// Agent Profile of the Domain (default: the configuration's default profile).
    #[arg(long)]
    pub profile: Option<String>,
    /// Also add it to the profile in the configuration file, for every later run: ADDR as
    /// ADDR/32 in `allow`, a NAME in `allow_names` (and out of `deny_names`). The changed lines
    /// are shown; comments stay. Works without a running Domain too (then only the file changes).
    #[arg(long)]
    pub save: bool,
    /// Print {target, added (false: it was allowed already), rules, saved: {file, lines} | null}
    /// as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Take back a destination allowed (or refused) for this run
///
/// Connections already open stay open; new ones are decided again as the profile says. For an
/// allowed name, the addresses answered for it are no longer connectable either.
#[derive(Debug, Args)]
pub struct RevokeArgs {
    /// ADDR, ADDR:PORT or NAME, as `lazaret net allow` took it (`lazaret net rules` lists them).
    pub target: String,
    /// Agent Profile of the Domain (default: the configuration's default profile).
    #[arg(long)]
    pub profile: Option<String>,
    /// Print {target, revoked (false: it was neither allowed nor refused), rules, deny} as JSON.
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
    /// Print {profile: {name, enabled, default, ask_timeout, allow, deny, allow_names,
    /// deny_names, host_services}, run: [{target, added_unix}], run_deny: [{target,
    /// added_unix}]} as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The Domain of this workspace and profile, running.
pub(super) struct Running {
    pub(super) profile: AgentProfile,
    pub(super) domain: Domain,
}

pub(super) fn running(layout: &Layout, profile: Option<&str>) -> anyhow::Result<Running> {
    let this = crate::cli::this_domain::this_domain(layout, profile)?;
    let (profile, domain) = (this.profile, this.domain);
    if !this.running || !status_dir(&domain).join("ready").exists() {
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

/// The target of `lazaret net allow` with its flags: a name on every port only when the
/// developer said so (`--any-port`, or `--save`, whose profile rule has no port).
pub(super) fn allow_target(text: &str, any_port: bool, save: bool) -> Result<Target, String> {
    // The text may come from the sandbox (a held name, copied): the error quotes it escaped.
    let target = Target::parse(text).map_err(|e| escape::visible(&e.to_string()))?;
    match target {
        Target::Name(ref n) if !any_port && !save => Err(format!(
            "`{}` alone opens {}: say the port it needs — `{n}:443` (TCP), `{n}:PORT/udp` — or \
             add --any-port for every port (the wide form)",
            escape::visible(text.trim()),
            target.opens(&[])
        )),
        Target::Address(a) | Target::Port(a, _) if any_port => Err(format!(
            "--any-port widens a name; for every port of {a} say `lazaret net allow {a}`"
        )),
        t if any_port => Ok(t.any_port()),
        t => Ok(t),
    }
}

pub fn allow(layout: &Layout, args: &AllowArgs) -> anyhow::Result<i32> {
    let target = match allow_target(&args.target, args.any_port, args.save)
        .and_then(|t| t.check(args.private).map(|()| t).map_err(|e| e.to_string()))
    {
        Ok(t) => t,
        Err(e) => {
            crate::say!("lazaret: {e}");
            return Ok(BAD_TARGET);
        }
    };
    let shown = target.to_string();
    // The file change is prepared and validated first: a refusal changes nothing.
    let saving = if args.save {
        if let Target::Port(addr, _) = target {
            crate::say!(
                "lazaret: the profile's rules have no ports: `lazaret net allow {addr} --save` \
                 keeps every port of {addr}; {shown} alone can only be allowed for the run"
            );
            return Ok(BAD_TARGET);
        }
        let config = HostConfig::load(layout)?;
        let profile = config.profile(args.profile.as_deref())?;
        Some((
            save::prepare(layout, &config, &profile, &target)?,
            profile.name,
        ))
    } else {
        None
    };
    let run = match running(layout, args.profile.as_deref()) {
        Ok(run) => Some(run),
        Err(_) if saving.is_some() => None,
        Err(e) => return Err(e),
    };
    let mut added = false;
    let mut rules = RunRules::default();
    if let Some(run) = &run {
        let dir = status_dir(&run.domain);
        let now = crate::runtime::denial_ledger::unix_now();
        added = run_rules_store::change(&dir, |r| r.allow(target.clone(), now))?;
        tracing::info!(target = %shown, added, profile = %run.profile.name, "network rule allowed for this run");
        rules = run_rules_store::load(&dir)?;
    }
    if let Some((Some(prepared), profile)) = &saving {
        save::write(prepared)?;
        tracing::info!(target = %shown, file = %prepared.shown, %profile, "network rule added to the profile");
    }
    // The developer said --private: they are told once more what it opens.
    if let Some(range) = target.private_range() {
        crate::say!(
            "lazaret: warning: {shown} is in {range} (private networks, cloud metadata, \
             carrier-internal hosts): the sandbox can now reach it"
        );
    }
    let mut out = crate::terminal::say::stdout();
    if args.json {
        let saved = match &saving {
            Some((Some(p), _)) => serde_json::json!({ "file": p.shown, "lines": p.edit.diff }),
            _ => serde_json::Value::Null,
        };
        let v = serde_json::json!({
            "target": shown, "added": added, "opens": target.opens(&[]), "rules": rules.allow,
            "saved": saved,
        });
        writeln!(out, "{}", crate::cli::safe_json::to_line(&v)?)?;
        return Ok(0);
    }
    if let Some(run) = &run {
        if added {
            writeln!(
                out,
                "allowed {shown} for this run of the Domain (profile {}); `lazaret net revoke \
                 {shown}` takes it back",
                run.profile.name
            )?;
        } else {
            writeln!(out, "{shown} was allowed for this run already")?;
        }
        writeln!(out, "it allows {}", target.opens(&[]))?;
    }
    match &saving {
        Some((Some(p), profile)) => {
            writeln!(out, "added {shown} to profile {profile} in {}:", p.shown)?;
            for line in &p.edit.diff {
                writeln!(out, "  {}", escape::visible(line))?;
            }
            if run.is_some() {
                writeln!(
                    out,
                    "the running Domain keeps the policy it started with (and this run's rules); \
                     the profile's change applies from its next start — until then new sessions \
                     cannot join it (the configuration changed)"
                )?;
            }
        }
        Some((None, profile)) => {
            writeln!(
                out,
                "profile {profile} allows {shown} already; the configuration file is unchanged"
            )?;
        }
        None => {}
    }
    Ok(0)
}

pub fn revoke(layout: &Layout, args: &RevokeArgs) -> anyhow::Result<i32> {
    let target = match Target::parse(&args.target) {
        Ok(t) => t,
        Err(e) => {
            crate::say!("lazaret: {e}");
            return Ok(BAD_TARGET);
        }
    };
    let run = running(layout, args.profile.as_deref())?;
    let dir = status_dir(&run.domain);
    let shown = target.to_string();
    let revoked = run_rules_store::change(&dir, |r| Ok(r.revoke(&target)))?;
    tracing::info!(target = %shown, revoked, profile = %run.profile.name, "network rule revoked for this run");
    let rules = run_rules_store::load(&dir)?;
    let mut out = crate::terminal::say::stdout();
    if args.json {
        let v = serde_json::json!({
            "target": shown, "revoked": revoked, "rules": rules.allow, "deny": rules.deny,
        });
        writeln!(out, "{}", crate::cli::safe_json::to_line(&v)?)?;
    } else if revoked {
        writeln!(
            out,
            "revoked {shown}: the profile's policy decides it again"
        )?;
    } else {
        writeln!(
            out,
            "{shown} was not allowed or refused for this run (`lazaret net rules` lists what is)"
        )?;
    }
    Ok(0)
}

pub fn rules(layout: &Layout, args: &RulesArgs) -> anyhow::Result<i32> {
    let this = crate::cli::this_domain::this_domain(layout, args.profile.as_deref())?;
    let profile = this.profile;
    let dir = status_dir(&this.domain);
    // A stopped Domain's last run left its file; only a running one's rules are in force.
    let (run, answered) = if this.running && dir.join("ready").exists() {
        (
            run_rules_store::load(&dir)?,
            crate::network::run_rules::read_answered(&dir),
        )
    } else {
        (RunRules::default(), Default::default())
    };
    let n = &profile.network;
    let default = n.default_word();
    let strings = |v: &[crate::runtime::network_policy::Ipv4Prefix]| -> Vec<String> {
        v.iter().map(ToString::to_string).collect()
    };
    let mut out = crate::terminal::say::stdout();
    if args.json {
        let v = serde_json::json!({
            "profile": {
                "name": profile.name,
                "enabled": n.enabled,
                "default": default,
                "ask_timeout": n.ask_timeout,
                "allow": strings(&n.allow),
                "deny": strings(&n.deny),
                "allow_names": n.allow_names,
                "deny_names": n.deny_names,
                "host_services": n.host_services.iter().map(ToString::to_string).collect::<Vec<_>>(),
            },
            "run": run.allow,
            "run_deny": run.deny,
            "run_answered": answered,
        });
        writeln!(out, "{}", crate::cli::safe_json::to_line(&v)?)?;
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
            (
                "host service",
                n.host_services.iter().map(ToString::to_string).collect(),
            ),
        ] {
            for item in list {
                writeln!(out, "  {label:<12} {}", escape::visible(&item))?;
            }
        }
    }
    if let Some(secs) = n.ask_timeout {
        writeln!(out, "  ask_timeout  {secs} s")?;
    }
    if run.allow.is_empty() && run.deny.is_empty() {
        writeln!(
            out,
            "this run: nothing allowed or refused (lazaret net allow | deny ADDR[:PORT] | NAME)"
        )?;
    } else {
        writeln!(out, "this run:")?;
        for (label, list) in [("allow", &run.allow), ("deny", &run.deny)] {
            for r in list {
                writeln!(
                    out,
                    "  {label:<12} {:<32} since {} UTC",
                    r.target.to_string(),
                    super::utc(r.added_unix)
                )?;
                if label == "allow" && r.target.name().is_some() {
                    let addrs = answered
                        .get(&r.target.to_string())
                        .cloned()
                        .unwrap_or_default();
                    writeln!(out, "  {:<12} it allows {}", "", r.target.opens(&addrs))?;
                }
            }
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::allow_target;

    #[test]
    fn a_name_alone_is_refused_unless_the_wide_form_is_asked_for() {
        let e = allow_target("api.example.org", false, false).unwrap_err();
        assert!(e.contains("api.example.org:443"), "{e}");
        assert!(e.contains("--any-port"), "{e}");
        assert!(e.contains("every port"), "{e}");
        let show =
            |t: &str, any: bool, save: bool| allow_target(t, any, save).map(|t| t.to_string());
        assert_eq!(
            show("api.example.org:443", false, false).as_deref(),
            Ok("api.example.org:443")
        );
        assert_eq!(
            show("api.example.org", true, false).as_deref(),
            Ok("api.example.org")
        );
        assert_eq!(
            show("api.example.org:443", true, false).as_deref(),
            Ok("api.example.org")
        );
        assert_eq!(
            show("api.example.org", false, true).as_deref(),
            Ok("api.example.org")
        );
        assert!(allow_target("198.51.100.7:443", true, false).is_err());
        assert_eq!(
            show("198.51.100.7:443", false, false).as_deref(),
            Ok("198.51.100.7:443")
        );
        let hostile = allow_target("evil\u{1b}]52;c;x\u{7}.example", false, false).unwrap_err();
        assert!(!hostile.contains('\u{1b}'), "{hostile:?}");
    }
}
