//! The fields of an escalation card, bounded (DX-4, issue #31), for every surface that shows a
//! request: the `lazaret run` prompt, the TUI's escalations panel and `lazaret escalations`.
//!
//! However long the sandbox makes its argv, working directory or justification, the card keeps
//! its shape: warnings first, then the program `argv[0]` resolved to with the argument count
//! on a line of their own, then each field cut to a head and a tail around `… N more bytes — v
//! shows all …`. In the command and the directories every non-ASCII character is shown as
//! `\u{hex}` (a Cyrillic `о` is not a Latin `o`), and a warning says so. Every
//! sandbox-chosen character goes through [`escape`]: no control sequence, bidi override or
//! invisible character reaches the terminal.

use super::escape;
use lazaret_protocol::escalation::EscalationPrompt;
use unicode_width::UnicodeWidthStr;

/// Rows (of the text's width) a field may take before it is cut.
const WARNING_ROWS: usize = 2;
const COMMAND_ROWS: usize = 3;
const PLACE_ROWS: usize = 2;
const WHY_ROWS: usize = 2;
const PROGRAM_ROWS: usize = 2;
/// Warnings shown on a bounded card; more are counted.
const MAX_WARNINGS: usize = 3;
/// Narrowest text width budgeted for (a tiny panel still gets a readable head and tail).
const MIN_WIDTH: usize = 24;

/// One line of a card: a label and its (escaped, bounded) text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub label: &'static str,
    pub text: String,
    /// Drawn as a warning.
    pub warning: bool,
}

/// The card's fields for `p`: each cut to fit `width` columns of text a few rows each, or
/// whole when `full`.
pub fn fields(p: &EscalationPrompt, width: usize, full: bool) -> Vec<Field> {
    let width = width.max(MIN_WIDTH);
    let cut = |units: Vec<Unit>, rows: usize| {
        if full {
            join(&units)
        } else {
            bounded(&units, rows * width)
        }
    };
    let look_alikes = p
        .argv
        .iter()
        .chain([&p.cwd, &p.program])
        .any(|s| !s.is_ascii());
    let mut out = Vec::new();
    let mut warnings: Vec<String> = p.warnings.clone();
    if look_alikes {
        warnings.insert(
            0,
            "non-ASCII characters shown escaped: look-alike letters?".into(),
        );
    }
    let shown = if full {
        warnings.len()
    } else {
        warnings.len().min(MAX_WARNINGS)
    };
    for w in &warnings[..shown] {
        out.push(Field {
            label: "warning",
            text: cut(text_units(w), WARNING_ROWS),
            warning: true,
        });
    }
    if shown < warnings.len() {
        out.push(Field {
            label: "warning",
            text: format!("{} more warnings — v shows all", warnings.len() - shown),
            warning: true,
        });
    }
    out.push(Field {
        label: "program",
        text: cut(program_units(p), PROGRAM_ROWS),
        warning: p.program.is_empty(),
    });
    out.push(Field {
        label: "command",
        text: cut(argv_units(&p.argv), COMMAND_ROWS),
        warning: false,
    });
    let mut place = quoted_units(&p.cwd, true);
    place.push(Unit::plain(" → host "));
    place.extend(quoted_units(&p.host_cwd, true));
    out.push(Field {
        label: "in",
        text: cut(place, PLACE_ROWS),
        warning: false,
    });
    out.push(Field {
        label: "why",
        text: if p.justification.is_empty() {
            "(none given)".into()
        } else {
            cut(quoted_units(&p.justification, false), WHY_ROWS)
        },
        warning: false,
    });
    out
}

/// Whether a bounded card of `p` at `width` leaves anything out (`v` then shows more).
pub fn is_cut(p: &EscalationPrompt, width: usize) -> bool {
    fields(p, width, false) != fields(p, width, true)
}

/// `s` as the command shows it: escaped, with every non-ASCII character as `\u{hex}`.
pub fn ascii(s: &str) -> String {
    join(&char_units(s, true))
}

/// One piece of a field's text: what is shown, and how many bytes it stands for (of the
/// original text; the card's own punctuation counts as itself).
#[derive(Clone, Debug)]
struct Unit {
    shown: String,
    bytes: usize,
}

impl Unit {
    fn plain(s: &str) -> Unit {
        Unit {
            shown: s.to_owned(),
            bytes: s.len(),
        }
    }
}

fn char_units(s: &str, ascii_only: bool) -> Vec<Unit> {
    s.chars()
        .map(|c| {
            let mut shown = String::new();
            if ascii_only && !c.is_ascii() {
                shown = format!("\\u{{{:x}}}", u32::from(c));
            } else {
                escape::push_visible(&mut shown, c);
            }
            Unit {
                shown,
                bytes: c.len_utf8(),
            }
        })
        .collect()
}

fn quoted_units(s: &str, ascii_only: bool) -> Vec<Unit> {
    let mut out = vec![Unit::plain("\"")];
    for mut u in char_units(s, ascii_only) {
        if u.shown == "\"" {
            u.shown = "\\\"".into();
        }
        out.push(u);
    }
    out.push(Unit::plain("\""));
    out
}

fn text_units(s: &str) -> Vec<Unit> {
    char_units(s, false)
}

fn argv_units(argv: &[String]) -> Vec<Unit> {
    let mut out = vec![Unit::plain("[")];
    for (i, a) in argv.iter().enumerate() {
        if i > 0 {
            out.push(Unit::plain(", "));
        }
        out.extend(quoted_units(a, true));
    }
    out.push(Unit::plain("]"));
    out
}

fn program_units(p: &EscalationPrompt) -> Vec<Unit> {
    let args = p.argv.len().saturating_sub(1);
    let count = match args {
        1 => " · 1 argument".to_owned(),
        n => format!(" · {n} arguments"),
    };
    let name = p.argv.first().map(String::as_str).unwrap_or_default();
    let mut out = Vec::new();
    if p.program.is_empty() {
        out.extend(quoted_units(name, true));
        out.push(Unit::plain(" resolves to no program on the host"));
    } else {
        out.extend(char_units(&p.program, true));
        if p.program != name {
            out.push(Unit::plain(" (argv[0] "));
            out.extend(quoted_units(name, true));
            out.push(Unit::plain(")"));
        }
    }
    out.push(Unit::plain(&count));
    out
}

fn join(units: &[Unit]) -> String {
    units.iter().map(|u| u.shown.as_str()).collect()
}

fn width_of(units: &[Unit]) -> usize {
    units.iter().map(|u| u.shown.width()).sum()
}

/// `units` within `budget` columns: whole, or a head and a tail around a marker saying how
/// many bytes were left out.
fn bounded(units: &[Unit], budget: usize) -> String {
    if width_of(units) <= budget {
        return join(units);
    }
    let omitted_max: usize = units.iter().map(|u| u.bytes).sum();
    let marker = |n: usize| format!(" … {n} more bytes — v shows all … ");
    let room = budget.saturating_sub(marker(omitted_max).width());
    let head_room = room * 2 / 3;
    let mut head = 0;
    let mut used = 0;
    while head < units.len() && used + units[head].shown.width() <= head_room {
        used += units[head].shown.width();
        head += 1;
    }
    let tail_room = room - used;
    let mut tail = units.len();
    let mut used_tail = 0;
    while tail > head && used_tail + units[tail - 1].shown.width() <= tail_room {
        used_tail += units[tail - 1].shown.width();
        tail -= 1;
    }
    let omitted: usize = units[head..tail].iter().map(|u| u.bytes).sum();
    format!(
        "{}{}{}",
        join(&units[..head]),
        marker(omitted),
        join(&units[tail..])
    )
}

#[cfg(test)]
#[path = "card_text_tests.rs"]
mod tests;
