//! The invariant of [`super`]: the engine prints only through `say!`/`say_out!`.

use std::path::{Path, PathBuf};

/// Files that print without `say!`, each for a reason that keeps it outside "a message of
/// Lazaret's own carrying a sandbox-chosen byte".
const ALLOWED: &[(&str, &str)] = &[
    ("src/terminal/say.rs", "the one place that writes messages"),
    (
        "src/terminal/passthrough.rs",
        "the sandbox's output, through the passthrough filter",
    ),
    (
        "src/cli/exec.rs",
        "the command's own output: the sandbox's bytes, through the passthrough filter to a \
         terminal",
    ),
    (
        "src/profile_setup/display.rs",
        "the setup's progress line, rewritten in place (its own carriage return and erase-line; \
         every text escaped as a message)",
    ),
    (
        "src/cli/completions.rs",
        "shell completions and the man page, generated from the CLI's definitions",
    ),
    (
        "src/cli/ps.rs",
        "its outln! writes rows whose text the coordinator escaped (see activity)",
    ),
    (
        "src/cli/events/mod.rs",
        "JSON lines from cli::safe_json (ASCII only) or lines events::show escaped",
    ),
    (
        "src/network/port_forward.rs",
        "`ready`/`error:` to the coordinator's pipe, a protocol line, not a terminal",
    ),
    (
        "src/runtime/state_anchor_ns.rs",
        "its report to the parent process's pipe, a protocol line",
    ),
    (
        "src/escalation/mailbox_fs.rs",
        "a pid to the parent process's pipe, a protocol line",
    ),
    (
        "src/bin/lazaret-sidecar.rs",
        "runs in the Network Sidecar: its stderr goes to the container log",
    ),
    (
        "src/bin/lazaret-escalate.rs",
        "runs inside the Agent Sandbox: its output is the sandbox's, filtered on the host",
    ),
    (
        "src/bin/escalate/",
        "runs inside the Agent Sandbox: its output is the sandbox's, filtered on the host",
    ),
    (
        "src/coordinator/core_model.rs",
        "a test-only model checker (cfg(test)), its counts for the test log",
    ),
];

const PRINTS: &[&str] = &["println!(", "eprintln!(", "print!(", "eprint!("];
/// The terminal reached another way: the standard streams, their descriptors, the tty itself.
const STREAMS: &[&str] = &[
    "io::stdout()",
    "io::stderr()",
    "STDOUT_FILENO",
    "STDERR_FILENO",
    "from_raw_fd(1)",
    "from_raw_fd(2)",
    "\"/dev/tty\"",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of `text` that ships: up to an inline test module, comment lines left out.
fn shipped(text: &str) -> String {
    let end = text.find("#[cfg(test)]\nmod tests {").unwrap_or(text.len());
    text[..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `code` uses macro `name` (`print!(` not inside `eprint!(` or `say_print!(`).
fn uses(code: &str, name: &str) -> bool {
    code.match_indices(name).any(|(at, _)| {
        !code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

fn offenders(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut found = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .to_string_lossy()
            .into_owned();
        if rel.ends_with("_tests.rs") || ALLOWED.iter().any(|(p, _)| rel.starts_with(p)) {
            continue;
        }
        let code = shipped(&std::fs::read_to_string(&file).unwrap_or_default());
        for name in PRINTS.iter().chain(STREAMS) {
            if uses(&code, name) {
                found.push(format!("{rel}: {name}"));
            }
        }
    }
    found.sort();
    found
}

#[test]
fn the_engine_prints_only_through_say() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = offenders(root);
    assert!(
        found.is_empty(),
        "these print without say!/say_out! (crate::terminal::say), so a sandbox-chosen byte \
         would reach the terminal raw; use say! or, if the text is not a message, add the file \
         to ALLOWED with the reason:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_sees_each_way_of_printing() {
    for name in PRINTS.iter().chain(STREAMS) {
        assert!(
            uses(&shipped(&format!("fn f() {{ {name} }}")), name),
            "{name}"
        );
    }
    assert!(!uses("crate::say!(\"x\")", "print!("));
    assert!(
        !uses("// eprintln!(\"x\")", "eprintln!(") || shipped("// eprintln!(\"x\")").is_empty()
    );
    assert!(uses("x; eprint!(\"q\")", "eprint!("));
    assert!(!uses("x; eprint!(\"q\")", "print!("));
    let tests_only = "fn a() {}\n#[cfg(test)]\nmod tests {\n fn b() { println!(\"x\"); }\n}";
    assert!(!uses(&shipped(tests_only), "println!("));
    // Every allowed file still exists, so the list does not outlive what it excuses.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (path, why) in ALLOWED {
        assert!(root.join(path).exists(), "{path} ({why}) is gone");
    }
}

#[test]
fn messages_are_escaped_on_the_way_out() {
    let mut out = Vec::new();
    super::write_to(
        &mut out,
        "created the empty, Git-ignored directory \x1b]52;c;cm0gLXJm\x07x\r\u{9b}6n\u{202e}/",
        true,
    );
    let text = String::from_utf8(out).unwrap_or_default();
    assert_eq!(
        text,
        "created the empty, Git-ignored directory \\u{1b}]52;c;cm0gLXJm\\u{7}x\\r\\u{9b}6n\\u{202e}/\n"
    );
}
