//! Auto-approval rules (SR-8): exact argument vectors by default; trailing arguments only when
//! a rule says so. argv[0] is compared as written (it is then resolved through the
//! coordinator's PATH when run); every argument byte for byte; never through a shell.

use crate::profile::AutoApproveRule;

/// The rule that auto-approves `argv`, if any.
pub fn matching<'a>(rules: &'a [AutoApproveRule], argv: &[String]) -> Option<&'a AutoApproveRule> {
    rules.iter().find(|r| {
        let n = r.argv.len();
        if r.trailing_args {
            argv.len() >= n && argv[..n] == r.argv[..]
        } else {
            argv == r.argv.as_slice()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(argv: &[&str], trailing_args: bool) -> AutoApproveRule {
        AutoApproveRule {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            trailing_args,
        }
    }

    fn v(argv: &[&str]) -> Vec<String> {
        argv.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn exact_by_default_and_trailing_only_when_said() {
        let rules = [rule(&["git", "status"], false), rule(&["git", "log"], true)];
        assert!(matching(&rules, &v(&["git", "status"])).is_some());
        assert!(matching(&rules, &v(&["git", "status", "--porcelain"])).is_none());
        assert!(matching(&rules, &v(&["git", "status "])).is_none());
        assert!(matching(&rules, &v(&["/usr/bin/git", "status"])).is_none());
        assert!(matching(&rules, &v(&["git", "log", "-1"])).is_some());
        assert!(matching(&rules, &v(&["git"])).is_none());
        assert!(matching(&rules, &v(&["sh", "-c", "git status"])).is_none());
    }
}
