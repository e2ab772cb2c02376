//! `linger` (issue #18): how long a Domain stays up after its last session left, so that the
//! next `lazaret run` joins it instead of starting it again. Written `"30s"`, `"5m"`, `"1h"`
//! or a number of seconds; `0` (the default) tears the Domain down at once (FR-6).

/// The longest linger accepted: a forgotten Domain should not run for a day.
pub const MAX_LINGER_SECS: u64 = 3600;

/// Seconds from `"30s"`, `"5m"`, `"1h"` or `"45"`; the error says what is accepted.
pub fn parse(text: &str) -> Result<u64, String> {
    super::duration::parse("linger", text, MAX_LINGER_SECS, WHY_MAX)
}

const WHY_MAX: &str = "a Domain nobody uses should not keep running";

/// `linger` as written in the configuration: a string or a number of seconds.
pub type RawLinger = super::duration::RawDuration;

/// Seconds of a `linger` as written.
pub fn secs(raw: &RawLinger) -> Result<u64, String> {
    raw.secs("linger", MAX_LINGER_SECS, WHY_MAX)
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
        assert_eq!(secs(&RawLinger::Secs(90)), Ok(90));
        assert!(secs(&RawLinger::Secs(-1)).is_err());
        assert!(secs(&RawLinger::Secs(7200)).is_err());
    }
}
