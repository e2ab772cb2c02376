use super::*;
use Key::*;

fn decode(bytes: &[u8]) -> Vec<Key> {
    let mut d = KeyDecoder::new();
    let mut keys = d.feed(bytes);
    keys.extend(d.flush());
    keys
}

/// Feeds one byte at a time, flushing only at the end.
fn decode_bytewise(bytes: &[u8]) -> Vec<Key> {
    let mut d = KeyDecoder::new();
    let mut keys: Vec<Key> = bytes.iter().flat_map(|b| d.feed(&[*b])).collect();
    keys.extend(d.flush());
    keys
}

fn chars(s: &str) -> Vec<Key> {
    s.chars().map(Char).collect()
}

/// Every sequence decodes the same whole, byte by byte, and split at every point.
fn check(bytes: &[u8], expected: &[Key]) {
    assert_eq!(decode(bytes), expected, "whole {bytes:?}");
    assert_eq!(decode_bytewise(bytes), expected, "bytewise {bytes:?}");
    for i in 1..bytes.len() {
        let mut d = KeyDecoder::new();
        let mut keys = d.feed(&bytes[..i]);
        keys.extend(d.feed(&bytes[i..]));
        keys.extend(d.flush());
        assert_eq!(keys, expected, "split at {i} {bytes:?}");
    }
}

#[test]
fn plain_and_control_keys() {
    check(b"ab ~", &chars("ab ~"));
    check(b"\r\n", &[Enter, Enter]);
    check(b"\x7f\x08", &[Backspace, Backspace]);
    check(b"\x01\x05\x02\x06", &[Home, End, Left, Right]);
    check(
        b"\x15\x17\x03\x04",
        &[KillToStart, KillWord, Interrupt, Delete],
    );
    check(b"\x00\t\x0b\x1f", &[Other, Other, Other, Other]);
}

#[test]
fn cursor_sequences() {
    check(b"\x1b[C\x1b[D\x1b[H\x1b[F", &[Right, Left, Home, End]);
    check(b"\x1bOC\x1bOD\x1bOH\x1bOF", &[Right, Left, Home, End]);
    check(
        b"\x1b[1~\x1b[7~\x1b[4~\x1b[8~\x1b[3~",
        &[Home, Home, End, End, Delete],
    );
    check(b"\x1b[A\x1b[B\x1bOA\x1bOP", &[Other, Other, Other, Other]);
    check(b"\x1b[2~\x1b[5~\x1b[15~", &[Other, Other, Other]);
}

#[test]
fn modified_sequences_are_consumed_whole() {
    check(b"\x1b[1;5Cx", &[Other, Char('x')]);
    check(b"\x1b[3;2~x", &[Other, Char('x')]);
    check(b"\x1b[?1;2cx", &[Report, Char('x')]);
}

#[test]
fn alt_keys() {
    check(b"\x1bbx", &[Other, Char('x')]);
    check(b"\x1b\rx", &[Other, Char('x')]);
    check("\x1béx".as_bytes(), &[Other, Char('x')]);
    check(b"\x1bO1", &[Other, Char('1')]);
    check(b"\x1b\x1b[C", &[Escape, Right]);
    check(b"\x1b\x1b", &[Escape, Escape]);
}

#[test]
fn lone_escape_waits_for_flush() {
    let mut d = KeyDecoder::new();
    assert_eq!(d.feed(b"a\x1b"), [Char('a')]);
    assert_eq!(d.flush(), [Escape]);
    assert_eq!(d.flush(), []);
    assert_eq!(d.feed(b"b"), [Char('b')]);
}

#[test]
fn flush_turns_incomplete_sequences_into_other() {
    for partial in [&b"\xe4\xb8"[..], b"\x1b\xe4"] {
        let mut d = KeyDecoder::new();
        assert_eq!(d.feed(partial), [], "{partial:?}");
        assert_eq!(d.flush(), [Other], "{partial:?}");
        assert_eq!(d.feed(b"z"), [Char('z')], "{partial:?}");
    }
}

#[test]
fn flush_keeps_csi_and_ss3_open() {
    for partial in [&b"\x1b["[..], b"\x1b[1;5", b"\x1bO", b"\x9b1", b"\x1b[M!"] {
        let mut d = KeyDecoder::new();
        assert_eq!(d.feed(partial), [], "{partial:?}");
        assert_eq!(d.flush(), [], "{partial:?}");
        // The next byte belongs to the sequence, never typed text.
        let keys = d.feed(b"zz");
        assert!(!keys.is_empty() && keys[0] != Char('z'), "{partial:?}");
    }
}

#[test]
fn utf8_across_chunks() {
    check("é日本🦀x".as_bytes(), &chars("é日本🦀x"));
    let mut d = KeyDecoder::new();
    let crab = "🦀".as_bytes();
    assert_eq!(d.feed(&crab[..1]), []);
    assert_eq!(d.feed(&crab[1..3]), []);
    assert_eq!(d.feed(&crab[3..]), [Char('🦀')]);
}

#[test]
fn invalid_utf8_is_other() {
    check(b"\xffa", &[Other, Char('a')]);
    check(b"\x80a", &[Other, Char('a')]);
    check(b"\xe4\xb8a", &[Other, Char('a')]);
    check(b"\xed\xa0\x80a", &[Other, Other, Other, Char('a')]);
    check(b"\x9b31m", &[Report]);
    check("\u{9b}a".as_bytes(), &[Other]);
    check("\u{85}a".as_bytes(), &[Other, Char('a')]);
}

#[test]
fn bracketed_paste_never_submits() {
    let pasted = |s: &str| s.chars().map(Pasted).collect::<Vec<_>>();
    let mut expected = pasted("git push");
    expected.push(Pasted(' '));
    expected.extend(pasted("rm -rf x"));
    expected.extend([Pasted(' '), Pasted(' '), Pasted(' ')]);
    expected.push(Enter);
    check(b"\x1b[200~git push\rrm -rf x\r\n\t\x1b[201~\r", &expected);
}

#[test]
fn paste_drops_controls_and_sequences() {
    let bytes = "\x1b[200~a\x03\x1b[Cb\x7f\u{9b}é\x1b[201~\x03".as_bytes();
    check(
        bytes,
        &[
            Pasted('a'),
            Pasted('['),
            Pasted('C'),
            Pasted('b'),
            Pasted('é'),
            Interrupt,
        ],
    );
    check(b"\x1b[201~a", &[Char('a')]);
}

#[test]
fn paste_survives_a_pause() {
    let mut d = KeyDecoder::new();
    assert_eq!(d.feed(b"\x1b[200~a\r\x1b[20"), [Pasted('a'), Pasted(' ')]);
    assert_eq!(d.flush(), []);
    assert_eq!(d.feed(b"1~\r"), [Enter]);
}

#[test]
fn overlong_csi_is_dropped_without_buffering() {
    let mut long = b"\x1b[".to_vec();
    long.extend([b'1'; 100]);
    long.extend(b"Cx");
    check(&long, &[Other, Char('x')]);
    let mut d = KeyDecoder::new();
    assert_eq!(d.feed(&long[..40]), [Other]);
    assert!(d.pending.is_empty());
    let mut at_limit = b"\x1b[".to_vec();
    at_limit.extend(vec![b'1'; MAX_CSI - 3]);
    at_limit.push(b'~');
    assert_eq!(at_limit.len(), MAX_CSI);
    check(&at_limit, &[Other]);
}

#[test]
fn malformed_csi_reparses_the_interrupting_byte() {
    check(b"\x1b[1\x1b[Cx", &[Other, Right, Char('x')]);
    check(b"\x1b[1\rx", &[Other, Enter, Char('x')]);
}

#[test]
fn mouse_reports_are_other() {
    check(b"\x1b[M !!x", &[Report, Char('x')]);
    check(b"\x1b[M\xff\xff\xffx", &[Report, Char('x')]);
    check(b"\x1b[<0;12;5Mx\x1b[<0;12;5m", &[Report, Char('x'), Report]);
    let mut d = KeyDecoder::new();
    assert_eq!(d.feed(b"\x1b[M!"), []);
    assert_eq!(d.flush(), []);
    assert_eq!(d.feed(b"ay"), [Report]);
}

fn typed(ed: &mut LineEditor, s: &str) {
    for c in s.chars() {
        assert_eq!(ed.apply(&Char(c)), Edit::Continue);
    }
}

#[test]
fn editor_inserts_and_moves() {
    let mut ed = LineEditor::new("git psh");
    assert_eq!(ed.cursor(), 7);
    ed.apply(&Left);
    ed.apply(&Left);
    typed(&mut ed, "u");
    assert_eq!((ed.text().as_str(), ed.cursor()), ("git push", 6));
    ed.apply(&Home);
    typed(&mut ed, "日");
    ed.apply(&End);
    typed(&mut ed, "!");
    assert_eq!(ed.text(), "日git push!");
    ed.apply(&Home);
    ed.apply(&Left);
    assert_eq!(ed.cursor(), 0);
    ed.apply(&End);
    ed.apply(&Right);
    assert_eq!(ed.cursor(), 10);
}

#[test]
fn editor_never_inserts_controls() {
    let mut ed = LineEditor::new("");
    for c in ['\x1b', '\r', '\n', '\t', '\0', '\x7f', '\u{9b}'] {
        ed.apply(&Char(c));
    }
    assert_eq!(ed.text(), "");
}

#[test]
fn editor_deletes() {
    let mut ed = LineEditor::new("abc");
    ed.apply(&Backspace);
    assert_eq!(ed.text(), "ab");
    ed.apply(&Home);
    ed.apply(&Backspace);
    assert_eq!((ed.text().as_str(), ed.cursor()), ("ab", 0));
    ed.apply(&Delete);
    assert_eq!((ed.text().as_str(), ed.cursor()), ("b", 0));
    ed.apply(&End);
    ed.apply(&Delete);
    assert_eq!(ed.text(), "b");
}

#[test]
fn kill_to_start() {
    let mut ed = LineEditor::new("rm -rf /tmp");
    for _ in 0..4 {
        ed.apply(&Left);
    }
    ed.apply(&KillToStart);
    assert_eq!((ed.text().as_str(), ed.cursor()), ("/tmp", 0));
}

#[test]
fn kill_word() {
    let mut ed = LineEditor::new("git push  origin  ");
    ed.apply(&KillWord);
    assert_eq!(ed.text(), "git push  ");
    ed.apply(&KillWord);
    assert_eq!(ed.text(), "git ");
    ed.apply(&Left);
    ed.apply(&KillWord);
    assert_eq!((ed.text().as_str(), ed.cursor()), (" ", 0));
    ed.apply(&KillWord);
    assert_eq!(ed.text(), " ");
    let mut ed = LineEditor::new("ab cd");
    ed.apply(&Left);
    ed.apply(&KillWord);
    assert_eq!((ed.text().as_str(), ed.cursor()), ("ab d", 3));
}

#[test]
fn editor_outcomes() {
    let mut ed = LineEditor::new("x");
    assert_eq!(ed.apply(&Enter), Edit::Submit);
    assert_eq!(ed.apply(&Escape), Edit::Cancel);
    assert_eq!(ed.apply(&Interrupt), Edit::Cancel);
    assert_eq!(ed.apply(&Other), Edit::Continue);
    assert_eq!(ed.text(), "x");
}

#[test]
fn editor_caps_the_buffer() {
    let mut ed = LineEditor::new(&"a".repeat(MAX_BYTES - 3));
    typed(&mut ed, "é");
    typed(&mut ed, "日");
    typed(&mut ed, "b");
    assert_eq!(ed.text().len(), MAX_BYTES);
    assert!(ed.text().ends_with("éb"));
    ed.apply(&Backspace);
    typed(&mut ed, "c");
    assert!(ed.text().ends_with("éc"));
    let long = "x".repeat(MAX_BYTES + 10);
    assert_eq!(LineEditor::new(&long).text(), long);
}

fn rendered(text: &str, rows: u16, cursor_row: u16, cursor_col: u16) -> Rendered {
    Rendered {
        text: text.to_string(),
        rows,
        cursor_row,
        cursor_col,
    }
}

fn at(text: &str, cursor: usize) -> LineEditor {
    let mut ed = LineEditor::new(text);
    ed.apply(&Home);
    for _ in 0..cursor {
        ed.apply(&Right);
    }
    ed
}

#[test]
fn render_simple() {
    assert_eq!(
        LineEditor::new("ls").render("$ ", 80),
        rendered("$ ls", 1, 0, 4)
    );
    assert_eq!(at("ls", 1).render("$ ", 80), rendered("$ ls", 1, 0, 3));
    assert_eq!(LineEditor::new("").render("", 80), rendered("", 1, 0, 0));
    assert_eq!(
        LineEditor::new("ls").render("", 0),
        LineEditor::new("ls").render("", 80)
    );
}

#[test]
fn render_wide_chars() {
    assert_eq!(
        LineEditor::new("日本").render("> ", 80),
        rendered("> 日本", 1, 0, 6)
    );
    assert_eq!(at("日本", 1).render("> ", 80).cursor_col, 4);
    assert_eq!(LineEditor::new("🦀x").render("", 80).cursor_col, 3);
    assert_eq!(LineEditor::new("e\u{301}").render("", 80).cursor_col, 1);
}

#[test]
fn render_wraps_at_exactly_cols() {
    assert_eq!(
        LineEditor::new("abcd").render("", 4),
        rendered("abcd", 1, 1, 0)
    );
    assert_eq!(at("abcd", 3).render("", 4), rendered("abcd", 1, 0, 3));
    assert_eq!(
        LineEditor::new("abcde").render("", 4),
        rendered("abcde", 2, 1, 1)
    );
    assert_eq!(at("abcde", 4).render("", 4), rendered("abcde", 2, 1, 0));
    assert_eq!(
        LineEditor::new("").render("$ ab", 4),
        rendered("$ ab", 1, 1, 0)
    );
    assert_eq!(
        LineEditor::new("abcdefgh").render("", 4),
        rendered("abcdefgh", 2, 2, 0)
    );
}

#[test]
fn render_wide_char_at_the_edge_wraps_whole() {
    assert_eq!(
        LineEditor::new("abc日").render("", 4),
        rendered("abc日", 2, 1, 2)
    );
    assert_eq!(at("abc日", 3).render("", 4), rendered("abc日", 2, 1, 0));
    assert_eq!(
        LineEditor::new("ab日").render("", 4),
        rendered("ab日", 1, 1, 0)
    );
    assert_eq!(LineEditor::new("日").render("", 1), rendered("日", 1, 1, 0));
}

#[test]
fn render_escapes_buffer_chars_as_units() {
    let ed = LineEditor::new("a\x1bb\\");
    assert_eq!(ed.render("$ ", 80), rendered("$ a\\u{1b}b\\\\", 1, 0, 12));
    assert_eq!(at("a\x1bb", 2).render("", 80).cursor_col, 7);
    assert_eq!(LineEditor::new("\u{202e}").render("", 80).cursor_col, 8);
    assert_eq!(
        LineEditor::new("ab\n").render("", 4),
        rendered("ab\\n", 1, 1, 0)
    );
    assert_eq!(
        at("abc\x1b", 3).render("", 4),
        rendered("abc\\u{1b}", 3, 0, 3)
    );
}

#[test]
fn render_clamps_huge_layouts() {
    let ed = LineEditor::new(&"x".repeat(MAX_BYTES));
    let r = ed.render("", 1);
    assert_eq!(
        (r.rows, r.cursor_row, r.cursor_col),
        (u16::MAX, u16::MAX, 0)
    );
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn split_parses_and_rejects() {
    assert_eq!(
        split("git push 'origin main'"),
        Ok(strings(&["git", "push", "origin main"]))
    );
    assert_eq!(
        split(r#"echo "a\"b" c\ d"#),
        Ok(strings(&["echo", "a\"b", "c d"]))
    );
    assert_eq!(
        split("echo 'oops"),
        Err("unbalanced quotes: missing closing quote".to_string())
    );
    assert_eq!(
        split("echo \"oops"),
        Err("unbalanced quotes: missing closing quote".to_string())
    );
    assert_eq!(split("   "), Err("the command is empty".to_string()));
    assert_eq!(split(""), Err("the command is empty".to_string()));
    assert_eq!(
        split("# just a comment"),
        Err("the command is empty".to_string())
    );
}

#[test]
fn join_then_split_round_trips() {
    let tricky = [
        "plain",
        "with space",
        "it's",
        "\"double\"",
        "$HOME",
        "`id`",
        "back\\slash\\",
        "",
        "line\nbreak",
        "it's\nboth",
        "\x1b[31m",
        "\r",
        "日本語 🦀",
        "#not-a-comment",
        "a;b|c&d>e<f",
        "*?[~]=%",
        "\t",
        "-",
        "'",
    ];
    for arg in tricky {
        let argv = strings(&["cmd", arg, "tail"]);
        assert_eq!(
            split(&join(&argv)),
            Ok(argv.clone()),
            "{arg:?} via {}",
            join(&argv)
        );
        let first = strings(&[arg]);
        assert_eq!(split(&join(&first)), Ok(first.clone()), "{arg:?} alone");
    }
    let all = strings(&tricky);
    assert_eq!(split(&join(&all)), Ok(all));
}

#[test]
fn edited_text_survives_the_editor() {
    let argv = strings(&["printf", "%s\n", "a b", "\x1b"]);
    let ed = LineEditor::new(&join(&argv));
    assert_eq!(split(&ed.text()), Ok(argv));
}
