//! Adversarial scenarios: git_boundary (issue #30; see main.rs). The six ways out found by the
//! attack on the list-based Git Sentry, and their variants: each an agent's attempt to make a
//! host process — Lazaret, an escalated command, the developer's own git after (or during) the
//! run — run code it wrote into git state. Each writes a canary path outside the workspace
//! from a filter, hook, `exec` line or driver; each asserts the canary never appears.
//! `journal/2026-12-07-issue30-git-boundary.md` has what each did on the list-based design.

use super::escalated_git::{assert_no_canary, escalate, setup, GIT};
use crate::support::{finish, wait_for, Dev, TestWorkspace, HOLD};
use std::time::Duration;

/// A filter `evil` writing the canary `$C`, used by every tracked file through `.gitattributes`
/// of the directory the script is in, and a tracked `f.txt` left stat-dirty (an old mtime) so
/// that git re-reads it through the filter.
fn filter_repo(dir: &str) -> String {
    format!(
        "mkdir -p {dir}; cd {dir}; git init -q; git config filter.evil.clean \"touch $C; cat\"; \
         echo '* filter=evil' > .gitattributes; echo a > f.txt; git add -A; {GIT} commit -qm i; \
         touch -m -d @1000000000 f.txt; cd /workspace; "
    )
}

/// The developer's own `git status`, `diff` and `log` in the workspace (and `dir` below it).
fn developer_git(ws: &TestWorkspace, dir: &str) {
    ws.host_sh(&format!(
        "cd './{dir}' && git status >/dev/null 2>&1; git diff >/dev/null 2>&1; \
         git log -1 >/dev/null 2>&1; true"
    ));
}

fn canary_absent(canary: &str) {
    assert!(
        !std::path::Path::new(canary).exists(),
        "sandbox-written code ran on the host (canary {canary} exists)"
    );
}

/// Class 1: inside, `.git/rebase-merge/` with an `exec` line writing the canary, then
/// `lazaret-escalate -- git rebase --continue` under an exact auto-approval rule. On the
/// list-based design the host's `.git` was shared and the todo ran on the host. Now the
/// sequencer state lands in the private git directory, the host's has none, and escalated
/// git runs without a work tree: git refuses, nothing runs.
#[test]
fn an_approved_rebase_continue_never_runs_a_sandbox_written_todo() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "gb-rebase", &[&["git", "rebase", "--continue"]]);
    let script = format!(
        "C='{canary}'; set -e; R=/workspace/.git/rebase-merge; mkdir -p $R; \
         echo \"exec touch $C\" > $R/git-rebase-todo; git symbolic-ref HEAD > $R/head-name; \
         git rev-parse HEAD > $R/onto; cp $R/onto $R/orig-head; touch $R/interactive; \
         mkdir -p /workspace/.git/sequencer; echo \"exec touch $C\" > /workspace/.git/sequencer/todo; \
         set +e; "
    ) + &escalate("git rebase --continue");
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert!(!r.stdout.contains("rc=0"), "{r:?}");
    assert!(
        r.stdout.contains("work tree") || r.stderr.contains("work tree"),
        "{r:?}"
    );
    // The host's repository has no sequencer state at all.
    assert_eq!(
        ws.host_sh("ls -d .git/rebase-merge .git/sequencer .git/rebase-apply 2>/dev/null | wc -l")
            .trim(),
        "0"
    );
    developer_git(&ws, "");
    canary_absent(&canary);
    ws.assert_nothing_left();
}

/// Class 2: zero clicks. Inside, a repository `sub` with a clean filter, committed as a
/// gitlink with `.gitmodules` `ignore = none`; a loop flips `sub/.git` away and back while
/// twenty auto-approved `git status` escalations run. On the list-based design one of them
/// won the race against the gitlink check and git entered `sub`. Now escalated git has no
/// work tree to enter anything from, and the host index marks the agent's gitlink
/// skip-worktree, so the developer's own `git status` beside the run does not enter it either.
#[test]
fn auto_approved_git_status_racing_a_gitlink_flip_never_enters_it() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "gb-race", &[&["git", "status"]]);
    let script = format!(
        "C='{canary}'; set -e; {repo} \
         printf '[submodule \"sub\"]\\n\\tpath = sub\\n\\turl = ./sub\\n\\tignore = none\\n' > .gitmodules; \
         git add .gitmodules sub; {GIT} commit -qm sub; \
         (for i in $(seq 400); do mv sub/.git sub/.g 2>/dev/null; mv sub/.g sub/.git 2>/dev/null; done) & \
         set +e; for i in $(seq 20); do lazaret-escalate -- git status >/dev/null 2>&1; done; wait; \
         {HOLD}",
        repo = filter_repo("sub")
    );
    let child = ws.spawn(&["sh", "-c", &script]);
    // The developer's git beside the running sandbox, once the gitlink reached the host.
    let crossed = wait_for(Duration::from_secs(60), || {
        let s = ws.host_sh("git ls-files -v sub");
        s.starts_with("S ").then_some(s)
    });
    assert!(
        crossed.is_some(),
        "the agent's gitlink never reached the host index"
    );
    for _ in 0..5 {
        developer_git(&ws, "");
    }
    ws.release();
    let r = finish(child);
    assert_no_canary(&canary, &r);
    developer_git(&ws, "");
    canary_absent(&canary);
    // After the run, the repository the sandbox made is gone from the worktree.
    assert!(
        ws.host_sh("ls -A sub").lines().all(|l| l != ".git"),
        "{r:?}"
    );
    ws.assert_nothing_left();
}

/// Class 3 and the list's other entries: inside, `.git/commondir` pointing to a Git
/// directory the sandbox made (its config defines the filter), `config.worktree`,
/// `info/attributes` choosing the filter, `objects/info/alternates`, a replace ref, hooks,
/// `.git/config` settings, and the quarantine's predictable names made in advance. On the
/// list-based design the developer's `git status` after the run followed the planted
/// commondir. Now all of it is the private directory's: the host's `.git` holds none of it.
#[test]
fn planted_control_files_never_reach_the_hosts_git() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "gb-planted", &[]);
    let script = format!(
        "C='{canary}'; set -e; G=/workspace/.git; mkdir -p /workspace/evil; \
         cp -r $G/objects $G/refs $G/HEAD /workspace/evil/; \
         printf '[core]\\n\\trepositoryformatversion = 0\\n[filter \"evil\"]\\n\\tclean = touch %s; cat\\n' \"$C\" > /workspace/evil/config; \
         echo ../evil > $G/commondir; \
         for i in $(seq 0 99); do touch $G/commondir.lazaret-quarantine-$(date +%s)-$i; done; \
         printf '[filter \"evil\"]\\n\\tclean = touch %s; cat\\n' \"$C\" > $G/config.worktree; \
         mkdir -p $G/info; echo '* filter=evil' > $G/info/attributes; \
         echo /workspace/evil/objects > $G/objects/info/alternates; \
         {GIT} replace -f HEAD $({GIT} commit-tree -m replaced HEAD^{{tree}}); \
         printf '#!/bin/sh\\ntouch %s\\n' \"$C\" > $G/hooks/pre-commit 2>/dev/null || true; \
         echo tracked > t.txt; touch -m -d @1000000000 t.txt"
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    ws.host_sh(&format!(
        "{GIT} add t.txt && {GIT} commit -qm t && touch -m -d @1000000000 t.txt"
    ));
    developer_git(&ws, "");
    canary_absent(&canary);
    let host = ws.host_sh(
        "ls .git/commondir .git/config.worktree .git/info/attributes .git/objects/info/alternates \
         2>/dev/null | wc -l; git for-each-ref refs/replace | wc -l; ls .git | grep -c quarantine || true",
    );
    assert_eq!(
        host, "0\n0\n0\n",
        "the host's .git holds sandbox-written files"
    );
    // The next run starts as usual: nothing planted is the host's to refuse.
    let r = ws.run(&["true"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    canary_absent(&canary);
    ws.assert_nothing_left();
}

/// Class 4: a repository made inside 12 levels deep (below the list-based scan's 6), staged
/// and committed as a gitlink with `.gitmodules` `ignore = none`. On the list-based design
/// the developer's `git status` after the run entered it and ran its filter. Now the host
/// index marks the agent's gitlink skip-worktree, and the run's end moves the `.git` away to
/// the host's own `.git` (no depth at which the search stops silently).
#[test]
fn a_deep_gitlink_the_agent_commits_is_never_entered_by_the_developers_git() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "gb-deep", &[]);
    let deep = (1..=12)
        .map(|i| format!("d{i}"))
        .collect::<Vec<_>>()
        .join("/")
        + "/sub";
    let script = format!(
        "C='{canary}'; set -e; {repo} \
         printf '[submodule \"s\"]\\n\\tpath = {deep}\\n\\turl = ./x\\n\\tignore = none\\n' > .gitmodules; \
         git add .gitmodules {deep}; {GIT} commit -qm deep",
        repo = filter_repo(&deep)
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    developer_git(&ws, "");
    developer_git(&ws, &deep);
    canary_absent(&canary);
    assert!(
        r.stderr.contains("Moved it to"),
        "the developer is told: {r:?}"
    );
    assert!(ws.host_sh("git ls-files -v").contains(&format!("S {deep}")));
    assert_eq!(
        ws.host_sh(&format!("ls -A '{deep}' | grep -c '^.git$' || true"))
            .trim(),
        "0"
    );
    assert_eq!(
        ws.host_sh("ls .git/lazaret-quarantine | grep -vc origin")
            .trim(),
        "1"
    );
    ws.assert_nothing_left();
}

/// Class 5: a repository the agent made inside (`inner`, with a filter) becomes a workspace
/// the developer trusts when Lazaret is started from inside it. On the list-based design an
/// auto-approved `git status` there ran its filter. Now it is moved away at the end of the
/// run (Lazaret started there uses the outer workspace), and one the developer puts back is
/// refused as a workspace until accepted.
#[test]
fn a_sandbox_made_repository_never_becomes_a_trusted_workspace() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "gb-inner", &[&["git", "status"]]);
    let script = format!("C='{canary}'; set -e; {}", filter_repo("inner"));
    let r = ws.run(&["sh", "-c", &script]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let r = ws.run_in("inner", &["sh", "-c", &escalate("git status")], None);
    assert_no_canary(&canary, &r);
    // Put back by hand: refused as a workspace of its own.
    let moved = ws.host_sh("ls .git/lazaret-quarantine | grep -v origin | head -1");
    ws.host_sh(&format!(
        "mv '.git/lazaret-quarantine/{}' inner/.git",
        moved.trim()
    ));
    let r = dev
        .command("env")
        .args(ws.env_args())
        .arg(crate::support::lazaret_bin())
        .args(["run", "--", "true"])
        .current_dir(ws.path.join("inner"))
        .stdin(std::process::Stdio::null())
        .output()
        .map(crate::support::Run::from)
        .expect("lazaret run");
    assert_eq!(r.code, Some(125), "{r:?}");
    assert!(
        r.stderr.contains("lies inside") && r.stderr.contains("git-sentry accept"),
        "{r:?}"
    );
    canary_absent(&canary);
    ws.assert_nothing_left();
}

/// Class 6: an approved `git push` to a remote the sandbox chose. Inside, a legacy remote file
/// `.git/remotes/upstream` (`URL: .git/up.git`) naming a bare repository with a
/// `pre-receive` hook; a bare repository in the worktree pushed to by path; a look-alike
/// remote name (Cyrillic `о`). On the list-based design the push ran the hook on the host.
/// Now the sandbox's remotes file is the private directory's (the host has no `upstream`),
/// and a remote that resolves to a repository inside the workspace is refused.
#[test]
fn an_approved_push_never_runs_a_sandbox_written_hook() {
    let dev = Dev::get();
    let rules: &[&[&str]] = &[
        &["git", "push", "upstream", "HEAD:refs/heads/x"],
        &["git", "push", "./up.git", "HEAD:refs/heads/x"],
        &["git", "push", "\u{43e}rigin", "HEAD:refs/heads/x"],
        &[
            "git",
            "push",
            "--receive-pack=touch /tmp/x",
            "origin",
            "HEAD",
        ],
        &["git", "push", "./pd", "HEAD:refs/heads/x"],
    ];
    let (ws, canary) = setup(&dev, "gb-push", rules);
    // A symlink in the worktree to the Domain's own private git directory on the host (here
    // the test tells the agent its path): resolved, it lies outside the workspace, but its
    // hooks are the sandbox's.
    let private = ws.domain_root().join("git");
    // The hooks are written in a run of their own: one written in the same run can still be
    // open for writing when the host would execute it ("Text file busy").
    let plant = format!(
        "C='{canary}'; set -e; \
         for d in /workspace/.git/up.git /workspace/up.git /workspace/\u{43e}rigin; do \
           git init -q --bare $d; printf '#!/bin/sh\\ntouch %s\\n' \"$C\" > $d/hooks/pre-receive; \
           chmod +x $d/hooks/pre-receive; done; \
         mkdir -p /workspace/.git/remotes; echo 'URL: .git/up.git' > /workspace/.git/remotes/upstream; \
         printf '#!/bin/sh\ntouch %s\n' \"$C\" > /workspace/.git/hooks/pre-receive; \
         chmod +x /workspace/.git/hooks/pre-receive; ln -s '{private}' /workspace/pd",
        private = private.display()
    );
    let r = ws.run(&["sh", "-c", &plant]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let script = format!(
        "{a}; {b}; {c}; {d}; {e}",
        e = escalate("git push ./pd HEAD:refs/heads/x"),
        a = escalate("git push upstream HEAD:refs/heads/x"),
        b = escalate("git push ./up.git HEAD:refs/heads/x"),
        c = escalate("git push \u{43e}rigin HEAD:refs/heads/x"),
        d = escalate("git push '--receive-pack=touch /tmp/x' origin HEAD"),
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert_no_canary(&canary, &r);
    assert!(!r.stdout.contains("rc=0"), "{r:?}");
    assert!(r.stderr.contains("inside the workspace"), "{r:?}");
    assert!(r.stderr.contains("--receive-pack"), "{r:?}");
    assert!(
        !r.stderr.contains('\u{43e}'),
        "a look-alike letter reached the terminal: {r:?}"
    );
    canary_absent(&canary);
    ws.assert_nothing_left();
}

/// `fatrace` watching every open on the machine (fanotify), into a file.
struct Tracer {
    child: std::process::Child,
    file: std::path::PathBuf,
}

impl Tracer {
    fn start(file: std::path::PathBuf) -> Tracer {
        let child = std::process::Command::new("fatrace")
            .args(["-f", "O", "-o"])
            .arg(&file)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("fatrace is installed by scripts/setup");
        std::thread::sleep(Duration::from_millis(500));
        Tracer { child, file }
    }

    /// Stops and returns `(comm, path)` of every open.
    fn stop(mut self) -> Vec<(String, String)> {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGINT,
        );
        let _ = self.child.wait();
        let text = std::fs::read_to_string(&self.file).unwrap_or_default();
        let _ = std::fs::remove_file(&self.file);
        text.lines()
            .filter_map(|l| {
                // `comm(pid): O /path`
                let (who, rest) = l.split_once(": ")?;
                let path = rest.split_once(' ').map_or(rest, |(_, p)| p);
                Some((who.to_owned(), path.to_owned()))
            })
            .collect()
    }
}

/// The invariant itself, not a list (issue #30): **no host process opens git state the
/// sandbox wrote**. A day of agent git work inside — commit, branch, merge, stash, rebase, a
/// submodule added, `gc` — while the developer's git runs `status`, `diff`, `log` and `commit`
/// beside it on the host, all under fanotify (`fatrace`, every open on the machine). A host
/// process is anything but the sandbox's own runsc processes (command name `exe`).
/// - During the run and after it, no host process opens a path in the Domain-private git
///   directory, or below a `.git` directory the sandbox made in the worktree.
/// - The one window the issue names: while the run goes on, the developer's `git status` in
///   the workspace looks at a `.git` entry the sandbox just made (here the submodule's
///   `vendor/lib/.git` file: git reads it to tell a nested repository from an untracked
///   directory). After the run no host process opens it any more: it was moved away.
///
/// The trace is known to have seen the private directory: runsc's opens of it are counted.
#[test]
fn no_host_process_opens_git_state_the_sandbox_wrote() {
    assert!(
        crate::support::is_root(),
        "this test watches every open with fanotify (fatrace) and must run as root, as CI does"
    );
    let dev = Dev::get();
    let ws = dev.workspace("gb-invariant");
    let private = format!("{}/", ws.domain_root().join("git").display());
    let ws_prefix = format!("{}/", ws.path.display());
    let tracer = Tracer::start(ws.path.with_extension("during"));
    let day = format!(
        "set -e; G='{GIT}'; M=$(git symbolic-ref --short HEAD); \
         echo 1 > a.txt; git add a.txt; $G commit -qm day1; \
         git checkout -qb feature; echo 2 >> a.txt; $G commit -qam f1; \
         git checkout -q $M; $G merge -q --no-edit feature; \
         echo 3 >> a.txt; git stash -q; git stash pop -q; $G commit -qam s; \
         git checkout -qb rb; echo r > r.txt; git add r.txt; $G commit -qm r1; \
         git checkout -q $M; echo m > m.txt; git add m.txt; $G commit -qm m1; \
         git checkout -q rb; $G rebase -q $M; git checkout -q $M; $G merge -q --no-edit rb; \
         mkdir -p /tmp/lib; cd /tmp/lib; git init -q; $G commit -q --allow-empty -m l; cd /workspace; \
         $G -c protocol.file.allow=always submodule add -q /tmp/lib vendor/lib; $G commit -qm sub; \
         git gc -q; echo day-done; {HOLD}"
    );
    let child = ws.spawn(&["sh", "-c", &day]);
    ws.host_sh(&format!(
        "echo dev > dev.txt && {GIT} add dev.txt && {GIT} commit -qm dev"
    ));
    let mut seen = Vec::new();
    let done = wait_for(Duration::from_secs(120), || {
        developer_git(&ws, "");
        let log = ws.host_sh("git log --format=%s -1 2>&1 || true");
        seen.push(log.clone());
        log.contains("sub").then_some(())
    });
    developer_git(&ws, "");
    ws.host_sh(&format!("{GIT} commit -q --allow-empty -m dev2"));
    developer_git(&ws, "");
    ws.release();
    let r = finish(child);
    let during = tracer.stop();
    let tracer = Tracer::start(ws.path.with_extension("after"));
    developer_git(&ws, "");
    developer_git(&ws, "vendor/lib");
    ws.host_sh(&format!("{GIT} commit -q --allow-empty -m dev3"));
    let after = tracer.stop();
    assert!(r.stdout.contains("day-done"), "{r:?}");
    assert!(
        done.is_some(),
        "the agent's day never reached the host: {r:?} {seen:?}"
    );
    let nested = |path: &str| {
        path.strip_prefix(&ws_prefix)
            .filter(|rel| !rel.starts_with(".git/"))
            .map(|rel| (rel.contains("/.git/"), rel.ends_with("/.git")))
    };
    let sandbox_opens = during
        .iter()
        .filter(|(who, p)| who.starts_with("exe(") && p.starts_with(&private))
        .count();
    assert!(
        sandbox_opens > 0,
        "the trace saw no open of the private directory: it proves nothing"
    );
    let host = |trace: &[(String, String)], entry_too: bool| -> Vec<String> {
        trace
            .iter()
            .filter(|(who, _)| !who.starts_with("exe("))
            .filter(|(_, p)| {
                p.starts_with(&private)
                    || matches!(nested(p), Some((true, _)))
                    || (entry_too && matches!(nested(p), Some((_, true))))
            })
            .map(|(w, p)| format!("{w}: {p}"))
            .collect()
    };
    let bad = host(&during, false);
    assert!(
        bad.is_empty(),
        "host processes opened sandbox-written git state:\n{}",
        bad.join("\n")
    );
    let bad = host(&after, true);
    assert!(
        bad.is_empty(),
        "after the run, host processes opened sandbox-written git state:\n{}",
        bad.join("\n")
    );
    let window = during
        .iter()
        .filter(|(w, p)| !w.starts_with("exe(") && matches!(nested(p), Some((_, true))))
        .count();
    eprintln!(
        "the documented window: {window} opens of the sandbox's nested .git entry during the run"
    );
    ws.assert_nothing_left();
}

/// Races during an asked prompt: the agent commits, then asks for `git push origin
/// HEAD:refs/heads/x` (`origin` is the developer's bare repository outside the workspace), and
/// while the developer reads the card it plants a bare repository named `origin` with a
/// `pre-receive` hook in the worktree and a legacy remote file `.git/remotes/origin` pointing
/// there. The card names the developer's URL; approving pushes the agent's commit there (the
/// boundary brought it across first) and runs nothing the sandbox wrote.
#[test]
fn a_push_asked_while_the_sandbox_plants_look_alike_remotes_goes_where_the_card_said() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "gb-prompt", &[]);
    let remote = ws
        .config_home
        .as_ref()
        .map(|h| h.join("remote.git"))
        .unwrap_or_default();
    ws.host_sh(&format!(
        "git init -q --bare '{r}' && git remote add origin '{r}'",
        r = remote.display()
    ));
    let tmux = crate::support::tmux::Tmux::start(
        &dev,
        "gbprompt",
        "t",
        &ws.path.display().to_string(),
        200,
        50,
    );
    super::escalated_git::start_session(&tmux, &ws);
    tmux.type_line(
        "t",
        &format!(
            "{GIT} commit -q --allow-empty -m agent-work; C='{canary}'; \
             (sleep 1; git init -q --bare /workspace/origin; \
              printf '#!/bin/sh\\ntouch %s\\n' \"$C\" > /workspace/origin/hooks/pre-receive; \
              chmod +x /workspace/origin/hooks/pre-receive; mkdir -p /workspace/.git/remotes; \
              echo 'URL: /workspace/origin' > /workspace/.git/remotes/origin) & \
             lazaret-escalate -- git push origin HEAD:refs/heads/x; echo rc=$?"
        ),
    );
    let s = tmux.wait_screen("t", "the prompt", |s| {
        s.contains("the sandbox asks to run a command on the host")
    });
    assert!(
        s.contains(&format!("pushes to {}", remote.display())),
        "the card names where the push goes: {s}"
    );
    std::thread::sleep(Duration::from_millis(2000));
    tmux.keys("t", "a");
    let s = tmux.wait_screen("t", "the command's end", |s| {
        s.lines().any(|l| l.starts_with("rc="))
    });
    assert!(s.contains("rc=0"), "{s}");
    canary_absent(&canary);
    let pushed = ws.host_sh(&format!(
        "git -C '{}' log --format=%s -1 x",
        remote.display()
    ));
    assert_eq!(
        pushed, "agent-work\n",
        "the agent's commit reached the developer's remote"
    );
    tmux.type_line("t", "exit");
    ws.wait_torn_down();
    ws.assert_nothing_left();
}

/// A developer's repository whose Git directory lies inside the worktree (`.git` a file
/// `gitdir: .realgit`, as `git init --separate-git-dir` can make it). Inside, `.realgit` is a
/// path the agent could write: a `core.sshCommand` or a hook there would run with the next
/// escalated push, the boundary's git or the developer's own. It is hidden inside; the
/// agent's commit still reaches it through the boundary.
#[test]
fn a_git_directory_inside_the_worktree_is_never_the_sandboxs() {
    let dev = Dev::get();
    let (ws, canary) = setup(&dev, "gb-realgit", &[]);
    ws.host_sh("mv .git .realgit && echo 'gitdir: .realgit' > .git");
    let r = ws.lazaret(&["git-sentry", "accept"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let config = ws.host_sh("cat .realgit/config");
    let script = format!(
        "C='{canary}'; printf '[core]\\n\\tsshCommand = touch %s\\n[filter \"evil\"]\\n\\tclean = touch %s\\n' \"$C\" \"$C\" \
         >> /workspace/.realgit/config; mkdir -p /workspace/.realgit/hooks; \
         printf '#!/bin/sh\\ntouch %s\\n' \"$C\" > /workspace/.realgit/hooks/post-commit; \
         chmod +x /workspace/.realgit/hooks/post-commit; echo '* filter=evil' > .gitattributes; \
         echo seen=$(ls -A /workspace/.realgit | grep -cv hooks); \
         {GIT} commit -q --allow-empty -m inside && echo committed"
    );
    let r = ws.run(&["sh", "-c", &script]);
    assert!(
        r.stdout.contains("committed") && r.stdout.contains("seen=1"),
        "{r:?}"
    );
    ws.host_sh(&format!(
        "echo x > f.txt && {GIT} add f.txt && {GIT} commit -qm host"
    ));
    canary_absent(&canary);
    assert_eq!(
        ws.host_sh("cat .realgit/config"),
        config,
        "the sandbox wrote the host config"
    );
    assert_eq!(ws.host_sh("git log --format=%s -1 HEAD~1"), "inside\n");
    ws.assert_nothing_left();
}
