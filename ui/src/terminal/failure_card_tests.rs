//! The Domain-failure card of `lazaret run`: its text (the failure escaped, the countdown), and
//! the cards on a gate (new failures only, once each; closed by a key after the guard or by
//! time; one at a time with escalation prompts; closed with the run).

use super::*;
use crate::terminal::guard::GUARD;
use crate::terminal::recorded_screen::Recorded;
use crate::tui::emulator::Emulator;
use crate::tui::emulator_vt100::Vt100Emulator;

const MS: Duration = Duration::from_millis(1);
const ROWS: u16 = 24;

fn screen(bytes: &str) -> String {
    let mut emu = Vt100Emulator::new(ROWS, 140, 1000);
    emu.process(bytes.as_bytes());
    emu.screen_text()
}

const SIDECAR: &str = "the Network Sidecar exited (status 137): the sandbox has no network";

#[test]
fn the_card_says_the_failure_that_the_command_goes_on_and_how_to_go_back() {
    let text = screen(&card_text(SIDECAR, Some(Duration::from_millis(7500))));
    for row in [
        "┌─ lazaret: the Domain reports a failure while your command runs",
        "│ the Network Sidecar exited (status 137): the sandbox has no network",
        "│ the command goes on; `lazaret ps` lists the failure, and this run repeats it at its end",
        "└─ any key goes back to the session (by itself in 8 s)",
    ] {
        assert!(text.lines().any(|l| l == row), "{row:?} in\n{text}");
    }
    assert!(screen(&card_text(SIDECAR, Some(2 * SEC))).contains("by itself in 2 s"));
    // Closed: the card stays until the program draws over it, its last line says so.
    let closed = screen(&card_text(SIDECAR, None));
    assert!(
        closed.lines().any(|l| l == "└─ back to the session"),
        "{closed}"
    );
}

const SEC: Duration = Duration::from_secs(1);

#[test]
fn a_hostile_failure_text_is_shown_escaped() {
    let hostile = "podman: \x1b[2J\x1b]52;c;aGk=\x07\r\nlazaret: all fine\u{202e}";
    let text = card_text(hostile, Some(SEC));
    let without_sgr = text.replace("\x1b[0m", "").replace("\x1b[1;31m", "");
    assert!(
        without_sgr
            .chars()
            .all(|c| c == '\r' || c == '\n' || (!c.is_control() && c != '\u{202e}')),
        "{text:?}"
    );
    assert!(!screen(&text).lines().any(|l| l == "lazaret: all fine"));
}

/// Cards shown: each starts by cleaning the screen (CLEAN begins with CAN).
fn shown(text: &str) -> usize {
    text.matches('\x18').count()
}

/// Waits until the card gave the terminal back (keys go to the sandbox again).
fn wait_back(gate: &TerminalGate, within: Duration) -> bool {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if !gate.route_input(b"") {
            return true;
        }
        std::thread::sleep(10 * MS);
    }
    false
}

#[test]
fn a_new_failure_gets_one_card_that_a_key_after_the_guard_closes() {
    let gate = Arc::new(TerminalGate::default());
    let screen = Recorded::default();
    let known = vec!["an old failure".to_owned()];
    let cards = FailureCards::start_on(
        gate.clone(),
        &known,
        Box::new(screen.clone()),
        Duration::from_secs(30),
    );
    let sink = cards.sink();
    sink(known.clone());
    std::thread::sleep(200 * MS);
    assert_eq!(
        shown(&screen.text()),
        0,
        "a failure known at start: {:?}",
        screen.text()
    );
    sink(vec![known[0].clone(), SIDECAR.to_owned()]);
    screen.wait("the card", |s| shown(s) == 1);
    assert!(screen.text().contains(SIDECAR));
    // The card owns the keys; one right away (typed for the session) does not close it.
    assert!(gate.route_input(b"x"));
    assert!(!wait_back(&gate, GUARD));
    std::thread::sleep(GUARD);
    assert!(gate.route_input(b"q"));
    assert!(
        wait_back(&gate, Duration::from_secs(2)),
        "the key did not close it"
    );
    // Shown once: listed again, no second card.
    sink(vec![SIDECAR.to_owned()]);
    std::thread::sleep(300 * MS);
    assert_eq!(shown(&screen.text()), 1);
    drop(cards);
    assert!(!gate.route_input(b"x"));
}

#[test]
fn a_card_closes_by_itself_and_waits_for_a_prompts_turn() {
    let gate = Arc::new(TerminalGate::default());
    let screen = Recorded::default();
    let cards = FailureCards::start_on(gate.clone(), &[], Box::new(screen.clone()), 300 * MS);
    let sink = cards.sink();
    let turn = gate.turn();
    sink(vec![SIDECAR.to_owned()]);
    std::thread::sleep(300 * MS);
    assert_eq!(shown(&screen.text()), 0, "drawn during a prompt's turn");
    drop(turn);
    screen.wait("the card", |s| shown(s) == 1);
    let opened = Instant::now();
    assert!(wait_back(&gate, Duration::from_secs(3)), "it stayed");
    assert!(
        opened.elapsed() >= 250 * MS,
        "closed after {:?}",
        opened.elapsed()
    );
    // A second failure later: its own card; the run ends with it shown: closed at once.
    let cards = FailureCards::start_on(gate.clone(), &[], Box::new(screen.clone()), 60 * SEC);
    cards.sink()(vec!["this Domain's state takes 40 MiB".to_owned()]);
    screen.wait("the second card", |s| shown(s) == 2);
    let ended = Instant::now();
    drop(cards);
    assert!(
        ended.elapsed() < SEC,
        "the run's end waited {:?}",
        ended.elapsed()
    );
    assert!(!gate.route_input(b"x"));
}
