//! The escalation rule matcher: a sandbox-chosen argv against the profile's `auto_approve`
//! rules (argv[0] compared by resolved executable, the rest byte for byte).
#![no_main]

use lazaret::escalation::rules::decide;
use lazaret::profile::{AutoApproveRule, RuleDecision};
use lazaret_fuzz::Bytes;
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

/// Words from a small alphabet, so that rules and requests often share them.
const WORDS: &[&str] = &[
    "git",
    "/usr/bin/git",
    "g",
    "env",
    "sh",
    "push",
    "status",
    "--force",
    "origin",
    "main",
    "",
    "-c",
    "*",
];

/// A host where `git`, `/usr/bin/git` and `g` are one file.
fn resolve(p: &str) -> Option<PathBuf> {
    match p {
        "git" | "/usr/bin/git" | "g" => Some(PathBuf::from("/usr/bin/git")),
        "env" => Some(PathBuf::from("/usr/bin/env")),
        "sh" => Some(PathBuf::from("/usr/bin/dash")),
        _ => None,
    }
}

/// A word: mostly from the alphabet, sometimes raw bytes.
fn word(input: &mut Bytes) -> String {
    let b = input.u8();
    match WORDS.get(usize::from(b) % 16) {
        Some(w) => (*w).to_owned(),
        None => String::from_utf8_lossy(input.piece()).into_owned(),
    }
}

fn argv(input: &mut Bytes) -> Vec<String> {
    (0..input.u8() % 5).map(|_| word(input)).collect()
}

fuzz_target!(|data: &[u8]| {
    let mut input = Bytes::new(data);
    let request = argv(&mut input);
    let mut rules = Vec::new();
    while !input.is_empty() && rules.len() < 16 {
        let flags = input.u8();
        rules.push(AutoApproveRule {
            argv: argv(&mut input),
            trailing_args: flags & 1 == 1,
            decision: match (flags >> 1) & 3 {
                0 => RuleDecision::Approve,
                1 => RuleDecision::Ask,
                _ => RuleDecision::Deny,
            },
        });
    }
    let program = request.first().and_then(|p| resolve(p));
    let got = decide(&rules, program.as_deref(), &request, &resolve);

    // Without a resolved program nothing matches.
    if program.is_none() {
        assert_eq!(got, RuleDecision::Ask);
    }
    // The order of the rules does not matter.
    let mut reversed = rules.clone();
    reversed.reverse();
    assert_eq!(
        decide(&reversed, program.as_deref(), &request, &resolve),
        got
    );
    // The decision is one a rule made, or Ask.
    assert!(got == RuleDecision::Ask || rules.iter().any(|r| r.decision == got));
    // Approval needs a rule naming every argument after argv[0] exactly, or as a prefix with
    // trailing_args.
    if got == RuleDecision::Approve {
        assert!(rules.iter().any(|r| {
            r.decision == RuleDecision::Approve
                && !r.argv.is_empty()
                && request.len() >= r.argv.len()
                && request[1..r.argv.len()] == r.argv[1..]
                && (r.trailing_args || request.len() == r.argv.len())
                && resolve(&r.argv[0]) == program
        }));
    }
    // A deny rule for exactly this argv always wins.
    if program.is_some() && !request.is_empty() {
        rules.push(AutoApproveRule {
            argv: request.clone(),
            trailing_args: false,
            decision: RuleDecision::Deny,
        });
        assert_eq!(
            decide(&rules, program.as_deref(), &request, &resolve),
            RuleDecision::Deny
        );
    }
});
