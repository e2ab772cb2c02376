//! DX-4: nothing the terminal generates by itself decodes as a keypress — replies to queries,
//! mouse reports in every encoding, focus, bracketed paste — whole, split at every byte, fed
//! byte by byte, and with an idle flush at every split (a reply delayed in transit).

use super::*;

/// Input the terminal generates, named. Several embed the prompt's decision letters
/// (`a`, `y`, `d`, `n`, `e` and capitals) where a naive decoder would see typed text.
fn reports() -> Vec<(&'static str, Vec<u8>)> {
    let mut v: Vec<(&'static str, Vec<u8>)> = vec![
        ("CPR (CSI 6n)", b"\x1b[24;80R".to_vec()),
        ("DECXCPR (CSI ?6n)", b"\x1b[?24;80;1R".to_vec()),
        ("DSR ok (CSI 5n)", b"\x1b[0n".to_vec()),
        ("DA1", b"\x1b[?64;1;2;6;9;15;18;21;22c".to_vec()),
        ("DA2", b"\x1b[>41;388;0c".to_vec()),
        ("DA3 (DCS)", b"\x1bP!|7E565445\x1b\\".to_vec()),
        ("DECRPM", b"\x1b[?2004;1$y".to_vec()),
        ("ANSI DECRPM", b"\x1b[4;2$y".to_vec()),
        ("DECRQSS reply (DCS)", b"\x1bP1$r0;1;4m\x1b\\".to_vec()),
        (
            "DECRQSS reply, scroll region",
            b"\x1bP1$r1;24r\x1b\\".to_vec(),
        ),
        (
            "XTGETTCAP reply (DCS)",
            b"\x1bP1+r544e=787465726d2d323536636f6c6f72\x1b\\".to_vec(),
        ),
        (
            "XTVERSION (DCS)",
            b"\x1bP>|xterm(388) approved yes\x1b\\".to_vec(),
        ),
        (
            "OSC 10 reply, BEL",
            b"\x1b]10;rgb:aaaa/dddd/eeee\x07".to_vec(),
        ),
        (
            "OSC 11 reply, ST",
            b"\x1b]11;rgb:aded/aded/aded\x1b\\".to_vec(),
        ),
        ("OSC 4 reply", b"\x1b]4;1;rgb:cdcd/0000/0000\x07".to_vec()),
        ("OSC 52 reply", b"\x1b]52;c;YWFhYQ==\x07".to_vec()),
        (
            "title report (CSI 21t)",
            b"\x1b]lapprove: yes\x1b\\".to_vec(),
        ),
        ("icon label report (CSI 20t)", b"\x1b]Ldeny\x1b\\".to_vec()),
        (
            "title with a 9B continuation byte",
            "\x1b]lś1;2Ray\x1b\\".as_bytes().to_vec(),
        ),
        ("window size report", b"\x1b[8;24;80t".to_vec()),
        ("window position report", b"\x1b[3;0;0t".to_vec()),
        ("kitty keyboard flags", b"\x1b[?1u".to_vec()),
        ("kitty graphics reply (APC)", b"\x1b_Gi=1;OK\x1b\\".to_vec()),
        ("PM", b"\x1b^any day\x1b\\".to_vec()),
        ("SOS", b"\x1bXsay yes\x1b\\".to_vec()),
        ("OSC ended by CAN", b"\x1b]11;rgb:aaaa\x18".to_vec()),
        ("OSC ended by SUB", b"\x1b]11;rgb:aaaa\x1a".to_vec()),
        ("8-bit CPR", b"\x9b24;80R".to_vec()),
        ("8-bit DA1", b"\x9b?62;1c".to_vec()),
        (
            "8-bit OSC 11, 8-bit ST",
            b"\x9d11;rgb:aaaa/dddd/eeee\x9c".to_vec(),
        ),
        ("8-bit OSC, BEL", b"\x9d10;rgb:eeee/eeee/eeee\x07".to_vec()),
        ("8-bit DCS", b"\x901$r0m\x9c".to_vec()),
        ("8-bit APC", b"\x9fGi=1;OK\x9c".to_vec()),
        ("8-bit PM", b"\x9eyes\x9c".to_vec()),
        ("8-bit SOS", b"\x98yes\x9c".to_vec()),
        ("UTF-8 C1 CPR", "\u{9b}24;80R".as_bytes().to_vec()),
        (
            "UTF-8 C1 OSC, UTF-8 ST",
            "\u{9d}11;rgb:aaaa/dddd/eeee\u{9c}".as_bytes().to_vec(),
        ),
        (
            "UTF-8 C1 DCS, 7-bit ST",
            "\u{90}1$r0m\x1b\\".as_bytes().to_vec(),
        ),
        ("mouse X10", b"\x1b[M !!".to_vec()),
        ("mouse X10, coordinates 'a' 'y'", b"\x1b[M ay".to_vec()),
        ("mouse X10, raw high bytes", b"\x1b[M\xe0\xff\xc3".to_vec()),
        ("mouse X10, lead byte then 'a'", b"\x1b[M \xc3a".to_vec()),
        (
            "mouse UTF-8 1005",
            "\x1b[M \u{e1}\u{79f}".as_bytes().to_vec(),
        ),
        ("mouse UTF-8 1005, 'd' 'e'", "\x1b[M`de".as_bytes().to_vec()),
        ("mouse SGR 1006 press", b"\x1b[<0;97;100M".to_vec()),
        ("mouse SGR 1006 release", b"\x1b[<0;97;100m".to_vec()),
        ("mouse SGR 1006 wheel", b"\x1b[<64;1;1M".to_vec()),
        ("mouse urxvt 1015", b"\x1b[32;97;100M".to_vec()),
        ("mouse 8-bit X10", b"\x9bM ay".to_vec()),
        ("mouse 8-bit SGR", b"\x9b<0;97;100M".to_vec()),
        ("focus in", b"\x1b[I".to_vec()),
        ("focus out", b"\x1b[O".to_vec()),
        ("bracketed paste", b"\x1b[200~a\ry\nd\te\x1b[201~".to_vec()),
        (
            "bracketed paste of a sequence",
            b"\x1b[200~\x1b[Aa\x03\x1b[201~".to_vec(),
        ),
    ];
    // A long reply (more than any buffer) still decodes to nothing.
    let mut long = b"\x1b]52;c;".to_vec();
    long.extend(std::iter::repeat_n(b'a', 100_000));
    long.push(0x07);
    v.push(("OSC 52 reply of 100 000 bytes", long));
    v
}

/// Whether any key is something the developer could have typed (a decision candidate).
fn typed(keys: &[Key]) -> Vec<Key> {
    keys.iter().filter(|k| k.is_keypress()).cloned().collect()
}

/// Decodes `report` then a typed `z` in the ways input can arrive; returns every way's keys.
fn ways(report: &[u8]) -> Vec<(String, Vec<Key>)> {
    let mut bytes = report.to_vec();
    bytes.push(b'z');
    let mut out = Vec::new();
    let mut d = KeyDecoder::new();
    let mut keys = d.feed(&bytes);
    keys.extend(d.flush());
    out.push(("whole".to_owned(), keys));
    let mut d = KeyDecoder::new();
    let mut keys: Vec<Key> = bytes.iter().flat_map(|b| d.feed(&[*b])).collect();
    keys.extend(d.flush());
    out.push(("byte by byte".to_owned(), keys));
    // Every split (for long reports: the first and last 64 positions).
    let n = bytes.len();
    let splits: Vec<usize> = (1..n).filter(|&i| i < 64 || i + 64 > n).collect();
    for i in splits {
        let mut d = KeyDecoder::new();
        let mut keys = d.feed(&bytes[..i]);
        keys.extend(d.feed(&bytes[i..]));
        keys.extend(d.flush());
        out.push((format!("split at {i}"), keys));
    }
    out
}

#[test]
fn no_report_decodes_as_a_keypress_whole_or_split_at_any_byte() {
    for (name, report) in reports() {
        for (how, keys) in ways(&report) {
            assert_eq!(typed(&keys), [Key::Char('z')], "{name}, {how}: {keys:?}");
        }
    }
}

#[test]
fn an_idle_pause_inside_a_report_turns_no_part_of_it_into_a_decision() {
    // A pause (the prompt flushes after 50 ms of silence) may fall inside a reply delayed in
    // transit. Splitting right after a lone ESC is the one place where the pause makes the
    // ESC the Escape key (a real terminal's Escape is a lone ESC too); the prompt's guard
    // then drops the decision keys that follow within the guard time. Everywhere else, no
    // part of a report turns into typed text.
    for (name, report) in reports() {
        let mut bytes = report.clone();
        bytes.push(b'z');
        let n = bytes.len();
        for i in (1..n).filter(|&i| i < 64 || i + 64 > n) {
            let mut d = KeyDecoder::new();
            let mut keys = d.feed(&bytes[..i]);
            keys.extend(d.flush());
            keys.extend(d.feed(&bytes[i..]));
            keys.extend(d.flush());
            let typed = typed(&keys);
            if typed.contains(&Key::Escape) {
                assert!(
                    bytes[..i].ends_with(&[ESC]),
                    "{name}, pause at {i}: {keys:?}"
                );
                continue;
            }
            let in_paste = name.starts_with("bracketed paste");
            let in_c2 = bytes[i - 1] == 0xc2;
            if in_paste || in_c2 {
                // A paste stays a paste; a lone C2 byte (half of a UTF-8 C1) is flushed as
                // Other and the rest is decoded afresh.
                assert!(
                    !typed.iter().any(|k| matches!(k, Key::Char(c) if *c != 'z')),
                    "{name}, pause at {i}: {keys:?}"
                );
                continue;
            }
            assert!(
                !typed
                    .iter()
                    .any(|k| matches!(k, Key::Char(c) if "aAyYdDnNeE".contains(*c))),
                "{name}, pause at {i}: {keys:?}"
            );
        }
    }
}

#[test]
fn reports_decode_to_report_and_pastes_to_pasted() {
    let mut d = KeyDecoder::new();
    assert_eq!(d.feed(b"\x1b[24;80R"), [Key::Report]);
    assert_eq!(d.feed(b"\x1b]11;rgb:0/0/0\x07"), [Key::Report]);
    assert_eq!(
        d.feed(b"\x1b[200~ay\x1b[201~"),
        [Key::Pasted('a'), Key::Pasted('y')]
    );
    assert!(!Key::Report.is_keypress() && !Key::Pasted('a').is_keypress());
    assert!(Key::Char('a').is_keypress() && Key::Interrupt.is_keypress());
}

#[test]
fn a_reply_that_never_ends_is_left_by_ctrl_c_or_escape() {
    let mut d = KeyDecoder::new();
    assert_eq!(d.feed(b"\x1b]11;rgb:aaaa"), [Key::Report]);
    assert_eq!(d.flush(), []);
    assert_eq!(d.feed(b"aaaa"), []);
    assert_eq!(d.feed(b"\x03"), [Key::Interrupt]);
    assert_eq!(d.feed(b"a"), [Key::Char('a')]);
    let mut d = KeyDecoder::new();
    assert_eq!(d.feed(b"\x9d11;rgb:aaaa"), [Key::Report]);
    assert_eq!(d.feed(b"\x1b"), []);
    assert_eq!(d.flush(), []);
    assert_eq!(d.feed(b"x"), [Key::Other]);
    assert_eq!(d.feed(b"a"), [Key::Char('a')]);
    // Nothing is buffered however long the string.
    let mut d = KeyDecoder::new();
    d.feed(b"\x1bP");
    for _ in 0..1000 {
        d.feed(&[b'a'; 1000]);
    }
    assert!(d.pending.is_empty());
}

#[test]
fn keys_after_reports_still_work() {
    let mut d = KeyDecoder::new();
    assert_eq!(
        d.feed(b"\x1b[24;80Ra\x1b]11;x\x07y\x1b[Id\x1b[<0;1;1Mn\x1b[M !!e"),
        [
            Key::Report,
            Key::Char('a'),
            Key::Report,
            Key::Char('y'),
            Key::Report,
            Key::Char('d'),
            Key::Report,
            Key::Char('n'),
            Key::Report,
            Key::Char('e'),
        ]
    );
}
