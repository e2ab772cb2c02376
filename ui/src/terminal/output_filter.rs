//! What of the sandbox's output reaches the developer's terminal in `lazaret run` (DX-4,
//! FR-8): a streaming filter (sans-IO) between the sandbox's PTY and the host terminal.
//!
//! By default the sandbox cannot reach the host clipboard — OSC 52 (set and query), kitty's
//! OSC 5522, iTerm2's OSC 1337 `Copy`/`CopyToClipboard`/`EndCopy` — nor send desktop
//! notifications or attention requests — OSC 9, OSC 99, OSC 777, OSC 1337 `RequestAttention`;
//! the profile's `[terminal]` table allows them ([`TerminalAccess`]). Nor, by default, can it
//! send a query whose reply echoes text the sandbox chose back as the developer's typing —
//! DECRQSS (`DCS $ q`), XTGETTCAP (`DCS + q`), OSC 50 (font), CSI 20 t and CSI 21 t (icon
//! label, window title: set by the sandbox, then read back) — or a hyperlink whose target
//! differs from its text: OSC 8 is dropped, its text shown (`echo_queries`, `hyperlinks`).
//! ENQ (`05`) never passes: a terminal answers it with its answerback text, which looks like
//! typing. Everything else passes unchanged, other queries included (CSI 6n, DA, OSC 10/11
//! `?`: their replies are fixed formats of the terminal's state).
//!
//! The filter recognises what any terminal could take for the start of a control string: ESC
//! in any state, 8-bit C1 bytes (`9D` OSC, `9B` CSI, `90` DCS, `98`/`9E`/`9F` SOS/PM/APC) unless
//! they continue a UTF-8 char, and UTF-8-encoded C1 (`C2 9D`…). It ends a string at BEL, ST
//! (`ESC \`, `9C`, `C2 9C`), CAN, SUB or any other introducer — everything a terminal may end
//! it on — so it never misses a sequence a terminal sees. Sequences may be split anywhere
//! across reads. A blocked OSC that never ends is dropped for at most [`MAX_DROP`] bytes, then
//! the rest is passed as text (the terminal never saw its introducer). Nothing is buffered
//! beyond an undecided OSC head of [`MAX_HEAD`] bytes.
//!
//! Along the way it keeps track of the terminal modes the sandbox set ([`SandboxModes`]), so
//! that an escalation prompt can reset them for its card and give them back afterwards.

use lazaret_protocol::access::TerminalAccess;

use super::control_bytes::{BEL, C1_CSI, C1_DCS, C1_OSC, C1_ST, CAN, ENQ, ESC, SUB};
/// An undecided OSC head longer than this is decided on what it has.
pub const MAX_HEAD: usize = 32;
/// Most bytes of one blocked OSC dropped while waiting for its terminator.
pub const MAX_DROP: usize = 1 << 20;
/// Longest CSI parameter string kept for mode tracking.
const MAX_CSI: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    /// After ESC (held; two when doubled inside a string, tmux's passthrough form);
    /// `swallow_st`: it ended a blocked string, so `ESC \` is dropped too; `in_string`: it
    /// ended a passed string.
    Esc {
        swallow_st: bool,
        in_string: bool,
    },
    Csi,
    /// An OSC whose number (a DCS whose kind) is not known yet: introducer and head held in
    /// `held`.
    OscHead,
    /// A control string being passed through.
    Pass,
    /// A blocked OSC being dropped.
    Drop,
}

/// The streaming filter of one session's output.
#[derive(Debug)]
pub struct OutputFilter {
    access: TerminalAccess,
    state: State,
    held: Vec<u8>,
    /// Where the OSC head starts in `held` (after its 1–2 byte introducer).
    head_from: usize,
    /// A `C2` byte held to see whether it starts a UTF-8-encoded C1 control.
    c2: bool,
    /// Continuation bytes still expected of a UTF-8 char.
    utf8_cont: u8,
    dropped: usize,
    /// What was written last may combine with what follows the sequence being judged: a
    /// passed string its introducer ends, a CSI it cuts short, a lone ESC. If that sequence
    /// is a dropped OSC, ST goes in its place so that the two never meet on the terminal
    /// (found by fuzzing, issue #19).
    glue: bool,
    csi: Vec<u8>,
    /// The held string head is a DCS's, not an OSC's.
    dcs: bool,
    /// The CSI in progress is held in `held` until its final byte decides it (only CSI 20 t
    /// and 21 t are dropped); one longer than [`MAX_CSI`] is passed as it comes.
    csi_held: bool,
    pub modes: SandboxModes,
}

impl OutputFilter {
    pub fn new(access: TerminalAccess) -> OutputFilter {
        OutputFilter {
            access,
            state: State::Ground,
            held: Vec::new(),
            head_from: 0,
            c2: false,
            utf8_cont: 0,
            dropped: 0,
            glue: false,
            csi: Vec::new(),
            dcs: false,
            csi_held: false,
            modes: SandboxModes::default(),
        }
    }

    /// Appends to `out` what of `input` may reach the terminal now.
    pub fn filter(&mut self, input: &[u8], out: &mut Vec<u8>) {
        out.reserve(input.len());
        let mut i = 0;
        while i < input.len() {
            // Fast path: plain text in ground state.
            if self.state == State::Ground && !self.c2 && self.utf8_cont == 0 {
                let run = input[i..]
                    .iter()
                    .position(|&b| b == ESC || b == ENQ || b >= 0x80)
                    .unwrap_or(input.len() - i);
                out.extend_from_slice(&input[i..i + run]);
                i += run;
                if i == input.len() {
                    break;
                }
            }
            self.byte(input[i], out);
            i += 1;
        }
    }

    /// The terminal was told to abandon any sequence in progress (CAN): so does the filter.
    pub fn abort(&mut self) {
        self.state = State::Ground;
        self.held.clear();
        self.csi_held = false;
        self.c2 = false;
        self.utf8_cont = 0;
    }

    fn byte(&mut self, b: u8, out: &mut Vec<u8>) {
        if b == ENQ {
            return;
        }
        if self.c2 {
            self.c2 = false;
            if (0x80..=0x9f).contains(&b) {
                return self.c1(b, &[0xc2, b], out);
            }
            // An ordinary two-byte char: C2 is its lead byte.
            self.plain(0xc2, out);
            self.utf8_cont = 1;
        }
        match b {
            0xc2 if self.utf8_cont == 0 => {
                self.c2 = true;
                return;
            }
            0x80..=0xbf if self.utf8_cont > 0 => {
                self.utf8_cont -= 1;
                return self.plain(b, out);
            }
            0x80..=0x9f => {
                self.utf8_cont = 0;
                return self.c1(b, &[b], out);
            }
            0xc3..=0xdf => self.utf8_cont = 1,
            0xe0..=0xef => self.utf8_cont = 2,
            0xf0..=0xf4 => self.utf8_cont = 3,
            _ => self.utf8_cont = 0,
        }
        match self.state {
            State::Ground => match b {
                ESC => self.enter_esc(false),
                _ => out.push(b),
            },
            State::Esc {
                swallow_st,
                in_string,
            } => self.after_esc(b, swallow_st, in_string, out),
            State::Csi => self.in_csi(b, out),
            State::OscHead => match b {
                BEL | CAN | SUB | ESC => {
                    self.decide_head(true, out);
                    self.byte(b, out);
                }
                _ => {
                    self.held.push(b);
                    self.decide_head(false, out);
                }
            },
            State::Pass => match b {
                BEL | CAN | SUB => {
                    out.push(b);
                    self.state = State::Ground;
                }
                ESC => {
                    self.enter_esc(false);
                    self.state = State::Esc {
                        swallow_st: false,
                        in_string: true,
                    };
                }
                _ => out.push(b),
            },
            State::Drop => match b {
                BEL | CAN | SUB => self.state = State::Ground,
                ESC => self.enter_esc(true),
                _ => self.count_dropped(),
            },
        }
    }

    /// A byte that is part of a UTF-8 char, in the current state.
    fn plain(&mut self, b: u8, out: &mut Vec<u8>) {
        match self.state {
            State::Csi if self.csi_held => self.held.push(b),
            State::Ground | State::Pass | State::Csi => out.push(b),
            State::Esc { .. } => {
                out.append(&mut self.held);
                self.state = State::Ground;
                out.push(b);
            }
            State::OscHead => {
                self.held.push(b);
                self.decide_head(false, out);
            }
            State::Drop => self.count_dropped(),
        }
    }

    fn count_dropped(&mut self) {
        self.dropped += 1;
        if self.dropped > MAX_DROP {
            self.state = State::Ground;
        }
    }

    fn enter_esc(&mut self, swallow_st: bool) {
        self.glue = matches!(self.state, State::Pass | State::Csi | State::Esc { .. });
        self.held.clear();
        self.held.push(ESC);
        self.state = State::Esc {
            swallow_st,
            in_string: false,
        };
    }

    /// A C1 control (8-bit or UTF-8 encoded as `intro`) in the current state.
    fn c1(&mut self, b: u8, intro: &[u8], out: &mut Vec<u8>) {
        let glue = matches!(self.state, State::Pass | State::Csi | State::Esc { .. });
        match self.state {
            State::OscHead => {
                self.decide_head(true, out);
                return self.c1(b, intro, out);
            }
            State::Pass if b == C1_ST => {
                out.extend_from_slice(intro);
                self.state = State::Ground;
                return;
            }
            State::Drop if b == C1_ST => {
                self.state = State::Ground;
                return;
            }
            State::Esc { .. } => out.append(&mut self.held),
            State::Csi => self.release_csi(out),
            _ => {}
        }
        self.state = State::Ground;
        self.start(b, intro, out);
        self.glue = glue;
    }

    /// Starts the sequence whose introducer is `kind` (the C1 form: `ESC [` is `9B`).
    fn start(&mut self, kind: u8, intro: &[u8], out: &mut Vec<u8>) {
        match kind {
            C1_CSI => {
                self.held.clear();
                self.held.extend_from_slice(intro);
                self.csi_held = true;
                self.csi.clear();
                self.state = State::Csi;
            }
            C1_OSC | C1_DCS => {
                self.held.clear();
                self.held.extend_from_slice(intro);
                self.head_from = intro.len();
                self.dcs = kind == C1_DCS;
                self.state = State::OscHead;
            }
            0x98 | 0x9e | 0x9f => {
                out.extend_from_slice(intro);
                self.state = State::Pass;
            }
            _ => {
                out.extend_from_slice(intro);
                self.state = State::Ground;
            }
        }
    }

    fn after_esc(&mut self, b: u8, swallow_st: bool, in_string: bool, out: &mut Vec<u8>) {
        self.state = State::Ground;
        if self.held.len() == 2 {
            // A doubled ESC inside a string: tmux's passthrough (`ESC Ptmux; ESC ESC ] …`)
            // unwraps it for the outer terminal, so what follows is judged like any sequence,
            // and a blocked one is dropped with both ESCs (the passthrough stays well formed).
            match b {
                b'\\' if swallow_st => self.held.clear(),
                b']' => {
                    self.held.clear();
                    self.start(C1_OSC, &[ESC, ESC, b']'], out);
                }
                _ => {
                    if !swallow_st {
                        out.push(ESC);
                    }
                    self.held.truncate(1);
                    self.after_esc(b, false, false, out);
                }
            }
            return;
        }
        match b {
            b'\\' if swallow_st => self.held.clear(),
            ESC if swallow_st || in_string => {
                self.held.push(ESC);
                self.state = State::Esc {
                    swallow_st,
                    in_string,
                };
            }
            b'[' | b']' | b'P' | b'X' | b'^' | b'_' => {
                self.held.clear();
                let kind = b + 0x40;
                self.start(kind, &[ESC, b], out);
            }
            ESC => {
                out.append(&mut self.held);
                self.enter_esc(false);
                // The ESC just written stands alone.
                self.glue = true;
            }
            _ => {
                if b == b'c' {
                    self.modes = SandboxModes::default();
                }
                out.append(&mut self.held);
                out.push(b);
            }
        }
    }

    /// Writes the CSI held so far: what follows decides nothing more about it.
    fn release_csi(&mut self, out: &mut Vec<u8>) {
        if std::mem::take(&mut self.csi_held) {
            out.append(&mut self.held);
        }
    }

    fn in_csi(&mut self, b: u8, out: &mut Vec<u8>) {
        match b {
            ESC => {
                self.release_csi(out);
                self.enter_esc(false);
            }
            CAN | SUB => {
                self.release_csi(out);
                out.push(b);
                self.state = State::Ground;
            }
            0x40..=0x7e => {
                self.state = State::Ground;
                if self.csi_held && !self.access.echo_queries && echoes_title(&self.csi, b) {
                    // Dropped whole; ST in its place if it ended a string (see `glue`).
                    self.held.clear();
                    self.csi_held = false;
                    if self.glue {
                        out.extend_from_slice(&[ESC, b'\\']);
                    }
                    return;
                }
                self.release_csi(out);
                out.push(b);
                if self.csi.len() < MAX_CSI {
                    self.modes.csi(&self.csi, b);
                }
            }
            _ => {
                if self.csi_held {
                    self.held.push(b);
                    if self.held.len() > MAX_CSI {
                        self.release_csi(out);
                    }
                } else {
                    out.push(b);
                }
                if self.csi.len() < MAX_CSI {
                    self.csi.push(b);
                } else {
                    self.csi.push(0);
                    self.csi.truncate(MAX_CSI);
                }
            }
        }
    }

    /// Decides an OSC once its head says enough (or `complete`: nothing more will come).
    fn decide_head(&mut self, complete: bool, out: &mut Vec<u8>) {
        let head = &self.held[self.head_from..];
        let judged = if self.dcs {
            judge_dcs(head, complete, self.access)
        } else {
            judge(head, complete, self.access)
        };
        let verdict = match judged {
            Verdict::Undecided if complete || head.len() >= MAX_HEAD => Verdict::Pass,
            v => v,
        };
        match verdict {
            Verdict::Undecided => {}
            Verdict::Pass => {
                out.append(&mut self.held);
                self.state = State::Pass;
            }
            Verdict::Block => {
                // Not inside tmux's wrapper (`ESC ESC ]`), which ST would end.
                if self.glue && !self.held.starts_with(&[ESC, ESC]) {
                    out.extend_from_slice(&[ESC, b'\\']);
                }
                self.dropped = self.held.len();
                self.held.clear();
                self.state = State::Drop;
            }
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Undecided,
    Pass,
    Block,
}

/// Judges an OSC by its head (the bytes after the introducer so far; `complete`: all of it).
fn judge(head: &[u8], complete: bool, access: TerminalAccess) -> Verdict {
    let digits = head.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == head.len() {
        // The number is not complete yet (or there is none and nothing else yet).
        return if digits > 10 {
            Verdict::Pass
        } else {
            Verdict::Undecided
        };
    }
    if digits == 0 || head[digits] != b';' {
        // Not a numbered OSC (e.g. `ESC ] l`): terminals ignore or pass it as text.
        return Verdict::Pass;
    }
    // Leading zeros parse as the same number in terminals (`052` is 52).
    let number: u64 = std::str::from_utf8(&head[..digits])
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(u64::MAX);
    let rest = &head[digits + 1..];
    let blocked = |allowed: bool| {
        if allowed {
            Verdict::Pass
        } else {
            Verdict::Block
        }
    };
    match number {
        52 | 5522 => blocked(access.clipboard),
        8 => blocked(access.hyperlinks),
        50 => blocked(access.echo_queries),
        9 | 99 | 777 => blocked(access.notifications),
        1337 => {
            const CLIPBOARD: [&[u8]; 3] = [b"Copy", b"CopyToClipboard", b"EndCopy"];
            const ATTENTION: &[u8] = b"RequestAttention";
            let key_len = rest
                .iter()
                .position(|&b| b == b'=' || b == b';' || b == b':')
                .unwrap_or(rest.len());
            let key = &rest[..key_len];
            if complete || key_len < rest.len() || key.len() > ATTENTION.len() {
                if CLIPBOARD.contains(&key) {
                    blocked(access.clipboard)
                } else if key == ATTENTION {
                    blocked(access.notifications)
                } else {
                    Verdict::Pass
                }
            } else if CLIPBOARD
                .iter()
                .chain([&ATTENTION])
                .any(|k| k.starts_with(key))
            {
                // Still a prefix of a blocked key (`EndCopy` ends at the terminator).
                Verdict::Undecided
            } else {
                Verdict::Pass
            }
        }
        _ => Verdict::Pass,
    }
}

/// Judges a DCS by its head: DECRQSS (`$ q`) and XTGETTCAP (`+ q`) answer with the text
/// they were asked about; every other DCS (sixel, tmux's passthrough…) passes.
fn judge_dcs(head: &[u8], complete: bool, access: TerminalAccess) -> Verdict {
    const ECHOING: [&[u8]; 2] = [b"$q", b"+q"];
    if ECHOING.iter().any(|k| head.starts_with(k)) {
        if access.echo_queries {
            Verdict::Pass
        } else {
            Verdict::Block
        }
    } else if !complete && ECHOING.iter().any(|k| k.starts_with(head)) {
        Verdict::Undecided
    } else {
        Verdict::Pass
    }
}

/// Whether the CSI with parameters `params` and final byte `fin` asks for the icon label
/// (`20 t`) or the window title (`21 t`), which the sandbox may have set itself.
fn echoes_title(params: &[u8], fin: u8) -> bool {
    let first = params.split(|&b| b == b';').next().unwrap_or_default();
    fin == b't'
        && !first.is_empty()
        && first.iter().all(u8::is_ascii_digit)
        && matches!(
            std::str::from_utf8(first)
                .ok()
                .and_then(|n| n.parse::<u32>().ok()),
            Some(20 | 21)
        )
}

/// DEC private modes whose last setting by the sandbox is remembered.
const TRACKED: [u16; 17] = [
    1, 5, 6, 7, 9, 25, 47, 1000, 1002, 1003, 1004, 1005, 1006, 1015, 1047, 1049, 2004,
];

/// The DEC private modes that switch to and from the one alternate screen.
const ALT_SCREEN: [u16; 3] = [47, 1047, 1049];

/// The terminal modes the sandbox set last (only those the prompt changes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxModes {
    private: std::collections::BTreeMap<u16, bool>,
    insert: Option<bool>,
    /// The parameters of the last DECSTBM (`ESC [ top ; bottom r`).
    scroll_region: Option<String>,
}

impl SandboxModes {
    fn csi(&mut self, params: &[u8], last: u8) {
        let Ok(params) = std::str::from_utf8(params) else {
            return;
        };
        let set = last == b'h';
        match (params.strip_prefix('?'), last) {
            (Some(list), b'h' | b'l') => {
                for n in list.split(';').filter_map(|p| p.parse::<u16>().ok()) {
                    if ALT_SCREEN.contains(&n) {
                        // One alternate screen, whichever mode switched: a program entering
                        // with 1047 is left by the redraw's 1049.
                        for m in ALT_SCREEN {
                            self.private.insert(m, set);
                        }
                    } else if TRACKED.contains(&n) {
                        self.private.insert(n, set);
                    }
                }
            }
            (None, b'h' | b'l') if params.split(';').any(|p| p == "4") => {
                self.insert = Some(set);
            }
            (None, b'r') if params.bytes().all(|b| b.is_ascii_digit() || b == b';') => {
                self.scroll_region = Some(params.to_owned()).filter(|p| !p.is_empty());
            }
            _ => {}
        }
    }

    /// Whether the sandbox's program is on the alternate screen.
    pub fn alt_screen(&self) -> bool {
        ALT_SCREEN
            .iter()
            .any(|m| self.private.get(m) == Some(&true))
    }

    /// The bytes that give the sandbox back the modes the prompt's clean screen changed (see
    /// `prompt::CLEAN`): its own setting where it differs from what the prompt left, and
    /// bracketed paste (the prompt turned it on) back to the sandbox's setting or off.
    /// Alternate screen first; origin mode and the scroll region only when the sandbox had
    /// them (the scroll region with the cursor saved and restored around it, as DECSTBM
    /// homes it; origin mode homes it too, and the program's redraw follows).
    pub fn restore(&self) -> String {
        let mut s = String::new();
        if self.alt_screen() {
            s.push_str("\x1b[?1049h");
        }
        // (mode, what the clean screen left)
        let left: [(u16, bool); 10] = [
            (5, false),
            (6, false),
            (7, true),
            (25, true),
            (9, false),
            (1000, false),
            (1002, false),
            (1003, false),
            (1004, false),
            (2004, true),
        ];
        for (mode, after_clean) in left {
            let theirs = self.private.get(&mode).copied();
            let want = match mode {
                2004 => theirs.unwrap_or(false),
                _ => theirs.unwrap_or(after_clean),
            };
            if want != after_clean {
                s.push_str(&format!("\x1b[?{mode}{}", if want { 'h' } else { 'l' }));
            }
        }
        if self.insert == Some(true) {
            s.push_str("\x1b[4h");
        }
        if let Some(region) = &self.scroll_region {
            if self.private.get(&6) == Some(&true) {
                s.push_str(&format!("\x1b[{region}r"));
            } else {
                // DECSTBM homes the cursor: keep it below the card (DECSC/DECRC).
                s.push_str(&format!("\x1b7\x1b[{region}r\x1b8"));
            }
        }
        s
    }
}

#[cfg(test)]
#[path = "output_filter_tests.rs"]
mod tests;
