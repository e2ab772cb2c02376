use super::*;

fn prompt(argv: &[&str], justification: &str) -> EscalationPrompt {
    EscalationPrompt {
        request_id: "0".repeat(32),
        profile: "shell".into(),
        session_id: "s".into(),
        argv: argv.iter().map(|s| s.to_string()).collect(),
        program: "/usr/bin/git".into(),
        cwd: "/workspace".into(),
        host_cwd: "/home/dev/p".into(),
        justification: justification.into(),
        timeout_secs: 60,
        warnings: Vec::new(),
    }
}

fn text<'a>(fields: &'a [Field], label: &str) -> &'a str {
    fields
        .iter()
        .find(|f| f.label == label)
        .map(|f| f.text.as_str())
        .unwrap_or_default()
}

#[test]
fn a_short_request_is_shown_whole_with_its_program_and_argument_count() {
    let p = prompt(&["git", "push", "origin main"], "publish");
    let f = fields(&p, 60, false);
    assert_eq!(
        text(&f, "program"),
        r#"/usr/bin/git (argv[0] "git") · 2 arguments"#
    );
    assert_eq!(text(&f, "command"), r#"["git", "push", "origin main"]"#);
    assert_eq!(text(&f, "in"), r#""/workspace" → host "/home/dev/p""#);
    assert_eq!(text(&f, "why"), r#""publish""#);
    assert!(!is_cut(&p, 60));
    let mut none = p.clone();
    none.program.clear();
    let f = fields(&none, 60, false);
    assert!(
        text(&f, "program").contains("resolves to no program"),
        "{f:?}"
    );
    assert!(f.iter().any(|f| f.label == "program" && f.warning));
}

#[test]
fn every_field_keeps_its_rows_however_long_the_sandbox_makes_it() {
    let long: Vec<String> = (0..300)
        .map(|i| format!("arg{i:03}-{}", "x".repeat(90)))
        .collect();
    let mut argv = vec!["git"];
    argv.extend(long.iter().map(String::as_str));
    argv.push("--the-last-one");
    let mut p = prompt(&argv, &"why ".repeat(5000));
    p.cwd = format!("/workspace/{}", "d/".repeat(3000));
    p.warnings = vec!["w".repeat(10_000)];
    for width in [24, 69, 120] {
        let f = fields(&p, width, false);
        let rows = |label: &str| text(&f, label).width().div_ceil(width);
        assert!(rows("command") <= COMMAND_ROWS, "{width}: {f:?}");
        assert!(rows("why") <= WHY_ROWS, "{width}");
        assert!(rows("in") <= PLACE_ROWS, "{width}");
        assert!(rows("program") <= PROGRAM_ROWS, "{width}");
        assert!(f
            .iter()
            .filter(|f| f.warning)
            .all(|f| f.text.width() <= WARNING_ROWS * width));
        // The head keeps argv[0]; the tail the last argument; the marker what was left out.
        let command = text(&f, "command");
        assert!(command.starts_with(r#"["git""#), "{command}");
        assert!(command.contains("more bytes — v shows all"), "{command}");
    }
    // At a comfortable width the tail shows the end of the command.
    let f = fields(&p, 120, false);
    assert!(text(&f, "command").ends_with(r#""--the-last-one"]"#));
    // The count is of the original bytes left out.
    let command = text(&f, "command");
    let n: usize = command
        .split(" … ")
        .nth(1)
        .and_then(|m| m.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_default();
    // (The card's own quotes and commas count as themselves.)
    let total: usize = p.argv.iter().map(|a| a.len() + 4).sum();
    let shown_raw = command.len() - command.split(" … ").nth(1).map_or(0, |m| m.len() + 6);
    assert!(
        n > 0 && n <= total && n + shown_raw >= total,
        "{n} {total} {shown_raw}"
    );
    // The full card shows everything.
    let all = fields(&p, 120, true);
    assert!(text(&all, "command").contains("arg150-"));
    assert!(is_cut(&p, 120));
}

#[test]
fn look_alike_letters_are_escaped_and_warned_about_first() {
    let mut p = prompt(&["gitk", "pus\u{43e}h"], "обычный текст");
    p.warnings = vec!["the working directory is in a repository the sandbox made".into()];
    let f = fields(&p, 80, false);
    assert_eq!(f[0].label, "warning");
    assert!(
        f[0].text.contains("non-ASCII characters shown escaped"),
        "{f:?}"
    );
    assert_eq!(f[1].text, p.warnings[0]);
    assert!(text(&f, "command").contains(r"pus\u{43e}h"), "{f:?}");
    // The justification is prose: its letters stay readable (still escaped for controls).
    assert_eq!(text(&f, "why"), "\"обычный текст\"");
    let plain = fields(&prompt(&["git", "status"], ""), 80, false);
    assert!(plain.iter().all(|f| !f.warning), "{plain:?}");
    assert_eq!(text(&plain, "why"), "(none given)");
}

#[test]
fn warnings_come_first_and_too_many_are_counted() {
    let mut p = prompt(&["git"], "");
    p.warnings = (0..7).map(|i| format!("warning {i}")).collect();
    let f = fields(&p, 80, false);
    let labels: Vec<&str> = f.iter().map(|f| f.label).collect();
    assert_eq!(
        labels,
        ["warning", "warning", "warning", "warning", "program", "command", "in", "why"]
    );
    assert_eq!(f[3].text, "4 more warnings — v shows all");
    assert_eq!(fields(&p, 80, true).iter().filter(|f| f.warning).count(), 7);
}

#[test]
fn nothing_the_sandbox_chose_reaches_the_terminal_raw() {
    let hostile = "\u{1b}]52;c;aGk=\u{7}\u{9b}2J\u{202e}\r\n\u{200b}\"x";
    let mut p = prompt(&["git", hostile], hostile);
    p.cwd = hostile.into();
    p.program = format!("/workspace/{hostile}");
    p.warnings = vec![format!("nested repository at {hostile}")];
    for full in [false, true] {
        for f in fields(&p, 40, full) {
            assert!(
                !f.text
                    .chars()
                    .any(|c| escape::is_escaped(c) || c == '\u{1b}'),
                "{f:?}"
            );
        }
    }
    let f = fields(&p, 200, false);
    assert!(text(&f, "command").contains(r#"\u{1b}]52;c;aGk=\u{7}\u{9b}2J\u{202e}\r\n\u{200b}\"x"#));
}
