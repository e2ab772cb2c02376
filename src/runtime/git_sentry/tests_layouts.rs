//! Workspaces whose `.git` is a pointer file or a symlink, and the small parsers.

use super::files::{config_facts, normalise, parse_gitdir_file};
use super::tests::{err, has, noted, shape, Fixture};
use super::*;
use std::os::unix::fs::symlink;

#[test]
fn linked_worktree_mounts_the_common_dir_where_git_looks() {
    let f = Fixture::new();
    let main = f.repo("main");
    f.git(&main, &["worktree", "add", "-q", "-b", "wt", "../wt"]);
    let wt = f.root.join("wt");
    let c = main.join(".git");
    let g = c.join("worktrees/wt");
    assert_eq!(
        std::fs::read_to_string(wt.join(".git")).unwrap(),
        format!("gitdir: {}\n", g.display())
    );
    let s = plan(&wt, &[]).unwrap();
    let (c, g, w) = (c.display(), g.display(), wt.display());
    let mut expected = vec![
        format!("/workspace/.git ro {w}/.git"),
        format!("{c} rw {c}"),
        format!("{c}/config ro {c}/config"),
        format!("{c}/hooks tmpfs"),
        format!("{c}/worktrees rw {c}/worktrees"),
        format!("{g} rw {g}"),
        format!("{g}/commondir ro {g}/commondir"),
        format!("{w}/.git ro {w}/.git"),
    ];
    let mut got = shape(&s);
    expected.sort();
    got.sort();
    assert_eq!(got, expected);
    assert!(s.is_repository);
    assert!(
        noted(&s, &format!("{c} is mounted read-write at {c}")),
        "{:?}",
        s.notes
    );
}

#[test]
fn main_worktree_pins_linked_worktrees_admin_dirs() {
    let f = Fixture::new();
    let main = f.repo("main");
    f.git(&main, &["worktree", "add", "-q", "-b", "wt", "../wt"]);
    let s = plan(&main, &[]).unwrap();
    let g = main.join(".git/worktrees/wt");
    assert!(has(
        &s,
        &format!(
            "/workspace/.git/worktrees rw {}",
            main.join(".git/worktrees").display()
        )
    ));
    assert!(has(
        &s,
        &format!("/workspace/.git/worktrees/wt rw {}", g.display())
    ));
    assert!(has(
        &s,
        &format!(
            "/workspace/.git/worktrees/wt/commondir ro {}/commondir",
            g.display()
        )
    ));
}

#[test]
fn worktree_config_of_a_linked_worktree_is_protected() {
    let f = Fixture::new();
    let main = f.repo("main");
    f.git(&main, &["config", "extensions.worktreeConfig", "true"]);
    f.git(&main, &["worktree", "add", "-q", "-b", "wt", "../wt"]);
    let s = plan(&f.root.join("wt"), &[]).unwrap();
    let g = main.join(".git/worktrees/wt/config.worktree");
    assert!(g.is_file());
    assert!(
        has(&s, &format!("{0} ro {0}", g.display())),
        "{:?}",
        shape(&s)
    );
}

#[test]
fn submodule_opened_as_the_workspace_uses_a_relative_gitdir() {
    let f = Fixture::new();
    let lib = f.repo("lib");
    let top = f.repo("top");
    f.add_submodule(&top, &lib, "sub");
    let ws = top.join("sub");
    let s = plan(&ws, &[]).unwrap();
    let g = top.join(".git/modules/sub");
    let gd = g.display();
    let mut got = shape(&s);
    got.sort();
    let mut expected = vec![
        format!("/workspace/.git ro {}/.git", ws.display()),
        format!("/.git/modules/sub rw {gd}"),
        format!("/.git/modules/sub/config ro {gd}/config"),
        "/.git/modules/sub/hooks tmpfs".to_owned(),
    ];
    expected.sort();
    assert_eq!(got, expected);
    // Its config says core.worktree = ../../../sub: inside, that is /sub, and git fails there.
    assert!(noted(&s, "means /sub, not /workspace"), "{:?}", s.notes);
}

#[test]
fn git_directory_with_a_commondir_is_planned_like_a_linked_worktree() {
    let f = Fixture::new();
    let main = f.repo("main");
    f.git(&main, &["worktree", "add", "-q", "-b", "wt", "../wt"]);
    let wt = f.root.join("wt");
    let g = main.join(".git/worktrees/wt");
    std::fs::remove_file(wt.join(".git")).unwrap();
    std::fs::rename(&g, wt.join(".git")).unwrap();
    std::fs::write(
        wt.join(".git/commondir"),
        format!("{}\n", main.join(".git").display()),
    )
    .unwrap();
    let s = plan(&wt, &[]).unwrap();
    let (c, w) = (main.join(".git"), wt.display());
    let c = c.display();
    for line in [
        format!("/workspace/.git rw {w}/.git"),
        format!("/workspace/.git/commondir ro {w}/.git/commondir"),
        format!("{c} rw {c}"),
        format!("{c}/config ro {c}/config"),
        format!("{c}/hooks tmpfs"),
    ] {
        assert!(has(&s, &line), "{line}: {:?}", shape(&s));
    }
}

#[test]
fn separate_git_dir_outside_the_workspace() {
    let f = Fixture::new();
    let ws = f.root.join("ws");
    std::fs::create_dir(&ws).unwrap();
    let gd = f.root.join("store/ws.git");
    std::fs::create_dir(f.root.join("store")).unwrap();
    f.git(
        &ws,
        &["init", "-q", "--separate-git-dir", gd.to_str().unwrap()],
    );
    let s = plan(&ws, &[]).unwrap();
    let gd = gd.display();
    assert!(has(&s, &format!("{gd} rw {gd}")), "{:?}", shape(&s));
    assert!(has(&s, &format!("{gd}/config ro {gd}/config")));
    assert!(has(&s, &format!("{gd}/hooks tmpfs")));
    assert!(has(
        &s,
        &format!("/workspace/.git ro {}/.git", ws.display())
    ));
}

#[test]
fn relative_gitdir_inside_the_workspace_needs_no_extra_mount() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    std::fs::rename(ws.join(".git"), ws.join(".realgit")).unwrap();
    std::fs::write(ws.join(".git"), "gitdir: .realgit").unwrap();
    let s = plan(&ws, &[]).unwrap();
    let w = ws.display();
    let mut got = shape(&s);
    got.sort();
    assert_eq!(
        got,
        [
            format!("/workspace/.git ro {w}/.git"),
            format!("/workspace/.realgit rw {w}/.realgit"),
            format!("/workspace/.realgit/config ro {w}/.realgit/config"),
            "/workspace/.realgit/hooks tmpfs".to_owned(),
        ]
    );
}

#[test]
fn absolute_gitdir_inside_the_workspace_is_protected_at_both_paths() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    std::fs::rename(ws.join(".git"), ws.join(".realgit")).unwrap();
    let real = ws.join(".realgit");
    std::fs::write(ws.join(".git"), format!("gitdir: {}\n", real.display())).unwrap();
    let s = plan(&ws, &[]).unwrap();
    let r = real.display();
    for line in [
        format!("{r} rw {r}"),
        format!("{r}/config ro {r}/config"),
        format!("/workspace/.realgit/config ro {r}/config"),
        format!("{r}/hooks tmpfs"),
        "/workspace/.realgit/hooks tmpfs".to_owned(),
    ] {
        assert!(has(&s, &line), "{line}: {:?}", shape(&s));
    }
}

#[test]
fn git_directories_at_system_paths_or_around_the_workspace_are_refused() {
    let f = Fixture::new();
    let base = f.root.join("a");
    let ws = base.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    for (gitdir, expect) in [
        ("etc", "top-level system directory"),
        ("usr/g", "inside the sandbox's system directory /usr"),
        ("", "contains the workspace"),
    ] {
        let g = base.join(gitdir);
        std::fs::create_dir_all(&g).unwrap();
        f.git(&g, &["init", "-q", "--bare"]);
        std::fs::write(ws.join(".git"), format!("gitdir: ../{gitdir}\n")).unwrap();
        let e = err(plan(&ws, &[]));
        assert!(e.contains(expect), "{gitdir}: {e}");
    }
}

#[test]
fn symlinked_dot_git_is_refused_with_a_conversion_hint() {
    let f = Fixture::new();
    let store = f.repo("store");
    let ws = f.root.join("ws");
    std::fs::create_dir(&ws).unwrap();
    symlink(store.join(".git"), ws.join(".git")).unwrap();
    let e = err(plan(&ws, &[]));
    assert!(
        e.contains("is a symlink") && e.contains("echo 'gitdir: "),
        "{e}"
    );
}

#[test]
fn malformed_git_files_are_errors_naming_the_file() {
    let f = Fixture::new();
    let ws = f.root.join("ws");
    std::fs::create_dir(&ws).unwrap();
    let big = format!("gitdir: {}\n", "x".repeat(5000));
    for content in [
        "gitdir:/abs\n",
        "gitdir: a\ngitdir: b\n",
        "",
        "gitdir: \n",
        "GITDIR: x",
        "gitdir: does-not-exist\n",
        big.as_str(),
    ] {
        std::fs::write(ws.join(".git"), content).unwrap();
        let e = err(plan(&ws, &[]));
        assert!(
            e.contains(&format!("{}/.git", ws.display())),
            "{content:?}: {e}"
        );
    }
    // A directory that is no Git directory.
    std::fs::create_dir(ws.join("empty")).unwrap();
    std::fs::write(ws.join(".git"), "gitdir: empty").unwrap();
    assert!(err(plan(&ws, &[])).contains("not a Git directory"));
}

#[test]
fn gitdir_file_parsing() {
    let f = Fixture::new();
    let p = f.root.join("g");
    std::fs::write(&p, "gitdir: ../x/y").unwrap();
    assert_eq!(parse_gitdir_file(&p).unwrap(), "../x/y");
    std::fs::write(&p, "gitdir: /abs/p\n").unwrap();
    assert_eq!(parse_gitdir_file(&p).unwrap(), "/abs/p");
    std::fs::write(&p, "gitdir: x\r\n").unwrap();
    assert!(parse_gitdir_file(&p).is_err());
    let link = f.root.join("l");
    symlink(&p, &link).unwrap();
    assert!(
        parse_gitdir_file(&link).is_err(),
        "a symlink is not followed"
    );
}

#[test]
fn normalise_is_lexical() {
    let n = |p: &str| normalise(Path::new(p));
    assert_eq!(
        n("/workspace/../.git/modules/sub"),
        Path::new("/.git/modules/sub")
    );
    assert_eq!(n("/workspace/../../../x"), Path::new("/x"));
    assert_eq!(n("/a/./b/worktrees/wt/../.."), Path::new("/a/b"));
    assert_eq!(n("/"), Path::new("/"));
}

#[test]
fn config_facts_reads_what_it_needs() {
    let f = Fixture::new();
    let p = f.root.join("config");
    std::fs::write(
        &p,
        "[core]\n\tbare = false\n\tworktree = \"../../../s u b\" ; c\n\
         [Core]\n\thooksPath = .githooks\n[include]\n\tpath = ../shared\n\
         [extensions]\n\tworktreeConfig = true\n[remote \"o\"]\n\tworktree = no\n",
    )
    .unwrap();
    let facts = config_facts(&p).unwrap();
    assert_eq!(facts.worktree.as_deref(), Some("../../../s u b"));
    assert_eq!(facts.hooks_path.as_deref(), Some(".githooks"));
    assert_eq!(facts.includes, ["../shared"]);
    assert!(facts.worktree_config);
}
