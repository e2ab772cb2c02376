//! Emulator rows as [`ScreenLine`]s: printable text with an SGR sequence wherever the style
//! changes (each one complete: `ESC [ 0 ; … m`), trailing default blanks left out.
//!
//! Kept: foreground and background colour (named, 256-colour, RGB), bold, dim, italic,
//! underline (and its styles), inverse, hidden, strikeout. Dropped: underline colour and
//! hyperlinks (OSC 8) — a hyperlink's URI is sandbox text a client would have to vet.

use std::fmt::Write;

use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::vte::ansi::{Color, NamedColor};
use lazaret_protocol::screen::ScreenLine;

/// Cell flags that change how a cell looks.
const STYLE: Flags = Flags::BOLD
    .union(Flags::DIM)
    .union(Flags::ITALIC)
    .union(Flags::ALL_UNDERLINES)
    .union(Flags::INVERSE)
    .union(Flags::HIDDEN)
    .union(Flags::STRIKEOUT);

/// Flags that make a blank cell visible.
const VISIBLE_BLANK: Flags = Flags::INVERSE
    .union(Flags::ALL_UNDERLINES)
    .union(Flags::STRIKEOUT);

#[derive(Clone, Copy, PartialEq)]
struct Style {
    fg: Color,
    bg: Color,
    flags: Flags,
}

const DEFAULT: Style = Style {
    fg: Color::Named(NamedColor::Foreground),
    bg: Color::Named(NamedColor::Background),
    flags: Flags::empty(),
};

fn style(cell: &Cell) -> Style {
    Style {
        fg: cell.fg,
        bg: cell.bg,
        flags: cell.flags & STYLE,
    }
}

/// Whether two cells have the same [`Style`].
fn same_look(a: &Cell, b: &Cell) -> bool {
    ((a.flags ^ b.flags) & STYLE).is_empty() && a.fg == b.fg && a.bg == b.bg
}

fn is_spacer(cell: &Cell) -> bool {
    cell.flags
        .intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER)
}

/// A cell that looks like nothing: a space on the default background without visible
/// attributes. Checked for every trailing cell of every scrolled row, hence the cheap test
/// first (a tab's cell or a cell with combining marks counts as text).
fn is_blank(cell: &Cell) -> bool {
    (cell.c == ' ')
        & (cell.bg == DEFAULT.bg)
        & !cell.flags.intersects(VISIBLE_BLANK)
        & cell.extra.is_none()
}

/// Cells up to and including the last one that is not blank. Whole blocks of blank cells are
/// skipped with a branch-free test (most scrolled rows are short lines followed by blanks).
fn text_end(cells: &[Cell]) -> usize {
    const BLOCK: usize = 16;
    let mut end = cells.len();
    while end >= BLOCK
        && cells[end - BLOCK..end]
            .iter()
            .fold(true, |all, c| all & is_blank(c))
    {
        end -= BLOCK;
    }
    cells[..end]
        .iter()
        .rposition(|c| !is_blank(c))
        .map_or(0, |i| i + 1)
}

/// One row of cells as a [`ScreenLine`]; `wrapped` when its last cell carries the soft-wrap flag
/// (such a row keeps its trailing blanks: the next row continues it).
pub fn encode_row(cells: &[Cell]) -> ScreenLine {
    let wrapped = cells
        .last()
        .is_some_and(|c| c.flags.contains(Flags::WRAPLINE));
    let end = if wrapped {
        cells.len()
    } else {
        text_end(cells)
    };
    let mut text = String::with_capacity(end);
    let mut current = DEFAULT;
    let mut last: Option<&Cell> = None;
    for cell in cells[..end].iter().filter(|c| !is_spacer(c)) {
        // Most cells look like the one before: compare the cells' own fields first instead of
        // building a style for each (a tenth of the coordinator's time under a flood).
        if !last.is_some_and(|l| same_look(l, cell)) {
            let s = style(cell);
            if s != current {
                push_sgr(&mut text, s);
                current = s;
            }
        }
        last = Some(cell);
        // Alacritty keeps a tab in its first cell (for copying); it prints as a blank.
        text.push(if cell.c.is_control() { ' ' } else { cell.c });
        if let Some(extra) = cell.zerowidth() {
            text.extend(extra.iter().filter(|c| !c.is_control()));
        }
    }
    ScreenLine::new(text, wrapped)
}

fn push_sgr(out: &mut String, s: Style) {
    out.push_str("\x1b[0");
    const FLAGS: [(Flags, &str); 11] = [
        (Flags::BOLD, "1"),
        (Flags::DIM, "2"),
        (Flags::ITALIC, "3"),
        (Flags::UNDERLINE, "4"),
        (Flags::DOUBLE_UNDERLINE, "4:2"),
        (Flags::UNDERCURL, "4:3"),
        (Flags::DOTTED_UNDERLINE, "4:4"),
        (Flags::DASHED_UNDERLINE, "4:5"),
        (Flags::INVERSE, "7"),
        (Flags::HIDDEN, "8"),
        (Flags::STRIKEOUT, "9"),
    ];
    for (flag, code) in FLAGS {
        if s.flags.contains(flag) {
            out.push(';');
            out.push_str(code);
        }
    }
    push_color(out, s.fg, 30, 90, 38);
    push_color(out, s.bg, 40, 100, 48);
    out.push('m');
}

/// `base` + n for the 8 normal colours, `bright` + n for the 8 bright ones, `extended;5;n` and
/// `extended;2;r;g;b` otherwise; the default colours add nothing (the SGR starts with 0).
fn push_color(out: &mut String, color: Color, base: u8, bright: u8, extended: u8) {
    match color {
        Color::Spec(rgb) => {
            let _ = write!(out, ";{extended};2;{};{};{}", rgb.r, rgb.g, rgb.b);
        }
        Color::Indexed(n) => {
            let _ = write!(out, ";{extended};5;{n}");
        }
        Color::Named(named) => {
            let n = named as usize;
            let dim = NamedColor::DimBlack as usize;
            let code = match n {
                0..=7 => Some(usize::from(base) + n),
                8..=15 => Some(usize::from(bright) + n - 8),
                _ if (dim..dim + 8).contains(&n) => Some(usize::from(base) + n - dim),
                _ => None,
            };
            if let Some(code) = code {
                let _ = write!(out, ";{code}");
            }
        }
    }
}
