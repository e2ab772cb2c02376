//! Planner tests against real git repositories in temporary directories. Git runs with a
//! temporary `HOME` and no system configuration, so the developer's setup cannot change them.

use super::*;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::process::Command;

struct Fixture {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    storage: PathBuf,
    home: PathBuf,
    outside: PathBuf,
}

impl Fixture {
    /// A repository whose root `.gitignore` is `gitignore`, with one commit.
    fn repo(gitignore: &str) -> Fixture {
        let fx = Fixture::plain();
        fx.git(&["init", "-q"]);
        fx.write(".gitignore", gitignore);
        fx.write("src/main.rs", "fn main() {}\n");
        fx.git(&["add", "-A"]);
        fx.git(&["commit", "-q", "-m", "init"]);
        fx
    }

    /// A directory that is not a repository.
    fn plain() -> Fixture {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(tmp.path()).expect("canonical tempdir");
        let (ws, home, domain, outside) = (
            root.join("ws"),
            root.join("home"),
            root.join("domain"),
            root.join("outside"),
        );
        for d in [&ws, &home, &domain, &outside] {
            std::fs::create_dir(d).expect("mkdir");
        }
        std::fs::set_permissions(&domain, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        Fixture {
            _tmp: tmp,
            storage: domain.join("ignored"),
            ws,
            home,
            outside,
        }
    }

    fn git_command(&self) -> Command {
        let mut cmd = Command::new("git");
        for (key, _) in std::env::vars_os() {
            if key.as_bytes().starts_with(b"GIT_") {
                cmd.env_remove(key);
            }
        }
        cmd.env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .arg("-C")
            .arg(&self.ws)
            .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"]);
        cmd
    }

    fn git(&self, args: &[&str]) {
        let out = self.git_command().args(args).output().expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    fn write(&self, rel: &str, content: &str) {
        let p = self.ws.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir -p");
        }
        std::fs::write(p, content).expect("write");
    }

    fn plan_cap(&self, cap: usize) -> anyhow::Result<IgnoredState> {
        let options = Options {
            cap,
            timeout: GIT_TIMEOUT,
            git_home: Some(&self.home),
        };
        plan_with(&self.ws, &self.storage, &options)
    }

    fn plan(&self) -> anyhow::Result<IgnoredState> {
        self.plan_cap(MAX_ENTRIES)
    }

    fn plan_timeout(&self, timeout: Duration) -> anyhow::Result<IgnoredState> {
        let options = Options {
            cap: MAX_ENTRIES,
            timeout,
            git_home: Some(&self.home),
        };
        plan_with(&self.ws, &self.storage, &options)
    }
}

/// The workspace-relative paths mounted, checking each mount's shape on the way.
fn mounted(fx: &Fixture, state: &IgnoredState) -> Vec<String> {
    state
        .mounts
        .iter()
        .map(|m| {
            let rel = m
                .container
                .strip_prefix(SANDBOX_WORKSPACE)
                .expect("under /workspace");
            let expected = super::super::mounts::MountKind::Bind {
                host: fx.storage.join(rel),
                read_only: false,
            };
            assert_eq!(m.kind, expected);
            rel.display().to_string()
        })
        .collect()
}

fn err_text(r: anyhow::Result<IgnoredState>) -> String {
    match r {
        Ok(s) => panic!("expected an error, got {s:?}"),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn finds_ignored_paths_git_decides() -> anyhow::Result<()> {
    let fx = Fixture::repo("*.log\n.env\nnode_modules/\n");
    fx.write("tracked.log", "tracked\n");
    fx.git(&["add", "-f", "tracked.log"]);
    fx.write("sub/keep.txt", "kept\n");
    fx.git(&["add", "sub/keep.txt"]);
    fx.git(&["commit", "-q", "-m", "more"]);
    fx.write(".env", "SECRET=1\n");
    fx.write("debug.log", "log\n");
    fx.write("node_modules/pkg/index.js", "evil()\n");
    fx.write("node_modules/pkg/deep/x.js", "evil()\n");
    fx.write("sub/node_modules/y.js", "evil()\n");
    fx.write("logs/a.log", "log\n");
    fx.write("notes.txt", "untracked, not ignored\n");

    let state = fx.plan()?;
    assert!(state.is_repository);
    assert_eq!(
        mounted(&fx, &state),
        [
            ".env",
            "debug.log",
            "logs/a.log",
            "node_modules",
            "sub/node_modules"
        ],
        "tracked.log, notes.txt and the directory logs/ (only its content is ignored) are not \
         mounted; node_modules/ is one entry"
    );
    assert!(state.created_mount_points.is_empty(), "{state:?}");
    // Host content is never copied: an empty file and an empty directory.
    assert_eq!(std::fs::metadata(fx.storage.join(".env"))?.len(), 0);
    assert!(std::fs::symlink_metadata(fx.storage.join(".env"))?.is_file());
    assert_eq!(
        std::fs::read_dir(fx.storage.join("node_modules"))?.count(),
        0
    );
    assert!(fx.storage.join("sub/node_modules").is_dir());
    let mode = |p: &Path| std::fs::metadata(p).map(|m| m.permissions().mode() & 0o777);
    assert_eq!(mode(&fx.storage)?, 0o700);
    assert_eq!(mode(&fx.storage.join("node_modules"))?, 0o755);
    assert_eq!(mode(&fx.storage.join(".env"))?, 0o644);
    Ok(())
}

#[test]
fn anticipated_mount_points_are_created_when_git_confirms() -> anyhow::Result<()> {
    let fx = Fixture::repo("node_modules/\n/target\n*.log\n.env\nout/\n/build/sub/\ndist\n!dist\n");
    fx.write("later/.keep", "");
    std::fs::write(fx.ws.join(".git/info/exclude"), ".venv\n")?;
    let state = fx.plan()?;
    let created: Vec<String> = state
        .created_mount_points
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(created, ["node_modules", "target", "out", ".venv"]);
    for c in &created {
        assert!(fx.ws.join(c).is_dir(), "{c}");
        assert!(
            state
                .notes
                .iter()
                .any(|n| n.contains(&format!("mount point {c}/"))),
            "{state:?}"
        );
    }
    for absent in [".env", "x.log", "build", "dist"] {
        assert!(!fx.ws.join(absent).exists(), "{absent} must not be created");
    }
    assert_eq!(
        mounted(&fx, &state),
        [".venv", "node_modules", "out", "target"]
    );
    // Second launch: nothing new to create, the same mounts.
    let again = fx.plan()?;
    assert!(again.created_mount_points.is_empty());
    assert_eq!(mounted(&fx, &again), mounted(&fx, &state));
    Ok(())
}

#[test]
fn storage_content_survives_later_plans() -> anyhow::Result<()> {
    let fx = Fixture::repo("node_modules/\n.env\n");
    fx.write(".env", "HOST=1\n");
    fx.plan()?;
    std::fs::write(fx.storage.join("node_modules/pkg.js"), "kept")?;
    std::fs::write(fx.storage.join(".env"), "SANDBOX=1\n")?;
    let state = fx.plan()?;
    assert_eq!(mounted(&fx, &state), [".env", "node_modules"]);
    assert_eq!(
        std::fs::read_to_string(fx.storage.join("node_modules/pkg.js"))?,
        "kept"
    );
    assert_eq!(
        std::fs::read_to_string(fx.storage.join(".env"))?,
        "SANDBOX=1\n"
    );
    assert_eq!(std::fs::read_to_string(fx.ws.join(".env"))?, "HOST=1\n");
    Ok(())
}

#[test]
fn storage_of_another_type_is_refused_by_name() -> anyhow::Result<()> {
    let fx = Fixture::repo(".env\n");
    fx.write(".env", "HOST=1\n");
    crate::domain::layout::ensure_private_dir(&fx.storage)?;
    std::fs::create_dir(fx.storage.join(".env"))?;
    let err = err_text(fx.plan());
    assert!(
        err.contains("is a directory") && err.contains("regular file"),
        "{err}"
    );
    assert!(
        err.contains(&fx.storage.join(".env").display().to_string()),
        "{err}"
    );
    Ok(())
}

#[test]
fn symlink_planted_in_storage_is_refused_and_not_followed() -> anyhow::Result<()> {
    let fx = Fixture::repo("node_modules/\n.env\n");
    fx.write("sub/node_modules/x.js", "");
    fx.write(".env", "HOST=1\n");
    fx.plan()?;
    let victim_dir = fx.outside.join("ssh");
    std::fs::create_dir(&victim_dir)?;
    let victim_file = fx.outside.join("secret");
    std::fs::write(&victim_file, "secret")?;

    // At a component: <storage>/sub -> outside.
    std::fs::remove_dir_all(fx.storage.join("sub"))?;
    symlink(&victim_dir, fx.storage.join("sub"))?;
    let err = err_text(fx.plan());
    assert!(err.contains("is a symlink"), "{err}");
    assert!(
        err.contains(&fx.storage.join("sub").display().to_string()),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(&victim_dir)?.count(),
        0,
        "nothing created through it"
    );
    std::fs::remove_file(fx.storage.join("sub"))?;

    // At a directory leaf.
    std::fs::remove_dir_all(fx.storage.join("node_modules"))?;
    symlink(&victim_dir, fx.storage.join("node_modules"))?;
    assert!(err_text(fx.plan()).contains("is a symlink"));
    assert_eq!(std::fs::read_dir(&victim_dir)?.count(), 0);
    std::fs::remove_file(fx.storage.join("node_modules"))?;

    // At a file leaf.
    std::fs::remove_file(fx.storage.join(".env"))?;
    symlink(&victim_file, fx.storage.join(".env"))?;
    assert!(err_text(fx.plan()).contains("is a symlink"));
    assert_eq!(std::fs::read_to_string(&victim_file)?, "secret");
    Ok(())
}

#[test]
fn storage_itself_must_not_be_a_symlink() -> anyhow::Result<()> {
    let fx = Fixture::repo(".env\n");
    fx.write(".env", "");
    symlink(&fx.outside, &fx.storage)?;
    let err = err_text(fx.plan());
    assert!(err.contains(&fx.storage.display().to_string()), "{err}");
    assert_eq!(std::fs::read_dir(&fx.outside)?.count(), 0);
    Ok(())
}

#[test]
fn symlinked_host_path_is_left_as_is() -> anyhow::Result<()> {
    let fx = Fixture::repo("*.log\n");
    symlink("src/main.rs", fx.ws.join("link.log"))?;
    fx.write("real.log", "");
    let state = fx.plan()?;
    assert_eq!(mounted(&fx, &state), ["real.log"]);
    assert!(
        state
            .notes
            .iter()
            .any(|n| n.contains("symlinked ignored path link.log")),
        "{state:?}"
    );
    assert!(!fx.storage.join("link.log").exists());
    Ok(())
}

#[test]
fn too_many_paths_are_refused() -> anyhow::Result<()> {
    let fx = Fixture::repo("*.log\n");
    for i in 0..=MAX_ENTRIES {
        fx.write(&format!("f{i:04}.log"), "");
    }
    let err = err_text(fx.plan());
    assert!(
        err.contains(&format!("{} Git-ignored paths", MAX_ENTRIES + 1)),
        "{err}"
    );
    assert!(
        err.contains("f0000.log") && err.contains("isolate_ignored = false"),
        "{err}"
    );
    assert!(
        !fx.storage.exists(),
        "nothing prepared before the cap check"
    );
    Ok(())
}

#[test]
fn cap_counts_collapsed_directories_once() -> anyhow::Result<()> {
    let fx = Fixture::repo("cache/\n");
    for i in 0..10 {
        fx.write(&format!("cache/{i}"), "");
    }
    assert_eq!(mounted(&fx, &fx.plan_cap(1)?), ["cache"]);
    Ok(())
}

#[test]
fn not_a_repository_gives_nothing() -> anyhow::Result<()> {
    let fx = Fixture::plain();
    fx.write("node_modules/x.js", "");
    let state = fx.plan()?;
    assert!(!state.is_repository && state.mounts.is_empty());
    assert!(state.notes[0].contains("not a Git repository"), "{state:?}");

    // An empty `.git` directory inside another repository: git says "not a repository"
    // and does not look further up, where it would find the outer one.
    let outer = fx.ws.parent().expect("parent");
    let out = fx
        .git_command()
        .arg("-C")
        .arg(outer)
        .args(["init", "-q"])
        .output()?;
    assert!(out.status.success(), "{out:?}");
    std::fs::create_dir(fx.ws.join(".git"))?;
    let state = fx.plan()?;
    assert!(!state.is_repository && state.mounts.is_empty(), "{state:?}");
    assert!(state.notes[0].contains("not a Git repository"), "{state:?}");

    // A `.git` file git cannot read is an error, not a silent lack of isolation.
    std::fs::remove_dir(fx.ws.join(".git"))?;
    fx.write(".git", "not a gitdir line\n");
    let err = err_text(fx.plan());
    assert!(err.contains("invalid gitfile"), "{err}");
    Ok(())
}

#[test]
fn repository_fsmonitor_hook_is_not_run() -> anyhow::Result<()> {
    let fx = Fixture::repo("node_modules/\n");
    fx.write("node_modules/x.js", "");
    let marker = fx.outside.join("fsmonitor-ran");
    let hook = format!("touch '{}'; false", marker.display());
    fx.git(&["config", "core.fsmonitor", &hook]);
    // Control: unhardened git runs the hook for this very listing.
    let out = fx
        .git_command()
        .args([
            "ls-files",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
        ])
        .output()?;
    assert!(out.status.success(), "{out:?}");
    assert!(marker.exists(), "control: plain git runs core.fsmonitor");
    std::fs::remove_file(&marker)?;

    let state = fx.plan()?;
    assert_eq!(mounted(&fx, &state), ["node_modules"]);
    assert!(!marker.exists(), "plan ran the repository's fsmonitor hook");
    Ok(())
}

#[test]
fn git_is_stopped_after_the_timeout() -> anyhow::Result<()> {
    let fx = Fixture::repo("*.log\n");
    // git blocks opening a FIFO planted as a nested `.gitignore`.
    std::fs::create_dir(fx.ws.join("sub"))?;
    nix::unistd::mkfifo(&fx.ws.join("sub/.gitignore"), nix::sys::stat::Mode::S_IRWXU)?;
    let started = std::time::Instant::now();
    let err = err_text(fx.plan_timeout(Duration::from_millis(500)));
    assert!(err.contains("was stopped"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10));
    Ok(())
}

#[test]
fn repository_cannot_redirect_the_work_tree() -> anyhow::Result<()> {
    let fx = Fixture::repo("*.log\n");
    fx.write("a.log", "");
    std::fs::write(fx.outside.join("elsewhere.log"), "")?;
    let outside = fx.outside.display().to_string();
    fx.git(&["config", "core.worktree", &outside]);
    assert_eq!(mounted(&fx, &fx.plan()?), ["a.log"]);
    Ok(())
}

#[test]
fn comma_in_an_ignored_path_is_refused_by_name() {
    let fx = Fixture::repo("*.log\n");
    fx.write("a,b.log", "");
    let err = err_text(fx.plan());
    assert!(
        err.contains("a,b.log") && err.contains("isolate_ignored = false"),
        "{err}"
    );
}

#[test]
fn relative_paths_are_validated() -> anyhow::Result<()> {
    assert_eq!(relative(b"a/b/")?, PathBuf::from("a/b"));
    for bad in [
        &b""[..],
        b"/",
        b"/abs",
        b"a//b",
        b"../x",
        b"a/./b",
        b"a/..",
        b"x\ny",
        b"\xff",
    ] {
        assert!(relative(bad).is_err(), "{bad:?}");
    }
    Ok(())
}

#[test]
fn only_outermost_paths_are_kept() {
    let paths = ["a-b", "a/b/c", "a", "a/b", "b", "a", "ab/c"]
        .map(PathBuf::from)
        .to_vec();
    let kept: Vec<String> = outermost(paths)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(kept, ["a", "a-b", "ab/c", "b"]);
}
