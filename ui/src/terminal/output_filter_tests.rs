use super::*;

const NONE: TerminalAccess = TerminalAccess {
    clipboard: false,
    notifications: false,
    hyperlinks: false,
    echo_queries: false,
};
const ALL: TerminalAccess = TerminalAccess {
    clipboard: true,
    notifications: true,
    hyperlinks: true,
    echo_queries: true,
};

fn run(access: TerminalAccess, chunks: &[&[u8]]) -> Vec<u8> {
    let mut f = OutputFilter::new(access);
    let mut out = Vec::new();
    for c in chunks {
        f.filter(c, &mut out);
    }
    out
}

/// `input` filtered whole, byte by byte, and split at every point (and at every pair of
/// points for short inputs) all give `expected`.
fn check(access: TerminalAccess, input: &[u8], expected: &[u8]) {
    let show = |b: &[u8]| String::from_utf8_lossy(b).escape_debug().to_string();
    assert_eq!(run(access, &[input]), expected, "whole {}", show(input));
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(run(access, &bytes), expected, "bytewise {}", show(input));
    for i in 1..input.len() {
        let got = run(access, &[&input[..i], &input[i..]]);
        assert_eq!(got, expected, "split at {i} {}", show(input));
        if input.len() <= 48 {
            for j in i + 1..input.len() {
                let got = run(access, &[&input[..i], &input[i..j], &input[j..]]);
                assert_eq!(got, expected, "split at {i},{j} {}", show(input));
            }
        }
    }
}

/// Blocked by default, passed with the setting.
fn blocked(input: &[u8]) {
    check(NONE, &[b"<", input, b">"].concat(), b"<>");
    check(ALL, input, input);
}

#[test]
fn clipboard_writes_and_queries_are_blocked_with_bel_and_st() {
    blocked(b"\x1b]52;c;aGVsbG8=\x07");
    blocked(b"\x1b]52;c;aGVsbG8=\x1b\\");
    blocked(b"\x1b]52;c;?\x07");
    blocked(b"\x1b]52;;?\x1b\\");
    blocked(b"\x1b]052;c;aGk=\x07");
    blocked(b"\x1b]5522;type=write:mime=text/plain\x1b\\");
    blocked(b"\x1b]1337;CopyToClipboard=\x07");
    blocked(b"\x1b]1337;Copy=:aGk=\x07");
    blocked(b"\x1b]1337;EndCopy\x07");
}

#[test]
fn notifications_are_blocked() {
    blocked(b"\x1b]9;build done\x07");
    blocked(b"\x1b]9;4;1;50\x1b\\");
    blocked(b"\x1b]99;i=1:d=0;Hello\x1b\\");
    blocked(b"\x1b]777;notify;title;body\x07");
    blocked(b"\x1b]1337;RequestAttention=yes\x07");
}

#[test]
fn c1_forms_are_blocked() {
    // 8-bit OSC and ST; UTF-8-encoded C1; mixed.
    blocked(b"\x9d52;c;aGk=\x9c");
    blocked(b"\x9d52;c;aGk=\x07");
    blocked("\u{9d}52;c;aGk=\u{9c}".as_bytes());
    blocked("\u{9d}9;hi\x1b\\".as_bytes());
    blocked(b"\x1b]52;c;aGk=\x9c");
    blocked("\x1b]777;notify;a;b\u{9c}".as_bytes());
}

#[test]
fn the_separate_settings_are_separate() {
    let clip = TerminalAccess {
        clipboard: true,
        ..NONE
    };
    check(
        clip,
        b"\x1b]52;c;aGk=\x07\x1b]9;x\x07",
        b"\x1b]52;c;aGk=\x07",
    );
    let notes = TerminalAccess {
        notifications: true,
        ..NONE
    };
    check(notes, b"\x1b]52;c;aGk=\x07\x1b]9;x\x07", b"\x1b]9;x\x07");
}

#[test]
fn everything_else_passes_unchanged() {
    for s in [
        &b"plain text\r\n"[..],
        "日本語 ś ŝ ĝ ǝ 🦀 \u{a0}".as_bytes(),
        b"\x1b[1;31mred\x1b[0m\x1b[2J\x1b[H\x1b[?1049h\x1b[?25l",
        b"\x1b]0;title\x07\x1b]2;title\x1b\\",
        b"\x1b]10;?\x07\x1b]11;?\x1b\\\x1b]4;1;?\x07",
        b"\x1b[6n\x1b[c\x1b[>c\x1b[?2004$p",
        b"\x1b[18t\x1b[14t\x1b[2t\x1b[>21t\x1b[?21t\x1b[22;0t\x1b[23;0t",
        b"\x1bPq#0;2;0;0;0#0~~-\x1b\\\x1bP1$r0m\x1b\\",
        b"\x1b]1337;File=inline=1:aGk=\x07",
        b"\x1b]1337;SetUserVar=a=b\x07",
        b"\x1b]133;A\x07\x1b]7;file://h/p\x07",
        b"\x1b_Gf=100;aGk=\x1b\\",
        b"\x1bPtmux;\x1b\x1b[1m\x1b\\",
        b"\x1b(0lqk\x1b(B\x0e\x0f\x1b7\x1b8\x1bc",
        b"\x1b]5;x\x07",
        b"\x1b]l title\x07",
        "\u{9b}31mC1 CSI\u{9b}0m".as_bytes(),
        b"\x9b31m8-bit\x9b0m",
        b"\x1b]99999999999999;x\x07",
    ] {
        check(NONE, s, s);
    }
}

#[test]
fn enq_never_reaches_the_terminal() {
    check(
        NONE,
        b"a\x05b\x1b[\x05m\x1b]0;\x05t\x07",
        b"ab\x1b[m\x1b]0;t\x07",
    );
    check(ALL, b"\x05", b"");
}

#[test]
fn a_blocked_osc_ends_at_any_introducer_and_cannot_hide_another() {
    // ESC starting something else ends the dropped string; the next sequence is judged too.
    check(NONE, b"\x1b]52;c;aGk=\x1b[1mX", b"\x1b[1mX");
    check(NONE, b"\x1b]52;c;aGk=\x1b]52;c;aGk=\x07X", b"X");
    check(NONE, b"\x1b]52;c;a\x9d52;c;b\x07X", b"X");
    check(NONE, b"\x1b]52;c;a\x18X", b"X");
    check(NONE, b"\x1b]52;c;a\x1aX", b"X");
    // A passed string cannot carry a blocked one past the filter either, and still ends where
    // the blocked one began (ST), so what follows is not taken into it.
    check(NONE, b"\x1b]0;t\x1b]52;c;aGk=\x07X", b"\x1b]0;t\x1b\\X");
    // tmux's passthrough: the inner OSC 52 goes with both its ESCs, the DCS stays well formed
    // (else tmux would swallow the output up to the next ST); a harmless inner one passes.
    check(
        NONE,
        b"\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\X",
        b"\x1bPtmux;\x1b\\X",
    );
    check(
        NONE,
        b"\x1bPtmux;\x1b\x1b]52;c;aGk=\x1b\x1b\\\x1b\\X",
        b"\x1bPtmux;\x1b\\X",
    );
    let inner = b"\x1bPtmux;\x1b\x1b]0;t\x07\x1b\x1b[1m\x1b\\X";
    check(NONE, inner, inner);
    let allowed = b"\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\";
    check(ALL, allowed, allowed);
    check(NONE, b"\x1b_G\x9d52;c;x\x07X", b"\x1b_G\x1b\\X");
    check(
        NONE,
        "\x1b]2;t\u{9d}52;c;x\x07X".as_bytes(),
        b"\x1b]2;t\x1b\\X",
    );
    // A 9D inside a UTF-8 char (ŝ is C5 9D) is text.
    check(NONE, "ŝ52;c;x\x07".as_bytes(), "ŝ52;c;x\x07".as_bytes());
}

#[test]
fn an_unterminated_blocked_osc_is_bounded() {
    let mut f = OutputFilter::new(NONE);
    let mut out = Vec::new();
    f.filter(b"\x1b]52;c;", &mut out);
    let chunk = vec![b'A'; 64 * 1024];
    for _ in 0..(MAX_DROP / chunk.len() - 1) {
        f.filter(&chunk, &mut out);
    }
    assert!(out.is_empty());
    f.filter(&chunk, &mut out);
    f.filter(&chunk, &mut out);
    f.filter(b"\r\nafter", &mut out);
    assert!(out.ends_with(b"\r\nafter"), "the session goes on");
    assert!(out.len() < 2 * chunk.len(), "{}", out.len());
    assert!(f.held.is_empty());
}

#[test]
fn an_undecided_head_is_bounded() {
    let mut f = OutputFilter::new(NONE);
    let mut out = Vec::new();
    f.filter(b"\x1b]", &mut out);
    f.filter(&[b'1'; 100], &mut out);
    assert!(f.held.len() <= MAX_HEAD + 2, "{}", f.held.len());
    assert!(out.starts_with(b"\x1b]111"));
}

#[test]
fn modes_are_tracked_and_restored() {
    let mut f = OutputFilter::new(NONE);
    let mut out = Vec::new();
    f.filter(
        b"\x1b[?1049h\x1b[?25l\x1b[?1000;1006h\x1b[23;24r\x1b[4h\x1b[?2004",
        &mut out,
    );
    f.filter(b"h\x1b[?5h", &mut out);
    assert!(f.modes.alt_screen());
    let r = f.modes.restore();
    assert!(r.starts_with("\x1b[?1049h"), "{r:?}");
    for part in ["\x1b[?25l", "\x1b[?1000h", "\x1b[?5h", "\x1b[4h"] {
        assert!(r.contains(part), "{part:?} in {r:?}");
    }
    // What the clean screen left as the sandbox wants it is not sent again; 1006 (an
    // encoding) is never touched.
    for part in [
        "\x1b[?2004",
        "\x1b[?1003",
        "\x1b[?7",
        "\x1b[?6",
        "\x1b[?1006",
    ] {
        assert!(!r.contains(part), "{part:?} in {r:?}");
    }
    assert!(r.ends_with("\x1b7\x1b[23;24r\x1b8"), "{r:?}");
    f.filter(b"\x1b[?1049l\x1b[r\x1bc", &mut out);
    assert_eq!(f.modes, SandboxModes::default());
    // A sandbox that set nothing: only bracketed paste goes back off; nothing moves the
    // cursor (origin mode and the scroll region home it).
    assert_eq!(f.modes.restore(), "\x1b[?2004l");
}

#[test]
fn an_osc_head_is_held_only_until_it_can_be_judged() {
    let mut f = OutputFilter::new(NONE);
    let mut out = Vec::new();
    f.filter(b"x\x1b]5", &mut out);
    assert_eq!(out, b"x");
    f.filter(b"3;y\x07", &mut out);
    assert_eq!(out, b"x\x1b]53;y\x07");
}

/// Found by fuzzing (issue #19, `scripts/fuzz output_filter`): a blocked OSC whose introducer
/// ended a passed string was dropped together with the ESC (or C1) that ended it, so the passed
/// string's head and the text after the blocked OSC met on the terminal — `ESC ]777` + a dropped
/// `ESC ]52;…BEL` + `;notify;t;b ST` arrived as an OSC 777 notification, `ESC ]1337;` + … +
/// `RequestAttention=yes BEL` as an attention request. The passed string is now ended (ST)
/// where the dropped OSC was.
#[test]
fn a_dropped_osc_still_ends_the_string_it_interrupts() {
    for intro in [&b"\x1b]"[..], b"\x9d", b"\xc2\x9d"] {
        let spliced = [b"\x1b]777", intro, b"52;aGk=\x07;notify;t;b\x1b\\"].concat();
        check(NONE, &spliced, b"\x1b]777\x1b\\;notify;t;b\x1b\\");
        let spliced = [b"\x1b]1337;", intro, b"52;x\x07RequestAttention=yes\x07"].concat();
        check(NONE, &spliced, b"\x1b]1337;\x1b\\RequestAttention=yes\x07");
    }
    // A passed DCS, ended by a blocked OSC, likewise.
    check(NONE, b"\x1bPq#0\x1b]9;hi\x07x", b"\x1bPq#0\x1b\\x");
    // A lone ESC written before a blocked OSC (ESC ESC, ESC then C1) and a CSI cut short by
    // one do not meet the text after it either: `ESC` + `]777;notify…` would be an OSC 777.
    check(
        NONE,
        b"\x1b\x1b]52;x\x1a]777;notify;t;b\x07",
        b"\x1b\x1b\\]777;notify;t;b\x07",
    );
    check(
        NONE,
        b"\x1b\x9d52;x\x1a]777;notify;t;b\x07",
        b"\x1b\x1b\\]777;notify;t;b\x07",
    );
    check(NONE, b"\x1b[1\x1b]52;x\x07m", b"\x1b[1\x1b\\m");
}

/// Queries whose reply would echo text the sandbox chose as the developer's typing: the
/// sandbox sets the title (or asks about `rm -rf ~\r`), then asks the terminal to say it.
#[test]
fn echoing_queries_are_dropped_unless_allowed() {
    for q in [
        &b"\x1bP$qm\x1b\\"[..],
        b"\x1bP$q\"p\x07",
        b"\x1bP+q726d202d7266\x1b\\",
        b"\x90$qm\x9c",
        "\u{90}$q r\u{9c}".as_bytes(),
        b"\x1b]50;?\x07",
        b"\x1b]50;#+1\x1b\\",
        b"\x1b[21t",
        b"\x1b[20t",
        b"\x1b[021t",
        b"\x1b[21;0t",
        b"\x9b21t",
        "\u{9b}20t".as_bytes(),
    ] {
        blocked(q);
        let only = TerminalAccess {
            echo_queries: true,
            ..NONE
        };
        check(only, q, q);
    }
    // Set a title, then ask for it: the title passes, the question does not.
    check(
        NONE,
        b"\x1b]2;rm -rf ~\r\x07\x1b[21tx",
        b"\x1b]2;rm -rf ~\r\x07x",
    );
}

/// A CSI 21 t that ends a string the terminal was passed leaves it ended (ST in its place), so
/// the string's head and the text after it never meet; a held CSI cut short is written as is.
#[test]
fn a_dropped_title_query_still_ends_the_string_it_interrupts() {
    check(NONE, b"\x1b]0;t\x1b[21tX", b"\x1b]0;t\x1b\\X");
    check(NONE, b"\x1b[21\x1b[1mX", b"\x1b[21\x1b[1mX");
    check(NONE, b"\x1b[21\x18X", b"\x1b[21\x18X");
    check(NONE, b"\x1b[2\x9b21tX", b"\x1b[2\x1b\\X");
    // A CSI longer than what is held passes as it comes, whatever its end.
    let long = [b"\x1b[".as_slice(), &[b'1'; 80], b"m"].concat();
    check(NONE, &long, &long);
}

/// OSC 8: a link's text may name another place than its target (`file://`, `vscode://`); by
/// default only the text is shown.
#[test]
fn hyperlinks_show_their_text_only_unless_allowed() {
    let link = b"see \x1b]8;;vscode://file/etc/passwd\x1b\\docs.rs/serde\x1b]8;;\x1b\\ ok";
    check(NONE, link, b"see docs.rs/serde ok");
    check(NONE, b"\x1b]8;id=1;file:///x\x07text\x1b]8;;\x07", b"text");
    let allowed = TerminalAccess {
        hyperlinks: true,
        ..NONE
    };
    check(allowed, link, link);
    // The clipboard setting does not open links.
    check(
        TerminalAccess {
            clipboard: true,
            ..NONE
        },
        link,
        b"see docs.rs/serde ok",
    );
}

/// Random output over the bytes that matter to the filter: whatever the split, the same bytes
/// pass; never more than came in; none of the sequences dropped by default (OSC 8, OSC 50,
/// DECRQSS, XTGETTCAP, CSI 20/21 t) reaches the terminal in its 7-bit form.
#[test]
fn random_output_never_passes_a_dropped_query_or_link() {
    const ALPHABET: &[u8] = b"\x1b\x1b\x1b[]P$+q;t012589\x07\\\x9b\x90\x9c\xc2\x18ax";
    const NEVER: [&[u8]; 6] = [
        b"\x1b]8;",
        b"\x1b]50;",
        b"\x1bP$q",
        b"\x1bP+q",
        b"\x1b[21t",
        b"\x1b[20t",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..20_000 {
        let len = (next() % 40) as usize;
        let input: Vec<u8> = (0..len)
            .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
            .collect();
        let whole = run(NONE, &[&input]);
        let cut = (next() as usize) % (input.len() + 1);
        let split = run(NONE, &[&input[..cut], &input[cut..]]);
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(split, whole, "split at {cut}: {input:?}");
        assert_eq!(run(NONE, &bytes), whole, "bytewise: {input:?}");
        assert!(whole.len() <= input.len(), "{input:?} -> {whole:?}");
        for seq in NEVER {
            assert!(
                !whole.windows(seq.len()).any(|w| w == seq),
                "{seq:?} passed: {input:?} -> {whole:?}"
            );
        }
    }
}
