//! Lazaret's own messages as a way onto the developer's terminal (issue #31, DX-4, SR-7): the
//! sandbox chooses names that Lazaret's notices, warnings and errors quote — a `.gitignore`
//! line the next launch turns into a directory, a nested repository's path, a Git-ignored
//! path an error lists — and fills them with escape sequences: OSC 52 (set the host clipboard,
//! which the profile forbids), a window title, CSI 6n and DECRQSS (a query whose reply the host shell reads
//! as typing), a carriage return (to write over Lazaret's own warning), 8-bit C1 CSI and OSC,
//! and a bidi override (to show `exe.gpj` as `jpg.exe`). Expected: what `lazaret run` prints,
//! stdout and stderr, holds no control character but its own newlines and no bidi control;
//! the names are there, escaped as the cards show them (`\u{1b}`).

use crate::support::{Dev, Run, TestWorkspace};

/// The hostile name, as `printf` octal escapes for the sandbox's shell (a `.gitignore`
/// candidate allows no `/`, `\`, `*`, `?`, `[`: BEL ends the OSCs, C1 ST the 8-bit one).
const HOSTILE_PRINTF: &str = "x\\033]52;c;cHduZWQ=\\007\\033]0;owned\\007\\302\\2336n\\rLOOKS-CLEAN\
                              \\342\\200\\256gpj.exe\\302\\23552;c;eA==\\302\\234\\033P$qm\\302\\234y";
/// How that name looks escaped, once Lazaret shows it.
const HOSTILE_SHOWN: &str =
    "x\\u{1b}]52;c;cHduZWQ=\\u{7}\\u{1b}]0;owned\\u{7}\\u{9b}6n\\rLOOKS-CLEAN\
                             \\u{202e}gpj.exe\\u{9d}52;c;eA==\\u{9c}\\u{1b}P$qm\\u{9c}y";

/// The characters of `text` a terminal would act on or that reorder what it shows: every
/// control (C0 but newline, DEL, C1), the bidi controls, and U+FFFD (a byte that was not
/// UTF-8). Written out here, independently of the escaping function under test.
fn unmeant(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{fffd}')
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
        })
        .collect()
}

fn assert_clean(what: &str, r: &Run) {
    for (stream, text) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
        let bad = unmeant(text);
        assert!(
            bad.is_empty(),
            "{what}: {stream} carries {bad:?} to the terminal:\n{text:?}"
        );
    }
}

/// Inside: one `.gitignore` line `H/` (the next launch creates the directory `H` and says so)
/// and `git init` in `/workspace/nH` (the end of the run moves its `.git` away and says so),
/// `H` the hostile name. Expected: both messages name it escaped; nothing else reaches the
/// terminal.
#[test]
fn hostile_names_in_launch_notices_and_git_sentry_warnings_arrive_escaped() {
    let dev = Dev::get();
    let ws = dev.workspace("msg-names");
    let script = format!(
        "set -e; H=$(printf '{HOSTILE_PRINTF}'); printf '%s/\\n' \"$H\" >> /workspace/.gitignore; \
         git init -q \"/workspace/n$H\""
    );
    let first = ws.run(&["sh", "-c", &script]);
    assert_eq!(first.code, Some(0), "{first:?}");
    assert_clean("the run that planted the names", &first);
    assert!(
        first.stderr.contains(&format!(
            "the sandbox made the repository {}/n",
            ws.path.display()
        )),
        "the Git Sentry warning was not printed: {first:?}"
    );
    let next = ws.run(&["true"]);
    assert_eq!(next.code, Some(0), "{next:?}");
    assert_clean("the next launch", &next);
    assert!(
        next.stderr
            .contains(&format!("Git-ignored directory {HOSTILE_SHOWN}/")),
        "the launch notice did not name the directory, escaped: {next:?}"
    );
    ws.assert_nothing_left();
}

/// Inside: 600 Git-ignored files named `H-N.ignored` (more than Ignored Workspace State
/// mounts), so the next launch fails with an error that lists the first of them. Expected:
/// `lazaret: error: …` names them escaped; nothing else reaches the terminal.
#[test]
fn hostile_names_in_a_launch_error_arrive_escaped() {
    let dev = Dev::get();
    let ws = dev.workspace("msg-error");
    let script = format!(
        "set -e; H=$(printf '{HOSTILE_PRINTF}'); printf '*.ignored\\n' >> /workspace/.gitignore; \
         i=0; while [ $i -lt 600 ]; do : > \"/workspace/$H-$i.ignored\"; i=$((i+1)); done"
    );
    let first = ws.run(&["sh", "-c", &script]);
    assert_eq!(first.code, Some(0), "{first:?}");
    let next = ws.run(&["true"]);
    assert_ne!(next.code, Some(0), "the launch should refuse: {next:?}");
    assert_clean("the refused launch", &next);
    assert!(
        next.stderr.contains("Git-ignored paths in") && next.stderr.contains(HOSTILE_SHOWN),
        "the error did not list the names, escaped: {next:?}"
    );
    cleanup(&ws);
    ws.assert_nothing_left();
}

fn cleanup(ws: &TestWorkspace) {
    ws.host_sh(
        "find . -maxdepth 1 -name '*.ignored' -delete; git checkout -q -- . 2>/dev/null || true",
    );
}

/// `line` run by `sh` on a terminal (`script`): what the terminal received holds the text of
/// `h.sh`'s output and none of its sequences.
fn assert_text_only(dev: &Dev, line: &str) {
    let out = dev
        .command("script")
        .args(["-qec", line, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running script");
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(shown.contains("rc=0"), "{line}: {shown:?}");
    assert!(shown.contains("ABCDEF"), "{line}: {shown:?}");
    for seq in ["]52;", "P$q", "]8;", "[21t"] {
        assert!(
            !shown.contains(seq),
            "{line}: {seq} reached the terminal: {shown:?}"
        );
    }
}

/// Inside, with `lazaret exec`'s stdout a terminal (a script's, a developer's shell): OSC 52
/// (set the host clipboard), a DECRQSS query (its reply echoes `m…`), an OSC 8 link to
/// `file:///etc`, CSI 21 t (report the title); then the same through `lazaret run`. Expected:
/// the terminal receives the text only; through a pipe the bytes stay the command's own.
#[test]
fn exec_and_run_output_to_a_terminal_goes_through_the_passthrough_filter() {
    let dev = Dev::get();
    let ws = dev.workspace("msg-exec");
    ws.host_sh(
        "printf '%s\\n' \"printf 'A\\\\033]52;c;cHduZWQ=\\\\007B\\\\033P\\$qm\\\\033\\\\\\\\C\\\\033]8;;file:///etc\\\\033\\\\\\\\D\\\\033]8;;\\\\033\\\\\\\\E\\\\033[21tF'\" > h.sh",
    );
    let line = format!(
        "cd '{}' && lazaret exec -- sh /workspace/h.sh; echo rc=$?",
        ws.path.display()
    );
    assert_text_only(&dev, &line);
    // `lazaret run` on a terminal: the same filter.
    let line = format!(
        "cd '{}' && lazaret run -- sh /workspace/h.sh; echo rc=$?",
        ws.path.display()
    );
    assert_text_only(&dev, &line);
    let piped = ws.lazaret(&["exec", "--", "sh", "/workspace/h.sh"]);
    assert_eq!(piped.code, Some(0), "{piped:?}");
    assert!(
        piped.stdout.contains("\u{1b}]52;c;cHduZWQ=\u{7}B"),
        "{piped:?}"
    );
    ws.assert_nothing_left();
}
