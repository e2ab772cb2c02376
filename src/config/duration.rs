//! Durations in the host configuration (`linger`, `idle_stop`): written `"30s"`, `"5m"`,
//! `"8h"`, `"2d"` or a number of seconds, each key with its own upper bound.

/// Seconds from `"30s"`, `"5m"`, `"1h"`, `"2d"` or `"45"`, at most `max`; the error names
/// `key`, says what is accepted and why the bound is there (`why_max`).
pub fn parse(key: &str, text: &str, max: u64, why_max: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => t.split_at(i),
        None => (t, "s"),
    };
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => 0,
    };
    let secs = digits
        .parse::<u64>()
        .ok()
        .filter(|_| scale > 0)
        .and_then(|n| n.checked_mul(scale));
    match secs {
        Some(s) if s <= max => Ok(s),
        Some(_) => Err(format!(
            "{key} {text:?} is longer than {} (\"{}\", {max} s): {why_max}",
            describe(max),
            written(max)
        )),
        None => Err(format!(
            "{key} {text:?} is not a duration: write e.g. \"30s\", \"5m\", \"8h\" or \"0\" \
             (seconds, minutes, hours or days)"
        )),
    }
}

/// A bound in words: "an hour", "30 days".
fn describe(secs: u64) -> String {
    match secs {
        3600 => "an hour".to_owned(),
        s if s % 86_400 == 0 => format!("{} days", s / 86_400),
        s if s % 3600 == 0 => format!("{} hours", s / 3600),
        s => format!("{s} seconds"),
    }
}

/// A bound as it would be written: "1h", "30d", "90s".
fn written(secs: u64) -> String {
    match secs {
        s if s > 0 && s % 86_400 == 0 => format!("{}d", s / 86_400),
        s if s > 0 && s % 3600 == 0 => format!("{}h", s / 3600),
        s if s > 0 && s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// A duration as written in the configuration: a string or a number of seconds.
#[derive(Debug, serde::Deserialize)]
#[serde(untagged)]
pub enum RawDuration {
    Secs(i64),
    Text(String),
}

impl RawDuration {
    /// Seconds, checked as [`parse`] does.
    pub fn secs(&self, key: &str, max: u64, why_max: &str) -> Result<u64, String> {
        match self {
            RawDuration::Secs(n) => u64::try_from(*n)
                .map_err(|_| format!("{key} is {n}; use 0 to {max} seconds"))
                .and_then(|s| parse(key, &s.to_string(), max, why_max)),
            RawDuration::Text(t) => parse(key, t, max, why_max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_bounds_and_what_the_errors_say() {
        let p = |t: &str| parse("k", t, 3 * 86_400, "why");
        assert_eq!(p("30s"), Ok(30));
        assert_eq!(p("5m"), Ok(300));
        assert_eq!(p("8h"), Ok(28_800));
        assert_eq!(p("2d"), Ok(172_800));
        assert_eq!(p(" 45 "), Ok(45));
        let long = p("4d").unwrap_err();
        assert!(
            long.contains("longer than 3 days") && long.contains("why"),
            "{long}"
        );
        for bad in [
            "",
            "d",
            "1.5h",
            "-3",
            "3w",
            "99999999999999999999d",
            "30sec",
        ] {
            let e = p(bad).unwrap_err();
            assert!(e.contains("is not a duration"), "{bad:?}: {e}");
        }
        assert!(RawDuration::Secs(-1).secs("k", 10, "w").is_err());
        assert_eq!(RawDuration::Secs(7).secs("k", 10, "w"), Ok(7));
    }
}
