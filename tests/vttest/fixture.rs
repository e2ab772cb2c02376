//! A recorded vttest walk (`record`): the program's output byte for byte (`NAME.bytes`) and,
//! for each step, how far into the output it ends and tmux's screen then (`NAME.screens`: a
//! header line `@ OFFSET CURSOR_ROW CURSOR_COL CURSOR_SHOWN ALT_SCREEN STEP`, then the rows).

use super::grid::Screen;
use super::reference;
use std::path::PathBuf;

pub const ROWS: u16 = 24;
pub const COLS: u16 = 80;

pub struct Checkpoint {
    /// The output up to here belongs to this step.
    pub offset: usize,
    /// The keys sent (`start`: vttest's main menu).
    pub step: String,
    /// tmux's screen.
    pub screen: Screen,
}

pub struct Fixture {
    pub bytes: Vec<u8>,
    pub checkpoints: Vec<Checkpoint>,
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vttest/fixtures")
}

pub fn load(name: &str) -> Fixture {
    let bytes = std::fs::read(dir().join(format!("{name}.bytes"))).expect("fixture bytes");
    let text =
        std::fs::read_to_string(dir().join(format!("{name}.screens"))).expect("fixture screens");
    let lines: Vec<&str> = text.split('\n').collect();
    let mut checkpoints = Vec::new();
    let mut i = lines
        .iter()
        .position(|l| l.starts_with("@ "))
        .expect("a checkpoint");
    while i < lines.len() && lines[i].starts_with("@ ") {
        let head: Vec<&str> = lines[i].splitn(7, ' ').collect();
        let n = |k: usize| {
            head[k]
                .parse::<usize>()
                .expect("a number in a checkpoint header")
        };
        let cursor = (n(4) == 1).then(|| (n(2) as u16, n(3) as u16));
        let rows = &lines[i + 1..i + 1 + usize::from(ROWS)];
        checkpoints.push(Checkpoint {
            offset: n(1),
            step: head[6].to_owned(),
            screen: reference::parse(rows, usize::from(COLS), cursor),
        });
        i += 1 + usize::from(ROWS);
    }
    assert!(checkpoints.last().is_some_and(|c| c.offset <= bytes.len()));
    Fixture { bytes, checkpoints }
}
