//! Argument vectors of the configuration: the profile's `command`, `auto_approve` rules
//! (matched against Host Escalation requests, run without a shell: SR-7, SR-8) and `setup`.

use super::file::{RawRule, RawSetup};
use super::paths;
use super::validate::Check;
use crate::profile::{AutoApproveRule, RuleDecision, SetupStep};
use std::path::PathBuf;
use toml::Spanned;

/// Checks an argument vector: non-empty, a non-empty program, no NUL anywhere.
pub fn argv(c: &mut Check<'_>, what: &str, raw: &Spanned<Vec<Spanned<String>>>) -> Vec<String> {
    let items = raw.get_ref();
    match items.first() {
        None => c.error(
            Some(&raw.span()),
            format!("{what} is empty: give the program and its arguments, e.g. [\"bash\", \"-l\"]"),
        ),
        Some(first) if first.get_ref().is_empty() => c.error(
            Some(&first.span()),
            format!("the program of {what} (its first element) is empty: name a program"),
        ),
        Some(_) => {}
    }
    for a in items {
        if a.get_ref().contains('\0') {
            c.error(
                Some(&a.span()),
                format!("an element of {what} contains a NUL byte, which no argument can hold"),
            );
        }
    }
    items.iter().map(|a| a.get_ref().clone()).collect()
}

/// An auto-approval rule: an exact argv (no newline either, so prompts and logs show it as
/// it is), extended to any trailing arguments only when `trailing_args = true`.
pub fn auto_approve(c: &mut Check<'_>, raw: &RawRule) -> AutoApproveRule {
    let argv = argv(c, "auto_approve argv", &raw.argv);
    for a in raw.argv.get_ref() {
        if a.get_ref().contains(['\n', '\r']) {
            c.error(
                Some(&a.span()),
                "an auto_approve argv element contains a line break: rules match one exact \
                 argument vector shown on one line; remove it",
            );
        }
    }
    let decision = match raw
        .decision
        .as_ref()
        .map(|d| (d.get_ref().as_str(), d.span()))
    {
        None | Some(("approve", _)) => RuleDecision::Approve,
        Some(("ask", _)) => RuleDecision::Ask,
        Some(("deny", _)) => RuleDecision::Deny,
        Some((other, span)) => {
            c.error(
                Some(&span),
                format!(
                    "decision = {other:?} is not a rule decision: use \"approve\" (the default), \
                     \"ask\" (always ask the developer) or \"deny\" (never run)"
                ),
            );
            RuleDecision::Deny
        }
    };
    AutoApproveRule {
        argv,
        trailing_args: raw.trailing_args,
        decision,
    }
}

/// The first-launch setup step: a command and the absolute container path it creates.
pub fn setup(c: &mut Check<'_>, raw: &RawSetup) -> SetupStep {
    let command = argv(c, "setup command", &raw.command);
    let creates = match paths::normalize_absolute(raw.creates.get_ref()) {
        Ok(p) => p,
        Err(e) => {
            c.error(
                Some(&raw.creates.span()),
                format!(
                    "setup creates: {e}; name the container file the setup produces, e.g. \
                     \"/usr/local/bin/claude\""
                ),
            );
            PathBuf::new()
        }
    };
    if creates == std::path::Path::new("/") {
        c.error(
            Some(&raw.creates.span()),
            "setup creates is \"/\", which always exists: name the file the setup produces",
        );
    }
    SetupStep { command, creates }
}
