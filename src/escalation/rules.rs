//! Escalation rules (SR-8): exact argument vectors by default; trailing arguments only when a
//! rule says so. The program is compared by its **resolved executable**: the rule's argv[0] and
//! the request's are each resolved on the host (see `executable`) and must be the same file, so
//! `/usr/bin/git status` matches a rule `["git", "status"]` and `env git status` never does.
//! Every other argument is compared byte for byte; nothing goes through a shell. When several
//! rules match, the strictest decision wins: deny, then ask, then approve; no match means ask.

use crate::profile::{AutoApproveRule, RuleDecision};
use std::path::{Path, PathBuf};

fn matches(
    r: &AutoApproveRule,
    program: &Path,
    argv: &[String],
    resolve: &dyn Fn(&str) -> Option<PathBuf>,
) -> bool {
    let n = r.argv.len();
    if n == 0 || argv.is_empty() {
        return false;
    }
    let args_match = if r.trailing_args {
        argv.len() >= n && argv[1..n] == r.argv[1..]
    } else {
        argv.len() == n && argv[1..] == r.argv[1..]
    };
    args_match && r.argv.first().and_then(|p| resolve(p)).as_deref() == Some(program)
}

/// What the rules decide for `argv`, whose argv[0] resolved to `program` (`None`: it does not
/// resolve, and no rule matches it): the strictest decision of the matching rules, `Ask` when
/// none matches. `resolve` resolves a rule's argv[0] the same way.
pub fn decide(
    rules: &[AutoApproveRule],
    program: Option<&Path>,
    argv: &[String],
    resolve: &dyn Fn(&str) -> Option<PathBuf>,
) -> RuleDecision {
    let Some(program) = program else {
        return RuleDecision::Ask;
    };
    rules
        .iter()
        .filter(|r| matches(r, program, argv, resolve))
        .map(|r| r.decision)
        .max()
        .unwrap_or(RuleDecision::Ask)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(argv: &[&str], trailing_args: bool, decision: RuleDecision) -> AutoApproveRule {
        AutoApproveRule {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            trailing_args,
            decision,
        }
    }

    fn v(argv: &[&str]) -> Vec<String> {
        argv.iter().map(|s| s.to_string()).collect()
    }

    /// A host where `git` and `/usr/bin/git` are one file, `g` a symlink to it.
    fn resolve(p: &str) -> Option<PathBuf> {
        match p {
            "git" | "/usr/bin/git" | "g" => Some(PathBuf::from("/usr/bin/git")),
            "env" | "/usr/bin/env" => Some(PathBuf::from("/usr/bin/env")),
            "sh" => Some(PathBuf::from("/usr/bin/dash")),
            _ => None,
        }
    }

    fn decide(rules: &[AutoApproveRule], argv: &[String]) -> RuleDecision {
        let program = argv.first().and_then(|p| resolve(p));
        super::decide(rules, program.as_deref(), argv, &resolve)
    }

    #[test]
    fn exact_by_default_and_trailing_only_when_said() {
        use RuleDecision::{Approve, Ask};
        let rules = [
            rule(&["git", "status"], false, Approve),
            rule(&["git", "log"], true, Approve),
        ];
        assert_eq!(decide(&rules, &v(&["git", "status"])), Approve);
        assert_eq!(decide(&rules, &v(&["git", "status", "--porcelain"])), Ask);
        assert_eq!(decide(&rules, &v(&["git", "status "])), Ask);
        assert_eq!(decide(&rules, &v(&["/usr/bin/git", "status"])), Approve);
        assert_eq!(decide(&rules, &v(&["g", "status"])), Approve);
        assert_eq!(decide(&rules, &v(&["env", "git", "status"])), Ask);
        assert_eq!(decide(&rules, &v(&["/usr/bin/env", "git", "status"])), Ask);
        assert_eq!(decide(&rules, &v(&["git", "log", "-1"])), Approve);
        assert_eq!(decide(&rules, &v(&["git"])), Ask);
        assert_eq!(decide(&rules, &v(&["sh", "-c", "git status"])), Ask);
    }

    #[test]
    fn a_rule_or_request_whose_program_does_not_resolve_never_matches() {
        use RuleDecision::{Approve, Ask};
        let rules = [rule(&["missing"], true, Approve), rule(&[], true, Approve)];
        assert_eq!(decide(&rules, &v(&["missing"])), Ask);
        assert_eq!(decide(&rules, &v(&["git"])), Ask);
    }

    #[test]
    fn the_strictest_matching_decision_wins_whatever_the_order() {
        use RuleDecision::{Approve, Ask, Deny};
        let broad = rule(&["git"], true, Approve);
        let push = rule(&["git", "push"], true, Ask);
        let force = rule(&["git", "push", "--force"], true, Deny);
        for rules in [
            vec![broad.clone(), push.clone(), force.clone()],
            vec![force.clone(), push.clone(), broad.clone()],
        ] {
            assert_eq!(decide(&rules, &v(&["git", "fetch"])), Approve);
            assert_eq!(decide(&rules, &v(&["git", "push", "origin"])), Ask);
            assert_eq!(decide(&rules, &v(&["git", "push", "--force", "x"])), Deny);
        }
        // A deny rule holds for every spelling of the program.
        assert_eq!(
            decide(
                &[broad.clone(), force.clone()],
                &v(&["/usr/bin/git", "push", "--force"])
            ),
            Deny
        );
        // A deny rule alone never turns a non-matching request into a denial.
        assert_eq!(decide(&[force], &v(&["git", "push"])), Ask);
    }
}
