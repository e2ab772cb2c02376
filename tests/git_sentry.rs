//! Git Sentry and the git boundary on the real stack (SR-4, FR-3, DX-3, issue #30): inside, the
//! sandbox has its own git directory — its config, hooks, index and stash are its own and the
//! host's are not visible — while status, add, commit, branch and stash work, and the agent's
//! commits and branches reach the host repository (branch, `HEAD` and index following), and the
//! developer's reach the sandbox: in a plain repository, a linked worktree and a superproject.

mod support;

use support::{Dev, TestWorkspace};

const GIT: &str = "git -c user.name=agent -c user.email=agent@sandbox";

/// A host hook that leaves a marker in the workspace when it runs.
fn plant_hook(ws: &TestWorkspace, hooks: &str) {
    ws.host_sh(&format!(
        "mkdir -p '{hooks}' && printf '#!/bin/sh\\ntouch \"$(git rev-parse --show-toplevel)/HOOK_RAN\"\\n' \
         > '{hooks}/post-commit' && chmod +x '{hooks}/post-commit'"
    ));
}

/// Git work inside, in `dir` (relative to the workspace): the private config and hooks are
/// writable (they are the sandbox's own), a commit, a branch and a stash work. Returns the run.
fn git_work_inside(ws: &TestWorkspace, dir: &str) -> support::Run {
    let script = format!(
        "set -e; cd /workspace/{dir}; G=$(git rev-parse --git-dir); \
         git config --local sandbox.was here; \
         mkdir -p \"$G/hooks\"; printf '#!/bin/sh\\ntouch PLANTED_HOOK_RAN\\n' > \"$G/hooks/post-commit\"; \
         chmod +x \"$G/hooks/post-commit\"; echo hooks-written; \
         echo inside > inside.txt; git add inside.txt; {GIT} -c core.hooksPath=/dev/null commit -qm from-sandbox; \
         git branch from-sandbox; echo more >> inside.txt; git stash -q; \
         echo stashes=$(git stash list | wc -l); git status --porcelain | wc -l | sed 's/^/dirty=/'"
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    for want in ["hooks-written", "stashes=1", "dirty=0"] {
        assert!(r.stdout.contains(want), "missing {want}: {r:?}");
    }
    r
}

/// The host sees the agent's commit on its branch and a new branch, its index followed (a
/// clean `git status`), its config and hooks untouched, no hook ran; the agent's stash stayed
/// the sandbox's; a commit made on the host still runs the host hook (the control) and reaches
/// the sandbox.
fn host_sees_results(ws: &TestWorkspace, dir: &str, config: &str, config_before: &str) {
    let cd = format!("cd '{}/{dir}'", ws.path.display());
    let log = ws.host_sh(&format!(
        "{cd} && git log --format=%s -1 from-sandbox && git log --format=%s -1 HEAD && \
         git status --porcelain | wc -l && git stash list | wc -l"
    ));
    assert_eq!(
        log, "from-sandbox\nfrom-sandbox\n0\n0\n",
        "host view of the agent's git work (branch, HEAD, a clean status, no stash)"
    );
    assert_eq!(
        ws.host_sh(&format!("cat '{config}'")),
        config_before,
        "config changed"
    );
    let markers = ws.host_sh(&format!(
        "{cd} && ls HOOK_RAN PLANTED_HOOK_RAN 2>/dev/null | wc -l"
    ));
    assert_eq!(markers.trim(), "0", "a hook ran for the agent's commit");
    ws.host_sh(&format!(
        "{cd} && {GIT} commit -q --allow-empty -m host && test -e HOOK_RAN && test ! -e PLANTED_HOOK_RAN && rm HOOK_RAN"
    ));
    let dir_in = format!("/workspace/{dir}");
    let r = ws.run(&[
        "sh",
        "-c",
        &format!("cd {dir_in} && git log --format=%s -1 && git config --local sandbox.was"),
    ]);
    assert_eq!(
        r.stdout, "host\nhere\n",
        "the developer's commit inside; the private config kept: {r:?}"
    );
}

#[test]
fn plain_repository_the_sandbox_has_its_own_git_and_commits_cross_the_boundary() {
    let dev = Dev::get();
    let ws = dev.workspace("sentry");
    plant_hook(&ws, ".git/hooks");
    let config = format!("{}/.git/config", ws.path.display());
    let before = ws.host_sh(&format!("cat '{config}'"));
    let r = git_work_inside(&ws, "");
    assert!(
        r.stderr.contains("agent committed 1 commits to")
            && r.stderr.contains("agent created branch from-sandbox"),
        "the developer is told what crossed: {r:?}"
    );
    host_sees_results(&ws, "", &config, &before);
    // Nothing of the host's .git is visible inside: not its hooks, not its config.
    let r = ws.run(&["sh", "-c", "ls /workspace/.git/hooks; grep -c sandbox /workspace/.git/config; test -e /workspace/.git/hooks/post-commit && grep -c HOOK_RAN /workspace/.git/hooks/post-commit"]);
    assert!(
        !r.stdout.contains("HOOK_RAN") && r.stdout.contains("\n1\n"),
        "{r:?}"
    );
    ws.assert_nothing_left();
}

#[test]
fn worktree_git_works_and_reaches_the_main_repository() {
    let dev = Dev::get();
    let main = dev.workspace("wtmain");
    plant_hook(&main, ".git/hooks");
    let wt = format!("{}-wt", main.path.display());
    main.host_sh(&format!("git worktree add -q '{wt}' -b wt-branch"));
    // The worktree is the workspace of its own Domain.
    let ws = TestWorkspace::at(&dev, std::path::PathBuf::from(&wt));
    let config = format!("{}/.git/config", main.path.display());
    let before = ws.host_sh(&format!("cat '{config}'"));
    git_work_inside(&ws, "");
    host_sees_results(&ws, "", &config, &before);
    let branch = main.host_sh("git log --format=%s -1 wt-branch~1");
    assert_eq!(
        branch, "from-sandbox\n",
        "the main repository sees the worktree's commit"
    );
    let _ = dev.sh(&format!("rm -rf '{wt}'"));
    ws.assert_nothing_left();
}

#[test]
fn a_superproject_works_inside_and_its_submodules_git_stays_on_the_host() {
    let dev = Dev::get();
    let lib = dev.workspace("sublib");
    let ws = dev.workspace("super");
    ws.host_sh(&format!(
        "git -c protocol.file.allow=always submodule add -q '{}' lib && {GIT} commit -qm 'add lib'",
        lib.path.display()
    ));
    plant_hook(&ws, ".git/hooks");
    let config = format!("{}/.git/config", ws.path.display());
    let before = ws.host_sh(&format!("cat '{config}'"));
    git_work_inside(&ws, "");
    host_sees_results(&ws, "", &config, &before);
    // The submodule's .git file is read-only inside and its git directory is not there.
    let r = ws.run(&[
        "sh",
        "-c",
        "echo x >> lib/.git && echo WROTE; ls /workspace/.git/modules 2>&1 | wc -l",
    ]);
    assert!(!r.stdout.contains("WROTE"), "{r:?}");
    assert_eq!(
        ws.host_sh("git -C lib rev-parse --git-dir"),
        format!("{}/.git/modules/lib\n", ws.path.display())
    );
    ws.assert_nothing_left();
}

#[test]
fn a_workspace_that_is_not_a_repository_is_said_to_be_unprotected() {
    let dev = Dev::get();
    let ws = dev.workspace("norepo");
    ws.host_sh("rm -rf .git");
    let r = ws.run(&["true"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stderr.contains("not a Git repository"), "{r:?}");
    ws.assert_nothing_left();
}

#[test]
fn a_symlinked_hooks_dir_is_the_hosts_own_business_and_never_seen_inside() {
    let dev = Dev::get();
    let ws = dev.workspace("hooklink");
    let shared = format!("{}.hooks", ws.path.display());
    ws.host_sh(&format!(
        "mkdir -p '{shared}' && echo secret > '{shared}/post-commit' && rm -rf .git/hooks && ln -s '{shared}' .git/hooks"
    ));
    let r = ws.run(&[
        "sh",
        "-c",
        "grep -r secret /workspace/.git/hooks 2>/dev/null | wc -l",
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout.trim(), "0", "{r:?}");
    let _ = dev.sh(&format!("rm -rf '{shared}'"));
    ws.assert_nothing_left();
}

/// What a command did to the agent's references is on the host when `lazaret run` returns —
/// also a branch in a directory of its own (`feature/…`), whose creation changes no directory
/// the boundary looks at first; a command that did no git work ends without a round.
#[test]
fn references_the_command_moved_are_on_the_host_when_it_returns() {
    let dev = Dev::get();
    let ws = dev.workspace("returns");
    let r = ws.run(&["git", "branch", "feature/a"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        ws.host_sh("git branch --list 'feature/*' --format='%(refname:short)'"),
        "feature/a\n"
    );
    let r = ws.run(&[
        "sh",
        "-c",
        &format!("git branch feature/c && {GIT} tag -a -m t v1"),
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        ws.host_sh("git branch --list 'feature/*' --format='%(refname:short)'; git tag"),
        "feature/a\nfeature/c\nv1\n"
    );
    let r = ws.run(&["true"]);
    assert!(!r.stderr.contains("git boundary"), "{r:?}");
    ws.assert_nothing_left();
}
