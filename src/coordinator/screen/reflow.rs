//! Resize reflow anchored at the top of the screen, as tmux does.
//!
//! alacritty's reflow keeps the bottom row fixed: when narrowing re-wraps a line into more rows,
//! the rows above are pushed into the emulator's history even when the screen has empty rows
//! below the cursor. tmux keeps them on screen while they fit and only pushes rows into the
//! history when the content no longer does. [`keep_on_screen`] turns the first into the second
//! after alacritty's resize.

use std::mem;

use alacritty_terminal::grid::{Dimensions, Grid};
use alacritty_terminal::index::Line;
use alacritty_terminal::term::cell::Cell;

/// Called on the active grid just after alacritty's resize, while its history holds only the
/// rows that resize pushed off the top: moves the newest of them back onto the screen, as many
/// as there are empty rows below the cursor, the content and the cursors moving down with them.
/// Returns how many rows came back; the newest that many history rows are then the empty rows
/// that left the bottom of the screen, to be dropped, not kept.
pub fn keep_on_screen(grid: &mut Grid<Cell>) -> usize {
    let rows = grid.screen_lines();
    let cursor = usize::try_from(grid.cursor.point.line.0).unwrap_or(0);
    let empty_below = (cursor.saturating_add(1)..rows)
        .rev()
        .take_while(|&r| grid[line(r)].is_clear())
        .count();
    let back = grid.history_size().min(empty_below);
    if back == 0 {
        return 0;
    }
    // Rotates the rows from `-back` to the bottom down by `back`: from the bottom up, each row
    // takes the one `back` rows above it, which takes the (empty) row it had.
    for r in (0..rows).rev() {
        let above = line(r) - back;
        let moved = mem::take(&mut grid[above]);
        let empty = mem::replace(&mut grid[line(r)], moved);
        grid[above] = empty;
    }
    let last = line(rows - 1);
    grid.cursor.point.line = (grid.cursor.point.line + back).min(last);
    grid.saved_cursor.point.line = (grid.saved_cursor.point.line + back).min(last);
    back
}

fn line(row: usize) -> Line {
    Line(i32::try_from(row).unwrap_or(i32::MAX))
}
