//! Adversarial scenarios: escalated_git (see main.rs). Host commands run for escalations
//! (SR-4, SR-7, SR-8, SR-14): git configuration the sandbox wrote (filters, diff drivers,
//! textconv, `diff.external`, `remote.*.uploadpack`, `core.sshCommand`, includes) must never
//! run on the host, whatever spelling or wrapper the request uses, and the working directory
//! cannot be moved by swapping it for a symlink while the developer decides.
//!
//! Since issue #30 escalated git runs with `GIT_DIR` pinned to the host repository and no work
//! tree (`GIT_IMPLICIT_WORK_TREE=0`): whatever directory a wrapper or `-C` moves it to, it reads
//! nothing of the worktree the sandbox writes, and commands that need a work tree (`status`,
//! `diff` against it) fail with git's "this operation must be run in a work tree" (`rc=128`);
//! `log`, tree-to-tree `diff`, `push`, `fetch` work. Git asked from a working directory inside a
//! nested repository is still denied (`rc=240`). The developer's own nested repositories are
//! hidden from the sandbox, so it cannot repoint them.
//!
//! Each attack writes a host canary path into the configuration it plants; the canary lies
//! outside the workspace (in the test's configuration directory), so only a process on the host
//! can create it. Every test asserts the canary is absent afterwards.

use crate::support::tmux::Tmux;
use crate::support::{lazaret_bin, Dev, Run, TestWorkspace};
use std::path::PathBuf;
use std::time::Duration;

/// The profile every scenario uses; `rules` are exact auto-approval rules.
pub(crate) fn profile(rules: &[&[&str]]) -> String {
    let mut s = String::from("[profiles.eg]\nextends = \"shell\"\n");
    for r in rules {
        let argv: Vec<String> = r.iter().map(|a| format!("{a:?}")).collect();
        s.push_str(&format!(
            "[[profiles.eg.auto_approve]]\nargv = [{}]\n",
            argv.join(", ")
        ));
    }
    s
}

/// A fresh workspace (a Git repository the Git Sentry protects) with `rules`, and the host
/// canary path an attack would create.
pub(crate) fn setup(dev: &Dev, name: &str, rules: &[&[&str]]) -> (TestWorkspace, String) {
    let ws = dev.workspace(name).with_profile("eg", &profile(rules));
    let canary = ws
        .config_home
        .as_ref()
        .map(|h| h.join("canary").display().to_string())
        .unwrap_or_default();
    assert!(!canary.is_empty());
    (ws, canary)
}

pub(crate) fn assert_no_canary(canary: &str, r: &Run) {
    assert!(
        !std::path::Path::new(canary).exists(),
        "the sandbox's command ran on the host (canary {canary} exists): {r:?}"
    );
}

/// Commit identity for git inside.
pub(crate) const GIT: &str = "git -c user.name=t -c user.email=t@l";

/// A nested repository `/workspace/x` made inside, with one committed file `f.txt`, then
/// `config` (shell lines run in it after the commit, `$C` = the canary), and `f.txt` made
/// stat-dirty (an old mtime) so that git re-reads it.
fn nested_repo(canary: &str, config: &str) -> String {
    format!(
        "set -e; C='{canary}'; mkdir -p /workspace/x; cd /workspace/x; git init -q; \
         echo a > f.txt; {GIT} add f.txt; {GIT} commit -qm i; {config}; \
         touch -m -d @1000000000 f.txt; "
    )
}

/// `lazaret-escalate -- ARGV` and its status on stdout as `rc=N`.
pub(crate) fn escalate(argv: &str) -> String {
    format!("rc=0; lazaret-escalate -- {argv} || rc=$?; echo rc=$rc")
}

/// Escalated git ran on the host and failed for want of a work tree (the hardening of issue
/// #30), `n` times, and nothing else was printed as a status.
fn assert_no_work_tree(r: &Run, n: usize) {
    assert_eq!(r.stdout.matches("rc=128").count(), n, "{r:?}");
    assert_eq!(r.stdout.matches("rc=").count(), n, "{r:?}");
    assert_eq!(
        r.stderr
            .matches("fatal: this operation must be run in a work tree")
            .count(),
        n,
        "{r:?}"
    );
}

/// The developer's own `git status` and `git diff` in the workspace after the run.
fn developer_git(ws: &TestWorkspace) {
    ws.host_sh("git status >/dev/null 2>&1; git diff >/dev/null 2>&1; true");
}

/// The verified escape of issue #13: a nested repository under /workspace/x whose config
/// defines `filter.evil.clean`, a `.gitattributes` using it, a stat-dirty tracked file, then
/// `cd /workspace/x && lazaret-escalate -- git status` under the docs' own rule
/// `argv = ["git", "status"]`: the clean filter ran on the host as the developer, no click.
#[test]
fn nested_repository_clean_filter_through_an_auto_approved_git_status_is_denied() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "eg-filter", &[&["git", "status"]]);
    let script = nested_repo(
        &canary,
        "echo '* filter=evil' > .gitattributes; git config filter.evil.clean \"touch $C; cat\"",
    ) + &escalate("git status");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert!(r.stdout.contains("rc=240"), "{r:?}");
    assert!(
        r.stderr.contains("denied") && r.stderr.contains("repository"),
        "the denial names the nested repository: {r:?}"
    );
    ws.assert_nothing_left();
}

/// The same nested repository, asked as `/usr/bin/git status`, where the developer's rules
/// spell git both ways: the spelling is not what decides, the resolved executable is git, so
/// the request is git in a nested repository and denied (the old code matched the
/// `/usr/bin/git` rule and ran it without any hardening).
#[test]
fn usr_bin_git_is_git_and_is_denied_in_a_nested_repository() {
    let dev = Dev::get();
    let (ws, canary) = setup(
        &dev,
        "eg-abs",
        &[&["git", "status"], &["/usr/bin/git", "status"]],
    );
    let script = nested_repo(
        &canary,
        "echo '* filter=evil' > .gitattributes; git config filter.evil.clean \"touch $C; cat\"",
    ) + &escalate("/usr/bin/git status");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert!(r.stdout.contains("rc=240"), "{r:?}");
    assert!(r.stderr.contains("repository"), "{r:?}");
    ws.assert_nothing_left();
}

/// `cd /workspace/x && lazaret-escalate -- env git status` under a rule for exactly that
/// argv: the program is `env`, not git, and a command from a nested repository is never
/// auto-approved (the developer would be asked, with a warning; `lazaret run` without a
/// terminal denies).
#[test]
fn env_git_from_a_nested_repository_is_never_auto_approved() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "eg-env", &[&["env", "git", "status"]]);
    let script = nested_repo(
        &canary,
        "echo '* filter=evil' > .gitattributes; git config filter.evil.clean \"touch $C; cat\"",
    ) + &escalate("env git status");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert!(r.stdout.contains("rc=240"), "{r:?}");
    assert!(r.stderr.contains("repository"), "{r:?}");
    ws.assert_nothing_left();
}

/// From the workspace root (where auto-approval is allowed) a wrapper that changes directory
/// before running git — `env -C x git status`, approved by an exact rule — reaches the nested
/// repository's filter unless git is hardened through the environment every child inherits.
/// Expected: the wrapper runs, and git under it, pinned to the protected repository with no
/// work tree, fails with "must be run in a work tree" (`rc=128`): nothing of `x` is read.
#[test]
fn git_inside_a_wrapper_that_changes_directory_still_has_no_work_tree() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "eg-wrap", &[&["env", "-C", "x", "git", "status"]]);
    let script = nested_repo(
        &canary,
        "echo '* filter=evil' > .gitattributes; git config filter.evil.clean \"touch $C; cat\"",
    ) + "cd /workspace; "
        + &escalate("env -C x git status");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert_no_work_tree(&r, 1);
    ws.assert_nothing_left();
}

/// `git -C x status` from the workspace root under a rule for exactly that argv: `-C` moves
/// git into the nested repository unless GIT_DIR pins the protected one. Expected: git is
/// pinned to the protected repository with no work tree and fails with "must be run in a work
/// tree" (`rc=128`), reading nothing of `x`; at the end of the run `x/.git`, made by the
/// sandbox, is moved to the host's `.git/lazaret-quarantine`.
#[test]
fn git_dash_c_into_a_nested_repository_has_no_work_tree_and_runs_nothing() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "eg-dashc", &[&["git", "-C", "x", "status"]]);
    let script = nested_repo(
        &canary,
        "echo '* filter=evil' > .gitattributes; git config filter.evil.clean \"touch $C; cat\"",
    ) + "cd /workspace; "
        + &escalate("git -C x status");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert_no_work_tree(&r, 1);
    assert!(
        r.stderr.contains("the sandbox made the repository") && r.stderr.contains("Moved it to"),
        "{r:?}"
    );
    assert!(!ws.path.join("x/.git").exists(), "{r:?}");
    developer_git(&ws);
    assert_no_canary(&canary, &r);
    ws.assert_nothing_left();
}

/// A diff driver defined in the nested repository (`diff.evil.command`, named by
/// `.gitattributes`), run by an auto-approved `git diff` from there.
#[test]
fn a_diff_driver_of_a_nested_repository_through_git_diff_is_denied() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "eg-drv", &[&["git", "diff"]]);
    let script = nested_repo(
        &canary,
        "echo '*.txt diff=evil' > .gitattributes; git config diff.evil.command \"touch $C; true\"; echo b >> f.txt",
    ) + &escalate("git diff");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert!(r.stdout.contains("rc=240"), "{r:?}");
    ws.assert_nothing_left();
}

/// `diff.external` in the nested repository, through an auto-approved `git diff`.
#[test]
fn diff_external_of_a_nested_repository_is_denied() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "eg-ext", &[&["git", "diff"]]);
    let script = nested_repo(
        &canary,
        "git config diff.external \"sh -c 'touch $C'\"; echo b >> f.txt",
    ) + &escalate("git diff");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert!(r.stdout.contains("rc=240"), "{r:?}");
    ws.assert_nothing_left();
}

/// A textconv program (`diff.evil.textconv`) in the nested repository, reached through an
/// `[include]` of a sandbox-written file, run by an auto-approved `git diff`.
#[test]
fn textconv_through_an_include_of_a_nested_repository_is_denied() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "eg-conv", &[&["git", "diff"]]);
    let script = nested_repo(
        &canary,
        "echo '*.txt diff=evil' > .gitattributes; \
         printf '[diff \"evil\"]\\n\\ttextconv = \"touch %s; cat\"\\n' \"$C\" > /workspace/evil.conf; \
         git config include.path ../../evil.conf; echo b >> f.txt",
    ) + &escalate("git diff");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert!(r.stdout.contains("rc=240"), "{r:?}");
    ws.assert_nothing_left();
}

/// `remote.origin.uploadpack` in the nested repository: an auto-approved `git fetch origin`
/// from there runs it (through a shell) on the host.
#[test]
fn remote_uploadpack_of_a_nested_repository_through_git_fetch_is_denied() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "eg-upl", &[&["git", "fetch", "origin"]]);
    let script = nested_repo(
        &canary,
        "git remote add origin .; git config remote.origin.uploadpack \"touch $C; git-upload-pack\"",
    ) + &escalate("git fetch origin");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert!(r.stdout.contains("rc=240"), "{r:?}");
    ws.assert_nothing_left();
}

/// `core.sshCommand` in the nested repository: an auto-approved `git fetch origin` to an
/// ssh URL runs it on the host (no network needed: the command is the attacker's).
#[test]
fn core_ssh_command_of_a_nested_repository_through_git_fetch_is_denied() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "eg-ssh", &[&["git", "fetch", "origin"]]);
    let script = nested_repo(
        &canary,
        "git remote add origin ssh://git.invalid/x; git config core.sshCommand \"touch $C; false\"",
    ) + &escalate("git fetch origin");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert!(r.stdout.contains("rc=240"), "{r:?}");
    ws.assert_nothing_left();
}

/// A `.git` *file* in a subdirectory, `gitdir: ../.evil`, naming a Git directory made inside
/// (with a clean filter in its config): host git from /workspace/sub would use it.
#[test]
fn a_git_file_in_a_subdirectory_pointing_to_a_sandbox_made_git_dir_is_denied() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "eg-gitfile", &[&["git", "status"]]);
    let script = nested_repo(
        &canary,
        "echo '* filter=evil' > .gitattributes; git config filter.evil.clean \"touch $C; cat\"",
    ) + "mv /workspace/x/.git /workspace/.evil; mkdir -p /workspace/sub; \
         mv /workspace/x/f.txt /workspace/x/.gitattributes /workspace/sub/; \
         echo 'gitdir: ../.evil' > /workspace/sub/.git; touch -m -d @1000000000 /workspace/sub/f.txt; \
         cd /workspace/sub; "
        + &escalate("git status");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert!(r.stdout.contains("rc=240"), "{r:?}");
    assert!(r.stderr.contains("repository"), "{r:?}");
    ws.assert_nothing_left();
}

/// The workspace is not a repository when Lazaret starts; the agent runs `git init` at
/// /workspace and plants a clean filter in the config it just created (nothing protects it),
/// then asks for the auto-approved `git status`.
#[test]
fn git_in_a_workspace_that_is_not_a_protected_repository_is_denied() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "eg-norepo", &[&["git", "status"]]);
    ws.host_sh("rm -rf .git");
    let script = format!(
        "set -e; C='{canary}'; cd /workspace; git init -q; echo a > f.txt; {GIT} add f.txt; \
         {GIT} commit -qm i; echo '* filter=evil' > .gitattributes; \
         git config filter.evil.clean \"touch $C; cat\"; touch -m -d @1000000000 f.txt; "
    ) + &escalate("git status");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert!(r.stdout.contains("rc=240"), "{r:?}");
    assert!(r.stderr.contains("not a Git repository"), "{r:?}");
    ws.assert_nothing_left();
}

/// The developer's repository has a submodule-like gitlink `sub` (an embedded repository made
/// on the host). Inside, the agent moves its Git directory to `/workspace/.evil`, points
/// `sub/.git` at it (`gitdir: ../.evil`), plants a clean filter in that config and makes a
/// file stat-dirty; then asks for `git status` at the workspace root (every step is tried
/// even when one fails). Host git would enter the submodule to check whether it is dirty and
/// run the filter there. Expected: the developer's `sub/.git` is hidden from the sandbox (a
/// tmpfs over it), so it cannot be moved or repointed — on the host it is the same directory
/// with the same config, and no `.evil` exists; escalated git has no work tree and fails with
/// "must be run in a work tree" (`rc=128`); the developer's own `git status` after the run
/// enters the real `sub` and runs nothing.
#[test]
fn a_developers_gitlink_cannot_be_repointed_inside_and_escalated_git_enters_nothing() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "eg-submod", &[&["git", "status"]]);
    ws.host_sh(&format!(
        "set -e; mkdir sub; cd sub; git init -q; echo a > f.txt; {GIT} add f.txt; {GIT} commit -qm s; \
         cd ..; {GIT} -c advice.addEmbeddedRepo=false add sub; {GIT} commit -qm gitlink"
    ));
    let before = ws.host_sh("stat -c %d:%i sub/.git; cat sub/.git/config");
    let script = format!(
        "C='{canary}'; cd /workspace; mv sub/.git .evil; echo 'gitdir: ../.evil' > sub/.git; \
         echo '* filter=evil' > sub/.gitattributes; git --git-dir=.evil config filter.evil.clean \"touch $C; cat\"; \
         touch -m -d @1000000000 sub/f.txt; "
    ) + &escalate("git status");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert_no_work_tree(&r, 1);
    assert_eq!(
        ws.host_sh("stat -c %d:%i sub/.git; cat sub/.git/config"),
        before,
        "the developer's nested repository was replaced or changed: {r:?}"
    );
    assert!(!ws.path.join(".evil").exists(), "{r:?}");
    developer_git(&ws);
    assert_no_canary(&canary, &r);
    ws.assert_nothing_left();
    // Auto-approved and run (git refused for want of a work tree): the trace still conforms.
    crate::support::assert_traces_conform(&ws);
}

/// A real submodule (its Git directory in the host's `.git/modules/sub`, its `sub/.git` a
/// `gitdir:` file): `git status` at the root is asked once. Then the agent copies
/// `.git/modules/sub` to a Git directory of its own (with a clean filter), rewrites `sub/.git`
/// to point there and writes `.gitmodules` with `ignore = none`, which overrides
/// `diff.ignoreSubmodules=all` for that submodule, and asks again (every step is tried even
/// when one fails). Expected: the sandbox's `.git` is its private one (no `modules/sub` to
/// copy) and the developer's `sub/.git` is bound read-only, so on the host `sub/.git` and the
/// submodule's config are unchanged; both escalated `git status` fail with "must be run in a
/// work tree" (`rc=128`); the developer's own `git status` after the run, which does enter
/// `sub` (`ignore = none` reached the host with the worktree), runs nothing.
#[test]
fn a_submodule_pointer_rewritten_inside_with_gitmodules_ignore_none_is_never_entered() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "eg-gitmod", &[&["git", "status"]]);
    ws.host_sh(&format!(
        "set -e; mkdir up; cd up; git init -q; echo a > f.txt; {GIT} add f.txt; {GIT} commit -qm s; \
         cd ..; {GIT} -c protocol.file.allow=always submodule add -q ./up sub; {GIT} commit -qm sub"
    ));
    let before = ws.host_sh("cat sub/.git .git/modules/sub/config");
    let script = format!("cd /workspace; {}; ", escalate("git status"))
        + &format!(
            "C='{canary}'; cp -r .git/modules/sub .evil; git config --file .evil/config --unset core.worktree; \
             echo 'gitdir: ../.evil' > sub/.git; echo '* filter=evil' > sub/.gitattributes; \
             git --git-dir=.evil config filter.evil.clean \"touch $C; cat\"; \
             printf '[submodule \"sub\"]\\n\\tpath = sub\\n\\turl = ./up\\n\\tignore = none\\n' > .gitmodules; \
             touch -m -d @1000000000 sub/f.txt; "
        )
        + &escalate("git status");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert_no_work_tree(&r, 2);
    assert_eq!(
        ws.host_sh("cat sub/.git .git/modules/sub/config"),
        before,
        "the submodule was repointed or its config changed: {r:?}"
    );
    assert!(
        ws.host_sh("cat .gitmodules").contains("ignore = none"),
        "the attack's .gitmodules did not reach the host: {r:?}"
    );
    developer_git(&ws);
    assert_no_canary(&canary, &r);
    ws.assert_nothing_left();
    // Auto-approved and run (git refused for want of a work tree): the trace still conforms.
    crate::support::assert_traces_conform(&ws);
}

/// The agent plants `.git/config.worktree` (without the extension that would make git read
/// it) and `.git/info/attributes` naming a filter defined there, plus a root `.gitattributes`,
/// then asks for an auto-approved `git status` at the root. Expected: `/workspace/.git` is the
/// Domain-private git directory, so the host's `.git` holds neither file; escalated git has no
/// work tree and fails with "must be run in a work tree" (`rc=128`); the developer's own
/// `git status` after the run (the root `.gitattributes` and a stat-dirty `f.txt` did reach
/// the host) finds no filter definition the sandbox wrote and runs nothing.
#[test]
fn config_planted_in_the_sandboxs_git_dir_defines_nothing_on_the_host() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "eg-cfgwt", &[&["git", "status"]]);
    ws.host_sh(&format!(
        "set -e; echo a > f.txt; {GIT} add f.txt; {GIT} commit -qm f"
    ));
    let script = format!(
        "set -e; C='{canary}'; cd /workspace; \
         printf '[filter \"evil\"]\\n\\tclean = \"touch %s; cat\"\\n' \"$C\" > .git/config.worktree; \
         mkdir -p .git/info; echo '* filter=evil' > .git/info/attributes; echo '* filter=evil' > .gitattributes; \
         touch -m -d @1000000000 f.txt; "
    ) + &escalate("git status");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert_no_work_tree(&r, 1);
    assert_eq!(
        ws.host_sh("ls .git/config.worktree .git/info/attributes 2>/dev/null | wc -l"),
        "0\n",
        "the host's .git holds what the sandbox planted: {r:?}"
    );
    assert_eq!(ws.host_sh("cat .gitattributes"), "* filter=evil\n");
    developer_git(&ws);
    assert_no_canary(&canary, &r);
    ws.assert_nothing_left();
}

/// Environment set inside (`GIT_DIR`, `GIT_CONFIG_*`, `GIT_EXTERNAL_DIFF`) is not part of a
/// request: host git never sees it. Asked: `git diff` (against the work tree: fails with
/// "must be run in a work tree", `rc=128`, as escalated git has none) and `git diff HEAD~1
/// HEAD` (tree to tree: runs on the protected repository and prints its `+a`; the planted
/// `GIT_DIR` would make it fail, `diff.external` or `GIT_EXTERNAL_DIFF` would replace that
/// output by the canary).
#[test]
fn git_environment_set_inside_does_not_reach_host_git() {
    let dev = Dev::get();
    let (ws, canary) = setup(
        &dev,
        "eg-env2",
        &[&["git", "diff"], &["git", "diff", "HEAD~1", "HEAD"]],
    );
    ws.host_sh(&format!(
        "set -e; echo a > f.txt; {GIT} add f.txt; {GIT} commit -qm f"
    ));
    let script = nested_repo(
        &canary,
        "echo '* filter=evil' > .gitattributes; git config filter.evil.clean \"touch $C; cat\"",
    ) + "cd /workspace; echo b >> f.txt; export GIT_DIR=/workspace/x/.git GIT_CONFIG_COUNT=1 \
         GIT_CONFIG_KEY_0=diff.external GIT_CONFIG_VALUE_0=\"sh -c 'touch $C'\" GIT_EXTERNAL_DIFF=\"sh -c 'touch $C'\"; "
        + &escalate("git diff")
        + "; "
        + &escalate("git diff HEAD~1 HEAD");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    let (worktree, trees) = r.stdout.split_once("rc=128\n").unwrap_or_default();
    assert!(
        worktree.is_empty()
            && r.stderr.contains("must be run in a work tree")
            && trees.contains("+a\n")
            && trees.ends_with("rc=0\n"),
        "{r:?}"
    );
    ws.assert_nothing_left();
}

/// The agent asks for `sh -c 'pwd -P; touch marker'` from /workspace/d; while the developer
/// reads the prompt, `d` is renamed and replaced by a symlink to a directory outside the
/// workspace. Approving must run the command in the directory that was shown (now
/// `d.orig`), never in the symlink's target.
#[test]
fn a_working_directory_swapped_for_a_symlink_while_the_prompt_waits_does_not_move_the_command() {
    let dev = Dev::get();
    let (ws, _canary) = setup(&dev, "eg-swap", &[]);
    let target = ws
        .config_home
        .as_ref()
        .map(|h| h.join("target"))
        .unwrap_or_else(|| PathBuf::from("/nonexistent"));
    ws.host_sh(&format!("mkdir -p d '{}'", target.display()));
    let tmux = Tmux::start(&dev, "egswap", "t", &ws.path.display().to_string(), 160, 50);
    start_session(&tmux, &ws);
    tmux.type_line(
        "t",
        "cd /workspace/d && lazaret-escalate -- sh -c 'pwd -P; touch marker'; echo rc=$?",
    );
    let host_d = format!("{}/d", ws.path.display());
    let s = tmux.wait_screen("t", "the prompt", |s| {
        s.contains("the sandbox asks to run a command on the host")
    });
    assert!(s.contains(&format!("host \"{host_d}\"")), "{s}");
    ws.host_sh(&format!("mv d d.orig && ln -s '{}' d", target.display()));
    std::thread::sleep(Duration::from_millis(600));
    tmux.keys("t", "a");
    let s = tmux.wait_screen("t", "the command's end", |s| {
        s.lines().any(|l| l.starts_with("rc="))
    });
    assert!(
        !target.join("marker").exists(),
        "the command ran in the symlink's target: {s}"
    );
    let orig = ws.path.join("d.orig");
    assert!(
        s.contains("rc=0") && orig.join("marker").exists(),
        "the command did not run in the original directory: {s}"
    );
    assert!(s.contains(&format!("{}\n", orig.display())), "{s}");
    tmux.type_line("t", "exit");
    tmux.wait_screen("t", "the host shell", |s| s.trim_end().ends_with("host$"));
    ws.assert_nothing_left();
}

/// An interactive `lazaret run --profile eg` in tmux target `t`, at the sandbox's shell prompt.
pub(crate) fn start_session(tmux: &Tmux<'_>, ws: &TestWorkspace) {
    let env = ws.env_args().join(" ");
    tmux.type_line(
        "t",
        &format!(
            "PS1='host$ '; env {env} {} run --profile eg",
            lazaret_bin().display()
        ),
    );
    tmux.type_line("t", "PS1='sandbox# '");
    tmux.wait_sandbox_prompt("t");
}

/// In an interactive session whose rules approve exactly `env git status`, the agent asks for
/// it from the nested repository /workspace/x (with a clean filter planted): it is not
/// auto-approved; the developer's prompt carries a warning naming the repository; denying it
/// runs nothing.
#[test]
fn a_command_from_a_nested_repository_is_asked_with_a_warning() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "eg-warn", &[&["env", "git", "status"]]);
    let tmux = Tmux::start(&dev, "egwarn", "t", &ws.path.display().to_string(), 200, 50);
    start_session(&tmux, &ws);
    let plant = nested_repo(
        &canary,
        "echo '* filter=evil' > .gitattributes; git config filter.evil.clean \"touch $C; cat\"",
    );
    tmux.type_line(
        "t",
        &format!(
            "( {plant} ) && cd /workspace/x && {}",
            escalate("env git status")
        ),
    );
    let s = tmux.wait_screen("t", "the prompt", |s| {
        s.contains("the sandbox asks to run a command on the host")
    });
    assert!(
        s.contains("warning") && s.contains("the working directory lies in \"x\""),
        "{s}"
    );
    std::thread::sleep(Duration::from_millis(600));
    tmux.keys("t", "d");
    let s = tmux.wait_screen("t", "the denial", |s| s.contains("rc=240"));
    assert!(!std::path::Path::new(&canary).exists(), "{s}");
    tmux.type_line("t", "exit");
    tmux.wait_screen("t", "the host shell", |s| s.trim_end().ends_with("host$"));
    ws.assert_nothing_left();
}
