//! JSON for the developer's terminal and scripts alike: pretty-printed, with every character
//! outside printable ASCII written as a `\uXXXX` escape. Inspection verbs print text the
//! sandbox chose (an escalation's argv, its justification); as plain JSON a C1 control or a
//! bidirectional override inside a string would reach the terminal as is. A JSON parser
//! (`jq`) reads the same values back.

use std::fmt::Write;

/// `value` as pretty JSON whose bytes are all printable ASCII (and newlines).
pub fn to_string(value: &impl serde::Serialize) -> anyhow::Result<String> {
    Ok(ascii_only(&serde_json::to_string_pretty(value)?))
}

/// `value` as one line of JSON (no newline) whose bytes are all printable ASCII.
pub fn to_line(value: &impl serde::Serialize) -> anyhow::Result<String> {
    Ok(ascii_only(&serde_json::to_string(value)?))
}

/// JSON text with every non-ASCII character and DEL (only possible inside strings: JSON's
/// own syntax is ASCII) replaced by its `\uXXXX` escape, UTF-16 surrogate pairs above
/// U+FFFF. serde_json already escapes the C0 controls.
fn ascii_only(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_ascii() && c != '\u{7f}' {
            out.push(c);
            continue;
        }
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{unit:04x}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_characters_leave_as_escapes_and_parse_back() {
        let hostile = vec![
            "\u{1b}]0;owned\u{7}".to_owned(),
            "\u{9b}31m\u{202e}txt.exe\u{7f}".to_owned(),
            "café 🦀".to_owned(),
        ];
        let text = to_string(&hostile).unwrap_or_default();
        assert!(
            text.bytes()
                .all(|b| b == b'\n' || (0x20..0x7f).contains(&b)),
            "{text:?}"
        );
        assert!(
            text.contains(r"\u009b") && text.contains(r"\u202e"),
            "{text}"
        );
        assert!(text.contains(r"\ud83e\udd80"), "a surrogate pair: {text}");
        let back: Vec<String> = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(back, hostile);
    }
}
