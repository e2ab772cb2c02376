//! Resource bounds of a profile (issue #19): `memory`, `pids`, `cpus` and `disk`.
//!
//! `memory = "4g"`, `pids = 512`, `cpus = 1.5`, `disk = "20g"`; each unset by default (no
//! bound). How each is enforced depends on the host (cgroup v2 with delegation or not) and is
//! decided in [`crate::runtime::limits`]; `lazaret doctor` says which are enforced here and how.
//!
//! `memory`, `pids` and `cpus` change how the sandbox is created, so when set they are part of
//! the Configuration Fingerprint (a CLI asking for other bounds does not silently join a Domain
//! whose sandbox has these). `disk` is only checked (at start and by `lazaret state list`), so
//! it is not.

use serde::{Deserialize, Serialize};

/// `pids` of the built-in profiles (issue #31; `profiles/builtin.toml` says the same, a test
/// checks): measured peaks of an `npm install` and a `cargo build` inside, with room to spare
/// (docs/limits.md, "Defaults").
pub const DEFAULT_PIDS: u64 = 256;
/// `memory` of the built-in profiles, as written there (and in `lazaret doctor`'s advice).
pub const DEFAULT_MEMORY_TEXT: &str = "4g";
/// The same in bytes.
pub const DEFAULT_MEMORY: u64 = 4 << 30;

/// Smallest `memory` accepted: below this not even a shell and git start in gVisor.
pub const MIN_MEMORY: u64 = 128 << 20;
/// Smallest `disk` accepted.
pub const MIN_DISK: u64 = 1 << 20;
/// Bounds of `pids`: a shell, git and an agent need a few dozen; Linux's pid_max is 4M.
pub const MIN_PIDS: u64 = 16;
pub const MAX_PIDS: u64 = 4_194_304;
/// Bounds of `cpus`, in thousandths of a CPU.
pub const MIN_CPUS_MILLI: u64 = 10;
pub const MAX_CPUS_MILLI: u64 = 1_024_000;

/// A size as written: `"4g"`, `"512m"`, `"20G"`, `"1.5g"` or a number of bytes.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawSize {
    Bytes(i64),
    Text(String),
}

/// A number of CPUs as written: `1.5` or `2`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawCpus {
    Whole(i64),
    Fraction(f64),
}

/// The validated bounds of a profile; `None`: no bound.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ResourceLimits {
    /// Bytes of memory of the sandbox's applications.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<u64>,
    /// Tasks (processes and threads) in the sandbox.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pids: Option<u64>,
    /// CPUs, in thousandths (1.5 → 1500).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpus_milli: Option<u64>,
    /// Bytes of the Domain's persistent state (State Anchors and Ignored Workspace State).
    /// Checked, not part of the sandbox's creation: left out of the fingerprint.
    #[serde(skip)]
    pub disk: Option<u64>,
}

impl ResourceLimits {
    /// No bound that changes the sandbox's creation (the fingerprint's form leaves it out).
    pub fn sandbox_unbounded(&self) -> bool {
        self.memory.is_none() && self.pids.is_none() && self.cpus_milli.is_none()
    }
}

/// `1536m` → "1.5 GiB"; for messages.
pub fn describe_bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (unit, size) in UNITS {
        if n >= size {
            let v = n as f64 / size as f64;
            return if n.is_multiple_of(size) {
                format!("{} {unit}", n / size)
            } else {
                format!("{v:.1} {unit}")
            };
        }
    }
    format!("{n} B")
}

/// `1500` → "1.5".
pub fn describe_cpus(milli: u64) -> String {
    if milli.is_multiple_of(1000) {
        format!("{}", milli / 1000)
    } else {
        let s = format!("{}.{:03}", milli / 1000, milli % 1000);
        s.trim_end_matches('0').to_owned()
    }
}

/// Bytes of a size: `k`, `m`, `g`, `t` (powers of 1024, upper or lower case, an optional `b`
/// or `ib`), a decimal fraction allowed (`"1.5g"`), or a plain number of bytes.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_lowercase();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale: u64 = match unit.trim() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return None,
    };
    if num.is_empty() || num.starts_with('.') || num.ends_with('.') || num.matches('.').count() > 1
    {
        return None;
    }
    match num.split_once('.') {
        None => num.parse::<u64>().ok()?.checked_mul(scale),
        Some((whole, frac)) => {
            if scale == 1 || frac.len() > 3 {
                return None;
            }
            let whole = whole.parse::<u64>().ok()?.checked_mul(scale)?;
            let digits: u64 = frac.parse().ok()?;
            let part =
                (u128::from(digits) * u128::from(scale) / 10u128.pow(frac.len() as u32)) as u64;
            whole.checked_add(part)
        }
    }
}

fn size(key: &str, raw: &RawSize, min: u64, example: &str) -> Result<u64, String> {
    let bytes = match raw {
        RawSize::Bytes(n) => u64::try_from(*n).ok(),
        RawSize::Text(t) => parse_size(t),
    };
    let what = match raw {
        RawSize::Bytes(n) => n.to_string(),
        RawSize::Text(t) => format!("{t:?}"),
    };
    match bytes {
        Some(b) if b >= min => Ok(b),
        Some(_) => Err(format!(
            "{key} {what} is below the smallest accepted, {}: write e.g. {key} = \"{example}\", \
             or leave {key} out for no bound",
            describe_bytes(min)
        )),
        None => Err(format!(
            "{key} {what} is not a size: write e.g. {key} = \"{example}\" (k, m, g, t: powers \
             of 1024; \"1.5g\" is fine) or a number of bytes"
        )),
    }
}

/// Bytes of `memory`.
pub fn memory(raw: &RawSize) -> Result<u64, String> {
    size("memory", raw, MIN_MEMORY, "4g")
}

/// Bytes of `disk`.
pub fn disk(raw: &RawSize) -> Result<u64, String> {
    size("disk", raw, MIN_DISK, "20g")
}

/// `pids`: a whole number of tasks.
pub fn pids(n: i64) -> Result<u64, String> {
    match u64::try_from(n) {
        Ok(p) if (MIN_PIDS..=MAX_PIDS).contains(&p) => Ok(p),
        _ => Err(format!(
            "pids is {n}; use {MIN_PIDS} to {MAX_PIDS} (processes and threads in the sandbox, \
             e.g. pids = 512), or leave pids out for no bound"
        )),
    }
}

/// `cpus` in thousandths: `1.5` → 1500.
pub fn cpus(raw: &RawCpus) -> Result<u64, String> {
    let (value, shown) = match raw {
        RawCpus::Whole(n) => (*n as f64, n.to_string()),
        RawCpus::Fraction(f) => (*f, f.to_string()),
    };
    let milli = (value * 1000.0).round();
    let exact = (value * 1000.0 - milli).abs() < 1e-6;
    if value.is_finite()
        && exact
        && milli >= MIN_CPUS_MILLI as f64
        && milli <= MAX_CPUS_MILLI as f64
    {
        return Ok(milli as u64);
    }
    Err(format!(
        "cpus is {shown}; use a number of CPUs from {} to {} with at most 3 decimals (e.g. \
         cpus = 1.5), or leave cpus out for no bound",
        describe_cpus(MIN_CPUS_MILLI),
        describe_cpus(MAX_CPUS_MILLI)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4g"), Some(4 << 30));
        assert_eq!(parse_size("4G"), Some(4 << 30));
        assert_eq!(parse_size("512m"), Some(512 << 20));
        assert_eq!(parse_size("512MiB"), Some(512 << 20));
        assert_eq!(parse_size("1.5g"), Some(3 << 29));
        assert_eq!(parse_size(" 20gb "), Some(20 << 30));
        assert_eq!(parse_size("1048576"), Some(1 << 20));
        for bad in [
            "",
            "g",
            "1.5",
            "4x",
            "-1g",
            "1..5g",
            ".5g",
            "5.g",
            "1.2345g",
            "99999999999t",
        ] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn memory_messages_say_what_is_accepted() {
        assert_eq!(memory(&RawSize::Text("4g".into())), Ok(4 << 30));
        assert_eq!(memory(&RawSize::Bytes(1 << 30)), Ok(1 << 30));
        let e = memory(&RawSize::Text("4 gigs".into())).unwrap_err();
        assert!(e.contains("not a size") && e.contains("\"4g\""), "{e}");
        let e = memory(&RawSize::Text("64m".into())).unwrap_err();
        assert!(e.contains("128 MiB"), "{e}");
        assert!(memory(&RawSize::Bytes(-5)).is_err());
        assert_eq!(disk(&RawSize::Text("20g".into())), Ok(20 << 30));
    }

    #[test]
    fn pids_and_cpus() {
        assert_eq!(pids(512), Ok(512));
        assert!(pids(3).unwrap_err().contains("16 to"));
        assert!(pids(-1).is_err());
        assert_eq!(cpus(&RawCpus::Fraction(1.5)), Ok(1500));
        assert_eq!(cpus(&RawCpus::Whole(2)), Ok(2000));
        assert_eq!(cpus(&RawCpus::Fraction(0.25)), Ok(250));
        let e = cpus(&RawCpus::Fraction(0.0001)).unwrap_err();
        assert!(e.contains("at most 3 decimals"), "{e}");
        assert!(cpus(&RawCpus::Whole(0)).is_err());
        assert!(cpus(&RawCpus::Fraction(f64::NAN)).is_err());
        assert!(cpus(&RawCpus::Whole(5000)).is_err());
    }

    #[test]
    fn descriptions() {
        assert_eq!(describe_bytes(4 << 30), "4 GiB");
        assert_eq!(describe_bytes(3 << 29), "1.5 GiB");
        assert_eq!(describe_bytes(100), "100 B");
        assert_eq!(describe_cpus(1500), "1.5");
        assert_eq!(describe_cpus(2000), "2");
        assert_eq!(describe_cpus(250), "0.25");
    }

    #[test]
    fn unset_bounds_leave_the_fingerprint_form_alone() {
        let none = ResourceLimits::default();
        assert!(none.sandbox_unbounded());
        assert_eq!(serde_json::to_string(&none).unwrap(), "{}");
        let disk_only = ResourceLimits {
            disk: Some(1 << 30),
            ..ResourceLimits::default()
        };
        assert!(disk_only.sandbox_unbounded());
        assert_eq!(serde_json::to_string(&disk_only).unwrap(), "{}");
        let mem = ResourceLimits {
            memory: Some(1 << 30),
            ..ResourceLimits::default()
        };
        assert!(!mem.sandbox_unbounded());
    }
}
