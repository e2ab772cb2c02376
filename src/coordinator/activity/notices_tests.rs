use super::*;

fn scan(pieces: &[&[u8]]) -> Vec<Notice> {
    let mut s = NoticeScanner::default();
    let mut out = Vec::new();
    for p in pieces {
        s.scan(p, &mut out);
    }
    out
}

fn note(s: &str) -> Notice {
    Notice::Notification(s.into())
}

#[test]
fn a_bell_and_each_kind_of_notification_is_found() {
    assert_eq!(scan(&[b"done\x07"]), vec![Notice::Bell]);
    assert_eq!(
        scan(&[b"\x1b]9;build finished\x07"]),
        vec![note("build finished")]
    );
    assert_eq!(
        scan(&[b"\x1b]777;notify;Claude;needs your input\x1b\\"]),
        vec![note("Claude: needs your input")]
    );
    assert_eq!(scan(&[b"\x1b]99;i=1:d=0;Hello\x1b\\"]), vec![note("Hello")]);
}

#[test]
fn what_is_not_a_notification_is_not_one() {
    // ConEmu's progress report, titles, hyperlinks, clipboard, other strings.
    for bytes in [
        &b"\x1b]9;4;1;50\x07"[..],
        b"\x1b]0;a title\x07",
        b"\x1b]2;a title\x1b\\",
        b"\x1b]8;;https://example.invalid\x07link\x1b]8;;\x07",
        b"\x1b]52;c;aGVsbG8=\x07",
        b"\x1b]777;preexec\x07",
        b"\x1b]99\x07",
        b"\x1bPq#0;2;0;0;0\x07\x1b\\",
        b"\x1b_Gf=100;AAAA\x07",
        b"plain text with no controls",
    ] {
        assert_eq!(scan(&[bytes]), vec![], "{bytes:?}");
    }
}

#[test]
fn a_bell_inside_a_csi_sequence_still_rings() {
    // Terminals execute C0 controls met inside a control sequence.
    assert_eq!(scan(&[b"\x1b[1\x07m"]), vec![Notice::Bell]);
    assert_eq!(scan(&[b"\x1b\x07"]), vec![Notice::Bell]);
}

#[test]
fn sequences_split_anywhere_are_found_once() {
    let whole = b"a\x07b\x1b]9;one\x07c\x1b]777;notify;T;two\x1b\\d";
    let want = vec![Notice::Bell, note("one"), note("T: two")];
    for cut in 0..whole.len() {
        let (a, b) = whole.split_at(cut);
        assert_eq!(scan(&[a, b]), want, "cut at {cut}");
    }
    let bytes: Vec<&[u8]> = whole.chunks(1).collect();
    assert_eq!(scan(&bytes), want);
}

#[test]
fn aborted_strings_give_nothing_and_the_next_sequence_is_read() {
    assert_eq!(
        scan(&[b"\x1b]9;cut\x18\x1b]9;kept\x07"]),
        vec![note("kept")]
    );
    // ESC followed by something else than `\` ends the OSC without a notice.
    assert_eq!(scan(&[b"\x1b]9;cut\x1b[0m\x07"]), vec![Notice::Bell]);
}

#[test]
fn hostile_text_is_capped_and_kept_as_sent_for_the_caller_to_escape() {
    let mut long = b"\x1b]9;".to_vec();
    long.extend(std::iter::repeat_n(b'x', 100_000));
    long.push(0x07);
    let found = scan(&[&long]);
    assert_eq!(found, vec![note(&"x".repeat(MAX_TEXT))]);
    // A multibyte char across the cap is cut before it.
    let mut text = "é".repeat(150).into_bytes();
    text.splice(0..0, b"\x1b]9;".iter().copied());
    text.push(0x07);
    let Notice::Notification(t) = &scan(&[&text])[0] else {
        panic!("a notification");
    };
    assert!(t.len() <= MAX_TEXT && t.chars().all(|c| c == 'é'), "{t}");
    // Controls and invalid UTF-8 inside come back as sent (lossy): escaping is the caller's.
    assert_eq!(
        scan(&[b"\x1b]9;a\xffb\x08c\x07"]),
        vec![note("a\u{fffd}b\u{8}c")]
    );
}

#[test]
fn random_output_never_panics_and_plain_text_costs_no_notices() {
    let mut rng = crate::test_rng::Rng(15);
    let mut s = NoticeScanner::default();
    let mut out = Vec::new();
    for _ in 0..2000 {
        let len = rng.below(64) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| match rng.below(8) {
                0 => 0x1b,
                1 => 0x07,
                2 => b']',
                3 => b';',
                4 => b'9',
                5 => b'\\',
                _ => rng.below(256) as u8,
            })
            .collect();
        s.scan(&bytes, &mut out);
    }
    for n in &out {
        if let Notice::Notification(t) = n {
            assert!(t.len() <= MAX_TEXT);
        }
    }
}
