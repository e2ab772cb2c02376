//! Terminal conformance against a reference nobody here wrote (issue #16, FR-8): vttest's screens
//! as a `lazaret tui` pane shows them, compared cell by cell with tmux's rendering of the same
//! output at the same size (80×24).
//!
//! The fixtures (`fixtures/`, made by `record`) hold vttest's output byte for byte and tmux's
//! screen after each step. Each test replays one walk through the chain a pane uses (see
//! [`chain`]) — once with one screen update per step and once with an update after every 61
//! bytes read (cutting sequences apart) — and compares every checkpoint's screen with tmux's:
//! characters, colours, attributes, cursor. Every difference must be listed, with its cell
//! count, in `explained.txt`, whose comments say why it is right or tolerated; a new
//! difference, or a listed one that is gone, fails the test. `VTTEST_DIRECT=1` also prints the
//! differences of the pane's emulator fed the program's bytes directly (where a difference
//! comes from).

mod chain;
mod fixture;
mod grid;
mod live;
mod reference;

use std::collections::BTreeSet;
use std::fmt::Write;

/// Reads per screen update in the second replay: small and odd, so that updates fall inside
/// escape sequences and rows.
const SMALL_READ: usize = 61;

/// `FIXTURE CHECKPOINT KIND CELLS` lines of `explained.txt` for `name`.
fn explained(name: &str) -> BTreeSet<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vttest/explained.txt");
    std::fs::read_to_string(path)
        .expect("explained.txt")
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| l.split_whitespace().next() == Some(name))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// Replays fixture `name` with reads of `chunk` bytes (0: one per step); returns the
/// differences as `explained.txt` lines and a description of each differing screen.
fn replay(name: &str, chunk: usize, direct: bool) -> (BTreeSet<String>, String) {
    let fx = fixture::load(name);
    let mut chain = chain::Chain::new(fixture::ROWS, fixture::COLS);
    let mut found = BTreeSet::new();
    let mut report = String::new();
    let mut at = 0;
    for (n, cp) in fx.checkpoints.iter().enumerate() {
        let step = &fx.bytes[at..cp.offset];
        // The recorded program got tmux's answers already: the coordinator's are dropped.
        let _ = chain.feed(step, if chunk == 0 { step.len() } else { chunk });
        at = cp.offset;
        let got = if direct { chain.direct() } else { chain.pane() };
        let kinds = grid::differences(&cp.screen, &got);
        for (kind, cells) in &kinds {
            found.insert(format!("{name} {n} {kind} {cells}"));
        }
        if !kinds.is_empty() {
            let _ = writeln!(
                report,
                "{name} checkpoint {n} (after '{}'): {kinds:?}\n{}\ntmux:\n{}\npane:\n{}\n",
                cp.step,
                grid::describe(&cp.screen, &got, 12),
                cp.screen.text(),
                got.text()
            );
        }
    }
    (found, report)
}

fn check(name: &str) {
    let want = explained(name);
    if std::env::var_os("VTTEST_DIRECT").is_some() {
        let (direct, _) = replay(name, 0, true);
        eprintln!("{name}, emulator fed directly:\n{}", lines(&direct));
    }
    for chunk in [0, SMALL_READ] {
        let (found, report) = replay(name, chunk, false);
        let new: BTreeSet<_> = found.difference(&want).cloned().collect();
        let gone: BTreeSet<_> = want.difference(&found).cloned().collect();
        assert!(
            new.is_empty() && gone.is_empty(),
            "{name} (reads of {chunk} bytes, 0: one per step): differences from tmux not in \
             explained.txt:\n{}\nlisted there but not found:\n{}\nall found:\n{}\n{report}",
            lines(&new),
            lines(&gone),
            lines(&found),
        );
    }
}

fn lines(set: &BTreeSet<String>) -> String {
    set.iter().map(|l| format!("  {l}\n")).collect()
}

#[test]
fn menu_1_cursor_movements() {
    check("menu1");
}

#[test]
fn menu_2_screen_features() {
    check("menu2");
}

#[test]
fn menu_3_character_sets() {
    check("menu3");
}

#[test]
fn menu_6_terminal_reports_as_tmux_answered_them() {
    check("menu6");
}

#[test]
fn menu_8_insert_delete() {
    check("menu8");
}

#[test]
fn menu_11_6_iso_6429_colours() {
    check("menu11-colors");
}

#[test]
fn menu_11_8_7_xterm_alternate_screen() {
    check("menu11-xterm");
}
