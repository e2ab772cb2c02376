//! Git Sentry on the real stack (SR-4, DX-3): inside the sandbox `.git/config` cannot be
//! written, the hooks dir is empty and a host hook does not run, while git status, add,
//! commit, branch and stash work and the host sees their results — in a plain repository,
//! a worktree and a repository with a submodule.

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

/// Runs the checks inside, in `dir` (relative to the workspace), with `gitdir` the container
/// path of the repository's git dir; returns stdout.
fn sentry_checks_inside(ws: &TestWorkspace, dir: &str, gitdir: &str) -> String {
    let script = format!(
        "cd {dir_in}; \
         if echo '[x]' >> {gitdir}/config 2>/dev/null; then echo CONFIG_WRITABLE; fi; \
         if git config --local sandbox.was here 2>/dev/null; then echo CONFIG_CHANGED; fi; \
         if mv {gitdir} {gitdir}.moved 2>/dev/null; then echo GITDIR_MOVED; fi; \
         echo hooks=$(ls -A {gitdir}/hooks | wc -l); \
         set -e; echo inside > inside.txt; git add inside.txt; {GIT} commit -qm from-sandbox; \
         git branch from-sandbox; echo more >> inside.txt; git stash -q; \
         echo stashes=$(git stash list | wc -l); git status --porcelain | wc -l | sed 's/^/dirty=/'; \
         printf '#!/bin/sh\\ntouch PLANTED_HOOK_RAN\\n' > {gitdir}/hooks/post-commit; \
         chmod +x {gitdir}/hooks/post-commit",
        dir_in = if dir.is_empty() { "/workspace".to_owned() } else { format!("/workspace/{dir}") },
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    for bad in ["CONFIG_WRITABLE", "CONFIG_CHANGED", "GITDIR_MOVED"] {
        assert!(!r.stdout.contains(bad), "{bad}: {r:?}");
    }
    for want in ["hooks=0", "stashes=1", "dirty=0"] {
        assert!(r.stdout.contains(want), "missing {want}: {r:?}");
    }
    r.stdout
}

/// The host sees the sandbox's commit, branch and stash; its config and hooks are untouched
/// and no hook ran; a commit made on the host still runs the host hook (the control).
fn host_sees_results(ws: &TestWorkspace, dir: &str, config: &str, config_before: &str) {
    let cd = format!("cd '{}/{dir}'", ws.path.display());
    let log = ws.host_sh(&format!(
        "{cd} && git log --format=%s -1 from-sandbox && git stash list | wc -l"
    ));
    assert_eq!(
        log, "from-sandbox\n1\n",
        "host view of the sandbox's git work"
    );
    assert_eq!(
        ws.host_sh(&format!("cat '{config}'")),
        config_before,
        "config changed"
    );
    let markers = ws.host_sh(&format!("{cd} && ls HOOK_RAN 2>/dev/null | wc -l"));
    assert_eq!(
        markers.trim(),
        "0",
        "the host hook ran for the sandbox's commit"
    );
    // The control: a host commit runs the host's hook, and not the one the sandbox wrote.
    ws.host_sh(&format!(
        "{cd} && {GIT} commit -q --allow-empty -m host && test -e HOOK_RAN && test ! -e PLANTED_HOOK_RAN"
    ));
}

#[test]
fn plain_repository_config_and_hooks_are_protected_and_git_works() {
    let dev = Dev::get();
    let ws = dev.workspace("sentry");
    plant_hook(&ws, ".git/hooks");
    let config = format!("{}/.git/config", ws.path.display());
    let before = ws.host_sh(&format!("cat '{config}'"));
    sentry_checks_inside(&ws, "", "/workspace/.git");
    host_sees_results(&ws, "", &config, &before);
    // The post-commit hook the sandbox wrote went to transient storage, not to the host.
    let planted = ws.host_sh("grep -l PLANTED .git/hooks/* | wc -l");
    assert_eq!(planted.trim(), "0");
    ws.assert_nothing_left();
}

#[test]
fn repository_without_hooks_dir_still_gets_an_empty_protected_one() {
    let dev = Dev::get();
    let ws = dev.workspace("nohooks");
    ws.host_sh("rm -rf .git/hooks");
    let r = ws.run(&["sh", "-c", "printf '#!/bin/sh\\ntouch /workspace/X\\n' > .git/hooks/post-commit && chmod +x .git/hooks/post-commit && ls -A .git/hooks"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        ws.host_sh("ls -A .git/hooks | wc -l").trim(),
        "0",
        "a sandbox hook reached the host"
    );
    ws.assert_nothing_left();
}

#[test]
fn worktree_git_works_and_the_main_repository_is_protected() {
    let dev = Dev::get();
    let main = dev.workspace("wtmain");
    plant_hook(&main, ".git/hooks");
    let wt = format!("{}-wt", main.path.display());
    main.host_sh(&format!("git worktree add -q '{wt}' -b wt-branch"));
    // The worktree is the workspace of its own Domain.
    let ws = TestWorkspace::at(&dev, std::path::PathBuf::from(&wt));
    let gitdir = format!("{}/.git", main.path.display());
    let config = format!("{gitdir}/config");
    let before = ws.host_sh(&format!("cat '{config}'"));
    sentry_checks_inside(&ws, "", &gitdir);
    host_sees_results(&ws, "", &config, &before);
    let branch = main.host_sh("git log --format=%s -1 wt-branch~1");
    assert_eq!(
        branch, "from-sandbox\n",
        "the main repository sees the worktree's commit"
    );
    ws.assert_nothing_left();
}

#[test]
fn submodule_config_and_hooks_are_protected_and_git_works_inside_it() {
    let dev = Dev::get();
    let lib = dev.workspace("sublib");
    let ws = dev.workspace("super");
    ws.host_sh(&format!(
        "git -c protocol.file.allow=always submodule add -q '{}' lib && {GIT} commit -qm 'add lib'",
        lib.path.display()
    ));
    plant_hook(&ws, ".git/modules/lib/hooks");
    let config = format!("{}/.git/modules/lib/config", ws.path.display());
    let before = ws.host_sh(&format!("cat '{config}'"));
    sentry_checks_inside(&ws, "lib", "/workspace/.git/modules/lib");
    host_sees_results(&ws, "lib", &config, &before);
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
fn a_symlinked_hooks_dir_is_refused_with_the_fix_and_nothing_starts() {
    let dev = Dev::get();
    let ws = dev.workspace("hooklink");
    let shared = format!("{}.hooks", ws.path.display());
    ws.host_sh(&format!(
        "mkdir -p '{shared}' && rm -rf .git/hooks && ln -s '{shared}' .git/hooks"
    ));
    let r = ws.run(&["true"]);
    assert_eq!(r.code, Some(125), "{r:?}");
    assert!(
        r.stderr.contains("SR-4") && r.stderr.contains("core.hooksPath"),
        "{r:?}"
    );
    assert!(ws.containers().is_empty());
    let _ = dev.sh(&format!("rm -rf '{shared}'"));
    ws.assert_nothing_left();
}
