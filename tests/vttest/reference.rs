//! tmux's rendering of a screen, read back from `tmux capture-pane -p -e -N`: text, SGR sequences
//! whenever the attributes change (carried over from one row to the next), and SO / SI around
//! cells drawn from the DEC special graphics set (tmux keeps the ASCII byte and a charset flag).

use super::grid::{Cell, Colour, Screen};
use ratatui::style::Modifier;
use unicode_width::UnicodeWidthChar;

/// The cell attributes a capture sets, carried from one row to the next.
#[derive(Clone)]
struct Pen {
    fg: Colour,
    bg: Colour,
    attrs: Modifier,
    graphics: bool,
}

/// Parses the `rows` captured rows of a `cols`-wide screen.
pub fn parse(lines: &[&str], cols: usize, cursor: Option<(u16, u16)>) -> Screen {
    let mut pen = Pen {
        fg: Colour::Default,
        bg: Colour::Default,
        attrs: Modifier::empty(),
        graphics: false,
    };
    let rows = lines.iter().map(|l| row(l, cols, &mut pen)).collect();
    Screen { rows, cursor }
}

fn row(line: &str, cols: usize, pen: &mut Pen) -> Vec<Cell> {
    let mut cells = Vec::with_capacity(cols);
    let mut chars = line.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\x1b' => {
                // CSI params m
                if chars.next() != Some('[') {
                    continue;
                }
                let mut params = String::new();
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                    params.push(c);
                }
                sgr(&params, pen);
            }
            '\x0e' => pen.graphics = true,
            '\x0f' => pen.graphics = false,
            c => {
                let c = if pen.graphics { dec_graphics(c) } else { c };
                cells.push(Cell {
                    text: c.to_string(),
                    fg: pen.fg,
                    bg: pen.bg,
                    attrs: pen.attrs,
                });
                if c.width() == Some(2) {
                    cells.push(Cell {
                        text: String::new(),
                        ..Cell::blank()
                    });
                }
            }
        }
    }
    cells.resize(cols, Cell::blank());
    cells
}

fn sgr(params: &str, pen: &mut Pen) {
    let list: Vec<&str> = params.split(';').collect();
    let num = |s: &str| s.split(':').next().and_then(|n| n.parse::<u16>().ok());
    let mut i = 0;
    while i < list.len() {
        let p = list[i];
        match num(p).unwrap_or(0) {
            0 => {
                pen.fg = Colour::Default;
                pen.bg = Colour::Default;
                pen.attrs = Modifier::empty();
            }
            1 => pen.attrs |= Modifier::BOLD,
            2 => pen.attrs |= Modifier::DIM,
            3 => pen.attrs |= Modifier::ITALIC,
            4 if p == "4:0" => pen.attrs -= Modifier::UNDERLINED,
            4 | 21 => pen.attrs |= Modifier::UNDERLINED,
            5 => pen.attrs |= Modifier::SLOW_BLINK,
            6 => pen.attrs |= Modifier::RAPID_BLINK,
            7 => pen.attrs |= Modifier::REVERSED,
            8 => pen.attrs |= Modifier::HIDDEN,
            9 => pen.attrs |= Modifier::CROSSED_OUT,
            22 => pen.attrs -= Modifier::BOLD | Modifier::DIM,
            23 => pen.attrs -= Modifier::ITALIC,
            24 => pen.attrs -= Modifier::UNDERLINED,
            25 => pen.attrs -= Modifier::SLOW_BLINK | Modifier::RAPID_BLINK,
            27 => pen.attrs -= Modifier::REVERSED,
            28 => pen.attrs -= Modifier::HIDDEN,
            29 => pen.attrs -= Modifier::CROSSED_OUT,
            n @ 30..=37 => pen.fg = Colour::Index((n - 30) as u8),
            n @ 40..=47 => pen.bg = Colour::Index((n - 40) as u8),
            n @ 90..=97 => pen.fg = Colour::Index((n - 90 + 8) as u8),
            n @ 100..=107 => pen.bg = Colour::Index((n - 100 + 8) as u8),
            39 => pen.fg = Colour::Default,
            49 => pen.bg = Colour::Default,
            n @ (38 | 48) => {
                let (colour, used) = extended(&list[i + 1..]);
                i += used;
                if n == 38 {
                    pen.fg = colour;
                } else {
                    pen.bg = colour;
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// `5;n` or `2;r;g;b` after 38/48: the colour and how many parameters it took.
fn extended(rest: &[&str]) -> (Colour, usize) {
    let n = |i: usize| rest.get(i).and_then(|s| s.parse::<u8>().ok()).unwrap_or(0);
    match rest.first() {
        Some(&"5") => (Colour::Index(n(1)), 2),
        Some(&"2") => (Colour::Rgb(n(1), n(2), n(3)), 4),
        _ => (Colour::Default, 0),
    }
}

/// The DEC special graphics set (VT100 User Guide, table 3-9: 0x5f–0x7e) in Unicode. tmux draws
/// five more (`+ , - . 0`, from terminfo's acsc) as arrows and a block; a VT100 and xterm show
/// those as themselves, and so does this reference.
fn dec_graphics(c: char) -> char {
    const TABLE: &str = " ◆▒␉␌␍␊°±␤␋┘┐┌└┼⎺⎻─⎼⎽├┤┴┬│≤≥π≠£·";
    match c {
        '_'..='~' => TABLE.chars().nth(c as usize - '_' as usize).unwrap_or(c),
        _ => c,
    }
}
