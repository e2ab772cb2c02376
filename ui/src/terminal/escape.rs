//! Showing sandbox-controlled text (argv, justifications, paths) on the developer's terminal.
//!
//! The sandbox is hostile: its text must never reach the terminal as something the terminal
//! interprets (escape sequences can set the clipboard, retitle the window, move the cursor and
//! overwrite the prompt), nor as something that hides or visually reorders text (bidi
//! overrides, zero-width characters), so the developer approves exactly what they read.
//!
//! [`visible`] keeps every character as is except:
//! - `\` → `\\`, newline → `\n`, carriage return → `\r`, tab → `\t`;
//! - as `\u{hex}` (lowercase hex, no padding), e.g. `\u{1b}`:
//!   - C0 controls U+0000–U+001F, DEL U+007F and C1 controls U+0080–U+009F;
//!   - bidi controls U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069;
//!   - line and paragraph separators U+2028, U+2029;
//!   - every other invisible format character (Unicode category Cf): U+00AD, U+0600–U+0605,
//!     U+06DD, U+070F, U+0890–U+0891, U+08E2, U+180E, U+200B–U+200D, U+2060–U+2065,
//!     U+206A–U+206F, U+FEFF, U+FFF9–U+FFFB, U+110BD, U+110CD, U+13430–U+1343F,
//!     U+1BCA0–U+1BCA3, U+1D173–U+1D17A, and the tag block U+E0000–U+E007F.
//!
//! Private-use characters and variation selectors are kept: they neither control the terminal
//! nor reorder text, and emoji presentation relies on U+FE0F.

use std::fmt::Write as _;

/// Characters shown as `\u{hex}`, as inclusive ranges (see the module docs).
const ESCAPED: &[(u32, u32)] = &[
    (0x0000, 0x001F),
    (0x007F, 0x009F),
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x2028, 0x202E),
    (0x2060, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE007F),
];

/// Whether `c` is shown as `\u{hex}` by [`visible`].
pub fn is_escaped(c: char) -> bool {
    let c = u32::from(c);
    ESCAPED.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}

/// Appends `c` as [`visible`] shows it; one buffer char stays one unit for the line editor.
pub fn push_visible(out: &mut String, c: char) {
    match c {
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if is_escaped(c) => {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
        c => out.push(c),
    }
}

/// `s` with nothing a terminal interprets and nothing invisible or reordering (module docs).
pub fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        push_visible(&mut out, c);
    }
    out
}

/// A message of Lazaret's own for the developer's terminal, `s` as [`visible`] shows it except
/// that its newlines (the message's own line breaks) and backslashes are kept. Escaping twice
/// changes nothing (`message(visible(x)) == visible(x)`), so a message may carry text escaped
/// earlier. Every line Lazaret prints goes through it (the engine's `say!`).
pub fn message(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\\' => out.push(c),
            c => push_visible(&mut out, c),
        }
    }
    out
}

/// `s` between double quotes, with `"` shown as `\"`, so its exact extent is unambiguous.
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' {
            out.push_str("\\\"");
        } else {
            push_visible(&mut out, c);
        }
    }
    out.push('"');
    out
}

/// An argv as `["git", "push", "origin main"]`: shows the exact argument boundaries.
pub fn argv(argv: &[String]) -> String {
    let parts: Vec<String> = argv.iter().map(|a| quoted(a)).collect();
    format!("[{}]", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classes the brief names, written out independently of `ESCAPED`.
    fn must_escape(c: char) -> bool {
        matches!(u32::from(c),
            0x00..=0x1F | 0x7F..=0x9F
            | 0x061C | 0x200E | 0x200F | 0x202A..=0x202E | 0x2066..=0x2069
            | 0x00AD | 0x180E | 0x200B..=0x200D | 0x2060..=0x2064 | 0xFEFF | 0xFFF9..=0xFFFB
            | 0x2028 | 0x2029 | 0xE0000..=0xE007F)
    }

    /// Inverse of `visible` (and of `quoted`'s body), to prove the output is unambiguous.
    fn unescape(s: &str) -> String {
        let mut out = String::new();
        let mut it = s.chars();
        while let Some(c) = it.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match it.next() {
                Some('\\') => out.push('\\'),
                Some('"') => out.push('"'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('t') => out.push('\t'),
                Some('u') => {
                    assert_eq!(it.next(), Some('{'));
                    let hex: String = it.by_ref().take_while(|&c| c != '}').collect();
                    let n = u32::from_str_radix(&hex, 16).unwrap();
                    out.push(char::from_u32(n).unwrap());
                }
                other => panic!("dangling escape {other:?} in {s:?}"),
            }
        }
        out
    }

    #[test]
    fn escape_sequences_are_neutralised() {
        let osc52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07";
        assert_eq!(visible(osc52), "\\u{1b}]52;c;ZWNobyBwd25lZA==\\u{7}");
        assert_eq!(visible("\x1b[2J\x1b[H"), "\\u{1b}[2J\\u{1b}[H");
        assert_eq!(visible("\x1b]0;owned\x1b\\"), "\\u{1b}]0;owned\\u{1b}\\\\");
        assert_eq!(visible("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(visible("\u{7f}\0"), "\\u{7f}\\u{0}");
    }

    #[test]
    fn whitespace_controls_use_short_forms() {
        assert_eq!(visible("a\nb\rc\td"), "a\\nb\\rc\\td");
        assert_eq!(visible("\u{b}\u{c}"), "\\u{b}\\u{c}");
    }

    #[test]
    fn bidi_and_invisible_chars_are_shown() {
        assert_eq!(visible("rm \u{202e}fdp.exe"), "rm \\u{202e}fdp.exe");
        assert_eq!(visible("a\u{200d}b"), "a\\u{200d}b");
        assert_eq!(
            visible("x\u{200b}y\u{feff}\u{ad}"),
            "x\\u{200b}y\\u{feff}\\u{ad}"
        );
        assert_eq!(
            visible("\u{2066}\u{2069}\u{61c}"),
            "\\u{2066}\\u{2069}\\u{61c}"
        );
        assert_eq!(visible("\u{2028}\u{2029}"), "\\u{2028}\\u{2029}");
        assert_eq!(visible("\u{e0041}\u{e007f}"), "\\u{e0041}\\u{e007f}");
    }

    #[test]
    fn printable_text_is_kept() {
        for s in [
            "git push",
            "日本語",
            "🦀 crab",
            "é\u{301}",
            "\u{e000}",
            "❤\u{fe0f}",
            "~/$HOME",
        ] {
            assert_eq!(visible(s), s);
        }
    }

    #[test]
    fn backslash_and_quotes() {
        assert_eq!(visible(r"C:\dir"), r"C:\\dir");
        assert_eq!(visible("say \"hi\""), "say \"hi\"");
        assert_eq!(quoted("say \"hi\""), r#""say \"hi\"""#);
        assert_eq!(quoted(r"a\"), r#""a\\""#);
        assert_eq!(quoted(""), r#""""#);
        assert_eq!(quoted("\x1b"), r#""\u{1b}""#);
    }

    #[test]
    fn messages_keep_their_lines_and_nothing_else() {
        let hostile = "a\x1b]52;c;eA==\x07b\rc\u{9b}6n\u{202e}d\x1bP$qm\x1b\\e\t";
        let shown = message(&format!("line one {hostile}\nline two"));
        assert_eq!(
            shown,
            "line one a\\u{1b}]52;c;eA==\\u{7}b\\rc\\u{9b}6n\\u{202e}d\\u{1b}P$qm\\u{1b}\\e\\t\nline two"
        );
        assert!(!shown.chars().any(|c| c != '\n' && is_escaped(c)));
        let all: String = (0..=0x10FFFFu32).filter_map(char::from_u32).collect();
        let once = message(&all);
        assert!(!once.chars().any(|c| c != '\n' && is_escaped(c)));
        assert_eq!(message(&once), once);
        assert_eq!(message(&visible(&all)), visible(&all));
    }

    #[test]
    fn argv_is_exact() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            argv(&a(&["git", "push", "origin main"])),
            r#"["git", "push", "origin main"]"#
        );
        assert_eq!(argv(&a(&[])), "[]");
        assert_eq!(argv(&a(&["", "a\", \"b"])), r#"["", "a\", \"b"]"#);
    }

    #[test]
    fn every_char_is_escaped_exactly_when_it_must_be() {
        let all: String = (0..=0x10FFFFu32).filter_map(char::from_u32).collect();
        let shown = visible(&all);
        assert!(!shown.chars().any(|c| must_escape(c) || is_escaped(c)));
        assert_eq!(unescape(&shown), all);
        for c in all.chars() {
            let one = visible(c.encode_utf8(&mut [0; 4]));
            if must_escape(c) || c == '\\' {
                assert_ne!(one, c.to_string(), "{c:?} kept");
            }
            if !is_escaped(c) && c != '\\' {
                assert_eq!(one, c.to_string(), "{c:?} changed");
            }
        }
    }

    #[test]
    fn quoted_round_trips() {
        let all: String = (0..=0x3000u32).filter_map(char::from_u32).collect();
        let q = quoted(&all);
        assert!(q.starts_with('"') && q.ends_with('"'));
        let body = &q[1..q.len() - 1];
        assert!(!body.replace("\\\\", "").replace("\\\"", "").contains('"'));
        assert_eq!(unescape(body), all);
    }
}
