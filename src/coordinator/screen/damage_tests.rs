//! A client fed damage updates shows what a client fed whole redraws shows: random output
//! (text, cursor moves, erases, inserts and deletes, styles, scroll regions, the alternate
//! screen, resizes) with an update after a random number of pieces, compared row by row with
//! a fresh redraw after every update.

use super::*;

use crate::test_rng::Rng;

const PIECES: &[&[u8]] = &[
    b"x",
    b"hello",
    b"\r\n",
    b"\x08",
    b"\r",
    b"\t",
    b"\x1b[K",
    b"\x1b[1K",
    b"\x1b[2K",
    b"\x1b[J",
    b"\x1b[1J",
    b"\x1b[2J",
    b"\x1b[3@",
    b"\x1b[2P",
    b"\x1b[4X",
    b"\x1b[L",
    b"\x1b[2M",
    b"\x1b[S",
    b"\x1b[T",
    b"\x1b[31;1m",
    b"\x1b[0m",
    b"\x1b[7m",
    b"\x1b[44m",
    b"\x1b[3;6r",
    b"\x1b[r",
    b"\x1bM",
    b"\x1bD",
    b"\x1b[?1049h",
    b"\x1b[?1049l",
    b"\x1b[?7l",
    b"\x1b[?7h",
    b"\x1b[?25l",
    b"\x1b[?25h",
    b"\x1b[?1h",
    b"\x1b[?1l",
    b"\x1b[?2004h",
    b"\x1b[4h",
    b"\x1b[4l",
    b"\x1b[5 q",
    b"\x1b[0 q",
    b"\xe4\xb8\xad",
    b"e\xcc\x81",
    b"\x1b7",
    b"\x1b8",
];

fn random_output(rng: &mut Rng, rows: u16, cols: u16) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..1 + rng.below(6) {
        match rng.below(4) {
            0 => {
                let (r, c) = (
                    1 + rng.below(u64::from(rows) + 1),
                    1 + rng.below(u64::from(cols) + 2),
                );
                out.extend_from_slice(format!("\x1b[{r};{c}H").as_bytes());
            }
            1 => {
                let n = rng.below(u64::from(cols) * 2);
                out.extend((0..n).map(|i| b'a' + (i % 26) as u8));
            }
            _ => out.extend_from_slice(PIECES[rng.below(PIECES.len() as u64) as usize]),
        }
    }
    out
}

fn rows_of(s: &SessionScreen) -> Vec<String> {
    s.snapshot(0).lines.into_iter().map(|l| l.text).collect()
}

#[test]
fn damage_updates_show_what_redraws_show() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut partial_updates = 0;
    for case in 0..300 {
        let (mut rows, mut cols) = (4 + rng.below(8) as u16, 8 + rng.below(30) as u16);
        let mut session = SessionScreen::new(rows, cols, 100);
        let mut client = SessionScreen::new(rows, cols, 100);
        client.process(&session.snapshot(0).to_ansi());
        let mut shown = session.generation();
        for step in 0..60 {
            if rng.below(25) == 0 {
                rows = 4 + rng.below(8) as u16;
                cols = 8 + rng.below(30) as u16;
                session.resize(rows, cols);
                client.resize(rows, cols);
            } else {
                session.process(&random_output(&mut rng, rows, cols));
            }
            if rng.below(3) != 0 {
                continue;
            }
            let update = match session.changes_since(shown) {
                Changes::None => Vec::new(),
                Changes::Rows(changed) => {
                    partial_updates += 1;
                    session.damage(&changed).to_ansi()
                }
                Changes::Full => session.snapshot(0).to_ansi(),
            };
            client.process(&update);
            shown = session.generation();
            let mut fresh = SessionScreen::new(rows, cols, 100);
            fresh.process(&session.snapshot(0).to_ansi());
            assert_eq!(
                rows_of(&client),
                rows_of(&fresh),
                "case {case}, step {step}"
            );
            let (c, f) = (client.snapshot(0), fresh.snapshot(0));
            assert_eq!(c.cursor, f.cursor, "case {case}, step {step}");
            assert_eq!(c.modes, f.modes, "case {case}, step {step}");
        }
    }
    // The cases exercise the row updates, not only whole redraws.
    assert!(partial_updates > 1000, "{partial_updates} partial updates");
}

#[test]
fn a_keys_echo_is_one_row() {
    let mut session = SessionScreen::new(24, 80, 100);
    session.process(b"$ ");
    let shown = session.generation();
    session.process(b"l");
    assert_eq!(session.changes_since(shown), Changes::Rows(vec![0]));
    let update = session.damage(&[0]).to_ansi();
    assert!(update.len() < 300, "{} bytes", update.len());
    // A line feed at the bottom scrolls: everything.
    session.process(b"\x1b[24;1H\r\n");
    assert_eq!(session.changes_since(shown), Changes::Full);
}
