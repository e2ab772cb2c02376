//! `[profiles.NAME.network]`: extra allowed and denied IPv4 prefixes on top of the default
//! policy (spec §3.5, SR-6), or no network at all (`enabled = false`). The sidecar applies the
//! most specific matching prefix (longest prefix first), so rules may nest freely; an
//! equal-prefix allow/deny pair is a conflict that is refused rather than guessed.

use super::file::RawNetwork;
use super::validate::{Check, Placed};
use crate::runtime::network_policy::{Ipv4Prefix, NetworkPolicy, DEFAULT_DENY};
use toml::Spanned;

fn prefixes(c: &mut Check<'_>, what: &str, raw: &[Spanned<String>]) -> Vec<Placed<Ipv4Prefix>> {
    let mut out: Vec<Placed<Ipv4Prefix>> = Vec::new();
    for item in raw {
        match Ipv4Prefix::parse(item.get_ref().trim()) {
            Ok(p) => {
                if !out.iter().any(|q| q.value == p) {
                    out.push(Placed::here(p, item.span()));
                }
            }
            Err(e) => c.error(Some(&item.span()), format!("network {what}: {e}")),
        }
    }
    out
}

/// A deny rule and where it comes from, for messages.
struct Deny {
    prefix: Ipv4Prefix,
    origin: String,
}

/// The default policy with the table's allows and denies added.
pub fn policy(c: &mut Check<'_>, raw: &RawNetwork) -> NetworkPolicy {
    let allow = prefixes(c, "allow", &raw.allow);
    let deny = prefixes(c, "deny", &raw.deny);
    let mut denies: Vec<Deny> = DEFAULT_DENY
        .iter()
        .map(|p| Deny {
            prefix: *p,
            origin: "the default deny rule".to_owned(),
        })
        .collect();
    for d in &deny {
        if !DEFAULT_DENY.contains(&d.value) {
            let origin = format!("the deny rule at {}", c.line_of(d.span.as_ref()));
            denies.push(Deny {
                prefix: d.value,
                origin,
            });
        }
    }
    for a in &allow {
        for d in &denies {
            let (ap, dp) = (a.value, d.prefix);
            if ap == dp {
                c.error(
                    a.span.as_ref(),
                    format!(
                        "allow {ap} conflicts with {} for the same prefix {dp} (equal-prefix \
                         conflicts are refused, SR-6): remove one, or allow a more specific \
                         prefix inside {dp}",
                        d.origin
                    ),
                );
            }
        }
    }
    let mut policy = NetworkPolicy {
        enabled: raw.enabled.unwrap_or(true),
        ..NetworkPolicy::default()
    };
    names(c, raw, &mut policy);
    for svc in &raw.host_services {
        match crate::runtime::network_policy::HostService::parse(svc.get_ref()) {
            Ok(s) if !policy.host_services.contains(&s) => policy.host_services.push(s),
            Ok(_) => {}
            Err(e) => c.error(Some(&svc.span()), format!("network host_services: {e}")),
        }
    }
    policy.host_services.sort();
    for entry in &raw.publish {
        let parsed = match entry.get_ref() {
            super::file::RawPublish::Port(n) => u16::try_from(*n)
                .ok()
                .filter(|p| *p > 0)
                .map(|p| (p, p))
                .ok_or_else(|| format!("{n} is not a port (1 to 65535)")),
            super::file::RawPublish::Mapping(s) => crate::cli::port::parse_ports(s),
        };
        match parsed {
            Ok(p) if policy.publish.iter().any(|q| q.0 == p.0) => c.error(
                Some(&entry.span()),
                format!("network publish: host port {} is published twice", p.0),
            ),
            Ok(p) => policy.publish.push(p),
            Err(e) => c.error(Some(&entry.span()), format!("network publish: {e}")),
        }
    }
    policy.allow.extend(allow.iter().map(|a| a.value));
    policy
        .deny
        .extend(denies.iter().skip(DEFAULT_DENY.len()).map(|d| d.prefix));
    policy
}

/// Resolvers, DNS name rules and the default for unmatched public destinations.
fn names(c: &mut Check<'_>, raw: &RawNetwork, policy: &mut NetworkPolicy) {
    if !raw.resolvers.is_empty() {
        policy.resolvers.clear();
    }
    for r in &raw.resolvers {
        match r.get_ref().trim().parse::<std::net::Ipv4Addr>() {
            Ok(a) => policy.resolvers.push(a),
            Err(_) => c.error(
                Some(&r.span()),
                format!(
                    "network resolvers: {:?} is not an IPv4 address (a resolver is given as \
                     a.b.c.d)",
                    r.get_ref()
                ),
            ),
        }
    }
    let mut checked = |list: &[Spanned<String>], what: &str| -> Vec<String> {
        let mut out = Vec::new();
        for n in list {
            match crate::network::NamePattern::parse(n.get_ref()) {
                Ok(p) => out.push(p.to_string()),
                Err(e) => c.error(Some(&n.span()), format!("network {what}: {e}")),
            }
        }
        out
    };
    policy.allow_names = checked(&raw.allow_names, "allow_names");
    policy.deny_names = checked(&raw.deny_names, "deny_names");
    if let Err(e) = crate::network::NameRules::parse(&policy.allow_names, &policy.deny_names) {
        let at = raw.deny_names.first().map(|n| n.span());
        c.error(
            at.as_ref(),
            format!("network names: {e} (SR-6: conflicts are refused)"),
        );
    }
    if let Some(d) = &raw.default {
        match d.get_ref().as_str() {
            "allow" => policy.default_deny = false,
            "deny" => policy.default_deny = true,
            "ask" => {
                policy.default_deny = true;
                policy.ask_timeout = Some(crate::network::ask::DEFAULT_TIMEOUT_SECS);
            }
            other => c.error(
                Some(&d.span()),
                format!(
                    "network default: {other:?} is not \"allow\", \"deny\" or \"ask\" (hold \
                     the connection and ask the developer)"
                ),
            ),
        }
    }
    if let Some(t) = &raw.ask_timeout {
        let max = crate::network::ask::MAX_TIMEOUT_SECS;
        match u32::try_from(*t.get_ref()) {
            Ok(secs) if (1..=max).contains(&secs) => {
                if policy.ask_timeout.is_some() {
                    policy.ask_timeout = Some(secs);
                } else {
                    c.error(
                        Some(&t.span()),
                        "network ask_timeout: only used with default = \"ask\"".to_string(),
                    );
                }
            }
            _ => c.error(
                Some(&t.span()),
                format!(
                    "network ask_timeout: {} is not a number of seconds from 1 to {max}",
                    t.get_ref()
                ),
            ),
        }
    }
}
