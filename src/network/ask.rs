//! `default = "ask"` (issue #17 item 2): a connection to a destination no rule decides, or a
//! DNS name no rule lists, is **held** — neither accepted nor refused — while the developer is
//! asked; `lazaret net allow` lets it proceed, `lazaret net deny` refuses it, and nobody
//! answering within the profile's `ask_timeout` refuses it too. Each refusal is recorded in the
//! denial ledger.
//!
//! How a connection is held without a packet queue (this kernel has no `CONFIG_NFT_QUEUE`):
//! the policy's last rule for TCP and UDP adds the destination (address . protocol . port) to
//! the set [`HELD_SET`] and **drops** the packet; the client's own retransmissions (a TCP SYN
//! after 1, 3, 7, 15 … s) keep asking. Allowed → the destination joins the run's allowed
//! set, which the policy evaluates first, and the next retransmission gets through: the held
//! connection proceeds, later by at most one retransmission interval. Denied → it joins the
//! run's denied set; timed out → the set [`EXPIRED_SET`]: either way the next retransmission
//! is answered with a reset. A DNS query for a held name waits in the forwarder and is
//! answered (forwarded, or REFUSED) when the name is decided.
//!
//! The sidecar reports what it holds in `held.json` in its status dir ([`HELD_FILE`]); the
//! coordinator shows it to the control centres, `lazaret net held` prints it.

/// The policy's set of held destinations (address . protocol . port).
pub const HELD_SET: &str = "ask_held";
/// Destinations nobody decided in time: refused for the rest of the run (`lazaret net allow`
/// still lets them through; run allows come first).
pub const EXPIRED_SET: &str = "ask_expired";
/// What the sidecar holds now, in its status dir (JSON: [`HeldFile`]).
pub const HELD_FILE: &str = "held.json";
/// The default of `ask_timeout`, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u32 = 60;
/// The longest `ask_timeout` (a TCP client gives up after about two minutes anyway).
pub const MAX_TIMEOUT_SECS: u32 = 600;
/// The most destinations (and names) held at once; more are refused like under
/// `default = "deny"`.
pub const MAX_HELD: usize = 64;

/// The ledger's reason for a destination or name the developer refused for this run.
pub const RUN_DENY_REASON: &str = "refused for this run (lazaret net deny)";

/// The ledger's reason for a held destination or name nobody decided within `secs` seconds.
pub fn expired_reason(secs: u32) -> String {
    format!("nobody answered within {secs} s (default ask)")
}

/// Everything held now, as the sidecar writes it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldFile {
    pub held: Vec<lazaret_protocol::held::HeldEntry>,
}

/// A held destination: address, protocol (`tcp`/`udp`), port.
pub type HeldKey = (std::net::Ipv4Addr, String, u16);

/// What the sidecar does after one look at the held set ([`HeldConnections::update`]).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct HeldStep {
    /// Nobody decided in time: into [`EXPIRED_SET`], out of [`HELD_SET`].
    pub expired: Vec<HeldKey>,
    /// Decided by a run rule: out of [`HELD_SET`] (the run's sets decide its next packet).
    pub settled: Vec<HeldKey>,
    /// Ledger lines for the refusals among them.
    pub ledger: Vec<crate::runtime::denial_ledger::Denial>,
    /// What is still held.
    pub held: Vec<lazaret_protocol::held::HeldEntry>,
}

/// The sidecar's bookkeeping of held connections (sans IO): when each was first seen, so it
/// can be refused once the profile's `ask_timeout` has passed.
#[derive(Debug)]
pub struct HeldConnections {
    timeout_secs: u32,
    first_seen: std::collections::BTreeMap<HeldKey, u64>,
}

impl HeldConnections {
    pub fn new(timeout_secs: u32) -> HeldConnections {
        HeldConnections {
            timeout_secs,
            first_seen: std::collections::BTreeMap::new(),
        }
    }

    /// One look at the held set at `now` (Unix seconds): `elements` are its elements with
    /// their packet counts, `rules` the run's rules in force.
    pub fn update(
        &mut self,
        now: u64,
        elements: &[(HeldKey, u64)],
        rules: &super::run_rules::RunRules,
    ) -> HeldStep {
        use crate::runtime::denial_ledger::Denial;
        let mut step = HeldStep::default();
        let line = |key: &HeldKey, count: u64, rule: String| Denial {
            time: now,
            protocol: key.1.clone(),
            address: key.0,
            port: key.2,
            rule,
            count,
            name: None,
        };
        for (key, count) in elements {
            if let Some(allowed) = rules.decides(key.0, key.2) {
                self.first_seen.remove(key);
                if !allowed {
                    step.ledger.push(line(key, *count, RUN_DENY_REASON.into()));
                }
                step.settled.push(key.clone());
                continue;
            }
            let since = *self.first_seen.entry(key.clone()).or_insert(now);
            let deadline = since + u64::from(self.timeout_secs);
            if now >= deadline {
                self.first_seen.remove(key);
                step.ledger
                    .push(line(key, *count, expired_reason(self.timeout_secs)));
                step.expired.push(key.clone());
            } else {
                step.held.push(lazaret_protocol::held::HeldEntry {
                    target: format!("{}:{}", key.0, key.2),
                    protocol: key.1.clone(),
                    since,
                    deadline,
                    count: *count,
                });
            }
        }
        // Elements gone from the set (they outlive the wait; the sidecar took them out).
        self.first_seen
            .retain(|k, _| elements.iter().any(|(e, _)| e == k));
        step
    }
}

#[cfg(test)]
#[path = "ask_tests.rs"]
mod tests;

/// What the sidecar whose status dir is `dir` holds now: nothing when it holds nothing or the
/// file is unreadable (the sidecar rewrites it whole, atomically).
pub fn read_held(dir: &std::path::Path) -> HeldFile {
    let path = dir.join(HELD_FILE);
    match std::fs::metadata(&path) {
        Ok(m) if m.len() <= 1 << 20 => std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default(),
        _ => HeldFile::default(),
    }
}
