//! What a profile setup says about its progress (issue #32, DX-5): the convention between a
//! setup script and Lazaret, read strictly because every byte comes from the sandbox.
//!
//! - A line `lazaret-progress: PHASE` starts a phase; `lazaret-progress: PHASE 42 %` (or
//!   `42%`) also says how far it is. PHASE is 1 to [`MAX_PHASE`] characters of letters,
//!   digits, spaces and `._@/:+()-`.
//! - A piece of curl's `--progress-bar` (`-#`: `####   42.3%`, rewritten with carriage
//!   returns) sets the percentage of the current phase.
//!
//! Anything else is the setup's output: kept in its log, shown only when the setup fails.

/// The longest phase name taken.
pub const MAX_PHASE: usize = 80;

/// The longest piece of output that is parsed at all (longer ones are plain output).
pub const MAX_LINE: usize = 512;

const MARK: &str = "lazaret-progress:";

/// What one piece of the setup's output (a line, or the text between carriage returns) says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// A new phase, with how far it is when the line says.
    Phase { name: String, percent: Option<u8> },
    /// How far the current phase is (curl's progress bar).
    Percent(u8),
    /// Output of the setup's own (not empty).
    Output,
    /// Nothing (blank).
    Blank,
}

/// Reads one piece of output (without its line ending).
pub fn parse(piece: &[u8]) -> Piece {
    if piece.len() > MAX_LINE {
        return Piece::Output;
    }
    let Ok(text) = std::str::from_utf8(piece) else {
        return Piece::Output;
    };
    let text = text.trim_end_matches([' ', '\t']);
    if text.trim().is_empty() {
        return Piece::Blank;
    }
    if let Some(rest) = text.strip_prefix(MARK) {
        return phase(rest.trim()).unwrap_or(Piece::Output);
    }
    bar(text).map_or(Piece::Output, Piece::Percent)
}

fn phase(rest: &str) -> Option<Piece> {
    let (name, percent) = match split_percent(rest) {
        Some((name, p)) => (name.trim_end(), Some(p)),
        None => (rest, None),
    };
    let allowed = |c: char| c.is_ascii_alphanumeric() || " ._@/:+()-".contains(c);
    if name.is_empty() || name.chars().count() > MAX_PHASE || !name.chars().all(allowed) {
        return None;
    }
    Some(Piece::Phase {
        name: name.to_owned(),
        percent,
    })
}

/// `NAME 42 %` / `NAME 42%` → (`NAME `, 42).
fn split_percent(s: &str) -> Option<(&str, u8)> {
    let s = s.strip_suffix('%')?.trim_end();
    let digits = s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 3 {
        return None;
    }
    let (name, number) = s.split_at(s.len() - digits);
    if !name.is_empty() && !name.ends_with(' ') {
        return None;
    }
    let p: u8 = number.parse().ok().filter(|p| *p <= 100)?;
    Some((name, p))
}

/// curl's `-#` bar: `#` marks and spaces, then `NN.N%`.
fn bar(text: &str) -> Option<u8> {
    let number = text
        .trim_start_matches(['#', ' ', 'O', '=', '-'])
        .strip_suffix('%')?;
    let whole = match number.split_once('.') {
        Some((w, frac)) if !frac.is_empty() && frac.chars().all(|c| c.is_ascii_digit()) => w,
        Some(_) => return None,
        None => number,
    };
    if whole.is_empty() || whole.len() > 3 || !whole.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    whole.parse().ok().filter(|p| *p <= 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(name: &str, percent: Option<u8>) -> Piece {
        Piece::Phase {
            name: name.into(),
            percent,
        }
    }

    #[test]
    fn phases_with_and_without_percent() {
        assert_eq!(
            parse(b"lazaret-progress: downloading Node.js 24.22.3"),
            phase("downloading Node.js 24.22.3", None)
        );
        assert_eq!(
            parse(b"lazaret-progress: installing @anthropic-ai/claude-code 42 %"),
            phase("installing @anthropic-ai/claude-code", Some(42))
        );
        assert_eq!(
            parse(b"lazaret-progress: step 100%"),
            phase("step", Some(100))
        );
        // A number that is part of the name stays in it.
        assert_eq!(parse(b"lazaret-progress: npm 11"), phase("npm 11", None));
    }

    #[test]
    fn curl_progress_bar_pieces() {
        assert_eq!(parse(b"##########          31.9%"), Piece::Percent(31));
        assert_eq!(parse(b"                    0.0%"), Piece::Percent(0));
        assert_eq!(parse(b"######## 100.0%"), Piece::Percent(100));
    }

    #[test]
    fn hostile_or_odd_lines_are_plain_output() {
        for line in [
            &b"lazaret-progress: \x1b]52;c;aGk=\x07"[..],
            b"lazaret-progress: a\xff",
            b"lazaret-progress: ",
            b"lazaret-progress: step 101 %",
            b"lazaret-progress: step 4242 %",
            b"lazaret-progress: evil\xe2\x80\xae",
            b"#### 1000.0%",
            b"#### 42.%",
            b"npm warn deprecated",
        ] {
            assert_eq!(parse(line), Piece::Output, "{line:?}");
        }
        let long = format!("lazaret-progress: {}", "a".repeat(MAX_PHASE + 1));
        assert_eq!(parse(long.as_bytes()), Piece::Output);
        let huge = vec![b'#'; MAX_LINE + 1];
        assert_eq!(parse(&huge), Piece::Output);
        assert_eq!(parse(b"   "), Piece::Blank);
    }
}
