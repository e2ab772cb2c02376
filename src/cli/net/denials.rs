//! `lazaret net denials`: what the Network Sidecar's policy refused in this workspace's Domain.

use crate::config::HostConfig;
use crate::domain::layout::Layout;
use crate::domain::Domain;
use crate::runtime::denial_ledger::{self, DenialEntry};
use crate::runtime::sidecar::status_dir;
use crate::terminal::escape;
use clap::Args;
use std::io::Write;
use std::time::Duration;

/// Connections the Network Sidecar refused, newest first
///
/// Every connection the Domain's egress policy refused — TCP and UDP — with the time it was last
/// seen, protocol, destination address and port, the rule that refused it and how many times.
/// The ledger is kept for the current (or, once stopped, the last) run of the Domain of this
/// workspace; a new start begins a new one.
#[derive(Debug, Args)]
pub struct DenialsArgs {
    /// Agent Profile of the Domain (default: the configuration's default profile).
    #[arg(long)]
    pub profile: Option<String>,
    /// Print a JSON array of {first_seen, last_seen (Unix seconds), protocol, address, port,
    /// rule, count}; with --follow, one JSON object per line as entries appear or grow.
    #[arg(long)]
    pub json: bool,
    /// Keep printing new and grown entries until interrupted.
    #[arg(long)]
    pub follow: bool,
}

pub fn denials(layout: &Layout, args: &DenialsArgs) -> anyhow::Result<i32> {
    let config = HostConfig::load(layout)?;
    let profile = config.profile(args.profile.as_deref())?;
    let cwd = std::env::current_dir()?;
    let domain = Domain::resolve(layout, &profile.name, &cwd)?;
    let path = denial_ledger::path(&status_dir(&domain));
    let read = || std::fs::read_to_string(&path).unwrap_or_default();
    let entries = denial_ledger::aggregate(&read());
    let mut out = std::io::stdout().lock();
    if !args.follow {
        if args.json {
            writeln!(out, "{}", serde_json::to_string_pretty(&entries)?)?;
        } else if entries.is_empty() {
            writeln!(
                out,
                "no denied connections recorded for {} (profile {})",
                domain.workspace.root.display(),
                profile.name
            )?;
        } else {
            writeln!(
                out,
                "{:<20} {:<5} {:<21} {:>6}  RULE",
                "LAST SEEN (UTC)", "PROTO", "DESTINATION", "COUNT"
            )?;
            for e in &entries {
                writeln!(out, "{}", row(e))?;
            }
        }
        return Ok(0);
    }
    let mut shown: Vec<DenialEntry> = Vec::new();
    loop {
        let now = denial_ledger::aggregate(&read());
        let mut fresh: Vec<&DenialEntry> = now.iter().filter(|e| !shown.contains(e)).collect();
        fresh.reverse();
        for e in fresh {
            if args.json {
                writeln!(out, "{}", serde_json::to_string(e)?)?;
            } else {
                writeln!(out, "{}", row(e))?;
            }
        }
        out.flush()?;
        shown = now;
        // Like `tail -f`: whoever read the output went away (`| head -1` ended, the terminal
        // closed) — stop now rather than at the next entry, which may never come.
        if reader_gone() {
            return Ok(0);
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Whether standard output's reader is gone (a pipe with no reader, a hung-up terminal).
pub fn reader_gone() -> bool {
    let mut fd = libc::pollfd {
        fd: 1,
        events: 0,
        revents: 0,
    };
    // SAFETY: one valid pollfd, zero timeout.
    let n = unsafe { libc::poll(&mut fd, 1, 0) };
    n > 0 && fd.revents & (libc::POLLERR | libc::POLLHUP) != 0
}

fn row(e: &DenialEntry) -> String {
    format!(
        "{:<20} {:<5} {:<21} {:>6}  {}",
        utc(e.last_seen),
        e.protocol,
        match &e.name {
            Some(name) => shown(name),
            None => format!("{}:{}", e.address, e.port),
        },
        e.count,
        shown(&e.rule)
    )
}

/// Ledger text as the terminal may show it: the sidecar writes refused names in DNS
/// presentation form (`\DDD`), kept as they are; any control or invisible character that got
/// in anyway is escaped (defence in depth, DX-4).
fn shown(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '\\' {
            out.push(c);
        } else {
            escape::push_visible(&mut out, c);
        }
    }
    out
}

/// `YYYY-MM-DD HH:MM:SS` of Unix seconds (UTC), without a date crate for ten lines.
pub fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00");
        assert_eq!(super::utc(1_795_000_000), "2026-11-18 11:06:40");
        assert_eq!(super::utc(951_782_400), "2000-02-29 00:00:00");
    }

    /// A refused name is chosen by the sandbox: control bytes in it reach the terminal escaped,
    /// whatever the sidecar already did (defence in depth, DX-4).
    #[test]
    fn rows_escape_names_and_rules() {
        let e = crate::runtime::denial_ledger::DenialEntry {
            first_seen: 0,
            last_seen: 0,
            protocol: "dns".into(),
            address: std::net::Ipv4Addr::UNSPECIFIED,
            port: 53,
            rule: "deny\x1b]52;c;eA==\x07".into(),
            count: 1,
            name: Some("evil\x1b]0;owned\x07.example".into()),
        };
        let row = super::row(&e);
        assert!(!row.contains('\x1b') && !row.contains('\x07'), "{row:?}");
        // The sidecar's presentation form passes unchanged.
        let e = crate::runtime::denial_ledger::DenialEntry {
            name: Some("\\027\\0912j.test".into()),
            ..e
        };
        assert!(super::row(&e).contains(" \\027\\0912j.test "));
    }
}
