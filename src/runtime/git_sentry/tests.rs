//! Plans for real repositories made with the `git` binary (hermetic: no system or global
//! config). Git runs here only to build fixtures; `plan` itself never runs it.

use super::*;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::process::Command;

pub(super) struct Fixture {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    home: PathBuf,
}

impl Fixture {
    pub fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        std::fs::create_dir(&home).unwrap();
        Fixture {
            _tmp: tmp,
            root,
            home,
        }
    }

    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.home.join("gitconfig"))
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_COMMON_DIR")
            .env_remove("GIT_INDEX_FILE")
            .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
            .args([
                "-c",
                "init.defaultBranch=main",
                "-c",
                "protocol.file.allow=always",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?} in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A repository with one commit at `root/name`.
    pub fn repo(&self, name: &str) -> PathBuf {
        let dir = self.root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        self.git(&dir, &["init", "-q"]);
        std::fs::write(dir.join("README"), name).unwrap();
        self.git(&dir, &["add", "README"]);
        self.git(&dir, &["commit", "-q", "-m", "init"]);
        dir
    }

    /// `git submodule add` of the repository `lib` into `top` at `path`, committed.
    pub fn add_submodule(&self, top: &Path, lib: &Path, path: &str) {
        let lib = lib.to_str().unwrap();
        self.git(top, &["submodule", "add", "-q", lib, path]);
        self.git(top, &["commit", "-q", "-m", "submodule"]);
    }
}

/// `container kind [host]` per mount, in order.
pub(super) fn shape(s: &GitSentry) -> Vec<String> {
    s.mounts
        .iter()
        .map(|m| match &m.kind {
            MountKind::Bind { host, read_only } => format!(
                "{} {} {}",
                m.container.display(),
                if *read_only { "ro" } else { "rw" },
                host.display()
            ),
            MountKind::Tmpfs => format!("{} tmpfs", m.container.display()),
        })
        .collect()
}

pub(super) fn has(s: &GitSentry, line: &str) -> bool {
    shape(s).iter().any(|l| l == line)
}

pub(super) fn noted(s: &GitSentry, part: &str) -> bool {
    s.notes.iter().any(|n| n.contains(part))
}

pub(super) fn err(r: anyhow::Result<GitSentry>) -> String {
    match r {
        Ok(s) => panic!("expected an error, got {s:#?}"),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn plain_repository_exact_mounts() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    let s = plan(&ws, &[]).unwrap();
    let w = ws.display();
    assert!(s.is_repository);
    assert_eq!(
        shape(&s),
        [
            format!("/workspace/.git rw {w}/.git"),
            format!("/workspace/.git/config ro {w}/.git/config"),
            "/workspace/.git/hooks tmpfs".to_owned(),
        ]
    );
    assert!(noted(&s, "config is read-only"), "{:?}", s.notes);
    assert!(s.replaceable_links.is_empty());
}

#[test]
fn repository_without_hooks_gets_one_created_and_hidden() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    std::fs::remove_dir_all(ws.join(".git/hooks")).unwrap();
    let s = plan(&ws, &[]).unwrap();
    let hooks = ws.join(".git/hooks");
    let meta = std::fs::symlink_metadata(&hooks).unwrap();
    assert!(meta.is_dir());
    assert_eq!(meta.permissions().mode() & 0o700, 0o700);
    assert_eq!(std::fs::read_dir(&hooks).unwrap().count(), 0);
    assert!(has(&s, "/workspace/.git/hooks tmpfs"), "{:?}", shape(&s));
    assert!(noted(&s, "created the missing"), "{:?}", s.notes);
    // Next launch: nothing to create any more.
    assert!(!noted(&plan(&ws, &[]).unwrap(), "created"));
}

#[test]
fn missing_config_is_an_error_naming_it() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    std::fs::remove_file(ws.join(".git/config")).unwrap();
    let e = err(plan(&ws, &[]));
    assert!(e.contains(".git/config is missing"), "{e}");
}

#[test]
fn symlinked_config_is_refused() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    std::fs::rename(ws.join(".git/config"), f.root.join("shared-config")).unwrap();
    symlink(f.root.join("shared-config"), ws.join(".git/config")).unwrap();
    let e = err(plan(&ws, &[]));
    assert!(e.contains("is a symlink") && e.contains("[include]"), "{e}");
}

#[test]
fn config_worktree_is_read_only_and_created_when_enabled() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    let w = ws.display();
    let s = plan(&ws, &[]).unwrap();
    assert!(!shape(&s).iter().any(|l| l.contains("config.worktree")));
    f.git(&ws, &["config", "extensions.worktreeConfig", "true"]);
    let s = plan(&ws, &[]).unwrap();
    assert!(ws.join(".git/config.worktree").is_file());
    assert!(noted(&s, "created the empty"), "{:?}", s.notes);
    let line = format!("/workspace/.git/config.worktree ro {w}/.git/config.worktree");
    assert!(has(&s, &line), "{:?}", shape(&s));
}

#[test]
fn symlinked_hooks_inside_the_workspace_hide_the_target() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    std::fs::create_dir(ws.join(".githooks")).unwrap();
    std::fs::remove_dir_all(ws.join(".git/hooks")).unwrap();
    symlink("../.githooks", ws.join(".git/hooks")).unwrap();
    let s = plan(&ws, &[]).unwrap();
    assert!(has(&s, "/workspace/.githooks tmpfs"), "{:?}", shape(&s));
    assert!(!has(&s, "/workspace/.git/hooks tmpfs"));
    assert_eq!(s.replaceable_links, [ws.join(".git/hooks")]);
    assert!(noted(&s, "core.hooksPath"), "{:?}", s.notes);
}

#[test]
fn symlinked_hooks_outside_the_workspace_get_no_mount() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    let shared = f.root.join("shared-hooks");
    std::fs::create_dir(&shared).unwrap();
    std::fs::remove_dir_all(ws.join(".git/hooks")).unwrap();
    symlink(&shared, ws.join(".git/hooks")).unwrap();
    let s = plan(&ws, &[]).unwrap();
    assert!(
        !shape(&s).iter().any(|l| l.contains("tmpfs")),
        "{:?}",
        shape(&s)
    );
    assert!(noted(&s, "outside what the sandbox sees"), "{:?}", s.notes);
    assert_eq!(s.replaceable_links, [ws.join(".git/hooks")]);
}

#[test]
fn dangling_hooks_symlink_is_created_when_the_sandbox_could_create_it() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    std::fs::remove_dir_all(ws.join(".git/hooks")).unwrap();
    symlink("../tools/hooks", ws.join(".git/hooks")).unwrap();
    let s = plan(&ws, &[]).unwrap();
    assert!(ws.join("tools/hooks").is_dir());
    assert!(has(&s, "/workspace/tools/hooks tmpfs"), "{:?}", shape(&s));
    assert!(noted(&s, "did not exist: created"), "{:?}", s.notes);

    // Outside the workspace: the sandbox cannot create it, neither does Lazaret.
    let ws2 = f.repo("ws2");
    let away = f.root.join("nowhere/hooks");
    std::fs::remove_dir_all(ws2.join(".git/hooks")).unwrap();
    symlink(&away, ws2.join(".git/hooks")).unwrap();
    let s = plan(&ws2, &[]).unwrap();
    assert!(!away.exists());
    assert!(
        !shape(&s).iter().any(|l| l.contains("tmpfs")),
        "{:?}",
        shape(&s)
    );
    assert!(
        noted(&s, "does not exist and lies outside"),
        "{:?}",
        s.notes
    );
}

#[test]
fn hooks_path_setting_makes_a_hooks_symlink_harmless_and_is_noted() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    std::fs::create_dir(ws.join(".githooks")).unwrap();
    std::fs::remove_dir_all(ws.join(".git/hooks")).unwrap();
    symlink("../.githooks", ws.join(".git/hooks")).unwrap();
    f.git(&ws, &["config", "core.hooksPath", ".githooks"]);
    let s = plan(&ws, &[]).unwrap();
    assert!(!noted(&s, "no mount can pin it"), "{:?}", s.notes);
    assert!(
        noted(&s, "sets core.hooksPath = .githooks"),
        "{:?}",
        s.notes
    );
}

#[test]
fn submodule_repositories_are_protected() {
    let f = Fixture::new();
    let lib = f.repo("lib");
    let ws = f.repo("ws");
    f.add_submodule(&ws, &lib, "sub");
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/.git")).unwrap(),
        "gitdir: ../.git/modules/sub\n"
    );
    let s = plan(&ws, &[]).unwrap();
    let m = ws.join(".git/modules/sub");
    let line = format!(
        "/workspace/.git/modules/sub/config ro {}/config",
        m.display()
    );
    assert!(has(&s, &line), "{:?}", shape(&s));
    assert!(has(&s, "/workspace/.git/modules/sub/hooks tmpfs"));
    assert!(noted(&s, "1 submodule repositories"), "{:?}", s.notes);
    // Submodule working trees are not touched: their .git files work inside as they are.
    assert!(!shape(&s).iter().any(|l| l.starts_with("/workspace/sub")));
}

#[test]
fn nested_and_slashed_submodules_are_found_and_hooks_created() {
    let f = Fixture::new();
    let leaf = f.repo("leaf");
    let mid = f.repo("mid");
    f.add_submodule(&mid, &leaf, "inner");
    let ws = f.repo("ws");
    f.add_submodule(&ws, &mid, "a");
    f.git(&ws, &["submodule", "update", "-q", "--init", "--recursive"]);
    f.add_submodule(&ws, &leaf, "libs/x");
    std::fs::remove_dir_all(ws.join(".git/modules/libs/x/hooks")).unwrap();
    let s = plan(&ws, &[]).unwrap();
    for dir in ["a", "a/modules/inner", "libs/x"] {
        let c = format!("/workspace/.git/modules/{dir}");
        let h = ws.join(".git/modules").join(dir);
        assert!(
            has(&s, &format!("{c}/config ro {}/config", h.display())),
            "{dir}"
        );
        assert!(
            has(&s, &format!("{c}/hooks tmpfs")),
            "{dir}: {:?}",
            shape(&s)
        );
    }
    assert!(ws.join(".git/modules/libs/x/hooks").is_dir());
    assert!(noted(&s, "3 submodule repositories"), "{:?}", s.notes);
}

#[test]
fn more_than_256_submodule_repositories_are_refused() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    for i in 0..=MAX {
        let m = ws.join(format!(".git/modules/m{i:03}"));
        std::fs::create_dir_all(m.join("hooks")).unwrap();
        std::fs::write(m.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(m.join("config"), "").unwrap();
    }
    let e = err(plan(&ws, &[]));
    assert!(e.contains("more than 256 submodule repositories"), "{e}");
}
const MAX: usize = protect::MAX_REPOSITORIES;

#[test]
fn module_dir_without_config_is_an_error() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    let m = ws.join(".git/modules/broken");
    std::fs::create_dir_all(&m).unwrap();
    std::fs::write(m.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let e = err(plan(&ws, &[]));
    assert!(e.contains("modules/broken/config is missing"), "{e}");
}

#[test]
fn not_a_repository() {
    let f = Fixture::new();
    let ws = f.root.join("plain");
    std::fs::create_dir(&ws).unwrap();
    let s = plan(&ws, &[]).unwrap();
    assert!(!s.is_repository);
    assert!(s.mounts.is_empty());
    assert_eq!(s.notes.len(), 1);
    assert!(noted(&s, "is not a Git repository"), "{:?}", s.notes);
}

#[test]
fn editor_dirs_present_absent_symlinked() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    std::fs::create_dir(ws.join(".vscode")).unwrap();
    std::fs::create_dir_all(f.root.join("elsewhere")).unwrap();
    symlink(f.root.join("elsewhere"), ws.join(".fleet")).unwrap();
    let dirs = [".vscode", ".idea", ".fleet"].map(PathBuf::from);
    let s = plan(&ws, &dirs).unwrap();
    assert!(has(&s, "/workspace/.vscode tmpfs"), "{:?}", shape(&s));
    assert!(!ws.join(".idea").exists());
    assert!(!shape(&s)
        .iter()
        .any(|l| l.contains(".idea") || l.contains(".fleet")));
    assert!(noted(&s, "not created, so not hidden"), "{:?}", s.notes);
    assert!(noted(&s, ".fleet is a symlink"), "{:?}", s.notes);
    // The same in a directory that is no repository.
    let plain = f.root.join("plain");
    std::fs::create_dir_all(plain.join(".vscode")).unwrap();
    assert_eq!(
        shape(&plan(&plain, &dirs).unwrap()),
        ["/workspace/.vscode tmpfs"]
    );
}

#[test]
fn editor_dirs_must_be_plain_relative_paths() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    for bad in ["/etc", "../x", "a/../../x", "", ".git/x", "./x"] {
        let e = err(plan(&ws, &[PathBuf::from(bad)]));
        assert!(e.contains("hide_editor_dirs"), "{bad}: {e}");
    }
}

#[test]
fn mounts_are_ordered_parents_first() {
    let f = Fixture::new();
    let lib = f.repo("lib");
    let ws = f.repo("ws");
    f.add_submodule(&ws, &lib, "deep/er/sub");
    std::fs::create_dir(ws.join(".vscode")).unwrap();
    let s = plan(&ws, &[PathBuf::from(".vscode")]).unwrap();
    let depths: Vec<usize> = s
        .mounts
        .iter()
        .map(|m| m.container.components().count())
        .collect();
    assert!(depths.windows(2).all(|w| w[0] <= w[1]), "{:?}", shape(&s));
    let pos = |c: &str| s.mounts.iter().position(|m| m.container == Path::new(c));
    assert!(pos("/workspace/.git") < pos("/workspace/.git/config"));
}
