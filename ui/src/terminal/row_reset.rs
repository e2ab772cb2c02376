//! A workaround for alacritty_terminal 0.25's row reset after a resize (issue #19, found by
//! the `screen` fuzz target's read-cut check), used by the coordinator's session screen and
//! the TUI's pane emulator.
//!
//! alacritty resets only the cells a row marks as written — all of them when the row's last
//! cell differs from the new template. A row a resize widens gets default cells at its end,
//! which hides older cells of another background (an erase under a coloured background
//! before): they outlived the row's next reset (a scroll, an erase) and stayed on the screen
//! as coloured blanks — or not, depending on which rows alacritty recycled, that is on how the
//! program's output had been cut into reads.

use alacritty_terminal::grid::{Dimensions, Grid};
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::Cell;

/// After a resize: every row of `grid` (screen and history) counts as written to its last
/// column, so that its next reset clears every cell.
pub fn mark_rows_written(grid: &mut Grid<Cell>) {
    let Some(last) = grid.columns().checked_sub(1) else {
        return;
    };
    let top = -i32::try_from(grid.history_size()).unwrap_or(i32::MAX);
    let rows = i32::try_from(grid.screen_lines()).unwrap_or(i32::MAX);
    for l in top..rows {
        // A mutable index marks the row written up to that column.
        let _ = &mut grid[Line(l)][Column(last)];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alacritty_terminal::event::VoidListener;
    use alacritty_terminal::term::{Config, Term};
    use alacritty_terminal::vte::ansi::Processor;

    struct Size(usize, usize);

    impl Dimensions for Size {
        fn total_lines(&self) -> usize {
            self.0
        }
        fn screen_lines(&self) -> usize {
            self.0
        }
        fn columns(&self) -> usize {
            self.1
        }
    }

    /// Cells of `line` whose background is not the default.
    fn coloured(term: &Term<VoidListener>, line: i32) -> usize {
        let row = &term.grid()[Line(line)];
        (0..term.grid().columns())
            .filter(|&c| {
                row[Column(c)].bg
                    != alacritty_terminal::vte::ansi::Color::Named(
                        alacritty_terminal::vte::ansi::NamedColor::Background,
                    )
            })
            .count()
    }

    /// Erased under a cyan background, widened, then scrolled with the default background: the
    /// rows recycled at the bottom are blank, with no cyan left in them.
    #[test]
    fn a_widened_row_is_wholly_cleared_by_its_next_reset() {
        for fixed in [false, true] {
            // No history: a scroll recycles the top row at the bottom (as rows the emulator's
            // history gave back do in the session screen).
            let config = Config {
                scrolling_history: 0,
                ..Config::default()
            };
            let mut term = Term::new(config, &Size(4, 10), VoidListener);
            let mut parser: Processor = Processor::new();
            parser.advance(&mut term, b"\x1b[46m\x1b[2J\x1b[0m\x1b[H");
            term.resize(Size(4, 20));
            if fixed {
                mark_rows_written(term.grid_mut());
            }
            parser.advance(&mut term, b"\x1b[4;1H\n\n\n\n");
            let left: usize = (0..4).map(|l| coloured(&term, l)).sum();
            if fixed {
                assert_eq!(left, 0, "cyan cells outlived the reset");
            } else {
                // The workaround's reason: without it alacritty leaves them (if this starts
                // failing, alacritty fixed it and the workaround can go).
                assert!(left > 0, "alacritty cleared the widened rows itself");
            }
        }
    }
}
