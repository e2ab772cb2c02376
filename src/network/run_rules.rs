//! Run-scoped allow rules (issue #17): a destination the Network Sidecar refused can be allowed
//! by the developer for the current run of the Domain — `lazaret net allow ADDR[:PORT] | NAME`
//! — and revoked, without restarting anything.
//!
//! The rules live in the sidecar's host-private status dir as `run-rules.json` (written by the
//! host under a lock, never by the sandbox); the sidecar applies each new generation as one
//! nftables transaction on three sets of its policy (see
//! [`crate::runtime::network_policy`]) and acknowledges it in `run-rules.applied`:
//!
//! - `ADDR` goes into [`RUN_ALLOWED_SET`]: every protocol and port of that address;
//! - `ADDR:PORT` into [`RUN_ALLOWED_PORTS_SET`]: TCP and UDP to that port;
//! - `NAME:PORT` (TCP) or `NAME:PORT/udp` — the **narrow form** of a name (issue #31): the
//!   sidecar's DNS forwarder answers the name over the profile's name rules, and the addresses
//!   it answers go into [`crate::runtime::network_policy::RUN_DNS_ALLOWED_PORTS_SET`] as `address . protocol . port`: those
//!   addresses on that port and protocol only;
//! - `NAME` (or `*.NAME`) — the **wide form**, a deliberate choice (`--any-port`, `w` on a
//!   card): the addresses answered go into [`crate::runtime::network_policy::RUN_DNS_ALLOWED_SET`], every port, TCP and UDP.
//!
//! Either way an answered address admits every other name on it (a CDN's other tenants), and
//! both sets are evaluated after the prefix rules like the profile's own names: an allowed name
//! that resolves to a private address stays refused — no rebinding.
//!
//! Address rules are evaluated after the DNS rules (port 53 still goes only through the
//! forwarder) and before every prefix rule, so they pierce the profile's and the default
//! denies. Private, link-local, CGNAT and `0/8` addresses need the developer's explicit
//! `--private`. The rules end with the run: a new start of the Domain begins with none.

use super::name_rules::NamePattern;
use crate::runtime::network_policy::{
    DEFAULT_DENY, RUN_ALLOWED_PORTS_SET, RUN_ALLOWED_SET, RUN_DENIED_PORTS_SET, RUN_DENIED_SET,
    TABLE,
};
use std::fmt;
use std::net::Ipv4Addr;

/// The file the host writes in the sidecar's status dir.
pub const RULES_FILE: &str = "run-rules.json";
/// The sidecar's acknowledgement: `GENERATION ok` or `GENERATION failed: WHY`.
pub const APPLIED_FILE: &str = "run-rules.applied";
/// The most run-scoped rules a Domain holds (each is one element; the file stays small).
pub const MAX_RULES: usize = 1024;
/// The largest rules file the sidecar reads.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;

/// What a run-scoped rule allows.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// Every port of one IPv4 address.
    Address(Ipv4Addr),
    /// TCP and UDP to one port of one IPv4 address.
    Port(Ipv4Addr, u16),
    /// A DNS name or `*.suffix`, as the profile's name rules spell them: the addresses
    /// answered for it, every port, TCP and UDP (the wide form).
    Name(NamePattern),
    /// A name's answered addresses on one port of one protocol only (the narrow form):
    /// `NAME:PORT` (TCP) or `NAME:PORT/udp`.
    NamePort(NamePattern, Proto, u16),
}

/// The transport of a narrow name rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Proto {
    Tcp,
    Udp,
}

impl Proto {
    /// As nftables and the held list spell it.
    pub fn word(self) -> &'static str {
        match self {
            Proto::Tcp => "tcp",
            Proto::Udp => "udp",
        }
    }

    /// `tcp` or `udp`; anything else is none.
    pub fn parse(word: &str) -> Option<Proto> {
        match word {
            "tcp" => Some(Proto::Tcp),
            "udp" => Some(Proto::Udp),
            _ => None,
        }
    }
}

/// Why a target cannot be allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetError {
    Syntax(String),
    /// A private, link-local, CGNAT or `0/8` address without `--private`.
    NeedsPrivate(Ipv4Addr, String),
    /// Never a useful destination (loopback, multicast, reserved, broadcast).
    Unusable(Ipv4Addr, &'static str),
}

impl fmt::Display for TargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetError::Syntax(why) => f.write_str(why),
            TargetError::NeedsPrivate(addr, range) => write!(
                f,
                "{addr} is in {range}, which the policy refuses by default (private networks, \
                 cloud metadata, carrier-internal hosts): allowing it opens a way to your \
                 network; add --private if that is what you want"
            ),
            TargetError::Unusable(addr, why) => write!(f, "{addr} {why}; nothing to allow"),
        }
    }
}

impl std::error::Error for TargetError {}

impl Target {
    /// Parses `ADDR`, `ADDR:PORT`, `NAME` or `*.NAME` (what `lazaret net denials` shows).
    pub fn parse(text: &str) -> Result<Target, TargetError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(TargetError::Syntax(
                "nothing to allow: give ADDR, ADDR:PORT or NAME (as `lazaret net denials` shows \
                 them)"
                    .into(),
            ));
        }
        if let Ok(addr) = text.parse::<Ipv4Addr>() {
            return Ok(Target::Address(addr));
        }
        if let Some((addr, port)) = text.rsplit_once(':') {
            if let Ok(addr) = addr.parse::<Ipv4Addr>() {
                return match port.parse::<u16>() {
                    Ok(p) if p > 0 && port.bytes().all(|b| b.is_ascii_digit()) => {
                        Ok(Target::Port(addr, p))
                    }
                    _ => Err(TargetError::Syntax(format!(
                        "`{text}`: the port must be a number from 1 to 65535"
                    ))),
                };
            }
            if text.contains("::") || text.parse::<std::net::Ipv6Addr>().is_ok() {
                return Err(TargetError::Syntax(format!(
                    "`{text}`: IPv6 is off inside the Domain; allow an IPv4 address or a name"
                )));
            }
            if !addr.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                return Target::parse_name_port(text, addr, port);
            }
        }
        if text.contains('/') {
            return Err(TargetError::Syntax(format!(
                "`{text}`: a prefix is a profile rule (allow = [\"{text}\"] in the profile's \
                 [network] table); `lazaret net allow` takes one address, address:port or name"
            )));
        }
        if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return Err(TargetError::Syntax(format!(
                "`{text}` is not an IPv4 address"
            )));
        }
        NamePattern::parse(text)
            .map(Target::Name)
            .map_err(TargetError::Syntax)
    }

    /// `NAME:PORT`, `NAME:PORT/tcp` or `NAME:PORT/udp` (the narrow form of a name).
    fn parse_name_port(text: &str, name: &str, port: &str) -> Result<Target, TargetError> {
        let (port, proto) = match port.split_once('/') {
            Some((p, word)) => (p, Proto::parse(&word.to_ascii_lowercase())),
            None => (port, Some(Proto::Tcp)),
        };
        let Some(proto) = proto else {
            return Err(TargetError::Syntax(format!(
                "`{text}`: the protocol is tcp or udp (NAME:PORT is TCP, NAME:PORT/udp UDP)"
            )));
        };
        let port = match port.parse::<u16>() {
            Ok(p) if p > 0 && port.bytes().all(|b| b.is_ascii_digit()) => p,
            _ => {
                return Err(TargetError::Syntax(format!(
                    "`{text}`: the port must be a number from 1 to 65535"
                )))
            }
        };
        let pattern = NamePattern::parse(name).map_err(TargetError::Syntax)?;
        Ok(Target::NamePort(pattern, proto, port))
    }

    /// The name pattern of a name rule (either form).
    pub fn name(&self) -> Option<&NamePattern> {
        match self {
            Target::Name(n) | Target::NamePort(n, ..) => Some(n),
            _ => None,
        }
    }

    /// The wide form of a narrow name rule (`NAME:PORT` → `NAME`); any other target as it is.
    pub fn any_port(self) -> Target {
        match self {
            Target::NamePort(n, ..) => Target::Name(n),
            t => t,
        }
    }

    /// What allowing it opens, in words for the developer; `answered` are the name's current
    /// addresses when known (a name's owner chooses them, and every other name on one of them
    /// shares it: a CDN's other tenants).
    pub fn opens(&self, answered: &[Ipv4Addr]) -> String {
        let addrs = if answered.is_empty() {
            "addresses (as its DNS answers them)".to_owned()
        } else {
            let shown: Vec<String> = answered.iter().take(4).map(|a| a.to_string()).collect();
            let more = answered.len().saturating_sub(4);
            let tail = if more > 0 {
                format!(", {more} more")
            } else {
                String::new()
            };
            format!("addresses ({}{tail})", shown.join(", "))
        };
        match self {
            Target::Address(a) => format!("every port of {a}, TCP and UDP"),
            Target::Port(a, p) => format!("port {p} of {a}, TCP and UDP"),
            Target::NamePort(n, proto, p) => format!(
                "{n}'s current {addrs} on {}/{p} only — other names on those addresses too \
                 (a CDN's other tenants)",
                proto.word()
            ),
            Target::Name(n) => format!(
                "{n}'s current {addrs} on every port, TCP and UDP — other names on those \
                 addresses too (a CDN's other tenants)"
            ),
        }
    }

    /// The default-denied range its address is in (private, link-local, CGNAT, `0/8`).
    pub fn private_range(&self) -> Option<crate::runtime::network_policy::Ipv4Prefix> {
        let addr = match self {
            Target::Address(a) | Target::Port(a, _) => *a,
            Target::Name(_) | Target::NamePort(..) => return None,
        };
        let one = crate::runtime::network_policy::Ipv4Prefix { addr, len: 32 };
        DEFAULT_DENY.iter().find(|p| p.contains(&one)).copied()
    }

    /// Whether the developer may allow it: `private` is the explicit `--private`.
    pub fn check(&self, private: bool) -> Result<(), TargetError> {
        let addr = match self {
            Target::Address(a) | Target::Port(a, _) => *a,
            Target::Name(_) | Target::NamePort(..) => return Ok(()),
        };
        if addr == crate::runtime::network_policy::HOST_LOOPBACK {
            return Err(TargetError::Unusable(
                addr,
                "is the host's loopback (slirp4netns' gateway): list the port in the profile's \
                 host_services instead",
            ));
        }
        if addr.is_loopback() {
            return Err(TargetError::Unusable(
                addr,
                "is the sandbox's own loopback (host services are reached another way)",
            ));
        }
        if addr.is_multicast() || addr.is_broadcast() || addr.octets()[0] >= 240 {
            return Err(TargetError::Unusable(
                addr,
                "is a multicast, broadcast or reserved address",
            ));
        }
        match self.private_range() {
            Some(range) if !private => Err(TargetError::NeedsPrivate(addr, range.to_string())),
            _ => Ok(()),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Address(a) => write!(f, "{a}"),
            Target::Port(a, p) => write!(f, "{a}:{p}"),
            Target::Name(n) => write!(f, "{n}"),
            Target::NamePort(n, Proto::Tcp, p) => write!(f, "{n}:{p}"),
            Target::NamePort(n, Proto::Udp, p) => write!(f, "{n}:{p}/udp"),
        }
    }
}

impl serde::Serialize for Target {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Target {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Target, D::Error> {
        let text = String::deserialize(d)?;
        Target::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// One run-scoped rule.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRule {
    pub target: Target,
    /// When it was added (Unix seconds).
    pub added_unix: u64,
}

/// Every run-scoped rule of a Domain, with a generation the sidecar acknowledges.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRules {
    pub generation: u64,
    pub allow: Vec<RunRule>,
    /// Refused for this run (`lazaret net deny`, or deny on a held connection under
    /// `default = "ask"`): evaluated before the allows.
    #[serde(default)]
    pub deny: Vec<RunRule>,
}

impl RunRules {
    /// Strictly parses the rules file (size, shape, every target re-validated: a private
    /// address got there only with `--private`, which the file does not record, so it is not
    /// re-checked here).
    pub fn parse(text: &str) -> Result<RunRules, String> {
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(format!(
                "{RULES_FILE} is larger than {MAX_FILE_BYTES} bytes"
            ));
        }
        let rules: RunRules =
            serde_json::from_str(text).map_err(|e| format!("{RULES_FILE}: {e}"))?;
        if rules.allow.len() > MAX_RULES || rules.deny.len() > MAX_RULES {
            return Err(format!("{RULES_FILE} holds more than {MAX_RULES} rules"));
        }
        for r in &rules.allow {
            if let Target::Address(a) | Target::Port(a, _) = r.target {
                if let Err(e @ TargetError::Unusable(..)) = r.target.check(true) {
                    return Err(format!("{RULES_FILE}: {a}: {e}"));
                }
            }
        }
        Ok(rules)
    }

    /// Adds `target`; false when it was there already. The generation moves on either way, so
    /// the caller always gets a fresh acknowledgement.
    pub fn allow(&mut self, target: Target, now_unix: u64) -> Result<bool, String> {
        self.generation += 1;
        self.deny.retain(|r| r.target != target);
        if self.allow.iter().any(|r| r.target == target) {
            return Ok(false);
        }
        if self.allow.len() >= MAX_RULES {
            return Err(format!(
                "this run already holds {MAX_RULES} allow rules; revoke some, or put them in \
                 the profile"
            ));
        }
        self.allow.push(RunRule {
            target,
            added_unix: now_unix,
        });
        Ok(true)
    }

    /// Refuses `target` for this run (an allow of the same target ends); false when it was
    /// refused already. Any target may be refused: no `--private` is needed to close a way.
    /// A name is refused whatever the port: `NAME:PORT` refuses `NAME` (its resolution).
    pub fn deny(&mut self, target: Target, now_unix: u64) -> Result<bool, String> {
        let target = target.any_port();
        self.generation += 1;
        self.allow.retain(|r| r.target != target);
        if self.deny.iter().any(|r| r.target == target) {
            return Ok(false);
        }
        if self.deny.len() >= MAX_RULES {
            return Err(format!(
                "this run already holds {MAX_RULES} deny rules; revoke some, or put them in \
                 the profile"
            ));
        }
        self.deny.push(RunRule {
            target,
            added_unix: now_unix,
        });
        Ok(true)
    }

    /// Removes `target` from the allows and the denies; false when it was in neither.
    pub fn revoke(&mut self, target: &Target) -> bool {
        self.generation += 1;
        let before = self.allow.len() + self.deny.len();
        self.allow.retain(|r| r.target != *target);
        self.deny.retain(|r| r.target != *target);
        self.allow.len() + self.deny.len() != before
    }

    /// The name patterns the DNS forwarder refuses for this run.
    pub fn denied_names(&self) -> Vec<NamePattern> {
        self.deny
            .iter()
            .filter_map(|r| match &r.target {
                Target::Name(n) => Some(n.clone()),
                _ => None,
            })
            .collect()
    }

    /// What the run's rules say of a connection to `addr:port` (TCP or UDP): `Some(true)`
    /// allowed, `Some(false)` refused, `None` no run rule (names are decided by the forwarder).
    pub fn decides(&self, addr: Ipv4Addr, port: u16) -> Option<bool> {
        let hits = |rules: &[RunRule]| {
            rules.iter().any(|r| match r.target {
                Target::Address(a) => a == addr,
                Target::Port(a, p) => a == addr && p == port,
                Target::Name(_) | Target::NamePort(..) => false,
            })
        };
        if hits(&self.deny) {
            Some(false)
        } else if hits(&self.allow) {
            Some(true)
        } else {
            None
        }
    }

    /// The name patterns the DNS forwarder allows for this run (either form), once each.
    pub fn names(&self) -> Vec<NamePattern> {
        let mut names: Vec<NamePattern> = Vec::new();
        for n in self.allow.iter().filter_map(|r| r.target.name()) {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
        names
    }

    /// The allowed name rules (either form): what the addresses answered for a name admit.
    pub fn name_targets(&self) -> Vec<Target> {
        self.allow
            .iter()
            .filter(|r| r.target.name().is_some())
            .map(|r| r.target.clone())
            .collect()
    }

    /// The nftables script that makes the address sets hold exactly these rules: one
    /// transaction (`nft -f`), so no other destination's traffic is touched and no moment
    /// holds half of a change.
    pub fn render_nft(&self) -> String {
        let split = |rules: &[RunRule]| {
            let (mut addrs, mut ports) = (Vec::new(), Vec::new());
            for r in rules {
                match r.target {
                    Target::Address(a) => addrs.push(a.to_string()),
                    Target::Port(a, p) => ports.push(format!("{a} . {p}")),
                    Target::Name(_) | Target::NamePort(..) => {}
                }
            }
            (addrs, ports)
        };
        let (addrs, ports) = split(&self.allow);
        let (denied, denied_ports) = split(&self.deny);
        let all = [
            (RUN_ALLOWED_SET, addrs),
            (RUN_ALLOWED_PORTS_SET, ports),
            (RUN_DENIED_SET, denied),
            (RUN_DENIED_PORTS_SET, denied_ports),
        ];
        let mut s = String::new();
        for (set, _) in &all {
            s.push_str(&format!("flush set inet {TABLE} {set}\n"));
        }
        for (set, elements) in all {
            if !elements.is_empty() {
                s.push_str(&format!(
                    "add element inet {TABLE} {set} {{ {} }}\n",
                    elements.join(", ")
                ));
            }
        }
        s
    }
}

pub use super::run_answers::{
    answer_element, answer_elements, read_answered, AnsweredForNames, ANSWERED_FILE,
    MAX_ANSWER_SECS, MAX_LISTED_ANSWERS,
};

#[cfg(test)]
#[path = "run_rules_tests.rs"]
mod tests;
