//! Allow / deny rules by DNS name: `api.anthropic.com` (exact) or `*.npmjs.org` (every name
//! strictly below `npmjs.org`, not `npmjs.org` itself).
//!
//! Names are compared in lower case without a trailing dot. Pattern labels are 1–63 characters of
//! letters, digits, hyphen and underscore, and do not start or end with a hyphen; the underscore is
//! accepted because DNS (unlike host names) uses it in service labels such as `_dmarc` or
//! `_https._tcp`, and a pattern is only a string to compare, so it widens nothing. The whole name is
//! at most 253 characters. Names decided against the rules come from
//! [`crate::network::dns_message`], which escapes every byte outside that alphabet (`\DDD`), so a
//! label containing a dot can never pass for two labels.

use std::fmt;

/// The longest name in presentation form (without the trailing dot).
pub const MAX_NAME_LEN: usize = 253;
/// The longest label.
pub const MAX_LABEL_LEN: usize = 63;

/// One name pattern, normalised (lower case, no trailing dot).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NamePattern {
    /// Exactly this name.
    Exact(String),
    /// Every name that ends in `.` + this suffix (the suffix itself does not match).
    Wildcard(String),
}

/// What the rules say about one name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameVerdict {
    Allow,
    Deny,
    Unlisted,
}

/// Validated allow and deny lists: no pattern appears in both.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameRules {
    allow: Vec<NamePattern>,
    deny: Vec<NamePattern>,
}

impl NamePattern {
    /// Parses `name`, `name.`, `*.name` (any case). Anything else — `*` alone, a wildcard that is
    /// not the whole first label (`a*.b`, `a.*.b`), empty labels, bad characters — is an error.
    pub fn parse(text: &str) -> Result<NamePattern, String> {
        let trimmed = text.trim();
        let name = trimmed
            .strip_suffix('.')
            .unwrap_or(trimmed)
            .to_ascii_lowercase();
        let (wild, rest) = match name.strip_prefix("*.") {
            Some(rest) => (true, rest.to_string()),
            None => (false, name),
        };
        validate_name(&rest).map_err(|e| format!("name rule `{text}`: {e}"))?;
        Ok(if wild {
            NamePattern::Wildcard(rest)
        } else {
            NamePattern::Exact(rest)
        })
    }

    /// Does this pattern match `name` (already normalised)?
    fn matches(&self, name: &str) -> bool {
        match self {
            NamePattern::Exact(exact) => name == exact,
            NamePattern::Wildcard(suffix) => name
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        }
    }

    /// Higher is more specific: any exact name beats any wildcard; among wildcards the one with
    /// more labels in its suffix wins.
    fn specificity(&self) -> (u8, usize) {
        match self {
            NamePattern::Exact(_) => (1, 0),
            NamePattern::Wildcard(suffix) => (0, suffix.split('.').count()),
        }
    }
}

impl fmt::Display for NamePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NamePattern::Exact(name) => f.write_str(name),
            NamePattern::Wildcard(suffix) => write!(f, "*.{suffix}"),
        }
    }
}

fn validate_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("empty name".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!("longer than {MAX_NAME_LEN} characters"));
    }
    for label in name.split('.') {
        if label.is_empty() {
            return Err("empty label".into());
        }
        if label.len() > MAX_LABEL_LEN {
            return Err(format!(
                "label `{label}` longer than {MAX_LABEL_LEN} characters"
            ));
        }
        let ok = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        if !label.chars().all(ok) {
            return Err(format!(
                "label `{label}` has a character other than a letter, digit, `-` or `_` \
                 (a wildcard may only be the whole first label: `*.example.com`)"
            ));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(format!("label `{label}` starts or ends with `-`"));
        }
    }
    Ok(())
}

impl NameRules {
    /// Builds the rules; a pattern in both lists (the same exact name, or the same wildcard) is an
    /// equal-specificity conflict and is refused with both rules named.
    pub fn new(allow: Vec<NamePattern>, deny: Vec<NamePattern>) -> Result<NameRules, String> {
        let conflicts: Vec<String> = allow
            .iter()
            .filter(|a| deny.contains(a))
            .map(|p| format!("allow rule `{p}` and deny rule `{p}`"))
            .collect();
        if !conflicts.is_empty() {
            return Err(format!(
                "conflicting name rules (the same name is both allowed and denied): {}",
                conflicts.join("; ")
            ));
        }
        Ok(NameRules { allow, deny })
    }

    /// Parses both lists with [`NamePattern::parse`], then [`NameRules::new`].
    pub fn parse<S: AsRef<str>>(allow: &[S], deny: &[S]) -> Result<NameRules, String> {
        let parse_all = |list: &[S]| -> Result<Vec<NamePattern>, String> {
            list.iter()
                .map(|s| NamePattern::parse(s.as_ref()))
                .collect()
        };
        NameRules::new(parse_all(allow)?, parse_all(deny)?)
    }

    pub fn allow(&self) -> &[NamePattern] {
        &self.allow
    }

    pub fn deny(&self) -> &[NamePattern] {
        &self.deny
    }

    /// The verdict for `name` (any case, trailing dot ignored).
    pub fn decide(&self, name: &str) -> NameVerdict {
        self.decide_with_rule(name).0
    }

    /// The verdict and the pattern that produced it (`None` for [`NameVerdict::Unlisted`]). The
    /// most specific matching pattern wins; an equal tie cannot happen after [`NameRules::new`],
    /// but would go to deny.
    pub fn decide_with_rule(&self, name: &str) -> (NameVerdict, Option<&NamePattern>) {
        let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
        fn best<'r>(list: &'r [NamePattern], name: &str) -> Option<&'r NamePattern> {
            list.iter()
                .filter(|p| p.matches(name))
                .max_by_key(|p| p.specificity())
        }
        match (best(&self.allow, &name), best(&self.deny, &name)) {
            (None, None) => (NameVerdict::Unlisted, None),
            (Some(a), None) => (NameVerdict::Allow, Some(a)),
            (None, Some(d)) => (NameVerdict::Deny, Some(d)),
            (Some(a), Some(d)) if a.specificity() > d.specificity() => {
                (NameVerdict::Allow, Some(a))
            }
            (Some(_), Some(d)) => (NameVerdict::Deny, Some(d)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(allow: &[&str], deny: &[&str]) -> NameRules {
        NameRules::parse(allow, deny).unwrap()
    }

    #[test]
    fn parse_normalises_and_validates() {
        assert_eq!(
            NamePattern::parse("API.Anthropic.com.").unwrap(),
            NamePattern::Exact("api.anthropic.com".into())
        );
        assert_eq!(
            NamePattern::parse("*.NPMJS.org").unwrap(),
            NamePattern::Wildcard("npmjs.org".into())
        );
        assert_eq!(
            NamePattern::parse("*.npmjs.org").unwrap().to_string(),
            "*.npmjs.org"
        );
        assert!(NamePattern::parse("_dmarc.example.com").is_ok());
        for bad in [
            "", ".", "*", "*.", "a..b", "a.*.b", "a*.b", "**.b", "-a.b", "a-.b", "a b.c", "a/b",
            "é.com",
        ] {
            assert!(
                NamePattern::parse(bad).is_err(),
                "{bad:?} should be refused"
            );
        }
        let long_label = format!("{}.com", "a".repeat(64));
        assert!(NamePattern::parse(&long_label)
            .unwrap_err()
            .contains("longer than 63"));
        assert!(NamePattern::parse(&format!("{}.com", "a".repeat(63))).is_ok());
        let long_name = vec!["a".repeat(63); 4].join("."); // 255 characters
        assert!(NamePattern::parse(&long_name).is_err());
    }

    #[test]
    fn wildcard_matches_strict_subdomains_only() {
        let r = rules(&["*.npmjs.org"], &[]);
        assert_eq!(r.decide("registry.npmjs.org"), NameVerdict::Allow);
        assert_eq!(r.decide("a.b.npmjs.org."), NameVerdict::Allow);
        assert_eq!(r.decide("REGISTRY.NPMJS.ORG"), NameVerdict::Allow);
        assert_eq!(r.decide("npmjs.org"), NameVerdict::Unlisted);
        assert_eq!(r.decide("evilnpmjs.org"), NameVerdict::Unlisted);
        assert_eq!(r.decide(".npmjs.org"), NameVerdict::Unlisted);
        assert_eq!(r.decide("npmjs.org.evil.com"), NameVerdict::Unlisted);
        // A label holding an escaped dot is not two labels.
        assert_eq!(r.decide("evil\\046npmjs.org"), NameVerdict::Unlisted);
    }

    #[test]
    fn most_specific_rule_wins() {
        let r = rules(
            &[
                "*.example.com",
                "ok.bad.example.com",
                "*.deep.bad.example.com",
            ],
            &["*.bad.example.com", "www.example.com"],
        );
        assert_eq!(r.decide("a.example.com"), NameVerdict::Allow);
        assert_eq!(r.decide("www.example.com"), NameVerdict::Deny); // exact beats wildcard
        assert_eq!(r.decide("x.bad.example.com"), NameVerdict::Deny); // longer suffix
        assert_eq!(r.decide("ok.bad.example.com"), NameVerdict::Allow); // exact
        assert_eq!(r.decide("x.deep.bad.example.com"), NameVerdict::Allow);
        assert_eq!(r.decide("example.com"), NameVerdict::Unlisted);
        let (verdict, rule) = r.decide_with_rule("x.bad.example.com");
        assert_eq!(verdict, NameVerdict::Deny);
        assert_eq!(
            rule.map(ToString::to_string).as_deref(),
            Some("*.bad.example.com")
        );
        assert_eq!(
            r.decide_with_rule("other.org"),
            (NameVerdict::Unlisted, None)
        );
    }

    #[test]
    fn exact_deny_beats_wildcard_allow_and_vice_versa() {
        let r = rules(&["api.anthropic.com"], &["*.anthropic.com"]);
        assert_eq!(r.decide("api.anthropic.com"), NameVerdict::Allow);
        assert_eq!(r.decide("console.anthropic.com"), NameVerdict::Deny);
    }

    #[test]
    fn equal_patterns_in_both_lists_conflict() {
        let err =
            NameRules::parse(&["*.npmjs.org", "a.com"], &["*.NPMJS.org.", "b.com"]).unwrap_err();
        assert!(
            err.contains("allow rule `*.npmjs.org` and deny rule `*.npmjs.org`"),
            "{err}"
        );
        let err = NameRules::parse(&["api.anthropic.com"], &["API.anthropic.com"]).unwrap_err();
        assert!(err.contains("allow rule `api.anthropic.com`"), "{err}");
        assert!(err.contains("deny rule `api.anthropic.com`"), "{err}");
        // Exact and wildcard for the same suffix are different specificities: no conflict.
        assert!(NameRules::parse(&["npmjs.org"], &["*.npmjs.org"]).is_ok());
        assert!(NameRules::parse(&["bad name!"], &[])
            .unwrap_err()
            .contains("bad name!"));
    }
}
