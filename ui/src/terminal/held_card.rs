//! The held-connection card of `lazaret run` (issue #17, `default = "ask"`): when the Network
//! Sidecar starts holding a connection or DNS name no rule decides, the run's terminal asks the
//! developer as it asks about an escalation — the card takes the terminal from the sandbox
//! session, says what waits and how long before it is refused, and reads `a` (allow for this
//! run), `d` (deny) or `i` / Esc (leave it held: `lazaret net allow|deny` or `lazaret tui`
//! decide it). Then the terminal goes back.
//!
//! The escalation card's safety ([`super::prompt`]): a clean screen, the card flushed and
//! input typed before it discarded, terminal-generated input never a key, a key counts only
//! after the [`super::guard::GUARD`] and alone; the sandbox chose the target and the protocol,
//! so both are shown escaped. One card at a time, never while an escalation prompt shows (the
//! gate's turn). A card closes by itself when its entry leaves the held list (decided
//! elsewhere, or refused for time), when its deadline passes, and when the run ends.
//!
//! `a` allows the narrow form — a destination's port, a name's addresses on tcp/443 only —
//! and `w` the wide form (every port), each said on the card with what it opens. Several
//! entries first held while no card could show (64 in a row invite consent fatigue) get **one
//! summary card** instead of a queue: the first [`MAX_LISTED`] listed escaped, how many more,
//! and `a` / `d` decide all shown.
//!
//! [`Card`] is the card, sans IO (its text, keys and end); [`HeldCards`] shows one on the
//! terminal for each destination (or batch of them) first held during the run. The decision is carried out by
//! the caller's [`Decider`] (the run's rules live in the engine).

use super::escape;
use super::gate::TerminalGate;
use super::guard::Guard;
use super::line_editor::{Key, KeyDecoder};
use super::prompt::{clean_screen, decides, DROPPED, TICK};
use lazaret_protocol::held::HeldEntry;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What the developer decides on a card.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Allow the target's narrow form for this run: `ADDR:PORT`, a name on tcp/443
    /// (`lazaret net allow TARGET`).
    Allow,
    /// Allow the wide form: every port of the address, or of the name's addresses
    /// (`lazaret net allow ADDR`, `lazaret net allow NAME --any-port`).
    AllowAnyPort,
    /// Refuse it for this run (`lazaret net deny TARGET`).
    Deny,
}

/// What a key on the card does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Decide(Choice),
    /// Close the card, the entry stays held (decided elsewhere, or refused for time).
    Leave,
}

/// Why a card closed without a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gone {
    /// The entry left the held list before its deadline: decided elsewhere.
    Elsewhere,
    /// Its deadline passed: the sidecar refuses it.
    TimedOut,
    /// The run is over.
    RunEnded,
}

/// What carrying out a choice did, in words for the card (Lazaret's; shown escaped anyway):
/// what was done, or why not.
pub type Outcome = Result<String, String>;

/// Carries out the developer's choice about a held entry (blocking: the card says it is
/// working meanwhile).
pub type Decider = Box<dyn Fn(&HeldEntry, Choice) -> Outcome + Send>;

/// The longest target shown (chars, before escaping): a DNS name is at most 253.
const MAX_TARGET: usize = 260;

/// The most entries a summary card lists (and decides); the rest are counted.
pub const MAX_LISTED: usize = 8;

/// The longest target a summary card's line shows (chars, before escaping).
const MAX_LISTED_TARGET: usize = 60;

/// The port a held name's narrow allow opens: a DNS query says no port, and HTTPS is what
/// nearly every name is asked for; another port is held (and asked) again.
pub const NAME_PORT: &str = "tcp/443";

/// How long the card's last line (the result) stays before the terminal goes back.
pub const RESULT_PAUSE: Duration = Duration::from_millis(1200);

/// The most destinations remembered as shown (a sandbox may try endlessly many): beyond it
/// only those still held are remembered.
const MAX_SHOWN: usize = 4096;

/// The closing line of a card whose decision is made or gone (`what`: "it" or "them").
fn settled(last: &Last, what: &str) -> String {
    match last {
        Last::Done(Ok(m)) => format!("→ \x1b[32m{}\x1b[0m", escape::visible(m)),
        Last::Done(Err(m)) => format!("→ \x1b[31m{}\x1b[0m", escape::visible(m)),
        Last::Gone(Gone::Elsewhere) => {
            "→ \x1b[33mno longer held: decided elsewhere\x1b[0m".to_owned()
        }
        Last::Gone(Gone::TimedOut) => format!(
            "→ \x1b[33mnobody answered in time: refused (lazaret net allow still opens \
             {what})\x1b[0m"
        ),
        Last::Gone(Gone::RunEnded) => "→ the run ended".to_owned(),
        Last::Menu | Last::Working(_) | Last::Left => String::new(),
    }
}

/// The card's last line.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Last {
    Menu,
    Working(Choice),
    Done(Outcome),
    Left,
    Gone(Gone),
}

/// A target as the card shows it: as it is when it is an address and port or a plain DNS
/// name (letters, digits, `. - _ : *`), else quoted with every control, invisible and
/// reordering character escaped; cut to [`MAX_TARGET`].
pub fn shown_target(target: &str) -> String {
    let cut: String = target.chars().take(MAX_TARGET).collect();
    let plain = !cut.is_empty()
        && cut
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':' | b'*'));
    let mut shown = if plain { cut } else { escape::quoted(&cut) };
    if target.chars().count() > MAX_TARGET {
        shown.push('…');
    }
    shown
}

fn shown_protocol(protocol: &str) -> String {
    escape::visible(&protocol.chars().take(8).collect::<String>())
}

/// Whether `a` and `b` are the same held destination or name.
fn same(a: &HeldEntry, b: &HeldEntry) -> bool {
    a.target == b.target && a.protocol == b.protocol
}

/// One held entry's card, or a summary of several (sans IO): its text at a time, its keys,
/// its end.
pub struct Card {
    /// The entries it decides (one, or up to [`MAX_LISTED`]), oldest first.
    entries: Vec<HeldEntry>,
    /// Entries held besides those listed (a summary card).
    more: usize,
    keys: KeyDecoder,
    guard: Guard,
    /// Whether the input still undecoded (a lone ESC: the Escape key once input pauses) came
    /// alone and admitted by the guard.
    pending_admitted: bool,
    hinted: bool,
    last: Last,
}

impl Card {
    /// The card of `entry`, shown at `shown` (the guard starts then).
    pub fn new(entry: HeldEntry, shown: Instant) -> Card {
        Card::summary(vec![entry], 0, shown)
    }

    /// One card for `entries` (at most [`MAX_LISTED`] kept; the rest counted in `more`).
    pub fn summary(mut entries: Vec<HeldEntry>, more: usize, shown: Instant) -> Card {
        let cut = entries.len().saturating_sub(MAX_LISTED);
        entries.truncate(MAX_LISTED);
        Card {
            entries,
            more: more + cut,
            keys: KeyDecoder::new(),
            guard: Guard::new(shown),
            pending_admitted: false,
            hinted: false,
            last: Last::Menu,
        }
    }

    /// The (first) entry as last seen in the held list.
    pub fn entry(&self) -> &HeldEntry {
        &self.entries[0]
    }

    /// Every entry the card decides, as last seen in the held list.
    pub fn entries(&self) -> &[HeldEntry] {
        &self.entries
    }

    /// The card is on the screen at `at` (flushed, earlier input discarded): the guard starts
    /// again.
    pub fn shown(&mut self, at: Instant) {
        self.guard.rearm(at);
    }

    /// Input read before the card was visible: decoded (a reply may straddle), never decisive.
    pub fn early(&mut self, bytes: &[u8]) {
        let _ = self.keys.feed(bytes);
        self.pending_admitted = false;
    }

    /// Input that arrived at `at`.
    pub fn input(&mut self, bytes: &[u8], at: Instant) -> Option<Action> {
        let admitted = self.guard.admit(at);
        let typed = self.keys.feed(bytes);
        self.pending_admitted = admitted && !typed.iter().any(Key::is_keypress);
        self.act(&typed, admitted)
    }

    /// No input for a moment: a lone ESC was the Escape key.
    pub fn pause(&mut self) -> Option<Action> {
        let typed = self.keys.flush();
        let admitted = std::mem::take(&mut self.pending_admitted);
        self.act(&typed, admitted)
    }

    fn act(&mut self, typed: &[Key], admitted: bool) -> Option<Action> {
        if self.last != Last::Menu {
            return None;
        }
        let may = decides(admitted, typed);
        for key in typed {
            let action = match key {
                Key::Char('a' | 'A') => Action::Decide(Choice::Allow),
                Key::Char('w' | 'W') => Action::Decide(Choice::AllowAnyPort),
                Key::Char('d' | 'D') => Action::Decide(Choice::Deny),
                Key::Char('i' | 'I') | Key::Escape | Key::Interrupt => Action::Leave,
                _ => continue,
            };
            if may {
                return Some(action);
            }
            self.hinted = true;
        }
        None
    }

    /// The held list now (`None`: unchanged since the last look) at `now_unix`: why the card
    /// closes by itself, if it does. A list still holding the entry refreshes it (its count).
    ///
    /// A summary card keeps the entries still held (and not past their deadline); it closes
    /// when none is left.
    pub fn check(&mut self, held: Option<&[HeldEntry]>, now_unix: u64) -> Option<Gone> {
        let last_deadline = self.entries.iter().map(|e| e.deadline).max().unwrap_or(0);
        if let Some(list) = held {
            let kept: Vec<HeldEntry> = self
                .entries
                .iter()
                .filter_map(|mine| list.iter().find(|e| same(e, mine)).cloned())
                .collect();
            if kept.is_empty() {
                return Some(if now_unix >= last_deadline {
                    Gone::TimedOut
                } else {
                    Gone::Elsewhere
                });
            }
            self.entries = kept;
        }
        self.entries.retain(|e| now_unix < e.deadline);
        self.entries.is_empty().then_some(Gone::TimedOut)
    }

    /// The choice is being carried out.
    pub fn working(&mut self, choice: Choice) {
        self.last = Last::Working(choice);
    }

    /// The choice was carried out (or not).
    pub fn done(&mut self, outcome: Outcome) {
        self.last = Last::Done(outcome);
    }

    /// The developer left it held.
    pub fn left(&mut self) {
        self.last = Last::Left;
    }

    /// It closed by itself.
    pub fn gone(&mut self, why: Gone) {
        self.last = Last::Gone(why);
    }

    /// The card at `now_unix` (Unix seconds), from its first row: everything the sandbox chose
    /// escaped.
    pub fn text(&self, now_unix: u64) -> String {
        if self.entries.len() > 1 || self.more > 0 {
            return self.summary_text(now_unix);
        }
        let e = &self.entries[0];
        let dns = e.protocol == "dns";
        let verb = if dns { "resolve" } else { "connect to" };
        let target = shown_target(&e.target);
        let protocol = shown_protocol(&e.protocol);
        let tries = match (dns, e.count) {
            (true, 1) => "1 query".to_owned(),
            (true, n) => format!("{n} queries"),
            (false, 1) => "1 attempt".to_owned(),
            (false, n) => format!("{n} attempts"),
        };
        let left = e.deadline.saturating_sub(now_unix);
        let waiting = matches!(self.last, Last::Menu | Last::Working(_));
        let countdown = if waiting {
            format!("│ refused in {left} s if nobody decides\r\n")
        } else {
            String::new()
        };
        let last = match &self.last {
            Last::Menu => MENU.to_owned(),
            Last::Working(Choice::Allow) => format!("allowing {target} …"),
            Last::Working(Choice::AllowAnyPort) => format!("allowing {target} on every port …"),
            Last::Working(Choice::Deny) => format!("refusing {target} …"),
            Last::Left => format!(
                "→ left waiting ({left} s left): `lazaret net allow|deny {target}` or \
                 lazaret tui decide it"
            ),
            Last::Done(_) | Last::Gone(_) => settled(&self.last, "it"),
        };
        let hint = if self.hinted && self.last == Last::Menu {
            DROPPED
        } else {
            ""
        };
        let (narrow, wide) = opens(e);
        format!(
            "\r\n\x1b[0m\x1b[1;33m┌─ lazaret: the sandbox is waiting to {verb} {target} \
             ({protocol})\x1b[0m\r\n\
             │ no network rule decides it (default = \"ask\"): held, {tries} so far\r\n\
             │ [a] allows {narrow}\r\n\
             │ [w] allows {wide}\r\n\
             {countdown}└─ {last}\r\n{hint}"
        )
    }
}

/// The single card's keys.
const MENU: &str = "\x1b[1m[a]\x1b[0m allow  \x1b[1m[w]\x1b[0m every port  \
     \x1b[1m[d]\x1b[0m deny  \x1b[1m[i]\x1b[0m leave it (lazaret net, lazaret tui)";

/// Where the cards are drawn.
pub trait Screen: Send {
    fn put(&mut self, text: &str);
    /// Waits until the terminal has shown what was written; discards input not read yet.
    fn settle(&mut self);
    fn rows(&self) -> u16;
}

/// The developer's terminal (stdout, stdin).
pub(super) struct Tty;

impl Screen for Tty {
    fn put(&mut self, text: &str) {
        super::prompt::put(text);
    }

    fn settle(&mut self) {
        super::prompt::settle();
    }

    fn rows(&self) -> u16 {
        super::prompt::rows()
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Shows a card on the run's terminal for each destination (or name) first held during the
/// run, one at a time; ends (closing the card shown) when dropped.
pub struct HeldCards {
    tx: Sender<Vec<HeldEntry>>,
    closed: Arc<AtomicBool>,
    worker: Option<std::thread::JoinHandle<()>>,
}

impl HeldCards {
    /// Cards on the developer's terminal behind `gate`; `decide` carries out their choices.
    pub fn start(gate: Arc<TerminalGate>, decide: Decider) -> HeldCards {
        HeldCards::start_on(gate, decide, Box::new(Tty), RESULT_PAUSE)
    }

    /// As [`Self::start`], drawn on `screen`, each result shown for `pause`.
    pub fn start_on(
        gate: Arc<TerminalGate>,
        decide: Decider,
        screen: Box<dyn Screen>,
        pause: Duration,
    ) -> HeldCards {
        let (tx, rx) = channel();
        let closed = Arc::new(AtomicBool::new(false));
        let worker = Worker {
            gate,
            decide,
            screen,
            pause,
            closed: closed.clone(),
            rx,
            held: Vec::new(),
            shown: HashSet::new(),
        };
        HeldCards {
            tx,
            closed,
            worker: Some(std::thread::spawn(move || worker.run())),
        }
    }

    /// Where the held lists go: the whole list each time it changes. Never blocks.
    pub fn sink(&self) -> impl Fn(Vec<HeldEntry>) + Send + Sync + 'static {
        let tx = self.tx.clone();
        move |entries| {
            let _ = tx.send(entries);
        }
    }
}

impl Drop for HeldCards {
    /// The run is over: the card shown closes (the terminal goes back first), no other comes.
    fn drop(&mut self) {
        self.closed.store(true, Ordering::SeqCst);
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// Nobody sends held lists any more.
struct Ended;

struct Worker {
    gate: Arc<TerminalGate>,
    decide: Decider,
    screen: Box<dyn Screen>,
    pause: Duration,
    closed: Arc<AtomicBool>,
    rx: Receiver<Vec<HeldEntry>>,
    /// The newest held list.
    held: Vec<HeldEntry>,
    /// The targets a card was shown for: never shown again in this run.
    shown: HashSet<String>,
}

impl Worker {
    fn closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Takes the newest list sent; whether it changed.
    fn latest(&mut self) -> Result<bool, Ended> {
        let mut changed = false;
        loop {
            match self.rx.try_recv() {
                Ok(list) => {
                    self.held = list;
                    changed = true;
                }
                Err(TryRecvError::Empty) => return Ok(changed),
                Err(TryRecvError::Disconnected) => return Err(Ended),
            }
        }
    }

    fn run(mut self) {
        loop {
            if self.closed() {
                return;
            }
            match self.rx.recv_timeout(TICK) {
                Ok(list) => self.held = list,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            if self.latest().is_err() {
                return;
            }
            let now = unix_now();
            let mut next: Vec<HeldEntry> = self
                .held
                .iter()
                .filter(|e| !self.shown.contains(&e.target) && now < e.deadline)
                .cloned()
                .collect();
            if next.is_empty() {
                continue;
            }
            next.sort_by_key(|e| e.since);
            if self.shown.len() + next.len() >= MAX_SHOWN {
                let held = &self.held;
                self.shown.retain(|t| held.iter().any(|e| e.target == *t));
            }
            // Every entry waiting now gets this one card (a summary when several): none is
            // queued for a card of its own.
            self.shown.extend(next.iter().map(|e| e.target.clone()));
            let more = next.len().saturating_sub(MAX_LISTED);
            next.truncate(MAX_LISTED);
            self.show(next, more);
        }
    }

    fn redraw(&mut self, card: &Card, drawn: &mut String) {
        let text = card.text(unix_now());
        if text != *drawn {
            self.screen.put(&format!("\x1b[H\x1b[J{text}"));
            *drawn = text;
        }
    }

    /// The result stays a moment (the program's redraw would cover it at once).
    fn linger(&self) {
        let until = Instant::now() + self.pause;
        while Instant::now() < until && !self.closed() {
            std::thread::sleep(TICK.min(self.pause));
        }
    }

    /// One card for `entries` (a summary when several; `more` held besides), once it is the
    /// card's turn and for those still held.
    fn show(&mut self, entries: Vec<HeldEntry>, more: usize) {
        let gate = self.gate.clone();
        let _turn = gate.turn();
        if self.latest().is_err() || self.closed() {
            return;
        }
        let now = unix_now();
        let entries: Vec<HeldEntry> = entries
            .iter()
            .filter_map(|mine| {
                self.held
                    .iter()
                    .find(|e| same(e, mine) && now < e.deadline)
                    .cloned()
            })
            .collect();
        let Some(first) = entries.first() else {
            return;
        };
        let target = escape::visible(&first.target);
        tracing::info!(%target, protocol = %escape::visible(&first.protocol), listed = entries.len(), more, "held destination shown on the run terminal");
        let mut owned = gate.take();
        // The terminal abandons any unfinished sequence (CLEAN starts with CAN): so does the
        // filter's view of it.
        owned.output.abort();
        let mut card = Card::summary(entries, more, Instant::now());
        let rows = self.screen.rows();
        self.screen.put(&clean_screen(rows));
        let mut drawn = card.text(now);
        self.screen.put(&drawn);
        self.screen.settle();
        while let Ok(bytes) = owned.keys.try_recv() {
            card.early(&bytes);
        }
        card.shown(Instant::now());
        let restore = owned.output.modes.restore();
        let action = loop {
            let gone = match self.latest() {
                _ if self.closed() => Some(Gone::RunEnded),
                Err(Ended) => Some(Gone::RunEnded),
                Ok(changed) => card.check(changed.then_some(&self.held[..]), unix_now()),
            };
            if let Some(why) = gone {
                card.gone(why);
                break None;
            }
            let act = match owned.keys.recv_timeout(TICK) {
                Ok(bytes) => card.input(&bytes, Instant::now()),
                Err(RecvTimeoutError::Timeout) => card.pause(),
                Err(RecvTimeoutError::Disconnected) => {
                    card.gone(Gone::RunEnded);
                    break None;
                }
            };
            if act.is_some() {
                break act;
            }
            self.redraw(&card, &mut drawn);
        };
        match action {
            Some(Action::Decide(choice)) => {
                card.working(choice);
                self.redraw(&card, &mut drawn);
                let outcome = decide_all(&self.decide, card.entries(), choice);
                tracing::info!(%target, ?choice, ok = outcome.is_ok(), "held destination decided on the run terminal");
                card.done(outcome);
            }
            Some(Action::Leave) => {
                tracing::info!(%target, "held destination left waiting on the run terminal");
                card.left();
            }
            None => {}
        }
        self.redraw(&card, &mut drawn);
        if !self.closed() {
            self.linger();
        }
        self.screen.put(&restore);
        drop(owned);
    }
}

#[path = "held_summary.rs"]
mod summary;
use summary::decide_all;
pub use summary::opens;

#[cfg(test)]
#[path = "held_card_tests.rs"]
mod tests;
