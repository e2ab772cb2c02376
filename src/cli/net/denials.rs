//! `lazaret net denials`: what the Network Sidecar's policy refused in this workspace's Domain.

use crate::config::HostConfig;
use crate::domain::layout::Layout;
use crate::domain::Domain;
use crate::runtime::denial_ledger::{self, DenialEntry};
use crate::runtime::ledger_history;
use crate::runtime::sidecar::status_dir;
use crate::terminal::escape;
use crate::utc::days_from_civil;
pub use crate::utc::utc;
use clap::Args;
use std::io::Write;
use std::time::Duration;

/// Connections the Network Sidecar refused, newest first
///
/// Every connection the Domain's egress policy refused — TCP and UDP — and every DNS name it
/// refused to resolve, with the time it was last seen, protocol, destination, the rule that
/// refused it and how many times. Each run of the Domain (each start) keeps its own ledger:
/// by default the current run's (or, once stopped, the last one's); `--run` reads earlier
/// runs, which stay readable (the newest 20, at most 64 MiB) after the Domain stopped.
#[derive(Debug, Args)]
pub struct DenialsArgs {
    /// Agent Profile of the Domain (default: the configuration's default profile).
    #[arg(long)]
    pub profile: Option<String>,
    /// Which run: `last` (the current run, or the last one: the default), `previous` (the one
    /// before it), `all`, or a run ID (`--runs` lists them).
    #[arg(long, default_value = "last", value_name = "RUN")]
    pub run: String,
    /// Only entries seen since TIME: `30m`, `2h`, `1d` ago, Unix seconds, or a UTC date
    /// `YYYY-MM-DD` / `YYYY-MM-DD HH:MM[:SS]`.
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// List the runs with a ledger (ID, start, entries) instead.
    #[arg(long, conflicts_with_all = ["follow", "since"])]
    pub runs: bool,
    /// Print a JSON array of {run, first_seen, last_seen (Unix seconds), protocol, address,
    /// port, rule, count, name?}; with --follow, one JSON object per line as entries appear or
    /// grow; with --runs, [{run, started (Unix seconds), current, entries}].
    #[arg(long)]
    pub json: bool,
    /// Keep printing new and grown entries of the current run until interrupted.
    #[arg(long)]
    pub follow: bool,
}

pub fn denials(layout: &Layout, args: &DenialsArgs) -> anyhow::Result<i32> {
    let config = HostConfig::load(layout)?;
    let profile = config.profile(args.profile.as_deref())?;
    let cwd = std::env::current_dir()?;
    let domain = Domain::resolve(layout, &profile.name, &cwd)?;
    let status = status_dir(&domain);
    let runs = ledger_history::runs(&status, &ledger_history::history_dir(&domain.root));
    let mut out = crate::terminal::say::stdout();
    if args.runs {
        return list_runs(&mut out, &runs, args.json);
    }
    let since = match args
        .since
        .as_deref()
        .map(|t| parse_since(t, denial_ledger::unix_now()))
    {
        None => 0,
        Some(Ok(t)) => t,
        Some(Err(e)) => {
            crate::say!("lazaret: --since {e}");
            return Ok(2);
        }
    };
    let chosen = match choose_runs(&runs, &args.run) {
        Ok(c) => c,
        Err(e) => {
            crate::say!("lazaret: --run {e}");
            return Ok(2);
        }
    };
    if args.follow && args.run != "last" {
        crate::say!("lazaret: --follow follows the current run only (leave out --run)");
        return Ok(2);
    }
    let path = chosen
        .last()
        .map(|(_, p)| p.clone())
        .unwrap_or_else(|| denial_ledger::path(&status));
    let read = || std::fs::read_to_string(&path).unwrap_or_default();
    if !args.follow {
        let mut entries: Vec<(String, DenialEntry)> = Vec::new();
        for (run, p) in &chosen {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            entries.extend(
                denial_ledger::aggregate(&text)
                    .into_iter()
                    .filter(|e| e.last_seen >= since)
                    .map(|e| (run.clone(), e)),
            );
        }
        entries.sort_by(|a, b| {
            b.1.last_seen
                .cmp(&a.1.last_seen)
                .then(b.1.count.cmp(&a.1.count))
        });
        let several = chosen.len() > 1;
        if args.json {
            let list: Vec<serde_json::Value> =
                entries.iter().map(|(run, e)| with_run(run, e)).collect();
            writeln!(out, "{}", crate::cli::safe_json::to_string(&list)?)?;
        } else if entries.is_empty() {
            writeln!(
                out,
                "no denied connections recorded for {} (profile {}{})",
                domain.workspace.root.display(),
                profile.name,
                match chosen.as_slice() {
                    [] => String::new(),
                    [(run, _)] => format!(", run {run}"),
                    _ => format!(", {} runs", chosen.len()),
                }
            )?;
        } else {
            let run_col = if several {
                format!("{:<22}", "RUN")
            } else {
                String::new()
            };
            writeln!(
                out,
                "{run_col}{:<20} {:<5} {:<21} {:>6}  RULE",
                "LAST SEEN (UTC)", "PROTO", "DESTINATION", "COUNT"
            )?;
            for (run, e) in &entries {
                let run_col = if several {
                    format!("{run:<22}")
                } else {
                    String::new()
                };
                writeln!(out, "{run_col}{}", row(e))?;
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
                let run = chosen.last().map(|(r, _)| r.as_str()).unwrap_or("");
                writeln!(
                    out,
                    "{}",
                    crate::cli::safe_json::to_line(&with_run(run, e))?
                )?;
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

/// An entry as JSON with its run.
fn with_run(run: &str, e: &DenialEntry) -> serde_json::Value {
    let mut v = serde_json::to_value(e).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert("run".into(), run.into());
    }
    v
}

/// The runs `--run` names, oldest first.
fn choose_runs(
    runs: &[(String, std::path::PathBuf)],
    which: &str,
) -> Result<Vec<(String, std::path::PathBuf)>, String> {
    let n = runs.len();
    match which {
        "last" => Ok(runs.last().cloned().into_iter().collect()),
        "previous" => match n {
            0 | 1 => Err("previous: there is no earlier run of this Domain".into()),
            _ => Ok(vec![runs[n - 2].clone()]),
        },
        "all" => Ok(runs.to_vec()),
        id if ledger_history::is_run_id(id) => runs
            .iter()
            .find(|(r, _)| r == id)
            .map(|r| vec![r.clone()])
            .ok_or_else(|| format!("{id}: no such run (`lazaret net denials --runs` lists them)")),
        other => Err(format!(
            "{}: say last, previous, all or a run ID (`lazaret net denials --runs` lists them)",
            shown(other)
        )),
    }
}

fn list_runs(
    out: &mut impl Write,
    runs: &[(String, std::path::PathBuf)],
    json: bool,
) -> anyhow::Result<i32> {
    let rows: Vec<(String, u64, bool, usize)> = runs
        .iter()
        .enumerate()
        .map(|(i, (run, path))| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let entries = denial_ledger::aggregate(&text).len();
            (run.clone(), started(run), i + 1 == runs.len(), entries)
        })
        .collect();
    if json {
        let list: Vec<serde_json::Value> = rows
            .iter()
            .map(|(run, started, current, entries)| {
                serde_json::json!({ "run": run, "started": started, "current": current, "entries": entries })
            })
            .collect();
        writeln!(out, "{}", crate::cli::safe_json::to_string(&list)?)?;
        return Ok(0);
    }
    if rows.is_empty() {
        writeln!(out, "no runs with a denial ledger yet")?;
        return Ok(0);
    }
    writeln!(
        out,
        "{:<22} {:<20} {:>7}",
        "RUN", "STARTED (UTC)", "ENTRIES"
    )?;
    for (run, started, current, entries) in rows.iter().rev() {
        let mark = if *current { "  (last)" } else { "" };
        writeln!(out, "{run:<22} {:<20} {entries:>7}{mark}", utc(*started))?;
    }
    Ok(0)
}

/// Unix seconds of a run's start, from its ID.
fn started(run: &str) -> u64 {
    let digits: String = run.chars().filter(char::is_ascii_digit).take(14).collect();
    let n = |r: std::ops::Range<usize>| {
        digits
            .get(r)
            .and_then(|s| s.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let days = days_from_civil(n(0..4), n(4..6), n(6..8));
    u64::try_from(days * 86_400 + n(8..10) * 3600 + n(10..12) * 60 + n(12..14)).unwrap_or(0)
}

/// `--since`: `30m`/`2h`/`1d`/`45s` ago, Unix seconds, or `YYYY-MM-DD[ HH:MM[:SS]]` (UTC).
pub fn parse_since(text: &str, now: u64) -> Result<u64, String> {
    let t = text.trim();
    let bad = || {
        format!(
            "{}: say 30m, 2h or 1d (ago), Unix seconds, or YYYY-MM-DD [HH:MM[:SS]] (UTC)",
            shown(t)
        )
    };
    if let Some(unit) = t.chars().last().filter(|c| "smhd".contains(*c)) {
        let n: u64 = t[..t.len() - 1].parse().map_err(|_| bad())?;
        let secs = match unit {
            's' => n,
            'm' => n.saturating_mul(60),
            'h' => n.saturating_mul(3600),
            _ => n.saturating_mul(86_400),
        };
        return Ok(now.saturating_sub(secs));
    }
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().map_err(|_| bad());
    }
    let (date, time) = t.split_once([' ', 'T']).unwrap_or((t, "00:00:00"));
    let d: Vec<i64> = date
        .split('-')
        .map(|p| p.parse().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let tm: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let ok = d.len() == 3
        && (1..=12).contains(&d[1])
        && (1..=31).contains(&d[2])
        && (2..=3).contains(&tm.len())
        && (0..24).contains(&tm[0])
        && (0..60).contains(&tm[1])
        && tm.get(2).is_none_or(|s| (0..61).contains(s));
    if !ok {
        return Err(bad());
    }
    let secs = days_from_civil(d[0], d[1], d[2]) * 86_400
        + tm[0] * 3600
        + tm[1] * 60
        + tm.get(2).copied().unwrap_or(0);
    u64::try_from(secs).map_err(|_| bad())
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

#[cfg(test)]
mod tests {
    #[test]
    fn since_takes_ages_seconds_and_utc_dates() {
        let now = 1_795_000_000;
        assert_eq!(super::parse_since("30m", now), Ok(now - 1800));
        assert_eq!(super::parse_since("2h", now), Ok(now - 7200));
        assert_eq!(super::parse_since("1d", now), Ok(now - 86_400));
        assert_eq!(super::parse_since("1795000000", now), Ok(now));
        assert_eq!(super::parse_since("2026-11-18 11:06:40", now), Ok(now));
        assert_eq!(super::parse_since("2026-11-18T11:06", now), Ok(now - 40));
        assert_eq!(super::parse_since("2026-11-18", now), Ok(now - 40_000));
        for bad in [
            "",
            "yesterday",
            "2026-13-01",
            "2026-11-18 25:00",
            "-5m",
            "5x",
        ] {
            assert!(super::parse_since(bad, now).is_err(), "{bad}");
        }
        assert_eq!(super::started("20261118T110640Z-3fa9"), now);
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
