//! DNS-aware name rules for the Network Sidecar (spec §3.5 extended; issue 5, "domain-name
//! rules"): allow or deny egress by DNS name (`api.anthropic.com`, `*.npmjs.org`).
//!
//! A name is not an address, so the sidecar enforces names through the one resolver the sandbox
//! can use:
//!
//! - **The sandbox resolves only through the sidecar.** Its resolver configuration points at the
//!   [`DnsProxy`] the sidecar runs, and the sidecar's nftables policy refuses every other port-53
//!   packet from the sandbox. The proxy's own upstream sockets carry a mark ([`set_mark`]) so the
//!   policy can let only them reach the upstream resolver.
//! - **Names are decided before anything is resolved.** [`NameRules`] gives each name
//!   [`NameVerdict::Allow`], [`NameVerdict::Deny`] or [`NameVerdict::Unlisted`] (most specific
//!   pattern wins; an equal pattern in both lists is refused when the rules are built). Denied
//!   names, and unlisted ones under [`DefaultMode::Deny`], are answered REFUSED and reported.
//! - **Under default-deny, a connection is allowed only to an address the sidecar itself answered
//!   for an allowed name.** For an allowed name the proxy reports the answer's A records
//!   (following CNAMEs within the answer) to its caller before relaying the answer; the caller
//!   adds them to an nftables set with a timeout of the record's TTL clamped to at least 60 s and
//!   at most one day, and the policy accepts destinations in that set. An address the sandbox
//!   learned any other way is not in the set.
//! - **No DNS rebinding.** Private ranges (RFC 1918, link-local, CGNAT, `0/8`) stay refused even
//!   when an allowed name resolves to them, unless a CIDR rule allows them: the caller filters the
//!   reported addresses through its CIDR policy, which is evaluated first.
//!
//! This module decides and reports; the caller (the `lazaret-sidecar` binary) owns the
//! nftables set, the TTL clamping and the address filtering. The forwarder speaks UDP only:
//! truncated answers are relayed with their TC bit, and the TCP retry a client then makes is
//! refused by policy.

pub mod ask;
pub mod dns_message;
pub mod dns_proxy;
pub mod held_names;
pub mod name_rules;
pub mod nflog;
pub mod port_forward;
pub mod rules_watch;
pub mod run_answers;
pub mod run_rules;

#[cfg(test)]
mod dns_message_tests;
#[cfg(test)]
mod dns_proxy_tests;

pub use dns_proxy::{set_mark, ARecord, DefaultMode, DnsProxy};
pub use held_names::{HeldName, HeldNames};
pub use name_rules::{NamePattern, NameRules, NameVerdict};
