//! [`ScreenLine`]: one row of a screen as compact styled text, and its checking decoder.

use serde::{Deserialize, Serialize};

/// Longest SGR parameter string a [`ScreenLine`] may carry (`38;2;255;255;255;48;2;…` fits).
pub const MAX_SGR_LEN: usize = 64;

/// One terminal row as compact styled text.
///
/// **Invariant** (kept by the coordinator, never trusted by a consumer): `text` holds printable
/// characters and SGR sequences `ESC [ <digits ; :> m` only — no other escape, no C0/C1 control
/// character, no cursor movement. The row starts with default attributes (each SGR is relative
/// to the previous ones on the same row); trailing blank cells with default attributes are
/// left out, so `text` may cover fewer cells than the screen is wide. A wide character stands
/// for its two cells. `wrapped` says the row was soft-wrapped into the next one (the program
/// wrote past the last column), so the two form one logical line.
///
/// [`ScreenLine::items`] is the only decoder consumers should use: it yields text runs and SGR
/// parameter strings and silently drops anything else (escapes, controls, over-long SGRs), so a
/// snapshot that breaks the invariant still cannot make a terminal do more than print and
/// colour characters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenLine {
    pub text: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub wrapped: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A piece of a [`ScreenLine`]: printable text, or the parameters of one SGR sequence (without
/// `ESC [` and `m`; only digits, `;` and `:`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineItem<'a> {
    Text(&'a str),
    Sgr(&'a str),
}

impl ScreenLine {
    pub fn new(text: String, wrapped: bool) -> Self {
        Self { text, wrapped }
    }

    /// The line's text runs and SGR sequences, dropping everything the invariant forbids.
    pub fn items(&self) -> Items<'_> {
        Items { rest: &self.text }
    }

    /// The printable characters only (no styling): for searching and tests.
    pub fn plain_text(&self) -> String {
        self.items()
            .filter_map(|item| match item {
                LineItem::Text(t) => Some(t),
                LineItem::Sgr(_) => None,
            })
            .collect()
    }
}

/// Iterator of [`ScreenLine::items`].
pub struct Items<'a> {
    rest: &'a str,
}

const ESC: char = '\u{1b}';

fn is_sgr_param(c: char) -> bool {
    c.is_ascii_digit() || c == ';' || c == ':'
}

impl<'a> Iterator for Items<'a> {
    type Item = LineItem<'a>;

    fn next(&mut self) -> Option<LineItem<'a>> {
        loop {
            let mut chars = self.rest.char_indices();
            let (_, first) = chars.next()?;
            if first == ESC {
                if let Some(item) = self.escape() {
                    return Some(item);
                }
                continue;
            }
            if first.is_control() {
                self.rest = &self.rest[first.len_utf8()..];
                continue;
            }
            let end = self
                .rest
                .char_indices()
                .find(|&(_, c)| c == ESC || c.is_control())
                .map_or(self.rest.len(), |(i, _)| i);
            let (text, rest) = self.rest.split_at(end);
            self.rest = rest;
            return Some(LineItem::Text(text));
        }
    }
}

impl<'a> Items<'a> {
    /// At an ESC: consumes a CSI sequence (`ESC [ params final`) whole, or the ESC alone; yields
    /// it only when it is a well-formed, short SGR.
    fn escape(&mut self) -> Option<LineItem<'a>> {
        let after = &self.rest[ESC.len_utf8()..];
        let Some(csi) = after.strip_prefix('[') else {
            self.rest = after;
            return None;
        };
        let params_len = csi.find(|c| !is_sgr_param(c)).unwrap_or(csi.len());
        let (params, tail) = csi.split_at(params_len);
        let mut tail_chars = tail.chars();
        match tail_chars.next() {
            Some('m') if params.len() <= MAX_SGR_LEN => {
                self.rest = tail_chars.as_str();
                Some(LineItem::Sgr(params))
            }
            // Another CSI final byte: the whole sequence goes.
            Some(c) if ('\u{40}'..='\u{7e}').contains(&c) => {
                self.rest = tail_chars.as_str();
                None
            }
            // Unterminated or odd: drop the introducer, keep the rest as text.
            _ => {
                self.rest = csi;
                None
            }
        }
    }
}
