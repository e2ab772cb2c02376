//! Adversarial scenarios: git_sentry (see main.rs). Git control files planted through the
//! shared workspace — `commondir`, `gitdir:` pointers, `config.worktree` without the extension,
//! `objects/info/alternates`, nested repositories — against the next launch (mount planning)
//! and against the developer's own host git during and after the run (SR-3, SR-4).
//!
//! In a workspace that is a repository, `/workspace/.git` inside is a Domain-private git
//! directory (issue #30): what the sandbox plants there never reaches the host's `.git`, so
//! those tests assert the host's `.git` never holds the planted file, the developer's host git
//! is unaffected, the canary is untouched and the next run starts. The same files written on
//! the host (a killed run of the list-based design, or a developer's own layout) are still
//! refused at the next start until accepted. A workspace that is not a repository has no
//! private directory: a `.git` the sandbox creates at its top is renamed aside at the end of
//! the run. Nested repositories the sandbox makes are moved into the host's
//! `.git/lazaret-quarantine`; the developer's own are hidden from the sandbox by mounts.

use crate::support::{finish, wait_for, Dev, TestWorkspace, HOLD};
use std::path::PathBuf;
use std::time::Duration;

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

/// The host's `.git` (of the workspace `ws`) holds no `rel` (relative to `.git`) and no
/// `*.lazaret-quarantine-*` copy anywhere: nothing the sandbox planted reached it, so there
/// was nothing to rename aside.
fn assert_host_git_lacks(ws: &TestWorkspace, rel: &str) {
    assert_eq!(
        ws.host_sh(&format!(
            "ls -d '.git/{rel}' 2>/dev/null | wc -l; find .git -name '*.lazaret-quarantine-*' | wc -l"
        )),
        "0\n0\n",
        "the host's .git holds {rel} or a copy of it"
    );
}

/// Host git in the workspace still uses the workspace's own `.git` as its common directory
/// (a planted `commondir` followed on the host would change it, or break git there).
fn assert_host_git_unredirected(ws: &TestWorkspace) {
    assert_eq!(ws.host_sh("git rev-parse --git-common-dir"), ".git\n");
    assert_eq!(ws.host_sh("git log --format=%s -1"), "init\n");
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
/// Expected: the file lands in the Domain-private git directory, never in the host's `.git`
/// (nothing to rename aside); host git in the workspace is not redirected; the next run starts
/// normally and sees nothing of the canary, which is neither read nor written, and no `hooks`
/// dir is created in it. (Failed on the code before issue #13: run 2 read the key.)
#[test]
fn commondir_planted_inside_relative_to_a_home_dir_never_reaches_the_host_nor_is_mounted() {
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
    assert_host_git_lacks(&ws, "commondir");
    assert_host_git_unredirected(&ws);
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
/// `git sparse-checkout init` (which turns the extension on). Expected: the file lands in the
/// Domain-private git directory, the host's `.git` never holds it; after the developer enables
/// the extension, host `git status` runs nothing; the next run starts.
#[test]
fn config_worktree_planted_inside_never_reaches_the_hosts_git() {
    let dev = Dev::get();
    let ws = dev.workspace("gs-cfgwt");
    let marker = ws.path.join("FSMONITOR_RAN");
    let script = format!(
        "printf '[core]\\n\\tfsmonitor = \"touch {m}; false\"\\n' > /workspace/.git/config.worktree",
        m = marker.display()
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_host_git_lacks(&ws, "config.worktree");
    ws.host_sh("git config extensions.worktreeConfig true && git status --short >/dev/null");
    assert!(!marker.exists(), "the planted fsmonitor ran on the host");
    assert_eq!(ws.host_sh("git config --get core.fsmonitor || true"), "");
    let r = ws.run(&["true"]);
    assert_eq!(r.code, Some(0), "{r:?}");
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
/// the file lands in the Domain-private git directory: the host's `.git` never holds it and
/// host git in the workspace cannot see the other repository's objects; the next run starts.
/// The same file written on the host (left by a killed run of the list-based design) is
/// still refused at the next start.
#[test]
fn alternates_to_outside_planted_inside_never_reach_the_host_and_a_host_one_is_refused() {
    let dev = Dev::get();
    let other = dev.workspace("gs-alt-other");
    let theirs = other.host_sh(&format!(
        "{GIT} commit -q --allow-empty -m other-only && git rev-parse HEAD"
    ));
    let ws = dev.workspace("gs-alt");
    let line = format!("{}/.git/objects", other.path.display());
    let r = ws.run(&[
        "sh",
        "-c",
        &format!("echo '{line}' > /workspace/.git/objects/info/alternates"),
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_host_git_lacks(&ws, "objects/info/alternates");
    assert_eq!(
        ws.host_sh(&format!(
            "git cat-file -e {} 2>/dev/null && echo borrowed || echo absent",
            theirs.trim()
        )),
        "absent\n",
        "host git reads the other repository's objects"
    );
    let r = ws.run(&["true"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    ws.host_sh(&format!("echo '{line}' > .git/objects/info/alternates"));
    let r = ws.run(&["true"]);
    assert_refused(&r, &ws, "alternates");
    ws.assert_nothing_left();
}

/// Inside: a new linked-worktree admin dir `/workspace/.git/worktrees/evil` whose `commondir`
/// points to the canary (and, left by a killed run of the list-based design, the same in the
/// admin dir of the developer's real worktree). Expected: the admin dir lands in the
/// Domain-private git directory — the host's `.git/worktrees` holds only the developer's
/// worktree and host git lists no other; the changed admin dir of the real worktree, written
/// on the host, is refused at the next start as invalid.
#[test]
fn commondir_in_a_worktree_admin_dir_never_reaches_the_host_and_a_host_one_is_refused() {
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
    assert_host_git_lacks(&ws, "worktrees/evil");
    let name = ws.host_sh(&format!("basename '{wt}'"));
    assert_eq!(ws.host_sh("ls -A .git/worktrees"), name);
    assert_eq!(
        ws.host_sh("git worktree list --porcelain | grep -c '^worktree '"),
        "2\n"
    );
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
/// the sandbox still runs, the host's `.git` holds no `commondir` and host git there is not
/// redirected (the file is the Domain-private git directory's); at the end nothing is renamed
/// aside and the developer is not told of any planted control file; the canary is untouched.
#[test]
fn commondir_planted_during_a_long_run_never_reaches_the_hosts_git_while_it_runs() {
    let dev = Dev::get();
    let c = canary(&dev);
    let ws = dev.workspace("gs-watch");
    let script = format!(
        "echo '{}' > /workspace/.git/commondir; \
         ls -A /workspace/.git | grep -c '^commondir$' > /workspace/planted; {HOLD}",
        c.path.display()
    );
    let child = ws.spawn(&["sh", "-c", &script]);
    let planted = wait_for(Duration::from_secs(120), || {
        std::fs::read_to_string(ws.path.join("planted"))
            .ok()
            .filter(|s| s.ends_with('\n'))
    });
    // Planted inside (the sandbox sees its own file), absent on the host while it runs.
    assert_eq!(planted.as_deref(), Some("1\n"), "the plant did not happen");
    assert_host_git_lacks(&ws, "commondir");
    assert_host_git_unredirected(&ws);
    ws.host_sh("git status --short >/dev/null");
    assert_canary_untouched(&c);
    ws.release();
    let r = finish(child);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(!r.stderr.contains("changed a git control file"), "{r:?}");
    assert_host_git_lacks(&ws, "commondir");
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
/// session. Expected: the end of the run moves `sub/.git` into the host's
/// `.git/lazaret-quarantine` (a `.origin` file beside it names where it was; its content is
/// kept) and says so; `sub` holds no `.git` on the host, so host git there runs nothing of the
/// sandbox's; the next run does not repeat the message.
#[test]
fn a_nested_repository_created_inside_is_moved_to_the_quarantine() {
    let dev = Dev::get();
    let ws = dev.workspace("gs-nested");
    let marker = ws.path.join("FSMONITOR_RAN");
    let script = format!(
        "set -e; git init -q /workspace/sub; \
         printf '[core]\\n\\tfsmonitor = \"touch {m}; false\"\\n' >> /workspace/sub/.git/config",
        m = marker.display()
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let at = ws.path.join("sub/.git").display().to_string();
    assert!(
        r.stderr
            .contains(&format!("the sandbox made the repository {at}"))
            && r.stderr.contains("Moved it to")
            && r.stderr.contains("nothing is lost"),
        "{r:?}"
    );
    assert_eq!(
        ws.host_sh("ls -A sub"),
        "",
        "sub/.git is still in the worktree"
    );
    let moved = ws.host_sh("ls .git/lazaret-quarantine | grep -v '[.]origin$'");
    assert_eq!(moved.lines().count(), 1, "{moved}");
    let q = format!(".git/lazaret-quarantine/{}", moved.trim());
    assert!(
        r.stderr.contains(&ws.path.join(&q).display().to_string()),
        "{r:?}"
    );
    assert_eq!(ws.host_sh(&format!("cat '{q}.origin'")), format!("{at}\n"));
    assert!(
        ws.host_sh(&format!("cat '{q}/config'"))
            .contains("fsmonitor"),
        "the moved repository lost its content"
    );
    let _ = ws.dev.sh(&format!(
        "cd '{}/sub' && git status --short >/dev/null 2>&1",
        ws.path.display()
    ));
    assert!(!marker.exists(), "host git ran the sandbox's fsmonitor");
    // Told once: the next run does not repeat it.
    let r = ws.run(&["true"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        !r.stderr.contains("the sandbox made the repository"),
        "{r:?}"
    );
    ws.assert_nothing_left();
}

/// The developer has a nested repository `vendor/lib` committed as a gitlink in the workspace
/// repository (its `.git` is a directory inside the working tree). Inside: add a
/// `core.fsmonitor` to `/workspace/vendor/lib/.git/config` and touch a file there — the
/// developer's next plain `git status` in the workspace enters the gitlink and runs it.
/// Expected: the developer's nested `.git` is hidden from the sandbox (the write goes to a
/// tmpfs), so its config on the host is byte-for-byte unchanged; the repository stays where
/// it is (it is the developer's: not moved, nothing reported); the touched file reaches the
/// host; host `git status` in the workspace and in `vendor/lib` runs nothing.
#[test]
fn a_developers_nested_repository_config_rewritten_inside_never_reaches_the_host() {
    let dev = Dev::get();
    let ws = dev.workspace("gs-gitlink");
    ws.host_sh(&format!(
        "set -e; git init -q vendor/lib; {GIT} -C vendor/lib commit -q --allow-empty -m lib; \
         git add vendor/lib 2>/dev/null; {GIT} commit -qm 'vendor lib'"
    ));
    let before = ws.host_sh("cat vendor/lib/.git/config; ls -A vendor/lib/.git");
    let marker = ws.path.join("FSMONITOR_RAN");
    let script = format!(
        "printf '[core]\\n\\tfsmonitor = \"touch {m}; false\"\\n' \
         >> /workspace/vendor/lib/.git/config; touch /workspace/vendor/lib/dirty",
        m = marker.display()
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        ws.host_sh("cat vendor/lib/.git/config; ls -A vendor/lib/.git"),
        before,
        "the sandbox changed the developer's nested repository: {r:?}"
    );
    assert!(!r.stderr.contains("Moved it to"), "{r:?}");
    assert_eq!(
        ws.host_sh("ls -d .git/lazaret-quarantine 2>/dev/null | wc -l"),
        "0\n"
    );
    assert!(ws.path.join("vendor/lib/dirty").exists(), "{r:?}");
    let _ = ws.dev.sh(&format!(
        "cd '{p}' && git status --short >/dev/null 2>&1; \
         cd '{p}/vendor/lib' && git status --short >/dev/null 2>&1",
        p = ws.path.display()
    ));
    assert!(
        !marker.exists(),
        "host git status ran the sandbox's fsmonitor"
    );
    ws.assert_nothing_left();
}
