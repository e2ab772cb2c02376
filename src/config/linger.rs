//! `linger` (issue #18): how long a Domain stays up after its last session left, so that the
//! next `lazaret run` joins it instead of starting it again. Written `"30s"`, `"5m"`, `"1h"`
//! or a number of seconds; `0` (the default) tears the Domain down at once (FR-6).

/// The longest linger accepted: a forgotten Domain should not run for a day.
pub const MAX_LINGER_SECS: u64 = 3600;

/// Seconds from `"30s"`, `"5m"`, `"1h"` or `"45"`; the error says what is accepted.
pub fn parse(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => t.split_at(i),
        None => (t, "s"),
    };
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => 0,
    };
    let secs = digits
        .parse::<u64>()
        .ok()
        .filter(|_| scale > 0)
        .and_then(|n| n.checked_mul(scale));
    match secs {
        Some(s) if s <= MAX_LINGER_SECS => Ok(s),
        Some(_) => Err(format!(
            "linger {text:?} is longer than an hour ({MAX_LINGER_SECS} s): a Domain nobody uses \
             should not keep running"
        )),
        None => Err(format!(
            "linger {text:?} is not a duration: write e.g. \"30s\", \"5m\" or \"0\" (seconds, \
             minutes or hours)"
        )),
    }
}

/// `linger` as written in the configuration: a string or a number of seconds.
#[derive(Debug, serde::Deserialize)]
#[serde(untagged)]
pub enum RawLinger {
    Secs(i64),
    Text(String),
}

impl RawLinger {
    pub fn secs(&self) -> Result<u64, String> {
        match self {
            RawLinger::Secs(n) => u64::try_from(*n)
                .map_err(|_| format!("linger is {n}; use 0 to {MAX_LINGER_SECS} seconds"))
                .and_then(|s| parse(&s.to_string())),
            RawLinger::Text(t) => parse(t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_with_and_without_a_unit() {
        assert_eq!(parse("30s"), Ok(30));
        assert_eq!(parse("5m"), Ok(300));
        assert_eq!(parse("1h"), Ok(3600));
        assert_eq!(parse("45"), Ok(45));
        assert_eq!(parse("0"), Ok(0));
        assert_eq!(parse(" 2m "), Ok(120));
        for bad in [
            "",
            "s",
            "30 s",
            "1.5m",
            "-3",
            "3d",
            "2h",
            "99999999999999999999s",
            "30sec",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(RawLinger::Secs(90).secs(), Ok(90));
        assert!(RawLinger::Secs(-1).secs().is_err());
        assert!(RawLinger::Secs(7200).secs().is_err());
    }
}
