//! Escalation rules (SR-8): exact argument vectors by default; trailing arguments only when a
//! rule says so. argv[0] is compared as written (it is then resolved through the coordinator's
//! PATH when run); every argument byte for byte; never through a shell. When several rules
//! match, the strictest decision wins: deny, then ask, then approve; no match means ask.

use crate::profile::{AutoApproveRule, RuleDecision};

fn matches(r: &AutoApproveRule, argv: &[String]) -> bool {
    let n = r.argv.len();
    if r.trailing_args {
        argv.len() >= n && argv[..n] == r.argv[..]
    } else {
        argv == r.argv.as_slice()
    }
}

/// What the rules decide for `argv`: the strictest decision of the matching rules, `Ask` when
/// none matches.
pub fn decide(rules: &[AutoApproveRule], argv: &[String]) -> RuleDecision {
    rules
        .iter()
        .filter(|r| matches(r, argv))
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
        assert_eq!(decide(&rules, &v(&["/usr/bin/git", "status"])), Ask);
        assert_eq!(decide(&rules, &v(&["git", "log", "-1"])), Approve);
        assert_eq!(decide(&rules, &v(&["git"])), Ask);
        assert_eq!(decide(&rules, &v(&["sh", "-c", "git status"])), Ask);
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
        // A deny rule alone never turns a non-matching request into a denial.
        assert_eq!(decide(&[force], &v(&["git", "push"])), Ask);
    }
}
