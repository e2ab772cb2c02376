//! The byte grammar of a screen update (issue #14): what the coordinator may send an
//! attachment fed `updates: "screen"` (`ScreenSnapshot::to_ansi`, and the damaged-row updates
//! built from the same pieces). A whitelist, written from `protocol/src/screen/ansi.rs`:
//!
//! - printable characters, UTF-8 encoded (no C0 other than CR and LF, no DEL, no C1 — in
//!   particular no U+009B, an 8-bit CSI some terminals honour in UTF-8);
//! - CR, LF (the history is printed from the top row and line-fed into the scrollback);
//! - SGR `ESC [ params m` (digits, `;`, `:`);
//! - CUP `ESC [ H`, `ESC [ row ; col H`;
//! - ED `ESC [ J`, `ESC [ 0/1/2 J` (never 3: that one clears the host terminal's scrollback);
//! - EL `ESC [ K`, `ESC [ 0/1/2 K`;
//! - DECSTBM `ESC [ r` (reset) or `ESC [ top ; bottom r`;
//! - DECSCUSR `ESC [ n SP q` with n in 0..=6 (the cursor shape);
//! - DECSET/DECRST `ESC [ ? n h/l` for [`MODES`] only;
//! - DECKPAM `ESC =` and DECKPNM `ESC >`.
//!
//! Nothing else: no OSC (title, clipboard, hyperlinks, notifications), DCS, APC, PM, SOS, no
//! queries (DSR, DA, DECRQSS, XTGETTCAP), no RIS, no other ESC or CSI sequence.

/// The private modes a screen update may set or reset: alternate screen (1049), origin mode
/// (6), application cursor keys (1), bracketed paste (2004), mouse reporting (1000, 1002,
/// 1003, 1006), focus events (1004), auto-wrap (7), cursor visibility (25).
pub const MODES: &[u32] = &[1049, 6, 1, 2004, 1000, 1002, 1003, 1006, 1004, 7, 25];

/// Where and why `bytes` leaves the grammar.
#[derive(Debug)]
pub struct Violation {
    pub offset: usize,
    pub why: String,
    /// The bytes from the offset on (at most 40), escaped.
    pub at: String,
}

/// Checks `bytes` (the concatenation of everything received) against the grammar.
pub fn check(bytes: &[u8]) -> Result<(), Violation> {
    let mut i = 0;
    while i < bytes.len() {
        let step = match bytes[i] {
            0x1b => escape(&bytes[i..]),
            b'\r' | b'\n' => Ok(1),
            _ => printable(&bytes[i..]),
        };
        match step {
            Ok(n) => i += n,
            Err(why) => {
                let end = (i + 40).min(bytes.len());
                return Err(Violation {
                    offset: i,
                    why,
                    at: bytes[i..end].escape_ascii().to_string(),
                });
            }
        }
    }
    Ok(())
}

/// One printable character at the start of `rest`: its length.
fn printable(rest: &[u8]) -> Result<usize, String> {
    let len = match rest[0] {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        b => return Err(format!("byte {b:#04x} starts no UTF-8 character")),
    };
    let end = rest.len().min(len);
    let c = std::str::from_utf8(&rest[..end])
        .ok()
        .and_then(|s| s.chars().next())
        .filter(|c| c.len_utf8() == len)
        .ok_or_else(|| "invalid UTF-8".to_owned())?;
    if c.is_control() {
        return Err(format!("control character U+{:04X}", u32::from(c)));
    }
    Ok(len)
}

/// One whitelisted escape sequence at the start of `rest` (an ESC): its length.
fn escape(rest: &[u8]) -> Result<usize, String> {
    match rest.get(1) {
        Some(b'=' | b'>') => return Ok(2),
        Some(b'[') => {}
        Some(b) => return Err(format!("ESC {:?} is not allowed", char::from(*b))),
        None => return Err("a lone ESC at the end".into()),
    }
    let body = &rest[2..];
    let Some(fin) = body.iter().position(|b| (0x40..=0x7e).contains(b)) else {
        return Err("an unterminated CSI".into());
    };
    let params = std::str::from_utf8(&body[..fin]).map_err(|_| "CSI params are not text")?;
    let len = 2 + fin + 1;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let numbers = |s: &str, n: usize| {
        let parts: Vec<&str> = s.split(';').collect();
        parts.len() == n && parts.iter().all(|p| digits(p))
    };
    let ok = match (body[fin], params) {
        (b'm', p) => p
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b';' || b == b':'),
        (b'H', p) => p.is_empty() || numbers(p, 2),
        (b'J' | b'K', p) => matches!(p, "" | "0" | "1" | "2"),
        (b'r', p) => p.is_empty() || numbers(p, 2),
        (b'q', p) => matches!(p, "0 " | "1 " | "2 " | "3 " | "4 " | "5 " | "6 "),
        (b'h' | b'l', p) => p
            .strip_prefix('?')
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| MODES.contains(&n)),
        _ => false,
    };
    if ok {
        Ok(len)
    } else {
        Err(format!(
            "CSI {params:?} {:?} is not allowed",
            char::from(body[fin])
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn what_to_ansi_emits_passes() {
        let update = b"\x1b[?1049l\x1b[0m\x1b[r\x1b[?6l\x1b[?1l\x1b>\x1b[?2004l\x1b[H\x1b[J\
\x1b[?7l\x1b[3;1H\x1b[1;38;2;1;2;3mhi \xc3\xa9\xe2\x94\x80\x1b[0m\x1b[K\x1b[?7h\x1b=\x1b[5 q\
\x1b[6;4H\x1b[?25h\r\n";
        assert!(check(update).is_ok(), "{:?}", check(update));
    }

    #[test]
    fn hostile_sequences_fail() {
        for bad in [
            &b"\x1b]52;c;aGk=\x07"[..],
            b"\x1b]0;t\x1b\\",
            b"\x1bP$qm\x1b\\",
            b"\x1b_G\x1b\\",
            b"\x1b^x\x1b\\",
            b"\x1bXx\x1b\\",
            b"\xc2\x9b31m",
            b"\x1b[3J",
            b"\x1bc",
            b"\x1b[?1047h",
            b"\x1b[6n",
            b"\x07",
            b"\xff\xfe",
            b"\x1b[1;2",
            b"\x1b",
        ] {
            assert!(check(bad).is_err(), "{}", bad.escape_ascii());
        }
    }
}
