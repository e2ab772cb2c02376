//! Adversarial scenarios: git_sentry (see main.rs). Git control files planted through the
//! shared workspace — `commondir`, `gitdir:` pointers, `config.worktree` without the extension,
//! `objects/info/alternates`, nested repositories — against the next launch (mount planning)
//! and against the developer's own host git after the run (SR-3, SR-4).

use crate::support::{Dev, TestWorkspace};
use std::path::PathBuf;

const GIT: &str = "git -c user.name=t -c user.email=t@localhost";
const SECRET: &str = "CANARY-PRIVATE-KEY";

/// A directory of the developer's, like `~/.ssh`: a `config` file and a private key.
fn canary(dev: &Dev) -> TestWorkspace {
    let out = dev.sh(&format!(
        "set -e; d=$(mktemp -d \"$HOME/lazaret-canary-XXXXXX\"); printf 'Host *\\n' > \"$d/config\"; \
         echo {SECRET} > \"$d/id_ed25519\"; chmod 600 \"$d/id_ed25519\"; cd \"$d\"; pwd -P"
    ));
    assert!(out.status.success(), "{out:?}");
    TestWorkspace::at(
        dev,
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()),
    )
}

/// The canary holds exactly what it held: nothing written, no `hooks` created in it.
fn assert_canary_untouched(c: &TestWorkspace) {
    assert_eq!(
        c.host_sh("ls -A"),
        "config\nid_ed25519\n",
        "the canary dir changed"
    );
    assert_eq!(c.host_sh("cat id_ed25519"), format!("{SECRET}\n"));
}

/// A script that tries to read the canary's key and write `authorized_keys` wherever a
/// mount of it could appear inside (at its host path, or at `/<name>` for a relative path).
fn try_canary(c: &TestWorkspace) -> String {
    let name = c.path.file_name().unwrap_or_default().to_string_lossy();
    format!(
        "for d in '/{name}' '{host}'; do cat \"$d/id_ed25519\" 2>/dev/null; \
         echo attacker-key >> \"$d/authorized_keys\" 2>/dev/null; done; true",
        host = c.path.display()
    )
}

/// A workspace that is not a Git repository.
fn plain_dir(dev: &Dev, name: &str) -> TestWorkspace {
    let ws = dev.workspace(name);
    ws.host_sh("rm -rf .git");
    ws
}

fn assert_refused(r: &crate::support::Run, ws: &TestWorkspace, what: &str) {
    assert_eq!(r.code, Some(125), "{r:?}");
    assert!(
        r.stderr.contains("Git Sentry refuses to start") && r.stderr.contains(what),
        "{r:?}"
    );
    assert!(r.stderr.contains("mv -- '"), "no fix in the message: {r:?}");
    assert!(ws.containers().is_empty(), "something was started");
}

/// Quarantined copies `NAME.lazaret-quarantine-*` in `dir` (relative to the workspace).
fn quarantined(ws: &TestWorkspace, dir: &str, name: &str) -> usize {
    ws.host_sh(&format!(
        "ls -A '{dir}' | grep -c '^{name}.lazaret-quarantine-' || true"
    ))
    .trim()
    .parse()
    .unwrap_or(0)
}

/// Inside: `echo ../../../<canary> > /workspace/.git/commondir` (relative, as in the report
/// against `~/.ssh`), hoping the next `lazaret run` bind-mounts the canary dir read-write.
/// Expected: the end of the planting run renames the file aside and says so; the next run
/// starts normally and sees nothing of the canary, which is neither read nor written, and no
/// `hooks` dir is created in it. (Fails on the code before the fix: run 2 read the key.)
#[test]
fn commondir_planted_inside_relative_to_a_home_dir_is_neutralised_and_never_mounted() {
    let dev = Dev::get();
    let c = canary(&dev);
    let ws = dev.workspace("gs-cd-rel");
    let rel = format!(
        "../../../{}",
        c.path.strip_prefix(&dev.home).unwrap_or(&c.path).display()
    );
    let r = ws.run(&[
        "sh",
        "-c",
        &format!("echo '{rel}' > /workspace/.git/commondir"),
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stderr.contains("changed a git control file") && r.stderr.contains("commondir"),
        "the developer was not told: {r:?}"
    );
    assert!(ws.host_sh("ls -A .git").lines().all(|l| l != "commondir"));
    assert_eq!(quarantined(&ws, ".git", "commondir"), 1);
    let r = ws.run(&["sh", "-c", &try_canary(&c)]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        !r.stdout.contains(SECRET),
        "the sandbox read the canary: {r:?}"
    );
    assert_canary_untouched(&c);
    ws.assert_nothing_left();
}

/// Inside: `echo <absolute canary path> > /workspace/.git/commondir`, then the CLI is killed
/// before its end-of-run check (simulated: the file is written on the host). Expected: the
/// next launch is refused before anything starts, naming the file, where it points, the `mv`
/// that removes it; `lazaret git-sentry accept` refuses to accept it (not a Git directory);
/// the canary is untouched, no `hooks` dir in it.
#[test]
fn commondir_absolute_left_by_a_killed_run_is_refused_before_anything_starts() {
    let dev = Dev::get();
    let c = canary(&dev);
    let ws = dev.workspace("gs-cd-abs");
    assert_eq!(ws.run(&["true"]).code, Some(0));
    ws.host_sh(&format!("echo '{}' > .git/commondir", c.path.display()));
    let r = ws.run(&["sh", "-c", &try_canary(&c)]);
    assert_refused(&r, &ws, ".git/commondir");
    assert!(r.stderr.contains(&c.path.display().to_string()), "{r:?}");
    assert!(!r.stdout.contains(SECRET));
    let a = ws.lazaret(&["git-sentry", "accept"]);
    assert_ne!(a.code, Some(0), "an invalid commondir was accepted: {a:?}");
    assert!(a.stderr.contains("cannot be accepted"), "{a:?}");
    assert_canary_untouched(&c);
    ws.assert_nothing_left();
}

/// Inside a workspace that is not a repository: `echo 'gitdir: <another repo of the
/// developer>/.git' > /workspace/.git`, so that the next launch mounts that repository
/// read-write and the developer's host git in the workspace works on it. Expected: renamed
/// aside at the end of the run (host git sees no repository there); a pointer left by a killed
/// run is refused at the next start and the other repository is not mounted.
#[test]
fn gitdir_pointer_in_a_non_repository_workspace_is_neutralised_and_refused() {
    let dev = Dev::get();
    let other = dev.workspace("gs-other");
    other.host_sh("echo private > private.txt");
    let ws = plain_dir(&dev, "gs-ptr");
    let pointer = format!("gitdir: {}/.git", other.path.display());
    let r = ws.run(&["sh", "-c", &format!("echo '{pointer}' > /workspace/.git")]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stderr.contains("changed a git control file"), "{r:?}");
    assert_eq!(quarantined(&ws, ".", ".git"), 1);
    ws.host_sh(&format!("echo '{pointer}' > .git"));
    let r = ws.run(&["sh", "-c", "cat /workspace/private.txt; ls /home"]);
    assert_refused(&r, &ws, "gitdir:");
    assert!(!r.stdout.contains("private"));
    ws.assert_nothing_left();
}

/// A repository with a separate Git directory, accepted by the developer; then the pointer is
/// changed to another repository of the developer's (by a sandbox of another workspace that
/// contains this one, or a killed run). Expected: refused, the message shows the recorded and
/// the new pointer.
#[test]
fn a_changed_gitdir_pointer_is_refused() {
    let dev = Dev::get();
    let other = dev.workspace("gs-other2");
    let ws = plain_dir(&dev, "gs-sep");
    let gd = format!("{}.gitdir", ws.path.display());
    ws.host_sh(&format!("git init -q --separate-git-dir '{gd}' ."));
    let a = ws.lazaret(&["git-sentry", "accept"]);
    assert_eq!(a.code, Some(0), "{a:?}");
    assert_eq!(ws.run(&["git", "status", "--short"]).code, Some(0));
    ws.host_sh(&format!(
        "echo 'gitdir: {}/.git' > .git",
        other.path.display()
    ));
    let r = ws.run(&["true"]);
    assert_refused(&r, &ws, "recorded as");
    let _ = dev.sh(&format!("rm -rf '{gd}'"));
    ws.assert_nothing_left();
}

/// Inside: `printf '[core]\n\tfsmonitor = "touch …"\n' > /workspace/.git/config.worktree` —
/// inert while extensions.worktreeConfig is off, active on the host once the developer runs
/// `git sparse-checkout init` (which turns the extension on). Expected: renamed aside at the
/// end of the run; after the developer enables the extension, host `git status` runs nothing.
#[test]
fn config_worktree_without_the_extension_is_renamed_aside() {
    let dev = Dev::get();
    let ws = dev.workspace("gs-cfgwt");
    let marker = ws.path.join("FSMONITOR_RAN");
    let script = format!(
        "printf '[core]\\n\\tfsmonitor = \"touch {m}; false\"\\n' > /workspace/.git/config.worktree",
        m = marker.display()
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stderr.contains("config.worktree"), "{r:?}");
    assert_eq!(quarantined(&ws, ".git", "config.worktree"), 1);
    ws.host_sh("git config extensions.worktreeConfig true && git status --short >/dev/null");
    assert!(!marker.exists(), "the planted fsmonitor ran on the host");
    ws.assert_nothing_left();
}

/// A `config.worktree` without the extension left by a killed run (written on the host).
/// Expected: the next start is refused and names the file.
#[test]
fn config_worktree_left_by_a_killed_run_is_refused() {
    let dev = Dev::get();
    let ws = dev.workspace("gs-cfgwt2");
    assert_eq!(ws.run(&["true"]).code, Some(0));
    ws.host_sh("printf '[core]\\n\\tpager = evil\\n' > .git/config.worktree");
    let r = ws.run(&["true"]);
    assert_refused(&r, &ws, "config.worktree");
    ws.assert_nothing_left();
}

/// Inside: `echo <another repo>/.git/objects > /workspace/.git/objects/info/alternates`, so
/// that host git (gc, repack) copies that repository's objects into the workspace. Expected:
/// renamed aside at the end of the run; the same file left by a killed run is refused.
#[test]
fn alternates_to_outside_the_repository_are_neutralised_and_refused() {
    let dev = Dev::get();
    let other = dev.workspace("gs-alt-other");
    let ws = dev.workspace("gs-alt");
    let line = format!("{}/.git/objects", other.path.display());
    let r = ws.run(&[
        "sh",
        "-c",
        &format!("echo '{line}' > /workspace/.git/objects/info/alternates"),
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stderr.contains("alternates"), "{r:?}");
    assert_eq!(quarantined(&ws, ".git/objects/info", "alternates"), 1);
    ws.host_sh(&format!("echo '{line}' > .git/objects/info/alternates"));
    let r = ws.run(&["true"]);
    assert_refused(&r, &ws, "alternates");
    ws.assert_nothing_left();
}

/// Inside: a new linked-worktree admin dir `/workspace/.git/worktrees/evil` whose `commondir`
/// points to the canary (and, left by a killed run, the same in the admin dir of the
/// developer's real worktree). Expected: renamed aside at the end of the run; the changed admin
/// dir of the real worktree is refused at the next start as invalid.
#[test]
fn commondir_in_a_worktree_admin_dir_is_neutralised_and_refused() {
    let dev = Dev::get();
    let c = canary(&dev);
    let ws = dev.workspace("gs-admin");
    let wt = format!("{}-wt", ws.path.display());
    ws.host_sh(&format!("git worktree add -q '{wt}' -b wt-branch"));
    let script = format!(
        "mkdir -p /workspace/.git/worktrees/evil && cd /workspace/.git/worktrees/evil && \
         echo ref: refs/heads/main > HEAD && echo '{}' > commondir",
        c.path.display()
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stderr.contains("worktrees/evil/commondir"), "{r:?}");
    assert_eq!(quarantined(&ws, ".git/worktrees/evil", "commondir"), 1);
    ws.host_sh(&format!(
        "echo '{}' > .git/worktrees/$(basename '{wt}')/commondir",
        c.path.display()
    ));
    let r = ws.run(&["true"]);
    assert_refused(&r, &ws, "must point to");
    assert_canary_untouched(&c);
    let _ = dev.sh(&format!("rm -rf '{wt}'"));
    ws.assert_nothing_left();
}

/// Inside: a fake common dir in the workspace whose config sets `core.fsmonitor`, and
/// `/workspace/.git/commondir` pointing to it — the developer's next host `git status` would
/// run the sandbox's program. Expected: after the run, host `git status` runs nothing of the
/// sandbox's (the commondir was renamed aside before the CLI returned).
#[test]
fn host_git_after_the_run_does_not_follow_a_planted_commondir() {
    let dev = Dev::get();
    let ws = dev.workspace("gs-hostgit");
    let marker = ws.path.join("FSMONITOR_RAN");
    let script = format!(
        "set -e; cp -a /workspace/.git /workspace/evil; \
         printf '[core]\\n\\tfsmonitor = \"touch {m}; false\"\\n' >> /workspace/evil/config; \
         mkdir -p /workspace/evil/worktrees; ln -s ../../.git /workspace/evil/worktrees/.git || true; \
         echo ../evil > /workspace/.git/commondir",
        m = marker.display()
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let _ = ws.dev.sh(&format!(
        "cd '{}' && git status --short >/dev/null 2>&1",
        ws.path.display()
    ));
    assert!(
        !marker.exists(),
        "host git ran the sandbox's fsmonitor: {r:?}"
    );
    ws.assert_nothing_left();
}

/// Inside: `echo <canary> > /workspace/.git/commondir`, then keep running — host git run
/// meanwhile (the developer's other terminal, a shell prompt) would follow it. Expected: while
/// the sandbox still runs, the file is renamed aside (the session's watch, woken by inotify), and
/// the developer is told once when the command ends.
#[test]
fn commondir_planted_during_a_long_run_is_renamed_aside_while_it_runs() {
    let dev = Dev::get();
    let c = canary(&dev);
    let ws = dev.workspace("gs-watch");
    let script = format!(
        "echo '{}' > /workspace/.git/commondir; sleep 2; \
         ls -A /workspace/.git | grep -c '^commondir$' | sed 's/^/present=/'",
        c.path.display()
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert!(
        r.stdout.contains("present=0"),
        "still there while running: {r:?}"
    );
    assert_eq!(
        r.stderr.matches("changed a git control file").count(),
        1,
        "{r:?}"
    );
    assert_eq!(quarantined(&ws, ".git", "commondir"), 1);
    assert_canary_untouched(&c);
    ws.assert_nothing_left();
}

/// Inside a workspace that is not a repository: `git init /workspace` with a config whose
/// `core.fsmonitor` runs a program, waiting for the developer's shell prompt or `git status`.
/// Expected: the new `.git` is renamed aside at the end of the run and the developer told;
/// host `git status` there runs nothing.
#[test]
fn git_init_in_a_non_repository_workspace_is_renamed_aside() {
    let dev = Dev::get();
    let ws = plain_dir(&dev, "gs-init");
    let marker = ws.path.join("FSMONITOR_RAN");
    let script = format!(
        "set -e; cd /workspace; git init -q; \
         printf '[core]\\n\\tfsmonitor = \"touch {m}; false\"\\n' >> .git/config",
        m = marker.display()
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stderr.contains("changed a git control file"), "{r:?}");
    assert_eq!(quarantined(&ws, ".", ".git"), 1);
    let _ = ws.dev.sh(&format!(
        "cd '{}' && git status --short >/dev/null 2>&1",
        ws.path.display()
    ));
    assert!(!marker.exists(), "host git ran the sandbox's fsmonitor");
    ws.assert_nothing_left();
}

/// Inside a workspace that is not a repository: `git init /workspace/evil`, a
/// `core.fsmonitor` in its config, and `ln -s evil/.git /workspace/.git` — the developer's host
/// git (or shell prompt) in the workspace would follow the symlink and run it. Expected: the
/// symlink is renamed aside (nothing behind it touched), the developer told, host `git status`
/// in the workspace runs nothing; the next launch starts.
#[test]
fn a_symlinked_dot_git_planted_inside_is_renamed_aside() {
    let dev = Dev::get();
    let ws = plain_dir(&dev, "gs-link");
    let marker = ws.path.join("FSMONITOR_RAN");
    let script = format!(
        "set -e; git init -q /workspace/evil; \
         printf '[core]\\n\\tfsmonitor = \"touch {m}; false\"\\n' >> /workspace/evil/.git/config; \
         ln -s evil/.git /workspace/.git",
        m = marker.display()
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stderr.contains("symlinked .git"), "{r:?}");
    assert_eq!(quarantined(&ws, ".", ".git"), 1);
    let _ = ws.dev.sh(&format!(
        "cd '{}' && git status --short >/dev/null 2>&1",
        ws.path.display()
    ));
    assert!(!marker.exists(), "host git ran the sandbox's fsmonitor");
    assert_eq!(ws.run(&["true"]).code, Some(0));
    ws.assert_nothing_left();
}

/// The developer's own linked worktree (`git worktree add` on the host) and a submodule
/// checkout: launched without any accept step; git works inside.
#[test]
fn a_real_linked_worktree_works_without_accepting_anything() {
    let dev = Dev::get();
    let main = dev.workspace("gs-wtmain");
    let wt = format!("{}-wt", main.path.display());
    main.host_sh(&format!("git worktree add -q '{wt}' -b wt-branch"));
    let ws = TestWorkspace::at(&dev, PathBuf::from(&wt));
    let r = ws.run(&[
        "sh",
        "-c",
        &format!("set -e; echo x > f; git add f; {GIT} commit -qm in-wt"),
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(!r.stderr.contains("Git Sentry"), "{r:?}");
    assert_eq!(main.host_sh("git log --format=%s -1 wt-branch"), "in-wt\n");
    ws.assert_nothing_left();
}

/// The developer's `git init --separate-git-dir` (a `gitdir:` pointer nothing proves) and
/// `git clone --shared` (alternates to the source repository): refused at the first launch —
/// the host cannot prove who made them — with `lazaret git-sentry accept` in the message; after
/// accepting, the sandbox starts, git works inside the separate-git-dir repository, and later
/// launches start without asking again.
#[test]
fn developer_layouts_needing_trust_work_after_accept() {
    let dev = Dev::get();
    let ws = plain_dir(&dev, "gs-sepdir");
    let gd = format!("{}.gitdir", ws.path.display());
    ws.host_sh(&format!(
        "git init -q --separate-git-dir '{gd}' . && {GIT} commit -q --allow-empty -m first"
    ));
    let r = ws.run(&["true"]);
    assert_refused(&r, &ws, "gitdir:");
    assert!(r.stderr.contains("lazaret git-sentry accept"), "{r:?}");
    let a = ws.lazaret(&["git-sentry", "accept"]);
    assert_eq!(a.code, Some(0), "{a:?}");
    assert!(
        a.stdout.contains("accepted") && a.stdout.contains("gitdir"),
        "{a:?}"
    );
    for _ in 0..2 {
        let r = ws.run(&["git", "log", "--format=%s", "-1"]);
        assert_eq!(r.code, Some(0), "{r:?}");
        assert!(r.stdout.contains("first"), "{r:?}");
    }
    let src = dev.workspace("gs-src");
    let path = format!("{}-clone", src.path.display());
    src.host_sh(&format!("git clone -q --shared . '{path}'"));
    let shared = TestWorkspace::at(&dev, PathBuf::from(&path));
    let r = shared.run(&["true"]);
    assert_refused(&r, &shared, "alternates");
    let a = shared.lazaret(&["git-sentry", "accept"]);
    assert!(a.stdout.contains("alternates"), "{a:?}");
    assert_eq!(shared.run(&["true"]).code, Some(0));
    let help = ws.lazaret(&["git-sentry", "accept", "--help"]);
    assert!(
        help.stdout.contains("Accept the current layout"),
        "{help:?}"
    );
    let _ = dev.sh(&format!("rm -rf '{gd}'"));
    ws.assert_nothing_left();
    shared.assert_nothing_left();
}

/// Inside: `git init /workspace/sub` and a `core.fsmonitor` in its config — a nested
/// repository whose configuration host git obeys when the developer works in `sub` after the
/// session. Expected: the end of the run says where it is and not to run git there unchecked.
#[test]
fn a_nested_repository_created_inside_is_reported() {
    let dev = Dev::get();
    let ws = dev.workspace("gs-nested");
    let script = "set -e; git init -q /workspace/sub; \
                  printf '[core]\\n\\tfsmonitor = evil\\n' >> /workspace/sub/.git/config";
    let r = ws.run(&["sh", "-c", script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stderr.contains("a repository appeared at") && r.stderr.contains("sub/.git"),
        "{r:?}"
    );
    assert!(r.stderr.contains("do not run git there"), "{r:?}");
    // Told once: the next run does not repeat it.
    let r = ws.run(&["true"]);
    assert!(!r.stderr.contains("a repository appeared"), "{r:?}");
    ws.assert_nothing_left();
}

/// The developer has a nested repository `vendor/lib` committed as a gitlink in the workspace
/// repository (its `.git` is a directory inside the working tree, so no mount protects its
/// config). Inside: add a `core.fsmonitor` to `/workspace/vendor/lib/.git/config` and touch a
/// file there — the developer's next plain `git status` in the workspace enters the gitlink and
/// runs it. Expected: at the end of the run that config is renamed aside and the developer told;
/// host `git status` in the workspace runs nothing.
#[test]
fn a_nested_repository_config_rewritten_inside_is_renamed_aside() {
    let dev = Dev::get();
    let ws = dev.workspace("gs-gitlink");
    ws.host_sh(&format!(
        "set -e; git init -q vendor/lib; {GIT} -C vendor/lib commit -q --allow-empty -m lib; \
         git add vendor/lib 2>/dev/null; {GIT} commit -qm 'vendor lib'"
    ));
    let marker = ws.path.join("FSMONITOR_RAN");
    let script = format!(
        "set -e; printf '[core]\\n\\tfsmonitor = \"touch {m}; false\"\\n' \
         >> /workspace/vendor/lib/.git/config; touch /workspace/vendor/lib/dirty",
        m = marker.display()
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stderr.contains("of the nested repository"), "{r:?}");
    assert_eq!(quarantined(&ws, "vendor/lib/.git", "config"), 1);
    let _ = ws.dev.sh(&format!(
        "cd '{}' && git status --short >/dev/null 2>&1",
        ws.path.display()
    ));
    assert!(
        !marker.exists(),
        "host git status ran the sandbox's fsmonitor"
    );
    ws.assert_nothing_left();
}
