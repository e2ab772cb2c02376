//! A screen as a grid of cells in neutral terms, so that tmux's rendering and a TUI pane's can be
//! compared cell by cell: what each cell shows, its colours, its attributes; and the cursor.

use lazaret_ui::tui::emulator::NAMED_COLORS;
use ratatui::style::{Color, Modifier};
use std::collections::BTreeMap;

/// A colour: the terminal's default, a palette index (0–15: the named ANSI colours), or RGB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colour {
    Default,
    Index(u8),
    Rgb(u8, u8, u8),
}

impl Colour {
    /// A ratatui colour as a pane draws it (ratatui names the 16 ANSI colours).
    pub fn of(c: Color) -> Colour {
        match c {
            Color::Reset => Colour::Default,
            Color::Indexed(n) => Colour::Index(n),
            Color::Rgb(r, g, b) => Colour::Rgb(r, g, b),
            named => NAMED_COLORS
                .iter()
                .position(|n| *n == named)
                .map_or(Colour::Default, |i| Colour::Index(i as u8)),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// What the cell shows ("" for the right half of a wide character).
    pub text: String,
    pub fg: Colour,
    pub bg: Colour,
    pub attrs: Modifier,
}

impl Cell {
    pub fn blank() -> Cell {
        Cell {
            text: " ".into(),
            fg: Colour::Default,
            bg: Colour::Default,
            attrs: Modifier::empty(),
        }
    }
}

pub struct Screen {
    pub rows: Vec<Vec<Cell>>,
    /// (row, col) when visible.
    pub cursor: Option<(u16, u16)>,
}

impl Screen {
    pub fn text(&self) -> String {
        self.rows
            .iter()
            .map(|r| {
                let line: String = r.iter().map(|c| c.text.as_str()).collect();
                format!("|{}|", line)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

const ATTRS: [(Modifier, &str); 9] = [
    (Modifier::BOLD, "bold"),
    (Modifier::DIM, "dim"),
    (Modifier::ITALIC, "italic"),
    (Modifier::UNDERLINED, "underline"),
    (Modifier::SLOW_BLINK, "blink"),
    (Modifier::RAPID_BLINK, "blink"),
    (Modifier::REVERSED, "reverse"),
    (Modifier::HIDDEN, "hidden"),
    (Modifier::CROSSED_OUT, "strike"),
];

/// How `got` differs from `want`: cells differing per kind (`char`, `fg`, `bg`, an attribute
/// name; a cell counts once per kind), and `cursor` when the cursor differs.
pub fn differences(want: &Screen, got: &Screen) -> BTreeMap<&'static str, usize> {
    let mut kinds = BTreeMap::new();
    let blank = Cell::blank();
    for (r, want_row) in want.rows.iter().enumerate() {
        for (c, w) in want_row.iter().enumerate() {
            let g = got.rows.get(r).and_then(|row| row.get(c)).unwrap_or(&blank);
            let mut add = |k: &'static str| *kinds.entry(k).or_insert(0) += 1;
            if w.text != g.text {
                add("char");
            }
            if w.fg != g.fg {
                add("fg");
            }
            if w.bg != g.bg {
                add("bg");
            }
            let mut seen = Vec::new();
            for (m, name) in ATTRS {
                if (w.attrs & m) != (g.attrs & m) && !seen.contains(&name) {
                    seen.push(name);
                    add(name);
                }
            }
        }
    }
    if want.cursor != got.cursor {
        kinds.insert("cursor", 1);
    }
    kinds
}

/// The cells of `got` that differ from `want`, as "row,col: want → got" lines (at most `max`).
pub fn describe(want: &Screen, got: &Screen, max: usize) -> String {
    let blank = Cell::blank();
    let mut out = Vec::new();
    for (r, want_row) in want.rows.iter().enumerate() {
        for (c, w) in want_row.iter().enumerate() {
            let g = got.rows.get(r).and_then(|row| row.get(c)).unwrap_or(&blank);
            if w != g && out.len() < max {
                out.push(format!("  {r},{c}: {w:?} → {g:?}"));
            }
        }
    }
    if want.cursor != got.cursor {
        out.push(format!("  cursor: {:?} → {:?}", want.cursor, got.cursor));
    }
    out.join("\n")
}
