//! The escalation prompt of `lazaret run` (FR-5, DX-4): takes the developer's terminal from the
//! sandbox session, shows who asks to run what where and why — every sandbox-chosen string
//! escaped — and reads approve, edit or deny from the keyboard. Then the terminal goes back.
//!
//! Only a real keypress decides (docs/escalation.md, "The approval prompt"):
//! - the card is drawn on a clean screen: whatever sequence the sandbox left unfinished is
//!   abandoned (CAN, ST), the alternate screen left, and every mode that could hide or disguise
//!   the card reset ([`CLEAN`]); the sandbox's screen scrolls into the history, so no spoofed
//!   card stays next to the real one;
//! - the card is flushed to the terminal (`tcdrain`) and input typed before it was visible is
//!   discarded (`tcflush`, and what was already read);
//! - terminal-generated input (replies, mouse, focus, pastes) never decodes as a key
//!   ([`KeyDecoder`]), and a decision key counts only after the input was quiet for the
//!   [`GUARD`] and when it arrives alone;
//! - afterwards the sandbox gets its modes back and its program is asked to redraw.

use super::card_text;
use super::escape;
use super::gate::TerminalGate;
use super::guard::Guard;
pub use super::guard::GUARD;
use super::line_editor::{self, Edit, Key, KeyDecoder, LineEditor, Rendered};
use lazaret_client::prompts::{Prompter, Withdrawal};
use lazaret_protocol::escalation::{Decision, EscalationPrompt};
use std::io::Write;
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) const TICK: Duration = Duration::from_millis(50);
const EDIT_PREFIX: &str = "  edit> ";

/// Before the card: abandon any unfinished sequence (CAN, then ST: tmux's DCS passthrough
/// `ESC Ptmux;` takes CAN as content and ends only at `ESC \`); leave the alternate screen (its
/// DECRC may restore the sandbox's saved modes, so it comes first); full-screen scroll
/// region; origin mode off; autowrap on; insert mode off; reverse video off; cursor visible;
/// G0 and G1 ASCII with G0 active (no DEC line-drawing letters); SGR reset; mouse and focus
/// reports off; bracketed paste on (a paste is never a keypress).
pub const CLEAN: &str = "\x18\x1b\\\x1b[?1049l\x1b[r\x1b[?6l\x1b[?7h\x1b[4l\x1b[?5l\x1b[?25h\
\x1b(B\x1b)B\x0f\x1b[0m\x1b[?9l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1004l\x1b[?2004h";

/// [`CLEAN`], then the whole screen scrolled into the history (the card then starts at the
/// top of an empty screen of `rows` rows).
pub fn clean_screen(rows: u16) -> String {
    let rows = rows.max(1);
    format!(
        "{CLEAN}\x1b[{rows};1H{}\x1b[H",
        "\n".repeat(usize::from(rows))
    )
}

pub(super) const DROPPED: &str =
    "  \x1b[2m(a key came too soon after the card or other input and was \
ignored: look, then press it again)\x1b[0m\r\n";

pub struct TerminalPrompter {
    /// The terminal, and the turn shared with held-connection cards ([`super::held_card`]):
    /// one prompt or card on it at a time.
    gate: Arc<TerminalGate>,
}

impl TerminalPrompter {
    pub fn new(gate: Arc<TerminalGate>) -> TerminalPrompter {
        TerminalPrompter { gate }
    }
}

/// Where the prompt is.
enum Mode {
    Menu,
    Editing { editor: LineEditor, shown: Rendered },
}

/// Writes to the terminal; the prompt cannot do anything about a failing terminal, and the
/// decision must still be made, so errors are ignored.
pub(super) fn put(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn cols() -> u16 {
    crossterm::terminal::size().map(|(c, _)| c).unwrap_or(80)
}

pub(super) fn rows() -> u16 {
    crossterm::terminal::size().map(|(_, r)| r).unwrap_or(24)
}

/// Waits until the terminal has read everything written (the card is on the screen), then
/// discards input the kernel holds that nobody read yet.
pub(super) fn settle() {
    let _ = nix::sys::termios::tcdrain(std::io::stdout());
    let _ = nix::sys::termios::tcflush(std::io::stdin(), nix::sys::termios::FlushArg::TCIFLUSH);
}

/// Columns of a card line before its text (`│ program  `).
const LABEL_COLS: u16 = 11;

/// The card: everything the developer needs to decide (DX-4), bounded to fit an 80×24
/// terminal whatever the sandbox sent ([`card_text`]): warnings first, the program and the
/// argument count, each field cut to a head and a tail unless `full`.
pub fn card(p: &EscalationPrompt, cols: u16, full: bool) -> String {
    let session: String = p.session_id.chars().take(12).collect();
    let width = usize::from(cols.saturating_sub(LABEL_COLS));
    let mut body = String::new();
    for f in card_text::fields(p, width, full) {
        let (on, off) = match (f.warning, f.label) {
            (true, _) => ("\x1b[1;31m", "\x1b[0m"),
            (false, "command") => ("\x1b[1m", "\x1b[0m"),
            _ => ("", ""),
        };
        body.push_str(&format!("│ {:<8} {on}{}{off}\r\n", f.label, f.text));
    }
    format!(
        "\r\n\x1b[0m\x1b[1;33m┌─ lazaret: the sandbox asks to run a command on the host\x1b[0m\r\n\
         {body}\
         │ profile  {profile}   session {session}   request {id}\r\n\
         └─ {menu}\r\n",
        profile = escape::visible(&p.profile),
        id = escape::visible(p.request_id.get(..8).unwrap_or(&p.request_id)),
        menu = menu(p.timeout_secs, card_text::is_cut(p, width) && !full),
    )
}

fn menu(timeout_secs: u32, cut: bool) -> String {
    let all = if cut {
        "  \x1b[1m[v]\x1b[0m show all"
    } else {
        ""
    };
    format!(
        "\x1b[1m[a]\x1b[0m approve  \x1b[1m[e]\x1b[0m edit  \x1b[1m[d]\x1b[0m deny{all}   \
         (times out in {timeout_secs} s)"
    )
}

/// Draws `r` where the previous render (whose cursor was on row `prev_row`) was.
fn redraw(prev_row: u16, r: &Rendered) {
    let mut s = String::new();
    if prev_row > 0 {
        s.push_str(&format!("\x1b[{prev_row}A"));
    }
    s.push_str("\r\x1b[J");
    s.push_str(&r.text);
    let last = r.rows.saturating_sub(1);
    if r.cursor_row > last {
        s.push_str("\r\n");
    } else if last > r.cursor_row {
        s.push_str(&format!("\x1b[{}A", last - r.cursor_row));
    }
    s.push('\r');
    if r.cursor_col > 0 {
        s.push_str(&format!("\x1b[{}C", r.cursor_col));
    }
    put(&s);
}

fn start_editing(argv: &[String]) -> Mode {
    let editor = LineEditor::new(&line_editor::join(argv));
    let shown = editor.render(EDIT_PREFIX, cols());
    put("  Edit the command (shell-style quoting; Enter runs it, Esc goes back):\r\n");
    redraw(0, &shown);
    Mode::Editing { editor, shown }
}

/// One key in the menu: a decision, or a new mode.
fn menu_key(key: &Key, p: &EscalationPrompt) -> Option<Result<Decision, Mode>> {
    match key {
        Key::Char('a' | 'A' | 'y' | 'Y') => Some(Ok(Decision::Approve {})),
        Key::Char('d' | 'D' | 'n' | 'N') | Key::Interrupt => Some(Ok(Decision::Deny {})),
        Key::Char('e' | 'E') => Some(Err(start_editing(&p.argv))),
        Key::Char('v' | 'V') => {
            // Everything, uncut; then the menu again. Not a decision: no guard needed.
            put(&card(p, cols(), true));
            None
        }
        _ => None,
    }
}

/// One key while editing: a decision, or stay (possibly back in the menu).
fn edit_key(
    key: &Key,
    editor: &mut LineEditor,
    shown: &mut Rendered,
    p: &EscalationPrompt,
) -> Option<Result<Decision, ()>> {
    match editor.apply(key) {
        Edit::Continue => {
            let next = editor.render(EDIT_PREFIX, cols());
            redraw(shown.cursor_row, &next);
            *shown = next;
            None
        }
        Edit::Cancel => {
            put(&format!("\r\n  └─ {}\r\n", menu(p.timeout_secs, false)));
            Some(Err(()))
        }
        Edit::Submit => {
            let parsed = line_editor::split(&editor.text()).and_then(|argv| {
                let d = Decision::Edit { argv };
                d.validate().map(|_| d).map_err(|e| e.to_string())
            });
            match parsed {
                Ok(d) => Some(Ok(d)),
                Err(e) => {
                    put(&format!("\r\n  \x1b[31m{}\x1b[0m\r\n", escape::visible(&e)));
                    let next = editor.render(EDIT_PREFIX, cols());
                    redraw(0, &next);
                    *shown = next;
                    None
                }
            }
        }
    }
}

fn summary(d: &Decision) -> String {
    match d {
        Decision::Approve {} => "\x1b[32mapproved\x1b[0m".to_owned(),
        Decision::Edit { argv } => {
            format!("\x1b[32mapproved, edited:\x1b[0m {}", escape::argv(argv))
        }
        Decision::Deny {} => "\x1b[31mdenied\x1b[0m".to_owned(),
    }
}

/// Longest withdrawal reason shown (chars, before escaping): one line of a wide terminal.
const MAX_REASON: usize = 200;

/// The line that closes a withdrawn card: why it was withdrawn (the coordinator's text, or
/// this client's), escaped to printable characters and cut to [`MAX_REASON`].
pub fn withdrawn_line(reason: Option<&str>) -> String {
    let reason = reason.unwrap_or("no longer wanted");
    let mut shown = escape::visible(&reason.chars().take(MAX_REASON).collect::<String>());
    if reason.chars().count() > MAX_REASON {
        shown.push('…');
    }
    format!("\r\n  \x1b[33mwithdrawn: {shown}\x1b[0m\r\n")
}

/// Whether a chunk of input may decide in the menu: the guard admitted it and it holds
/// exactly one keypress (a burst of several is a paste or a replay, not a decision).
pub(super) fn decides(admitted: bool, typed: &[Key]) -> bool {
    admitted && typed.iter().filter(|k| k.is_keypress()).count() == 1
}

impl Prompter for TerminalPrompter {
    fn ask(&self, p: &EscalationPrompt, withdrawn: &Withdrawal) -> Option<Decision> {
        let _turn = self.gate.turn();
        if withdrawn.is_withdrawn() {
            return None;
        }
        let mut owned = self.gate.take();
        // The terminal abandons any unfinished sequence (CLEAN starts with CAN): so does the
        // filter's view of it.
        owned.output.abort();
        put(&clean_screen(rows()));
        put(&card(p, cols(), false));
        settle();
        let mut keys = KeyDecoder::new();
        // Read before the card was visible: decoded (a reply may straddle), never decisive.
        while let Ok(bytes) = owned.keys.try_recv() {
            keys.feed(&bytes);
        }
        let mut guard = Guard::new(Instant::now());
        let mut hinted = false;
        let mut mode = Mode::Menu;
        let restore = owned.output.modes.restore();
        let finish = |text: &str| put(&format!("{text}{restore}"));
        loop {
            if withdrawn.is_withdrawn() {
                finish(&withdrawn_line(withdrawn.reason().as_deref()));
                return None;
            }
            let (typed, admitted) = match owned.keys.recv_timeout(TICK) {
                Ok(bytes) => {
                    let admitted = guard.admit(Instant::now());
                    (keys.feed(&bytes), admitted)
                }
                Err(RecvTimeoutError::Timeout) => (keys.flush(), false),
                Err(RecvTimeoutError::Disconnected) => {
                    finish("");
                    return None;
                }
            };
            let may_decide = decides(admitted, &typed);
            for key in &typed {
                let decided = match &mut mode {
                    Mode::Menu => match menu_key(key, p) {
                        Some(_) if !may_decide => {
                            if !hinted {
                                put(DROPPED);
                                hinted = true;
                            }
                            None
                        }
                        Some(Ok(d)) => Some(d),
                        Some(Err(next)) => {
                            mode = next;
                            None
                        }
                        None => None,
                    },
                    Mode::Editing { editor, shown } => match edit_key(key, editor, shown, p) {
                        Some(Ok(d)) => Some(d),
                        Some(Err(())) => {
                            mode = Mode::Menu;
                            None
                        }
                        None => None,
                    },
                };
                if let Some(d) = decided {
                    finish(&format!("\r\n  → {}\r\n", summary(&d)));
                    drop(owned);
                    return Some(d);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_card_shows_everything_escaped() {
        let p = EscalationPrompt {
            request_id: "r".into(),
            profile: "shell".into(),
            session_id: "0123456789abcdef".into(),
            argv: vec![
                "git".into(),
                "push\x1b]52;c;aGk=\x07".into(),
                "a\u{202e}b".into(),
            ],
            program: String::new(),
            cwd: "/workspace/\u{9b}2J".into(),
            host_cwd: "/home/dev/p".into(),
            justification: "because\r\nlazaret: approved".into(),
            timeout_secs: 42,
            warnings: Vec::new(),
        };
        let c = card(&p, 120, false);
        // No raw control or bidi character from the sandbox reaches the terminal.
        let sandbox_bits = [
            "\x07",
            "\u{202e}",
            "\u{9b}",
            "]52;c;aGk=\x07",
            "\r\nlazaret",
        ];
        for bit in sandbox_bits {
            assert!(!c.contains(bit), "{bit:?} raw in {c:?}");
        }
        assert!(
            c.contains(r#"["git", "push\u{1b}]52;c;aGk=\u{7}", "a\u{202e}b"]"#),
            "{c}"
        );
        assert!(c.contains(r#""/workspace/\u{9b}2J""#), "{c}");
        assert!(c.contains(r#""because\r\nlazaret: approved""#), "{c}");
        assert!(c.contains("session 0123456789ab   request r\r\n"), "{c}");
        assert!(c.contains("times out in 42 s"), "{c}");
    }

    #[test]
    fn a_withdrawn_card_says_why_in_printable_characters() {
        let line = withdrawn_line(Some(
            "decided elsewhere: approved in a control centre (lazaret tui)",
        ));
        assert!(
            line.contains(
                "withdrawn: decided elsewhere: approved in a control centre (lazaret tui)"
            ),
            "{line:?}"
        );
        let hostile = withdrawn_line(Some("x\x1b]52;c;aGk=\x07\r\nlazaret: approved\u{202e}"));
        let inner = hostile
            .trim_start_matches("\r\n  \x1b[33m")
            .trim_end_matches("\x1b[0m\r\n");
        assert!(
            inner.chars().all(|c| !c.is_control() && c != '\u{202e}'),
            "{hostile:?}"
        );
        assert!(
            inner.contains(r"x\u{1b}]52;c;aGk=\u{7}\r\nlazaret"),
            "{inner}"
        );
        let long = withdrawn_line(Some(&"y".repeat(5000)));
        assert!(long.len() < MAX_REASON + 40, "{}", long.len());
        assert!(withdrawn_line(None).contains("withdrawn: "));
    }
}

#[cfg(test)]
#[path = "prompt_screen_tests.rs"]
mod screen_tests;
