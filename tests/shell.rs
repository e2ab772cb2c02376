//! The CLI fits the shell (issue #15): completion scripts for bash, zsh and fish and the man
//! pages come from the CLI's own definitions; bash loads the script, man renders the pages.

mod support;

use std::process::Command;
use support::lazaret_bin;

fn lazaret(args: &[&str]) -> String {
    let out = Command::new(lazaret_bin())
        .args(args)
        .output()
        .expect("running lazaret");
    assert!(
        out.status.success(),
        "lazaret {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn bash_loads_the_completions_and_every_shell_knows_the_verbs() {
    let script = lazaret(&["completions", "bash"]);
    let out = Command::new("bash")
        .args(["--norc", "-c", "source /dev/stdin; complete -p lazaret"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .expect("stdin")
                .write_all(script.as_bytes())?;
            c.wait_with_output()
        })
        .expect("bash");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("-F _lazaret lazaret"), "{shown}");
    for shell in ["bash", "zsh", "fish"] {
        let script = lazaret(&["completions", shell]);
        for verb in ["run", "tui", "attach", "ps", "kill", "completions"] {
            assert!(script.contains(verb), "{shell} lacks {verb}");
        }
        assert!(
            !script.contains("__coordinator"),
            "{shell} offers a hidden verb"
        );
    }
    let err = Command::new(lazaret_bin())
        .args(["completions", "tcsh"])
        .output()
        .expect("lazaret");
    assert!(!err.status.success());
    assert!(String::from_utf8_lossy(&err.stderr).contains("possible values"));
}

#[test]
fn man_shows_the_verbs_and_each_verb_has_its_page() {
    let dir = tempfile::tempdir().expect("a temp dir");
    lazaret(&["__man", &dir.path().display().to_string()]);
    let page = |name: &str| {
        let out = Command::new("man")
            .arg("-l")
            .arg(dir.path().join(format!("{name}.1")))
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .expect("man");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let top = page("lazaret");
    for verb in ["lazaret-run", "lazaret-tui", "lazaret-attach", "lazaret-ps"] {
        assert!(top.contains(verb), "{top}");
    }
    assert!(!top.contains("__coordinator"), "{top}");
    assert!(page("lazaret-ps").contains("--json"));
}
