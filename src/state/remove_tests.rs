use super::*;
use nix::sys::stat::mkdirat;
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};

fn open_dir(path: &std::path::Path) -> OwnedFd {
    nix::fcntl::open(path, dir_flags(), Mode::empty()).unwrap()
}

fn rm(parent: &std::path::Path, name: &str) -> anyhow::Result<()> {
    remove_tree_at(open_dir(parent).as_fd(), OsStr::new(name))
}

#[test]
fn a_missing_entry_is_not_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    rm(tmp.path(), "absent").unwrap();
}

#[test]
fn files_and_trees_are_removed() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("f"), "x").unwrap();
    fs::create_dir_all(tmp.path().join("t/a/b/c")).unwrap();
    fs::write(tmp.path().join("t/a/b/c/f"), "x").unwrap();
    fs::write(tmp.path().join("t/a/g"), "x").unwrap();
    nix::unistd::mkfifo(&tmp.path().join("t/fifo"), Mode::from_bits_truncate(0o600)).unwrap();
    rm(tmp.path(), "f").unwrap();
    rm(tmp.path(), "t").unwrap();
    assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn symlinks_are_unlinked_never_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    fs::create_dir_all(outside.join("deep")).unwrap();
    fs::write(outside.join("deep/keep"), "alive").unwrap();
    let t = tmp.path().join("t");
    fs::create_dir_all(t.join("sub")).unwrap();
    symlink(&outside, t.join("abs")).unwrap();
    symlink("../../outside/deep", t.join("sub/rel")).unwrap();
    symlink(outside.join("deep/keep"), t.join("file")).unwrap();
    symlink(&outside, tmp.path().join("top-link")).unwrap();
    rm(tmp.path(), "top-link").unwrap();
    rm(tmp.path(), "t").unwrap();
    assert!(!t.exists());
    assert_eq!(
        fs::read_to_string(outside.join("deep/keep")).unwrap(),
        "alive"
    );
}

#[test]
fn dirs_without_permissions_are_opened_up_and_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    for (name, mode) in [
        ("r-x", 0o500),
        ("---", 0o000),
        ("-wx", 0o300),
        ("r--", 0o400),
    ] {
        fs::create_dir_all(t.join(name).join("inner")).unwrap();
        fs::write(t.join(name).join("inner/file"), "x").unwrap();
        fs::set_permissions(
            t.join(name).join("inner"),
            fs::Permissions::from_mode(0o500),
        )
        .unwrap();
        fs::set_permissions(t.join(name), fs::Permissions::from_mode(mode)).unwrap();
    }
    rm(tmp.path(), "t").unwrap();
    assert!(!t.exists());
}

#[test]
fn names_that_are_not_one_entry_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir_all(tmp.path().join("a/b")).unwrap();
    for bad in ["", ".", "..", "a/b", "/"] {
        assert!(rm(tmp.path(), bad).is_err(), "{bad:?}");
    }
    assert!(tmp.path().join("a/b").is_dir());
}

/// Nested `depth` levels below `parent/name`, made fd-relatively (the paths exceed PATH_MAX).
fn nest(parent: &std::path::Path, depth: usize) {
    let mut fd = open_dir(parent);
    for _ in 0..depth {
        mkdirat(fd.as_fd(), "d", Mode::from_bits_truncate(0o700)).unwrap();
        fd = openat(fd.as_fd(), "d", dir_flags(), Mode::empty()).unwrap();
    }
    let file = OFlag::O_CREAT | OFlag::O_WRONLY | OFlag::O_CLOEXEC;
    openat(fd.as_fd(), "leaf", file, Mode::from_bits_truncate(0o600)).unwrap();
}

#[test]
fn deep_trees_are_removed_with_one_fd_at_a_time() {
    let tmp = tempfile::tempdir().unwrap();
    // Deeper than the common 1024-fd soft limit: an fd per level would run out.
    nest(tmp.path(), 2000);
    rm(tmp.path(), "d").unwrap();
    assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn trees_beyond_the_depth_limit_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    nest(tmp.path(), MAX_DEPTH + 1);
    let e = rm(tmp.path(), "d").unwrap_err();
    assert!(format!("{e:#}").contains("deeper than"), "{e:#}");
    // Within the limit from one level down (the tempdir's own cleanup holds an fd per level).
    let d = openat(
        open_dir(tmp.path()).as_fd(),
        "d",
        dir_flags(),
        Mode::empty(),
    )
    .unwrap();
    remove_tree_at(d.as_fd(), OsStr::new("d")).unwrap();
    rm(tmp.path(), "d").unwrap();
}

#[test]
fn listing_skips_dot_entries() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("a"), "").unwrap();
    fs::create_dir(tmp.path().join("b")).unwrap();
    let mut names = list_dir(open_dir(tmp.path()).as_fd()).unwrap();
    names.sort();
    assert_eq!(names, vec![OsString::from("a"), OsString::from("b")]);
}
