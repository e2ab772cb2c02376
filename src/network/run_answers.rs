//! What the run's name rules opened (issue #31): the policy elements an answer for an allowed
//! name makes — `address` in the every-port set for the wide form, `address . protocol . port`
//! for the narrow one — and the sidecar's bookkeeping of them per rule, which it reports to the
//! host (`lazaret net rules`) and uses to take a revoked rule's elements out again.

use super::name_rules::NamePattern;
use super::run_rules::{Target, MAX_FILE_BYTES};
use crate::runtime::network_policy::{RUN_DNS_ALLOWED_PORTS_SET, RUN_DNS_ALLOWED_SET};
use std::net::Ipv4Addr;

/// What the sidecar answered for the run's name rules, in its status dir (JSON: rule →
/// addresses, [`AnsweredForNames::to_json`]): what each name allow opens now.
pub const ANSWERED_FILE: &str = "run-answered.json";
/// The most addresses [`ANSWERED_FILE`] lists per rule.
pub const MAX_LISTED_ANSWERS: usize = 64;

/// The policy's set and element (without its timeout) that admit `addr` for the name rule
/// `target`: [`RUN_DNS_ALLOWED_SET`] for the wide form, [`RUN_DNS_ALLOWED_PORTS_SET`] for the
/// narrow one; none for an address rule.
pub fn answer_element(target: &Target, addr: Ipv4Addr) -> Option<(&'static str, String)> {
    match target {
        Target::Name(_) => Some((RUN_DNS_ALLOWED_SET, addr.to_string())),
        Target::NamePort(_, proto, port) => Some((
            RUN_DNS_ALLOWED_PORTS_SET,
            format!("{addr} . {} . {port}", proto.word()),
        )),
        Target::Address(_) | Target::Port(..) => None,
    }
}

/// The elements to add for an answer to a name that `pattern` allowed for this run: one per
/// answered address and rule of that pattern (its narrow and wide forms), each with its
/// `timeout` in seconds — the record's TTL, at least 60 s and at most [`MAX_ANSWER_SECS`] (the
/// sets end with the run anyway: they live in the sidecar's namespace).
pub fn answer_elements(
    rules: &[Target],
    pattern: &NamePattern,
    records: &[(Ipv4Addr, u32)],
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for target in rules.iter().filter(|t| t.name() == Some(pattern)) {
        for (addr, ttl) in records {
            if let Some((set, element)) = answer_element(target, *addr) {
                let secs = (*ttl).clamp(60, MAX_ANSWER_SECS);
                out.push((set, format!("{element} timeout {secs}s")));
            }
        }
    }
    out
}

/// The longest an answered address stays in a run's set after its answer (a day; the run's
/// end takes it out sooner).
pub const MAX_ANSWER_SECS: u32 = 86_400;

/// The addresses answered for run-allowed names, per name rule, so that revoking a rule takes
/// its elements out of [`RUN_DNS_ALLOWED_SET`] / [`RUN_DNS_ALLOWED_PORTS_SET`] (the sidecar's
/// bookkeeping).
#[derive(Debug, Default)]
pub struct AnsweredForNames {
    by_rule: std::collections::HashMap<Target, std::collections::BTreeSet<Ipv4Addr>>,
}

impl AnsweredForNames {
    /// Remembers `addrs` answered for a name that the rule `target` allowed; whether one was
    /// new.
    pub fn record(&mut self, target: &Target, addrs: impl IntoIterator<Item = Ipv4Addr>) -> bool {
        let known = self.by_rule.entry(target.clone()).or_default();
        let before = known.len();
        known.extend(addrs);
        known.len() != before
    }

    /// What [`ANSWERED_FILE`] holds: each rule (as `lazaret net rules` shows it) with the
    /// addresses answered for it so far (at most [`MAX_LISTED_ANSWERS`]).
    pub fn to_json(&self) -> String {
        let map: std::collections::BTreeMap<String, Vec<Ipv4Addr>> = self
            .by_rule
            .iter()
            .map(|(t, a)| {
                (
                    t.to_string(),
                    a.iter().take(MAX_LISTED_ANSWERS).copied().collect(),
                )
            })
            .collect();
        serde_json::to_string(&map).unwrap_or_else(|_| "{}".to_owned())
    }

    /// Forgets the rules no longer in `kept`; returns the elements to take out of the sets
    /// (set, element), except those a kept rule admits too.
    pub fn revoke_missing(&mut self, kept: &[Target]) -> Vec<(&'static str, String)> {
        let gone: Vec<Target> = self
            .by_rule
            .keys()
            .filter(|t| !kept.contains(t))
            .cloned()
            .collect();
        let elements = |t: &Target, addrs: &std::collections::BTreeSet<Ipv4Addr>| {
            addrs
                .iter()
                .filter_map(|a| answer_element(t, *a))
                .collect::<Vec<_>>()
        };
        let mut drop = std::collections::BTreeSet::new();
        for t in &gone {
            if let Some(addrs) = self.by_rule.remove(t) {
                drop.extend(elements(t, &addrs));
            }
        }
        let still: std::collections::BTreeSet<(&'static str, String)> = self
            .by_rule
            .iter()
            .flat_map(|(t, addrs)| elements(t, addrs))
            .collect();
        drop.difference(&still).cloned().collect()
    }
}

/// Reads [`ANSWERED_FILE`] from the sidecar's status dir `dir`: rule → addresses; nothing when
/// it is missing, too large or malformed (the sidecar writes it whole, atomically).
pub fn read_answered(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<Ipv4Addr>> {
    let path = dir.join(ANSWERED_FILE);
    match std::fs::metadata(&path) {
        Ok(m) if m.len() <= MAX_FILE_BYTES * 4 => std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default(),
        _ => Default::default(),
    }
}
