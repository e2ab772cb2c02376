//! The denial ledger (issue #5): every connection the Network Sidecar's policy refused — when,
//! protocol, destination address and port, the rule that refused it, how many times.
//!
//! Each deny rule records what it refuses in its own nftables set (see
//! [`super::network_policy::NetworkPolicy::render_nft`]); the sidecar reads the sets twice a
//! second and appends a JSON line for every new or grown entry to `denials.jsonl` in its
//! host-private status dir. Readers (`lazaret net denials`, the TUI) aggregate the lines: the
//! last line of an entry carries its current count.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

/// File name of the ledger in the sidecar's status dir.
pub const LEDGER: &str = "denials.jsonl";
/// The sidecar stops appending beyond this size (and says so once in the ledger).
pub const MAX_LEDGER_BYTES: u64 = 8 << 20;

/// One ledger line: an entry as of `time`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Denial {
    /// Seconds since the Unix epoch when the sidecar saw the count change.
    pub time: u64,
    pub protocol: String,
    pub address: Ipv4Addr,
    pub port: u16,
    /// The rule that refused it, e.g. `deny 10.0.0.0/8 (default)`.
    pub rule: String,
    /// Packets refused so far (a TCP connect that is retried counts each attempt); for a
    /// refused DNS name, 1 per query line.
    pub count: u64,
    /// The DNS name the sidecar refused to resolve (protocol `dns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

type Key = (String, Ipv4Addr, String, u16, Option<String>);

/// Reads the entries of every denial set out of `nft -j list table inet lazaret`.
pub fn parse_nft(json: &str) -> Vec<(String, String, Ipv4Addr, u16, u64)> {
    set_elements(json, |name| {
        name.starts_with(super::network_policy::DENIAL_SET_PREFIX)
    })
}

/// The elements (address . protocol . port, with their packet counters) of the sets whose
/// name `wanted` accepts, in `nft -j list table` output: (the set's comment or name, protocol,
/// address, port, packets).
pub fn set_elements(
    json: &str,
    wanted: impl Fn(&str) -> bool,
) -> Vec<(String, String, Ipv4Addr, u16, u64)> {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(json) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let items = doc["nftables"].as_array().cloned().unwrap_or_default();
    for item in items {
        let set = &item["set"];
        let name = set["name"].as_str().unwrap_or("");
        if !wanted(name) {
            continue;
        }
        let rule = set["comment"].as_str().unwrap_or(name).to_owned();
        for elem in set["elem"].as_array().into_iter().flatten() {
            let (val, packets) = match elem.get("elem") {
                Some(e) => (&e["val"], e["counter"]["packets"].as_u64().unwrap_or(1)),
                None => (elem, 1),
            };
            let Some(parts) = val["concat"].as_array() else {
                continue;
            };
            let addr = parts
                .first()
                .and_then(|a| a.as_str()?.parse::<Ipv4Addr>().ok());
            // A name where /etc/protocols exists, else the number (the sidecar image has none).
            let proto = parts.get(1).and_then(|p| match (p.as_str(), p.as_u64()) {
                (Some(name), _) => Some(name.to_owned()),
                (None, Some(6)) => Some("tcp".to_owned()),
                (None, Some(17)) => Some("udp".to_owned()),
                (None, Some(n)) => Some(n.to_string()),
                (None, None) => None,
            });
            let port = parts
                .get(2)
                .and_then(|p| p.as_u64())
                .and_then(|p| u16::try_from(p).ok());
            if let (Some(addr), Some(proto), Some(port)) = (addr, proto, port) {
                out.push((rule.clone(), proto, addr, port, packets));
            }
        }
    }
    out
}

/// The sidecar's memory of what it already wrote.
#[derive(Debug, Default)]
pub struct Tracker {
    seen: BTreeMap<Key, u64>,
}

impl Tracker {
    /// The ledger lines for entries that are new or whose count grew since the last call.
    pub fn update(
        &mut self,
        now: u64,
        entries: &[(String, String, Ipv4Addr, u16, u64)],
    ) -> Vec<Denial> {
        let mut lines = Vec::new();
        for (rule, proto, addr, port, count) in entries {
            let key = (rule.clone(), *addr, proto.clone(), *port, None);
            let before = self.seen.get(&key).copied().unwrap_or(0);
            if *count > before {
                self.seen.insert(key, *count);
                lines.push(Denial {
                    time: now,
                    protocol: proto.clone(),
                    address: *addr,
                    port: *port,
                    rule: rule.clone(),
                    count: *count,
                    name: None,
                });
            }
        }
        lines
    }
}

pub use lazaret_protocol::denial::DenialEntry;

/// Aggregates ledger text (malformed lines are skipped: the file is written by the sidecar,
/// a trusted component, but a torn last line after a crash must not hide the rest), newest first.
pub fn aggregate(text: &str) -> Vec<DenialEntry> {
    let mut by_key: BTreeMap<Key, DenialEntry> = BTreeMap::new();
    for line in text.lines() {
        let Ok(d) = serde_json::from_str::<Denial>(line) else {
            continue;
        };
        let key = (
            d.rule.clone(),
            d.address,
            d.protocol.clone(),
            d.port,
            d.name.clone(),
        );
        let e = by_key.entry(key).or_insert_with(|| DenialEntry {
            first_seen: d.time,
            last_seen: d.time,
            protocol: d.protocol.clone(),
            address: d.address,
            port: d.port,
            rule: d.rule.clone(),
            count: 0,
            name: d.name.clone(),
        });
        e.last_seen = e.last_seen.max(d.time);
        e.first_seen = e.first_seen.min(d.time);
        // Connection lines carry running totals; name lines count one query each.
        if d.name.is_some() {
            e.count += d.count;
        } else {
            e.count = e.count.max(d.count);
        }
    }
    let mut out: Vec<DenialEntry> = by_key.into_values().collect();
    out.sort_by(|a, b| b.last_seen.cmp(&a.last_seen).then(b.count.cmp(&a.count)));
    out
}

/// Seconds since the Unix epoch (the ledger's clock).
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Appends `lines` to the ledger at `path`, unless it already holds [`MAX_LEDGER_BYTES`]:
/// then nothing is written and `Ok(false)` says the ledger is full.
pub fn append(path: &Path, lines: &[Denial]) -> std::io::Result<bool> {
    use std::io::Write;
    if std::fs::metadata(path).is_ok_and(|m| m.len() > MAX_LEDGER_BYTES) {
        return Ok(false);
    }
    let mut text = String::new();
    for l in lines {
        text.push_str(&serde_json::to_string(l).map_err(std::io::Error::other)?);
        text.push('\n');
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(text.as_bytes())?;
    Ok(true)
}

/// Where the ledger of a Domain's sidecar lives on the host.
pub fn path(status_dir: &Path) -> PathBuf {
    status_dir.join(LEDGER)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NFT: &str = r#"{"nftables": [{"metainfo": {"version": "1.0.6"}},
      {"set": {"family": "inet", "name": "denied_0", "table": "lazaret", "comment": "deny 10.0.0.0/8 (default)",
        "elem": [{"elem": {"val": {"concat": ["10.1.2.4", 17, 53]}, "expires": 86399, "counter": {"packets": 2, "bytes": 58}}},
                 {"elem": {"val": {"concat": ["10.1.2.3", "tcp", 80]}, "counter": {"packets": 1, "bytes": 60}}}]}},
      {"set": {"family": "inet", "name": "other", "table": "lazaret", "elem": [{"concat": ["1.2.3.4", "tcp", 1]}]}}]}"#;

    #[test]
    fn sets_are_read_and_only_growth_is_written() {
        let entries = parse_nft(NFT);
        assert_eq!(entries.len(), 2);
        let mut t = Tracker::default();
        let first = t.update(100, &entries);
        assert_eq!(first.len(), 2);
        assert_eq!(first[0].rule, "deny 10.0.0.0/8 (default)");
        assert_eq!(first[0].protocol, "udp");
        assert!(t.update(101, &entries).is_empty());
        let mut grown = entries.clone();
        grown[1].4 = 3;
        let again = t.update(102, &grown);
        assert_eq!(again.len(), 1);
        assert_eq!((again[0].port, again[0].count), (80, 3));
    }

    #[test]
    fn append_writes_lines_until_the_cap() -> std::io::Result<()> {
        let t = tempfile::tempdir()?;
        let path = t.path().join(LEDGER);
        let mut tr = Tracker::default();
        let lines = tr.update(7, &parse_nft(NFT));
        assert!(append(&path, &lines)?);
        assert_eq!(aggregate(&std::fs::read_to_string(&path)?).len(), 2);
        std::fs::write(&path, vec![b' '; MAX_LEDGER_BYTES as usize + 1])?;
        assert!(!append(&path, &lines)?);
        Ok(())
    }

    #[test]
    fn aggregation_keeps_the_last_count_and_survives_torn_lines() {
        let mut t = Tracker::default();
        let entries = parse_nft(NFT);
        let mut text = String::new();
        for d in t.update(100, &entries) {
            text.push_str(&serde_json::to_string(&d).unwrap_or_default());
            text.push('\n');
        }
        text.push_str(r#"{"time":105,"protocol":"tcp","address":"10.1.2.3","port":80,"rule":"deny 10.0.0.0/8 (default)","count":4}"#);
        text.push_str("\n{\"time\":10");
        let agg = aggregate(&text);
        assert_eq!(agg.len(), 2);
        assert_eq!(
            (
                agg[0].port,
                agg[0].count,
                agg[0].first_seen,
                agg[0].last_seen
            ),
            (80, 4, 100, 105)
        );
        assert!(parse_nft("not json").is_empty());
    }
}
