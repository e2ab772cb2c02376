//! The Network Sidecar's egress policy (spec §3.5, SR-5, SR-6), rendered as nftables text.
//!
//! Default policy: IPv4 allowed except RFC 1918 (plus link-local and CGNAT, which reach
//! metadata services and carrier-internal hosts); the resolver the sidecar's namespace uses is
//! allowed on port 53; IPv6 is disabled in the namespace and also rejected here, so no address
//! family is left without policy. Allows are more specific than the denies they pierce.

use std::fmt::Write;
use std::net::Ipv4Addr;

/// An IPv4 prefix `addr/len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Prefix {
    pub addr: Ipv4Addr,
    pub len: u8,
}

impl Ipv4Prefix {
    pub const fn new(a: u8, b: u8, c: u8, d: u8, len: u8) -> Ipv4Prefix {
        Ipv4Prefix {
            addr: Ipv4Addr::new(a, b, c, d),
            len,
        }
    }
}

impl Ipv4Prefix {
    /// The prefix's network mask as a 32-bit integer (`/0` is the empty mask).
    pub fn mask(&self) -> u32 {
        match self.len {
            0 => 0,
            len => u32::MAX << (32 - u32::from(len.min(32))),
        }
    }

    /// The same prefix with its host bits cleared.
    pub fn network(&self) -> Ipv4Prefix {
        Ipv4Prefix {
            addr: Ipv4Addr::from(u32::from(self.addr) & self.mask()),
            len: self.len,
        }
    }

    /// Whether every address of `other` is also in `self` (equal prefixes contain each other).
    pub fn contains(&self, other: &Ipv4Prefix) -> bool {
        self.len <= other.len
            && (u32::from(other.addr) & self.mask()) == u32::from(self.network().addr)
    }

    /// Parses `a.b.c.d/len`, refusing a length above 32 and set host bits (`10.1.2.3/24`), so
    /// a prefix always means exactly what it says.
    pub fn parse(s: &str) -> Result<Ipv4Prefix, PrefixError> {
        let (addr, len) = s
            .split_once('/')
            .ok_or_else(|| PrefixError::Syntax(s.to_owned()))?;
        let addr: Ipv4Addr = addr
            .parse()
            .map_err(|_| PrefixError::Syntax(s.to_owned()))?;
        if len.is_empty() || len.len() > 2 || !len.bytes().all(|b| b.is_ascii_digit()) {
            return Err(PrefixError::Syntax(s.to_owned()));
        }
        let len: u8 = len.parse().map_err(|_| PrefixError::Syntax(s.to_owned()))?;
        if len > 32 {
            return Err(PrefixError::Length(s.to_owned()));
        }
        let p = Ipv4Prefix { addr, len };
        if p.network() != p {
            return Err(PrefixError::HostBits {
                given: s.to_owned(),
                network: p.network(),
            });
        }
        Ok(p)
    }
}

/// Why a string is not an IPv4 prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrefixError {
    Syntax(String),
    Length(String),
    HostBits { given: String, network: Ipv4Prefix },
}

impl std::fmt::Display for PrefixError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrefixError::Syntax(s) => write!(
                f,
                "{s:?} is not an IPv4 prefix: write it as a.b.c.d/len, e.g. 10.1.2.0/24 (IPv6 is \
                 disabled in the sandbox)"
            ),
            PrefixError::Length(s) => {
                write!(f, "{s:?} has a prefix length above 32: use /0 to /32")
            }
            PrefixError::HostBits { given, network } => {
                write!(f, "{given} has host bits set; did you mean {network}?")
            }
        }
    }
}

impl std::error::Error for PrefixError {}

impl std::str::FromStr for Ipv4Prefix {
    type Err = PrefixError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ipv4Prefix::parse(s)
    }
}

impl std::fmt::Display for Ipv4Prefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

/// slirp4netns' DNS forwarder inside the sidecar's namespace.
pub const SLIRP_RESOLVER: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 3);

/// Destinations denied by default: the RFC 1918 ranges (spec §3.5), plus link-local (cloud
/// metadata services at 169.254.169.254), shared address space (carrier-internal hosts) and
/// "this network" 0/8 (never a valid destination; some stacks treat 0.0.0.0 as loopback).
pub const DEFAULT_DENY: [Ipv4Prefix; 6] = [
    Ipv4Prefix::new(10, 0, 0, 0, 8),
    Ipv4Prefix::new(172, 16, 0, 0, 12),
    Ipv4Prefix::new(192, 168, 0, 0, 16),
    Ipv4Prefix::new(169, 254, 0, 0, 16),
    Ipv4Prefix::new(100, 64, 0, 0, 10),
    Ipv4Prefix::new(0, 0, 0, 0, 8),
];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkPolicy {
    /// False: no egress at all (a profile may turn networking off).
    pub enabled: bool,
    /// Upstream resolvers of the sidecar's DNS forwarder (the first is used).
    pub resolvers: Vec<Ipv4Addr>,
    pub allow: Vec<Ipv4Prefix>,
    /// Every deny rule, the defaults included.
    pub deny: Vec<Ipv4Prefix>,
    /// DNS names (`api.example.com`, `*.npmjs.org`) whose answers may be connected to.
    pub allow_names: Vec<String>,
    /// DNS names the sidecar refuses to resolve.
    pub deny_names: Vec<String>,
    /// Public IPv4 destinations not matched by a prefix rule: refused unless the sidecar
    /// answered them for an allowed name (true), or allowed (false, the spec's default).
    pub default_deny: bool,
    /// `default = "ask"` (with `default_deny` set): destinations and names no rule decides are
    /// held up to this many seconds while the developer is asked ([`crate::network::ask`]).
    pub ask_timeout: Option<u32>,
    /// Ports of the host's loopback the sandbox may reach (`host_services`), through
    /// slirp4netns' gateway [`HOST_LOOPBACK`]; nothing else of the host. Empty: the host's
    /// loopback is not reachable at all (slirp4netns' default).
    pub host_services: Vec<HostService>,
    /// Ports of the sandbox published on the host's loopback at every start: (host port,
    /// sandbox port).
    pub publish: Vec<(u16, u16)>,
}

/// One port of the host's loopback (`tcp/5432`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct HostService {
    pub udp: bool,
    pub port: u16,
}

impl HostService {
    /// Parses `tcp/PORT` or `udp/PORT`.
    pub fn parse(s: &str) -> Result<HostService, String> {
        let bad = || format!("{s:?} is not tcp/PORT or udp/PORT (PORT from 1 to 65535)");
        let (proto, port) = s.trim().split_once('/').ok_or_else(bad)?;
        let udp = match proto {
            "tcp" => false,
            "udp" => true,
            _ => return Err(bad()),
        };
        match port.parse::<u16>() {
            Ok(p) if p > 0 && port.bytes().all(|b| b.is_ascii_digit()) => {
                Ok(HostService { udp, port: p })
            }
            _ => Err(bad()),
        }
    }
}

impl std::fmt::Display for HostService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let proto = if self.udp { "udp" } else { "tcp" };
        write!(f, "{proto}/{}", self.port)
    }
}

/// slirp4netns' gateway: the host's loopback when `allow_host_loopback` is on (only for
/// profiles with `host_services`).
pub const HOST_LOOPBACK: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 2);
/// The name the sandbox reaches the host's services by; the sidecar's forwarder answers it.
pub const HOST_SERVICES_NAME: &str = "host.lazaret.internal";

impl Default for NetworkPolicy {
    fn default() -> Self {
        NetworkPolicy {
            enabled: true,
            resolvers: vec![SLIRP_RESOLVER],
            allow: Vec::new(),
            deny: DEFAULT_DENY.to_vec(),
            allow_names: Vec::new(),
            deny_names: Vec::new(),
            default_deny: false,
            ask_timeout: None,
            host_services: Vec::new(),
            publish: Vec::new(),
        }
    }
}

/// Where the sidecar's DNS forwarder listens, in the namespace the sandbox shares: the
/// sandbox's only resolver.
pub const DNS_LISTEN: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 53);
/// Packet mark of the forwarder's upstream sockets: only they may reach the upstream resolver.
pub const DNS_MARK: u32 = 0x4c5a;
/// Set of addresses the forwarder answered for allowed names (default-deny policies).
pub const DNS_ALLOWED_SET: &str = "dns_allowed";

/// What the sidecar's DNS forwarder needs, written next to the policy as `dns.json`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DnsSettings {
    pub listen: std::net::SocketAddrV4,
    pub upstream: std::net::SocketAddrV4,
    pub mark: u32,
    pub allow_names: Vec<String>,
    pub deny_names: Vec<String>,
    pub default_deny: bool,
    /// A name the forwarder answers itself, with this address (`host.lazaret.internal`).
    #[serde(default)]
    pub host_name: Option<(String, Ipv4Addr)>,
    /// `default = "ask"`: unlisted names are held up to this many seconds.
    #[serde(default)]
    pub ask_timeout: Option<u32>,
}

/// Set of addresses the developer allowed for this run, every port (`lazaret net allow ADDR`).
pub const RUN_ALLOWED_SET: &str = "run_allowed";
/// Set of address . port pairs allowed for this run, TCP and UDP (`lazaret net allow ADDR:PORT`).
pub const RUN_ALLOWED_PORTS_SET: &str = "run_allowed_ports";
/// Set of addresses the forwarder answered for names allowed for this run, every port (the wide
/// form: `lazaret net allow NAME --any-port`).
pub const RUN_DNS_ALLOWED_SET: &str = "run_dns_allowed";
/// Set of address . protocol . port the forwarder answered for names allowed for this run on
/// one port (the narrow form: `lazaret net allow NAME:PORT`).
pub const RUN_DNS_ALLOWED_PORTS_SET: &str = "run_dns_allowed_ports";
/// Set of addresses the developer refused for this run, every port (`lazaret net deny ADDR`).
pub const RUN_DENIED_SET: &str = "run_denied";
/// Set of address . port pairs refused for this run (`lazaret net deny ADDR:PORT`).
pub const RUN_DENIED_PORTS_SET: &str = "run_denied_ports";

/// The statement that wakes the sidecar for a refused or held packet (see
/// [`crate::network::nflog`]): rate-limited, so a flood costs the sidecar a few wake-ups a
/// second; the sets, not the log, say what was refused.
const WAKE: &str = "limit rate 4/second burst 4 packets log group 7";

/// Name of the nftables table the sidecar installs.
pub const TABLE: &str = "lazaret";
/// Prefix of the sets that record denied connections for the denial ledger.
pub const DENIAL_SET_PREFIX: &str = "denied_";

/// One rule of the rendered policy, before ordering.
enum Rule {
    Allow(Ipv4Prefix),
    Deny(Ipv4Prefix),
}

impl Rule {
    fn prefix(&self) -> Ipv4Prefix {
        match self {
            Rule::Allow(p) | Rule::Deny(p) => *p,
        }
    }
}

impl NetworkPolicy {
    /// The sidecar's DNS forwarder settings.
    pub fn dns_settings(&self) -> DnsSettings {
        let upstream = self.resolvers.first().copied().unwrap_or(SLIRP_RESOLVER);
        DnsSettings {
            listen: std::net::SocketAddrV4::new(DNS_LISTEN, 53),
            upstream: std::net::SocketAddrV4::new(upstream, 53),
            mark: DNS_MARK,
            allow_names: self.allow_names.clone(),
            deny_names: self.deny_names.clone(),
            default_deny: self.default_deny,
            host_name: (!self.host_services.is_empty())
                .then(|| (HOST_SERVICES_NAME.to_owned(), HOST_LOOPBACK)),
            ask_timeout: self.ask_timeout.filter(|_| self.default_deny),
        }
    }

    /// The profile's `default`, as the configuration spells it: `allow`, `deny` or `ask`.
    pub fn default_word(&self) -> &'static str {
        match (self.default_deny, self.ask_timeout) {
            (false, _) => "allow",
            (true, None) => "deny",
            (true, Some(_)) => "ask",
        }
    }

    /// The nftables script the sidecar loads with `nft -f` before reporting ready.
    ///
    /// Prefix rules are emitted longest prefix first, so the most specific matching rule
    /// decides, as Linux routing would (§3.5); equal-prefix conflicts are refused when the
    /// configuration is validated. Every deny rule records what it refused in its own set
    /// (address, protocol, port, with a packet counter): the sidecar reads them for the
    /// denial ledger, and the set's comment names the rule.
    pub fn render_nft(&self) -> String {
        let mut rules: Vec<Rule> = self.allow.iter().map(|p| Rule::Allow(*p)).collect();
        rules.extend(self.deny.iter().map(|p| Rule::Deny(*p)));
        // Longest prefix first; among equals, allows first (only identical duplicates remain).
        rules.sort_by_key(|r| {
            (
                std::cmp::Reverse(r.prefix().len),
                matches!(r, Rule::Deny(_)),
            )
        });
        let mut sets = String::new();
        let mut chain = String::new();
        let mut n = 0usize;
        let mut deny = |chain: &mut String, matcher: &str, why: &str| {
            let name = format!("{DENIAL_SET_PREFIX}{n}");
            n += 1;
            let _ = writeln!(sets, "  set {name} {{");
            let _ = writeln!(sets, "    type ipv4_addr . inet_proto . inet_service");
            let _ = writeln!(
                sets,
                "    flags dynamic,timeout; timeout 1d; size 4096; counter"
            );
            let _ = writeln!(sets, "    comment \"{why}\"");
            let _ = writeln!(sets, "  }}");
            let key = "{ ip daddr . meta l4proto . th dport }";
            // Wakes the sidecar's ledger (no verdict: the rules below decide), a few times a
            // second at most whatever the sandbox sends.
            let _ = writeln!(chain, "    {matcher} {WAKE}");
            let _ = writeln!(
                chain,
                "    {matcher} meta l4proto tcp update @{name} {key} reject with tcp reset"
            );
            let _ = writeln!(
                chain,
                "    {matcher} meta l4proto udp update @{name} {key} reject with icmpx type admin-prohibited"
            );
            let _ = writeln!(
                chain,
                "    {matcher} reject with icmpx type admin-prohibited"
            );
        };
        let _ = writeln!(chain, "    oif \"lo\" accept");
        let _ = writeln!(
            chain,
            "    meta nfproto ipv6 reject with icmpx type admin-prohibited"
        );
        if !self.enabled {
            deny(
                &mut chain,
                "meta nfproto ipv4",
                "networking is off for this profile",
            );
        } else {
            // DNS: only the sidecar's forwarder (its marked sockets) reaches the resolvers; the
            // sandbox resolves through the forwarder on loopback, nowhere else.
            for r in &self.resolvers {
                let _ = writeln!(
                    chain,
                    "    meta mark {DNS_MARK:#x} ip daddr {r} udp dport 53 accept"
                );
            }
            deny(
                &mut chain,
                "udp dport 53",
                "DNS other than through the sidecar's resolver",
            );
            deny(
                &mut chain,
                "tcp dport 53",
                "DNS other than through the sidecar's resolver",
            );
            // The host's services the profile lists, and nothing else of the host's loopback
            // (the rest of its gateway address falls to the 10/8 deny below).
            for svc in &self.host_services {
                let proto = if svc.udp { "udp" } else { "tcp" };
                let _ = writeln!(
                    chain,
                    "    ip daddr {HOST_LOOPBACK} {proto} dport {} accept",
                    svc.port
                );
            }
            // Run-scoped denies, then allows (`lazaret net deny` / `allow`, see
            // `network::run_rules`): after DNS, before every prefix rule.
            deny(
                &mut chain,
                &format!("meta l4proto {{ tcp, udp }} ip daddr . th dport @{RUN_DENIED_PORTS_SET}"),
                crate::network::ask::RUN_DENY_REASON,
            );
            deny(
                &mut chain,
                &format!("ip daddr @{RUN_DENIED_SET}"),
                crate::network::ask::RUN_DENY_REASON,
            );
            let _ = writeln!(
                chain,
                "    meta l4proto {{ tcp, udp }} ip daddr . th dport @{RUN_ALLOWED_PORTS_SET} accept"
            );
            let _ = writeln!(chain, "    ip daddr @{RUN_ALLOWED_SET} accept");
            for rule in &rules {
                match rule {
                    Rule::Allow(p) => {
                        let _ = writeln!(chain, "    ip daddr {p} accept");
                    }
                    Rule::Deny(p) => {
                        let why = if DEFAULT_DENY.contains(p) {
                            format!("deny {p} (default)")
                        } else {
                            format!("deny {p} (configuration)")
                        };
                        deny(&mut chain, &format!("ip daddr {p}"), &why);
                    }
                }
            }
            if self.default_deny {
                let _ = writeln!(chain, "    ip daddr @{DNS_ALLOWED_SET} accept");
                let _ = writeln!(chain, "    ip daddr @{RUN_DNS_ALLOWED_SET} accept");
                let _ = writeln!(
                    chain,
                    "    meta l4proto {{ tcp, udp }} ip daddr . meta l4proto . th dport \
                     @{RUN_DNS_ALLOWED_PORTS_SET} accept"
                );
                if let Some(secs) = self.ask_timeout {
                    use crate::network::ask::{expired_reason, EXPIRED_SET, HELD_SET};
                    let key = "ip daddr . meta l4proto . th dport";
                    deny(
                        &mut chain,
                        &format!("meta l4proto {{ tcp, udp }} {key} @{EXPIRED_SET}"),
                        &expired_reason(secs),
                    );
                    // Held: recorded, and dropped, so the client's retransmission asks again.
                    let _ = writeln!(chain, "    meta l4proto {{ tcp, udp }} {WAKE}");
                    let _ = writeln!(
                        chain,
                        "    meta l4proto {{ tcp, udp }} add @{HELD_SET} {{ {key} }} drop"
                    );
                }
                deny(
                    &mut chain,
                    "meta nfproto ipv4",
                    "default deny (no allow rule, not answered for an allowed name)",
                );
            }
        }
        let mut s = String::new();
        let _ = writeln!(s, "table inet {TABLE} {{");
        for set in [DNS_ALLOWED_SET, RUN_DNS_ALLOWED_SET] {
            let _ = writeln!(
                s,
                "  set {set} {{\n    type ipv4_addr\n    flags timeout\n    size 65536\n  }}"
            );
        }
        let _ = writeln!(
            s,
            "  set {RUN_DNS_ALLOWED_PORTS_SET} {{\n    type ipv4_addr . inet_proto . inet_service\n    \
             flags timeout\n    size 65536\n  }}"
        );
        let _ = writeln!(
            s,
            "  set {RUN_ALLOWED_SET} {{\n    type ipv4_addr\n    size 1024\n  }}"
        );
        let _ = writeln!(
            s,
            "  set {RUN_ALLOWED_PORTS_SET} {{\n    type ipv4_addr . inet_service\n    size 1024\n  }}"
        );
        let _ = writeln!(
            s,
            "  set {RUN_DENIED_SET} {{\n    type ipv4_addr\n    size 1024\n  }}"
        );
        let _ = writeln!(
            s,
            "  set {RUN_DENIED_PORTS_SET} {{\n    type ipv4_addr . inet_service\n    size 1024\n  }}"
        );
        if let (true, Some(secs)) = (self.enabled && self.default_deny, self.ask_timeout) {
            use crate::network::ask::{EXPIRED_SET, HELD_SET, MAX_HELD};
            // Held elements outlive the wait, so the sidecar sees every one time out.
            let _ = writeln!(
                s,
                "  set {HELD_SET} {{\n    type ipv4_addr . inet_proto . inet_service\n    \
                 flags dynamic,timeout; timeout {}s; size {MAX_HELD}; counter\n  }}",
                secs + 120
            );
            let _ = writeln!(
                s,
                "  set {EXPIRED_SET} {{\n    type ipv4_addr . inet_proto . inet_service\n    \
                 flags timeout; size 4096\n  }}"
            );
        }
        s.push_str(&sets);
        let _ = writeln!(s, "  chain output {{");
        let _ = writeln!(
            s,
            "    type filter hook output priority filter; policy accept;"
        );
        s.push_str(&chain);
        let _ = writeln!(s, "  }}");
        let _ = writeln!(s, "}}");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_parses_and_prints_back() {
        for s in [
            "10.1.2.0/24",
            "0.0.0.0/0",
            "203.0.113.7/32",
            "172.16.0.0/12",
        ] {
            assert_eq!(
                Ipv4Prefix::parse(s).map(|p| p.to_string()),
                Ok(s.to_owned())
            );
        }
    }

    #[test]
    fn prefix_errors_say_what_is_wrong() {
        let err = |s: &str| {
            Ipv4Prefix::parse(s)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(err("10.1.2.3/24").contains("did you mean 10.1.2.0/24?"));
        assert!(err("10.0.0.0/33").contains("above 32"));
        for bad in [
            "10.0.0.0",
            "10.0.0/8",
            "10.0.0.0/",
            "10.0.0.0/+8",
            "::1/128",
            "x/8",
            "10.0.0.0/008",
        ] {
            assert!(
                err(bad).contains("not an IPv4 prefix"),
                "{bad}: {}",
                err(bad)
            );
        }
    }

    #[test]
    fn prefix_containment() {
        let p = |s: &str| Ipv4Prefix::parse(s).unwrap_or(Ipv4Prefix::new(0, 0, 0, 0, 0));
        assert!(p("10.0.0.0/8").contains(&p("10.1.2.0/24")));
        assert!(p("10.0.0.0/8").contains(&p("10.0.0.0/8")));
        assert!(!p("10.1.2.0/24").contains(&p("10.0.0.0/8")));
        assert!(!p("10.0.0.0/8").contains(&p("11.0.0.0/8")));
        assert!(p("0.0.0.0/0").contains(&p("192.168.0.0/16")));
    }

    #[test]
    fn default_policy_denies_private_and_ipv6_allows_resolver() {
        let nft = NetworkPolicy::default().render_nft();
        for want in [
            "hook output",
            "meta nfproto ipv6 reject",
            "meta mark 0x4c5a ip daddr 10.0.2.3 udp dport 53 accept",
            "udp dport 53 meta l4proto udp update @denied_",
            "ip daddr 10.0.0.0/8 meta l4proto tcp update @denied_",
            "ip daddr 0.0.0.0/8 meta l4proto tcp",
            "comment \"deny 169.254.0.0/16 (default)\"",
            "reject with tcp reset",
        ] {
            assert!(nft.contains(want), "missing {want:?} in\n{nft}");
        }
        // The resolver allow must come before the 10/8 reject that would otherwise catch it.
        let chain = &nft[nft.find("chain output").unwrap_or(0)..];
        let allow = chain.find("10.0.2.3").unwrap_or(usize::MAX);
        let deny = chain.find("10.0.0.0/8").unwrap_or(0);
        assert!(allow < deny);
    }

    /// Position in the chain of the first rule for `prefix`.
    fn at(nft: &str, prefix: &str) -> usize {
        let chain = &nft[nft.find("chain output").unwrap_or(0)..];
        chain
            .find(&format!("ip daddr {prefix} "))
            .unwrap_or(usize::MAX)
    }

    #[test]
    fn the_longest_prefix_decides() {
        let mut p = NetworkPolicy::default();
        p.allow.push(Ipv4Prefix::new(10, 1, 0, 0, 16));
        p.deny.push(Ipv4Prefix::new(10, 1, 2, 0, 24));
        p.allow.push(Ipv4Prefix::new(0, 0, 0, 0, 1));
        let nft = p.render_nft();
        // /24 deny before /16 allow before /8 deny before /1 allow.
        assert!(at(&nft, "10.1.2.0/24") < at(&nft, "10.1.0.0/16"), "{nft}");
        assert!(at(&nft, "10.1.0.0/16") < at(&nft, "10.0.0.0/8"), "{nft}");
        assert!(at(&nft, "10.0.0.0/8") < at(&nft, "0.0.0.0/1"), "{nft}");
    }

    #[test]
    fn networking_off_refuses_every_ipv4_destination() {
        let p = NetworkPolicy {
            enabled: false,
            ..NetworkPolicy::default()
        };
        let nft = p.render_nft();
        assert!(
            nft.contains("meta nfproto ipv4 meta l4proto tcp update @denied_0"),
            "{nft}"
        );
        assert!(!nft.contains("dport 53 accept"), "{nft}");
    }

    #[test]
    fn ask_holds_what_no_rule_decides_after_every_rule_and_refuses_the_expired() {
        let policy = NetworkPolicy {
            default_deny: true,
            ask_timeout: Some(45),
            ..NetworkPolicy::default()
        };
        let nft = policy.render_nft();
        let at = |want: &str| {
            nft.find(want)
                .unwrap_or_else(|| panic!("missing {want:?} in\n{nft}"))
        };
        let run_denied = at("ip daddr @run_denied meta l4proto tcp update @denied_");
        let run_allowed = at("ip daddr @run_allowed accept");
        let prefixes = at("ip daddr 10.0.0.0/8 meta l4proto tcp");
        let answered = at("ip daddr @run_dns_allowed accept");
        let expired = at("ip daddr . meta l4proto . th dport @ask_expired meta l4proto tcp update");
        let hold = at(
            "meta l4proto { tcp, udp } add @ask_held { ip daddr . meta l4proto . th dport } drop",
        );
        let rest = at("meta nfproto ipv4 meta l4proto tcp update @denied_");
        assert!(run_denied < run_allowed && run_allowed < prefixes && prefixes < answered);
        assert!(answered < expired && expired < hold && hold < rest, "{nft}");
        assert!(nft.contains("comment \"nobody answered within 45 s (default ask)\""));
        assert!(nft.contains("timeout 165s; size 64; counter"), "{nft}");
        let deny = NetworkPolicy {
            default_deny: true,
            ..NetworkPolicy::default()
        }
        .render_nft();
        assert!(!deny.contains("ask_held") && !deny.contains("ask_expired"));
        assert_eq!(policy.default_word(), "ask");
        assert!(WAKE.ends_with(&format!("log group {}", crate::network::nflog::GROUP)));
        assert!(
            nft.contains(&format!(
                "meta l4proto {{ tcp, udp }} {WAKE}\n    meta l4proto {{ tcp, udp }} add @ask_held"
            )),
            "the held packet wakes the sidecar: {nft}"
        );
        assert_eq!(policy.dns_settings().ask_timeout, Some(45));
    }

    #[test]
    fn default_deny_accepts_only_answered_addresses_after_the_prefix_rules() {
        let p = NetworkPolicy {
            default_deny: true,
            ..NetworkPolicy::default()
        };
        let nft = p.render_nft();
        let chain = &nft[nft.find("chain output").unwrap_or(0)..];
        let set = chain.find("ip daddr @dns_allowed accept").unwrap_or(0);
        // Private denies come first: an allowed name answering a private address is refused.
        assert!(at(&nft, "10.0.0.0/8") < set, "{nft}");
        assert!(chain[set..].contains("@denied_"), "{nft}");
    }
}
