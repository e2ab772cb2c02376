//! Civil dates in UTC for what Lazaret prints and names (ledger times, run IDs), without a date
//! crate for a few lines.

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

/// Days since 1970-01-01 of a civil date (the inverse of [`utc`]'s).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00");
        assert_eq!(super::utc(1_795_000_000), "2026-11-18 11:06:40");
        assert_eq!(super::utc(951_782_400), "2000-02-29 00:00:00");
    }

    #[test]
    fn days_from_civil_is_utcs_inverse() {
        for secs in [0u64, 951_782_400, 1_795_000_000] {
            let d = super::utc(secs);
            let n = |r: std::ops::Range<usize>| d[r].parse::<i64>().unwrap_or(0);
            assert_eq!(
                super::days_from_civil(n(0..4), n(5..7), n(8..10)) * 86_400,
                (secs - secs % 86_400) as i64
            );
        }
    }
}
