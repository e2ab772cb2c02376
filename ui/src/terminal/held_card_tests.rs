//! The held-connection card of `lazaret run`: its text (every sandbox-chosen string escaped),
//! its keys (only after the guard, alone), its end (the entry decided elsewhere, its time
//! over), on an emulated screen, and the cards on a gate (one at a time, shared with
//! escalation prompts).

use super::*;
use crate::terminal::guard::GUARD;
use crate::terminal::recorded_screen::Recorded;
use crate::tui::emulator::Emulator;
use crate::tui::emulator_alacritty::AlacrittyEmulator;
use crate::tui::emulator_vt100::Vt100Emulator;
use std::sync::Mutex;

const MS: Duration = Duration::from_millis(1);
const ROWS: u16 = 24;
const COLS: u16 = 120;
const NOW: u64 = 1_000;

fn held(target: &str, protocol: &str, deadline: u64) -> HeldEntry {
    HeldEntry {
        target: target.into(),
        protocol: protocol.into(),
        since: NOW - 3,
        deadline,
        count: 3,
    }
}

/// What a terminal shows after `bytes`.
fn screen(bytes: &str) -> String {
    let mut emu = Vt100Emulator::new(ROWS, COLS, 1000);
    emu.process(bytes.as_bytes());
    emu.screen_text()
}

#[test]
fn the_card_says_what_waits_how_long_and_which_keys() {
    let t0 = Instant::now();
    let tcp = Card::new(held("203.0.113.7:443", "tcp", NOW + 42), t0);
    let text = screen(&tcp.text(NOW));
    for row in [
        "┌─ lazaret: the sandbox is waiting to connect to 203.0.113.7:443 (tcp)",
        "│ no network rule decides it (default = \"ask\"): held, 3 attempts so far",
        "│ refused in 42 s if nobody decides",
        "│ [a] allows port 443 of 203.0.113.7, TCP and UDP",
        "│ [w] allows every port of 203.0.113.7 (the wide form)",
        "└─ [a] allow  [w] every port  [d] deny  [i] leave it (lazaret net, lazaret tui)",
    ] {
        assert!(text.lines().any(|l| l == row), "{row:?} in\n{text}");
    }
    let mut dns = held("registry.example.org", "dns", NOW + 9);
    dns.count = 1;
    let text = screen(&Card::new(dns, t0).text(NOW));
    assert!(
        text.contains("waiting to resolve registry.example.org (dns)"),
        "{text}"
    );
    assert!(text.contains("held, 1 query so far"), "{text}");
    // What `a` opens for a name: its addresses on tcp/443, with the CDN caveat; `w` is wide.
    assert!(
        text.contains("│ [a] allows registry.example.org's current addresses on tcp/443 only"),
        "{text}"
    );
    assert!(text.contains("other names on them too"), "{text}");
    assert!(
        text.contains("│ [w] allows them on every port, TCP and UDP (the wide form)"),
        "{text}"
    );
    assert!(text.contains("refused in 9 s"), "{text}");
    // The countdown follows the clock.
    assert!(screen(&tcp.text(NOW + 40)).contains("refused in 2 s"));
}

#[test]
fn a_hostile_target_is_shown_escaped() {
    let hostile = "x\x1b[2J\x1b]52;c;aGk=\x07\r\nlazaret: allowed\u{202e}gro.\u{9b}1m.test";
    let card = Card::new(held(hostile, "d\x1bns\n", NOW + 30), Instant::now());
    let text = card.text(NOW);
    // No raw control or bidi character the sandbox chose reaches the terminal: the only ESCs
    // are the card's own SGR sequences.
    let without_sgr = text
        .replace("\x1b[0m", "")
        .replace("\x1b[1;33m", "")
        .replace("\x1b[1m", "");
    assert!(
        without_sgr
            .chars()
            .all(|c| c == '\r' || c == '\n' || (!c.is_control() && c != '\u{202e}')),
        "{text:?}"
    );
    assert!(
        text.contains(
            r#""x\u{1b}[2J\u{1b}]52;c;aGk=\u{7}\r\nlazaret: allowed\u{202e}gro.\u{9b}1m.test""#
        ),
        "{text}"
    );
    assert!(text.contains(r"(d\u{1b}ns\n)"), "{text}");
    // Quoted: its extent is unambiguous; a plain one is not.
    assert_eq!(shown_target("a.example-1.org"), "a.example-1.org");
    assert_eq!(shown_target("a b"), "\"a b\"");
    assert_eq!(shown_target("a\"b"), r#""a\"b""#);
    let long = shown_target(&"y".repeat(5000));
    assert!(long.chars().count() <= MAX_TARGET + 1 && long.ends_with('…'));
    // Its result line too (the decider's words may quote it).
    let mut card = card;
    card.done(Err(format!("`{hostile}`: not allowed")));
    let text = card.text(NOW);
    assert!(
        !text.contains("\x1b[2J") && !text.contains('\u{202e}'),
        "{text:?}"
    );
}

#[test]
fn only_a_key_after_the_guard_decides_and_alone() {
    let t0 = Instant::now();
    let card = || Card::new(held("203.0.113.7:443", "tcp", NOW + 60), t0);
    // Typed before the guard time: ignored, and the card says so.
    let mut c = card();
    assert_eq!(c.input(b"a", t0 + 100 * MS), None);
    assert!(screen(&c.text(NOW)).contains("a key came too soon"));
    // The early key restarted the guard: still too soon 250 ms later.
    assert_eq!(c.input(b"a", t0 + 350 * MS), None);
    assert_eq!(
        c.input(b"a", t0 + 700 * MS),
        Some(Action::Decide(Choice::Allow))
    );
    // Each key after a quiet guard time.
    let after = t0 + GUARD + 10 * MS;
    assert_eq!(
        card().input(b"d", after),
        Some(Action::Decide(Choice::Deny))
    );
    assert_eq!(card().input(b"i", after), Some(Action::Leave));
    assert_eq!(card().input(b"x", after), None);
    // A burst (a paste without brackets, a replay) is no decision; nor is a bracketed paste.
    assert_eq!(card().input(b"ad", after), None);
    assert_eq!(card().input(b"\x1b[200~a\x1b[201~", after), None);
    // A terminal's reply around a key does not hide it, and is no key itself.
    assert_eq!(
        card().input(b"\x1b[12;1Ra", after),
        Some(Action::Decide(Choice::Allow))
    );
    assert_eq!(card().input(b"\x1b]11;rgb:0/0/0\x07", after), None);
    // Input read before the card was visible never decides.
    let mut c = card();
    c.early(b"a");
    assert_eq!(c.pause(), None);
}

#[test]
fn escape_leaves_it_once_input_pauses() {
    let t0 = Instant::now();
    let after = t0 + GUARD + 10 * MS;
    let mut c = Card::new(held("203.0.113.7:443", "tcp", NOW + 60), t0);
    assert_eq!(c.input(b"\x1b", after), None);
    assert_eq!(c.pause(), Some(Action::Leave));
    // Too soon: not even Escape.
    let mut c = Card::new(held("203.0.113.7:443", "tcp", NOW + 60), t0);
    assert_eq!(c.input(b"\x1b", t0 + 10 * MS), None);
    assert_eq!(c.pause(), None);
    // An arrow key is no Escape.
    let mut c = Card::new(held("203.0.113.7:443", "tcp", NOW + 60), t0);
    assert_eq!(c.input(b"\x1b[A", after), None);
    assert_eq!(c.pause(), None);
}

#[test]
fn the_card_closes_when_its_entry_is_no_longer_held() {
    let t0 = Instant::now();
    let entry = held("203.0.113.7:443", "tcp", NOW + 60);
    let other = held("198.51.100.1:80", "tcp", NOW + 60);
    let mut c = Card::new(entry.clone(), t0);
    assert_eq!(c.check(None, NOW), None);
    // Still held, tried again: the count follows.
    let mut again = entry.clone();
    again.count = 5;
    assert_eq!(c.check(Some(&[other.clone(), again]), NOW + 1), None);
    assert!(c.text(NOW + 1).contains("5 attempts"));
    // Another entry of the same target but another protocol is not this one.
    let udp = held("203.0.113.7:443", "udp", NOW + 60);
    assert_eq!(
        c.check(Some(&[other.clone(), udp]), NOW + 2),
        Some(Gone::Elsewhere)
    );
    c.gone(Gone::Elsewhere);
    let text = screen(&c.text(NOW + 2));
    let last = text.lines().rfind(|l| !l.is_empty()).unwrap_or_default();
    assert_eq!(last, "└─ → no longer held: decided elsewhere", "{text}");
    assert!(!text.contains("refused in"), "{text}");
    // Its time over: closed, whether the list says so yet or not.
    let mut c = Card::new(entry.clone(), t0);
    assert_eq!(c.check(None, NOW + 60), Some(Gone::TimedOut));
    let mut c = Card::new(entry, t0);
    assert_eq!(c.check(Some(&[]), NOW + 61), Some(Gone::TimedOut));
    c.gone(Gone::TimedOut);
    assert!(screen(&c.text(NOW + 61)).contains("nobody answered in time: refused"));
    // No key decides on a closed card.
    assert_eq!(c.input(b"a", t0 + 10 * GUARD), None);
}

#[test]
fn the_result_is_the_cards_last_line() {
    let t0 = Instant::now();
    let mut c = Card::new(held("203.0.113.7:443", "tcp", NOW + 60), t0);
    c.working(Choice::Allow);
    assert!(screen(&c.text(NOW)).contains("└─ allowing 203.0.113.7:443 …"));
    c.done(Ok("allowed 203.0.113.7:443 for this run".into()));
    let text = screen(&c.text(NOW));
    let last = text.lines().rfind(|l| !l.is_empty()).unwrap_or_default();
    assert_eq!(last, "└─ → allowed 203.0.113.7:443 for this run", "{text}");
    let mut c = Card::new(held("203.0.113.7:443", "tcp", NOW + 60), t0);
    c.left();
    let text = screen(&c.text(NOW + 10));
    assert!(
        text.contains(
            "└─ → left waiting (50 s left): `lazaret net allow|deny 203.0.113.7:443` or lazaret \
             tui decide it"
        ),
        "{text}"
    );
}

/// A spoofed card, as the sandbox would print it.
const FAKE: &str =
    "\r\n┌─ lazaret: the sandbox is waiting to connect to 192.0.2.1:443 (tcp) FAKE\r\n\
└─ [a] allow for this run  [d] deny  [i] leave it\r\n";

#[test]
fn the_card_is_alone_on_the_screen_whatever_the_sandbox_set() {
    let fill: String = (0..ROWS).map(|i| format!("sandbox line {i}\r\n")).collect();
    let setups = [
        format!("{fill}{FAKE}\x1b[23;24r\x1b[24;1H"),
        format!("{fill}\x1b[?1049h{FAKE}"),
        format!("{fill}{FAKE}\x1b[?1049h{FAKE}\x1b[5;6r\x1b[?6h\x1b[?25l\x1b(0\x0e\x1b[4h\x1b]2;x"),
    ];
    let card = Card::new(held("203.0.113.7:443", "tcp", NOW + 30), Instant::now());
    for setup in setups {
        let emulators: Vec<(&str, Box<dyn Emulator>)> = vec![
            ("vt100", Box::new(Vt100Emulator::new(ROWS, COLS, 1000))),
            (
                "alacritty",
                Box::new(AlacrittyEmulator::new(ROWS, COLS, 1000)),
            ),
        ];
        for (name, mut emu) in emulators {
            emu.process(setup.as_bytes());
            emu.process(clean_screen(ROWS).as_bytes());
            emu.process(card.text(NOW).as_bytes());
            // A redraw (the countdown) replaces the card in place.
            emu.process(format!("\x1b[H\x1b[J{}", card.text(NOW + 1)).as_bytes());
            let text = emu.screen_text();
            assert!(
                !text.contains("FAKE") && !text.contains("sandbox line"),
                "{name}: {text}"
            );
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(
                lines.get(1).copied(),
                Some("┌─ lazaret: the sandbox is waiting to connect to 203.0.113.7:443 (tcp)"),
                "{name}: {text}"
            );
            assert_eq!(
                lines.get(5).copied(),
                Some("│ refused in 29 s if nobody decides"),
                "{name}: {text}"
            );
            assert_eq!(
                text.matches("┌─ lazaret").count(),
                1,
                "{name}: one card: {text}"
            );
            let modes = emu.modes();
            assert!(!modes.alt_screen && modes.cursor_visible && modes.bracketed_paste);
        }
    }
}

fn live(target: &str, secs: u64) -> HeldEntry {
    let now = unix_now();
    HeldEntry {
        target: target.into(),
        protocol: "tcp".into(),
        since: now,
        deadline: now + secs,
        count: 1,
    }
}

type Calls = Arc<Mutex<Vec<(String, Choice)>>>;

fn cards(gate: &Arc<TerminalGate>) -> (HeldCards, Recorded, Calls) {
    let screen = Recorded::default();
    let calls: Calls = Arc::default();
    let seen = calls.clone();
    let decide: Decider = Box::new(move |e: &HeldEntry, c: Choice| {
        if let Ok(mut v) = seen.lock() {
            v.push((e.target.clone(), c));
        }
        Ok(format!("allowed {} for this run", e.target))
    });
    let cards = HeldCards::start_on(gate.clone(), decide, Box::new(screen.clone()), 20 * MS);
    (cards, screen, calls)
}

#[test]
fn a_new_held_entry_gets_a_card_and_a_key_decides_it() {
    let gate = Arc::new(TerminalGate::default());
    let (cards, screen, calls) = cards(&gate);
    let sink = cards.sink();
    let entry = live("203.0.113.7:443", 60);
    sink(vec![entry.clone()]);
    screen.wait("the card", |s| {
        s.contains("waiting to connect to 203.0.113.7:443")
    });
    // The card owns the keys: a key at once is not a decision.
    assert!(gate.route_input(b"a"));
    std::thread::sleep(GUARD + 100 * MS);
    assert!(calls.lock().map(|c| c.is_empty()).unwrap_or(false));
    assert!(gate.route_input(b"a"));
    screen.wait("the result", |s| {
        s.contains("→ \x1b[32mallowed 203.0.113.7:443 for this run")
    });
    // The terminal goes back to the sandbox.
    let back = Instant::now() + Duration::from_secs(5);
    while gate.route_input(b"") && Instant::now() < back {
        std::thread::sleep(10 * MS);
    }
    assert!(!gate.route_input(b"x"), "the card kept the keys");
    assert_eq!(
        calls.lock().map(|c| c.clone()).unwrap_or_default(),
        vec![("203.0.113.7:443".to_owned(), Choice::Allow)]
    );
    // Shown once: the same target held again gets no second card; a new one does.
    let before = screen.text().matches("┌─ lazaret").count();
    sink(vec![entry.clone()]);
    sink(vec![entry, live("198.51.100.9:80", 60)]);
    screen.wait("the second card", |s| {
        s.contains("waiting to connect to 198.51.100.9:80")
    });
    assert_eq!(screen.text().matches("┌─ lazaret").count(), before + 1);
    // Decided elsewhere: it leaves the list, the card closes by itself.
    sink(vec![]);
    screen.wait("the card closed", |s| {
        s.contains("no longer held: decided elsewhere")
    });
    drop(cards);
    assert!(!gate.route_input(b"x"));
    assert_eq!(calls.lock().map(|c| c.len()).unwrap_or(0), 1);
}

#[test]
fn a_card_waits_for_an_escalation_prompt_and_closes_with_the_run() {
    let gate = Arc::new(TerminalGate::default());
    let (cards, screen, _) = cards(&gate);
    let sink = cards.sink();
    let turn = gate.turn();
    sink(vec![live("203.0.113.7:443", 60)]);
    std::thread::sleep(300 * MS);
    assert!(screen.text().is_empty(), "drawn during a prompt's turn");
    drop(turn);
    screen.wait("the card", |s| s.contains("203.0.113.7:443"));
    // The run ends with the card shown: it closes, the terminal goes back.
    drop(cards);
    assert!(screen.text().contains("→ the run ended"));
    assert!(!gate.route_input(b"x"));
}

#[test]
fn an_entry_decided_before_its_turn_gets_no_card() {
    let gate = Arc::new(TerminalGate::default());
    let (cards, screen, _) = cards(&gate);
    let sink = cards.sink();
    let turn = gate.turn();
    sink(vec![live("203.0.113.7:443", 60)]);
    std::thread::sleep(100 * MS);
    sink(vec![]);
    drop(turn);
    std::thread::sleep(300 * MS);
    assert!(screen.text().is_empty(), "{:?}", screen.text());
    // Nor does one whose time is over.
    sink(vec![live("198.51.100.9:80", 0)]);
    std::thread::sleep(300 * MS);
    assert!(screen.text().is_empty(), "{:?}", screen.text());
    drop(cards);
}

#[test]
fn w_is_the_wide_form_and_a_the_narrow_one() {
    let t0 = Instant::now();
    let mut c = Card::new(held("203.0.113.7:443", "tcp", NOW + 60), t0);
    assert_eq!(
        c.input(b"w", t0 + GUARD + MS),
        Some(Action::Decide(Choice::AllowAnyPort))
    );
    let mut c = Card::new(held("203.0.113.7:443", "tcp", NOW + 60), t0);
    assert_eq!(
        c.input(b"A", t0 + GUARD + MS),
        Some(Action::Decide(Choice::Allow)),
        "caps lock does not widen an allow"
    );
}

fn many(n: usize) -> Vec<HeldEntry> {
    (0..n)
        .map(|i| {
            let mut e = held(
                &format!("198.51.100.1:{}", 21000 + i),
                "tcp",
                NOW + 60 + i as u64,
            );
            e.since = NOW + i as u64;
            e
        })
        .collect()
}

#[test]
fn many_held_entries_make_one_bounded_summary_card() {
    let t0 = Instant::now();
    let mut entries = many(MAX_LISTED);
    // A hostile name among them: escaped and cut on its line.
    entries[1] = held(
        &format!("a\x1b]52;c;eA==\x07{}.test", "x".repeat(300)),
        "dns",
        NOW + 60,
    );
    let card = Card::summary(entries, 64 - MAX_LISTED, t0);
    let raw = card.text(NOW);
    assert!(!raw.contains("\x1b]52"), "{raw:?}");
    assert!(!raw.contains('\x07'), "{raw:?}");
    let text = screen(&raw);
    assert!(text.contains("waiting on 64 held destinations"), "{text}");
    assert!(text.contains("8 shown:"), "{text}");
    assert!(text.contains("│   198.51.100.1:21000 (tcp)"), "{text}");
    assert!(
        text.contains("56 more held — not decided here: `lazaret net held` lists them"),
        "{text}"
    );
    assert!(text.contains("[a] allow all shown"), "{text}");
    assert!(text.contains("the first is refused in 60 s"), "{text}");
    let rows = text.lines().filter(|l| !l.trim().is_empty()).count();
    assert!(rows <= 16, "bounded: {rows} rows\n{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    // More than MAX_LISTED given: the rest is counted, not listed.
    let card = Card::summary(many(20), 0, t0);
    assert_eq!(card.entries().len(), MAX_LISTED);
    assert!(screen(&card.text(NOW)).contains("12 more held"));
}

#[test]
fn a_summary_card_keeps_what_is_still_held_and_closes_when_nothing_is() {
    let t0 = Instant::now();
    let all = many(3);
    let mut card = Card::summary(all.clone(), 0, t0);
    assert_eq!(card.check(Some(&all[1..]), NOW), None);
    assert_eq!(card.entries().len(), 2);
    assert_eq!(card.check(Some(&[]), NOW), Some(Gone::Elsewhere));
    let mut card = Card::summary(all, 0, t0);
    assert_eq!(card.check(None, NOW + 1000), Some(Gone::TimedOut));
}

#[test]
fn a_flood_of_held_entries_gets_one_card_and_a_decides_all_shown() {
    let gate = Arc::new(TerminalGate::default());
    let (cards, screen, calls) = cards(&gate);
    let sink = cards.sink();
    // An escalation prompt has the terminal while 64 connections are held.
    let turn = gate.turn();
    let flood: Vec<HeldEntry> = (0..64)
        .map(|i| live(&format!("198.51.100.1:{}", 21000 + i), 60))
        .collect();
    sink(flood.clone());
    std::thread::sleep(300 * MS);
    drop(turn);
    screen.wait("the summary card", |s| {
        s.contains("waiting on 64 held destinations")
    });
    std::thread::sleep(GUARD + 100 * MS);
    assert!(gate.route_input(b"a"));
    screen.wait("the result", |s| s.contains("allowed 8 for this run"));
    let back = Instant::now() + Duration::from_secs(5);
    while gate.route_input(b"") && Instant::now() < back {
        std::thread::sleep(10 * MS);
    }
    assert_eq!(calls.lock().map(|c| c.len()).unwrap_or(0), MAX_LISTED);
    // None of the 64 gets a card of its own afterwards.
    sink(flood);
    std::thread::sleep(400 * MS);
    let text = screen.text();
    assert!(
        !text.contains("waiting to connect to"),
        "no card of its own: {text}"
    );
    assert_eq!(
        calls.lock().map(|c| c.len()).unwrap_or(0),
        MAX_LISTED,
        "nothing more decided"
    );
    drop(cards);
}
