//! What one side of the git boundary says its references are, parsed as hostile input: the
//! sandbox's listing comes from a process the agent controls. Sans-IO.
//!
//! A listing is the output of
//! `git for-each-ref --format='%(objectname) %(refname)' refs/heads refs/tags refs/remotes`
//! followed by one line `HEAD <symref-or-oid>` (or `HEAD` alone on an unborn repository without
//! a symbolic HEAD). Every line must parse; a name must be a reference name git itself accepts,
//! printable ASCII only (no look-alike letters reach a host message or the host repository).

use std::collections::BTreeMap;

/// Most references one side may list (a sandbox listing more is refused, not truncated).
pub const MAX_REFS: usize = 20_000;
/// Most bytes of one listing.
pub const MAX_LISTING: usize = 4 << 20;

/// An object name: 40 (SHA-1) or 64 (SHA-256) lowercase hexadecimal digits.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Oid(String);

impl Oid {
    pub fn parse(s: &str) -> Option<Oid> {
        let ok = matches!(s.len(), 40 | 64)
            && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            && s.bytes().any(|b| b != b'0');
        ok.then(|| Oid(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 10 digits, for messages.
    pub fn short(&self) -> &str {
        &self.0[..10]
    }
}

/// Where `HEAD` points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Head {
    /// A symbolic reference to a branch (`refs/heads/…`), born or not.
    Branch(String),
    /// Detached at a commit.
    Detached(Oid),
}

/// One side's references.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Refs {
    pub refs: BTreeMap<String, Oid>,
    pub head: Option<Head>,
    /// Names listed that the boundary does not carry (invalid, non-ASCII, another namespace),
    /// shown escaped: left where they are, and said once.
    pub dropped: Vec<String>,
}

impl Refs {
    /// The commit `HEAD` resolves to, if any.
    pub fn head_commit(&self) -> Option<&Oid> {
        match self.head.as_ref()? {
            Head::Branch(b) => self.refs.get(b),
            Head::Detached(o) => Some(o),
        }
    }
}

/// The namespaces the boundary mirrors.
pub const NAMESPACES: [&str; 3] = ["refs/heads/", "refs/tags/", "refs/remotes/"];

/// Whether `name` is a reference name the boundary carries: in one of [`NAMESPACES`], valid
/// by git's rules (`git check-ref-format`), printable ASCII, at most 1 024 bytes.
pub fn valid_name(name: &str) -> bool {
    let Some(rest) = NAMESPACES.iter().find_map(|ns| name.strip_prefix(ns)) else {
        return false;
    };
    !rest.is_empty()
        && name.len() <= 1024
        && name.bytes().all(|b| b.is_ascii_graphic())
        && !name.contains("..")
        && !name.contains("@{")
        && !name.contains("//")
        && !name.ends_with('/')
        && !name.ends_with('.')
        && !name
            .bytes()
            .any(|b| matches!(b, b'~' | b'^' | b':' | b'?' | b'*' | b'[' | b'\\'))
        && name.split('/').all(|c| {
            !c.is_empty() && !c.starts_with('.') && !c.ends_with(".lock") && !c.starts_with('-')
        })
        && name != "refs/heads/HEAD"
}

/// Parses a listing (see the module doc). `Err`: why it is refused, as a whole.
pub fn parse_listing(bytes: &[u8]) -> Result<Refs, String> {
    if bytes.len() > MAX_LISTING {
        return Err(format!("the listing is larger than {MAX_LISTING} bytes"));
    }
    let text = std::str::from_utf8(bytes).map_err(|_| "the listing is not UTF-8".to_owned())?;
    let mut out = Refs::default();
    let mut saw_head = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("HEAD") {
            if saw_head {
                return Err("two HEAD lines".into());
            }
            saw_head = true;
            let rest = rest.trim_start_matches(' ');
            out.head = if rest.is_empty() {
                None
            } else if rest.starts_with("refs/heads/") && valid_name(rest) {
                Some(Head::Branch(rest.to_owned()))
            } else if let Some(o) = Oid::parse(rest) {
                Some(Head::Detached(o))
            } else {
                return Err(format!("HEAD is neither a branch nor a commit: {rest:?}"));
            };
            continue;
        }
        let (oid, name) = line
            .split_once(' ')
            .ok_or_else(|| format!("malformed line {line:?}"))?;
        let oid = Oid::parse(oid).ok_or_else(|| format!("malformed object name in {line:?}"))?;
        if !valid_name(name) {
            if out.dropped.len() < 20 {
                out.dropped.push(super::printable(name));
            }
            continue;
        }
        if out.refs.insert(name.to_owned(), oid).is_some() {
            return Err(format!("reference listed twice: {name:?}"));
        }
        if out.refs.len() > MAX_REFS {
            return Err(format!("more than {MAX_REFS} references"));
        }
    }
    if !saw_head {
        return Err("no HEAD line (the listing was cut)".into());
    }
    let width = out.refs.values().map(|o| o.0.len()).chain(match &out.head {
        Some(Head::Detached(o)) => Some(o.0.len()),
        _ => None,
    });
    let widths: std::collections::BTreeSet<usize> = width.collect();
    if widths.len() > 1 {
        return Err("object names of two hash algorithms".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";

    #[test]
    fn a_listing_parses_and_head_is_symbolic_or_detached() {
        let l = format!("{A} refs/heads/main\n{B} refs/tags/v1\nHEAD refs/heads/main\n");
        let r = parse_listing(l.as_bytes()).unwrap_or_default();
        assert_eq!(r.refs.len(), 2);
        assert_eq!(r.head, Some(Head::Branch("refs/heads/main".into())));
        assert_eq!(r.head_commit().map(Oid::as_str), Some(A));
        let d = parse_listing(format!("HEAD {B}\n").as_bytes()).unwrap_or_default();
        assert_eq!(d.head, Some(Head::Detached(Oid(B.into()))));
        let unborn = parse_listing(b"HEAD refs/heads/new\n").unwrap_or_default();
        assert_eq!(unborn.head_commit(), None);
    }

    #[test]
    fn names_the_boundary_does_not_carry_are_dropped_escaped() {
        for bad in [
            "refs/heads/ma\u{043e}n", // Cyrillic о
            "refs/heads/a..b",
            "refs/heads/x.lock",
            "refs/heads/\x1b[2Jx",
            "refs/lazaret/x",
            "refs/heads/-x",
            "HEADX",
        ] {
            let l = format!("{A} refs/heads/ok\n{A} {bad}\nHEAD\n");
            let r = parse_listing(l.as_bytes()).unwrap_or_default();
            assert_eq!(r.refs.len(), 1, "{bad:?}");
            assert_eq!(r.dropped.len(), 1, "{bad:?}");
            assert!(
                r.dropped[0]
                    .bytes()
                    .all(|b| b.is_ascii_graphic() || b == b' '),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn hostile_listings_are_refused_whole() {
        for bad in [
            format!("{A} refs/heads/main\n"),                      // cut
            format!("{A} refs/heads/a\n{A} refs/heads/a\nHEAD\n"), // twice
            format!("{A}0 refs/heads/a\nHEAD\n"),                  // 41 digits
            format!("{} refs/heads/a\nHEAD\n", "A".repeat(40)),    // upper case
            "0000000000000000000000000000000000000000 refs/heads/a\nHEAD\n".into(),
            "HEAD ../../etc\n".into(),
            "HEAD refs/heads/a\nHEAD refs/heads/b\n".into(),
            format!(
                "{A} refs/heads/a\n{}{} refs/heads/b\nHEAD\n",
                B,
                "2".repeat(24)
            ),
        ] {
            assert!(parse_listing(bad.as_bytes()).is_err(), "{bad:?}");
        }
        assert!(parse_listing(&vec![b'a'; MAX_LISTING + 1]).is_err());
        let many: String = (0..=MAX_REFS)
            .map(|i| format!("{A} refs/heads/b{i}\n"))
            .collect::<String>()
            + "HEAD\n";
        assert!(parse_listing(many.as_bytes()).is_err());
    }

    #[test]
    fn names_git_accepts_are_valid() {
        for ok in [
            "refs/heads/main",
            "refs/heads/feature/x-1",
            "refs/tags/v1.0",
            "refs/remotes/origin/main",
        ] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in [
            "refs/heads/",
            "refs/heads/a/",
            "refs/heads/.x",
            "refs/heads/a b",
        ] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
