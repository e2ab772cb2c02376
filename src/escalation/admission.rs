//! What may happen to an escalation given what it would run and where (SR-4, SR-7, SR-8),
//! before and after the developer decides. Pure: the facts come from `executable`, `workdir`
//! and `repository`.
//!
//! - Git (the resolved executable) runs only in the protected repository: from a working
//!   directory in a repository the sandbox may have made, or in a workspace without a protected
//!   repository, it is **denied** — whoever approved it, since its configuration is the
//!   sandbox's. So are git's own `--git-dir` / `--work-tree` options, which choose another
//!   repository, and `--exec-path=DIR`, which chooses where git finds its commands.
//! - Any other program from such a place, a program inside the workspace, or one that does not
//!   resolve, is **never auto-approved**: the developer is asked, with the reason as a warning
//!   on the prompt (a `deny` rule still denies).

use super::executable::Executable;
use crate::profile::RuleDecision;

/// Where the command would run, as far as git is concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// In the protected repository's work tree, with no other repository on the way.
    Protected,
    /// Anywhere else; why, for the developer.
    Unprotected(String),
}

/// The outcome before the developer is involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Refused; why.
    Deny(String),
    /// Decide as `rule` says, showing `warnings` if the developer is asked.
    Decide {
        rule: RuleDecision,
        warnings: Vec<String>,
    },
}

/// The decision for running `argv` (resolved as `exe`) at `place`, given the rules' `rule`.
pub fn admit(
    exe: &Result<Executable, String>,
    argv: &[String],
    place: &Place,
    rule: RuleDecision,
) -> Admission {
    if let Err(why) = git_may_run(exe, argv, place) {
        return Admission::Deny(why);
    }
    let mut warnings = Vec::new();
    match exe {
        Err(why) => warnings.push(format!("the program cannot run: {why}")),
        Ok(e) if e.in_workspace => warnings.push(format!(
            "the program {} lies in the workspace: the sandbox can write it",
            e.path.display()
        )),
        Ok(_) => {}
    }
    if let Place::Unprotected(why) = place {
        warnings.push(format!(
            "{why}. A git this command starts is pinned to the workspace's own repository, but \
             check what the command does there"
        ));
    }
    let rule = match rule {
        RuleDecision::Approve if !warnings.is_empty() => RuleDecision::Ask,
        r => r,
    };
    Admission::Decide { rule, warnings }
}

/// Whether git may run `argv` at `place` (no: why). Other programs always may.
pub fn git_may_run(
    exe: &Result<Executable, String>,
    argv: &[String],
    place: &Place,
) -> Result<(), String> {
    if !matches!(exe, Ok(e) if e.is_git) {
        return Ok(());
    }
    if let Place::Unprotected(why) = place {
        return Err(format!(
            "host git runs only in the workspace's repository protected by the Git Sentry: {why}"
        ));
    }
    if let Some(opt) = repository_option(argv) {
        return Err(format!(
            "git's {opt} option chooses another repository or program directory than the \
             workspace's protected repository and the host's git"
        ));
    }
    Ok(())
}

/// A git global option (before the subcommand) that selects a repository or work tree.
fn repository_option(argv: &[String]) -> Option<&str> {
    let mut args = argv.iter().skip(1);
    while let Some(a) = args.next() {
        let name = a.split('=').next().unwrap_or(a);
        match name {
            "--git-dir" | "--work-tree" => return Some(name),
            // Where git finds its non-builtin commands (a directory the sandbox could fill).
            "--exec-path" if a.contains('=') => return Some(name),
            // Global options that take the next argument as their value.
            "-C" | "-c" | "--namespace" | "--config-env" | "--super-prefix" | "--list-cmds"
            | "--attr-source"
                if !a.contains('=') =>
            {
                args.next();
            }
            _ if a.starts_with('-') => {}
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use RuleDecision::{Approve, Ask, Deny};

    fn exe(path: &str, is_git: bool, in_workspace: bool) -> Result<Executable, String> {
        Ok(Executable {
            path: PathBuf::from(path),
            is_git,
            in_workspace,
        })
    }

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn git_runs_only_in_the_protected_repository() {
        let git = exe("/usr/bin/git", true, false);
        let nested = Place::Unprotected("x is a nested repository".into());
        let status = v(&["git", "status"]);
        assert_eq!(
            admit(&git, &status, &Place::Protected, Approve),
            Admission::Decide {
                rule: Approve,
                warnings: vec![]
            }
        );
        assert!(matches!(
            admit(&git, &status, &nested, Approve),
            Admission::Deny(why) if why.contains("nested")
        ));
        // Asked or approved by the developer: still git in a repository of the sandbox's.
        assert!(matches!(
            admit(&git, &status, &nested, Ask),
            Admission::Deny(_)
        ));
        for argv in [
            &["git", "--git-dir=x/.git", "status"][..],
            &["git", "--git-dir", "x/.git", "status"],
            &["git", "-C", "x", "--work-tree", "x", "status"],
            &["git", "-c", "a.b=c", "--git-dir=y", "log"],
            &["git", "--exec-path=/workspace/bin", "evil"],
        ] {
            assert!(
                matches!(
                    admit(&git, &v(argv), &Place::Protected, Approve),
                    Admission::Deny(_)
                ),
                "{argv:?}"
            );
        }
        // After the subcommand, it is the subcommand's argument (a path, a message…).
        assert!(matches!(
            admit(
                &git,
                &v(&["git", "log", "--", "--git-dir"]),
                &Place::Protected,
                Approve
            ),
            Admission::Decide { rule: Approve, .. }
        ));
    }

    #[test]
    fn other_programs_from_unprotected_places_are_asked_with_a_warning() {
        let env = exe("/usr/bin/env", false, false);
        let nested = Place::Unprotected("x is a nested repository".into());
        let argv = v(&["env", "git", "status"]);
        match admit(&env, &argv, &nested, Approve) {
            Admission::Decide { rule, warnings } => {
                assert_eq!(rule, Ask);
                assert!(warnings[0].contains("x is a nested repository"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            admit(&env, &argv, &nested, Deny),
            Admission::Decide { rule: Deny, .. }
        ));
        let planted = exe("/w/tool", false, true);
        assert!(matches!(
            admit(&planted, &v(&["/w/tool"]), &Place::Protected, Approve),
            Admission::Decide { rule: Ask, warnings } if warnings[0].contains("workspace")
        ));
        let missing: Result<Executable, String> = Err("nope is not found".into());
        assert!(matches!(
            admit(&missing, &v(&["nope"]), &Place::Protected, Approve),
            Admission::Decide { rule: Ask, .. }
        ));
    }
}
