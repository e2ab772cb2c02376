use super::*;
use crate::domain::lock::LifecycleLock;
use lazaret_protocol::DomainId;
use std::os::unix::fs::symlink;

fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, bytes)?;
    Ok(())
}

/// Creates a Domain Root for `(profile, workspace)` under `storage`; returns its ID.
fn domain(storage: &Path, profile: &str, workspace: &str) -> anyhow::Result<String> {
    let id = DomainId::derive(profile, Path::new(workspace));
    let meta = DomainMetadata {
        domain_id: id.clone(),
        profile: profile.into(),
        workspace: workspace.into(),
    };
    let root = storage.join("domains").join(id.as_str());
    write(
        &root.join("domain.json"),
        serde_json::to_string(&meta)?.as_bytes(),
    )?;
    Ok(id.to_string())
}

#[test]
fn generation_names_are_canonical() {
    let gen = |s: &str| parse_generation(OsStr::new(s));
    assert_eq!(gen("gen-3"), Some(3));
    assert_eq!(gen("gen-12"), Some(12));
    for bad in [
        "gen-0", "gen-03", "gen-", "gen-+3", "gen--3", "gen-3/x", "../gen-3", "gen-3 ", "gen-x",
    ] {
        assert_eq!(gen(bad), None, "{bad}");
    }
}

#[test]
fn current_upper_follows_only_a_valid_current() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let a = t.path();
    assert_eq!(current_upper(a), (a.join("upper"), None), "old layout");
    std::fs::create_dir_all(a.join("gen-2/upper"))?;
    symlink("gen-2", a.join("current"))?;
    assert_eq!(current_upper(a), (a.join("gen-2/upper"), Some(2)));
    for target in ["gen-5", "../gen-2", "gen-02", "/tmp"] {
        std::fs::remove_file(a.join("current"))?;
        symlink(target, a.join("current"))?;
        assert_eq!(current_upper(a), (a.join("upper"), None), "{target}");
    }
    // A generation that is itself a symlink is not followed.
    symlink(t.path().join("gen-2"), a.join("gen-7"))?;
    std::fs::remove_file(a.join("current"))?;
    symlink("gen-7", a.join("current"))?;
    assert_eq!(current_upper(a), (a.join("upper"), None));
    Ok(())
}

#[test]
fn anchor_json_names_the_container() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    assert_eq!(anchor_container(t.path()), None);
    write(&t.path().join("anchor.json"), br#"{"container": "/usr"}"#)?;
    assert_eq!(anchor_container(t.path()), Some(PathBuf::from("/usr")));
    write(&t.path().join("anchor.json"), br#"{"container": "usr"}"#)?;
    assert_eq!(
        anchor_container(t.path()),
        None,
        "relative paths are refused"
    );
    Ok(())
}

#[test]
fn sizes_count_blocks_and_files_without_following_symlinks() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    assert_eq!(tree_size(&t.path().join("missing")), SizeEntry::default());
    let outside = t.path().join("outside");
    write(&outside.join("big"), &vec![7u8; 1 << 20])?;
    let d = t.path().join("tree");
    write(&d.join("a/b/c.txt"), &vec![1u8; 300_000])?;
    write(&d.join("x"), b"")?;
    std::fs::hard_link(d.join("a/b/c.txt"), d.join("a/c-link"))?;
    symlink(&outside, d.join("a/to-outside"))?;
    let s = tree_size(&d);
    assert_eq!(s.files, 4, "c.txt, its hard link, x, the symlink: {s:?}");
    assert!(!s.partial);
    assert!(s.bytes >= 300_000, "the 300 kB file plus dirs: {s:?}");
    assert!(
        s.bytes < 600_000,
        "neither the hard link twice nor the outside dir: {s:?}"
    );
    let file = tree_size(&d.join("a/b/c.txt"));
    assert_eq!((file.files, file.partial), (1, false));
    Ok(())
}

#[test]
fn a_bounded_size_stops_counting_and_says_partial() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let d = t.path().join("tree");
    for i in 0..10 {
        write(&d.join(format!("sub/f{i}")), &[1u8; 5000])?;
    }
    let full = tree_size(&d);
    assert_eq!((full.files, full.partial), (10, false));
    assert_eq!(
        tree_size_bounded(&d, 11),
        full,
        "11 entries: the dir and its 10 files"
    );
    let cut = tree_size_bounded(&d, 5);
    assert!(cut.partial, "{cut:?}");
    assert_eq!(cut.files, 4, "sub and four files counted: {cut:?}");
    assert!(cut.bytes < full.bytes, "{cut:?} vs {full:?}");
    Ok(())
}

#[test]
fn too_deep_trees_are_partial_not_errors() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let mut deep = t.path().join("d");
    for _ in 0..MAX_DEPTH + 2 {
        deep.push("x");
    }
    write(&deep.join("f"), b"1")?;
    let s = tree_size(&t.path().join("d"));
    assert!(s.partial);
    assert_eq!(s.files, 0, "the file below the limit is not reached");
    // Named, with why.
    assert_eq!(s.unreadable.count, 1, "{:?}", s.unreadable);
    let e = &s.unreadable.entries[0];
    assert!(
        e.path.starts_with("x/x/") && e.path.ends_with("/x"),
        "{e:?}"
    );
    assert_eq!(
        e.reason,
        format!("not entered: deeper than {MAX_DEPTH} levels")
    );
    Ok(())
}

#[test]
fn an_anchor_counts_the_files_of_its_current_generation_as_inspect_does() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let a = t.path().join("usr-1");
    write(&a.join("anchor.json"), br#"{"container": "/usr"}"#)?;
    write(
        &a.join("gen-1/upper/old"),
        b"from a generation a reset left",
    )?;
    for f in [
        "gen-2/upper/bin/tool",
        "gen-2/upper/lib/x.so",
        "gen-2/upper/empty",
    ] {
        write(&a.join(f), b"x")?;
    }
    std::fs::create_dir_all(a.join("gen-2/work/work"))?;
    symlink("tool", a.join("gen-2/upper/bin/t"))?;
    symlink("gen-2", a.join("current"))?;
    // A whiteout (a character device 0:0) where the test may make one.
    let whiteout = nix::sys::stat::mknod(
        &a.join("gen-2/upper/deleted"),
        nix::sys::stat::SFlag::S_IFCHR,
        nix::sys::stat::Mode::empty(),
        0,
    )
    .is_ok();
    let size = anchor_size(&a);
    assert_eq!(
        size.files, 4,
        "tool, x.so, empty, t; not the whiteout ({whiteout})"
    );
    assert!(size.bytes > 0 && !size.partial && size.unreadable.is_empty());
    let found =
        crate::state::inspect::inspect(&a.join("gen-2/upper"), None, Path::new("/usr"), 10)?;
    assert_eq!(found.totals.files, size.files);
    Ok(())
}

#[test]
fn walk_visits_in_name_order_and_skips_symlinked_dirs() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let d = t.path().join("w");
    for f in ["b/2", "b/1", "a", "c/3"] {
        write(&d.join(f), b"")?;
    }
    symlink(d.join("c"), d.join("link"))?;
    let mut seen = Vec::new();
    let partial = walk(&d, 0usize, &mut |e, depth| {
        seen.push(format!("{}@{depth}", e.rel.display()));
        Some(depth + 1)
    });
    assert!(!partial);
    assert_eq!(
        seen,
        ["a@0", "b@0", "b/1@1", "b/2@1", "c@0", "c/3@1", "link@0"]
    );
    Ok(())
}

#[test]
fn proc_locks_lines_are_matched_by_device_and_inode() {
    let dev = nix::sys::stat::makedev(8, 1);
    let text = "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF\n\
                1: -> FLOCK  ADVISORY  WRITE 7 08:01:99 0 EOF\n\
                2: POSIX  ADVISORY  WRITE 55 00:2b:99 0 EOF\n";
    assert_eq!(parse_proc_locks(text, dev, 1234), Some(4242));
    assert_eq!(
        parse_proc_locks(text, dev, 99),
        None,
        "a waiter, and another device"
    );
    assert_eq!(
        parse_proc_locks(text, nix::sys::stat::makedev(8, 2), 1234),
        None
    );
    let anon = nix::sys::stat::makedev(0, 0x30);
    assert_eq!(
        parse_proc_locks(text, anon, 99),
        Some(55),
        "anonymous devices"
    );
    assert_eq!(parse_proc_locks("garbage\n\n", dev, 1234), None);
}

#[test]
fn a_held_lifecycle_lock_is_seen_without_taking_it() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let lock = LifecycleLock::try_acquire(t.path())?;
    let holder = lock_holder(&t.path().join(LOCK_FILE));
    assert_eq!(
        holder,
        Some(format!("lifecycle lock held by pid {}", std::process::id()))
    );
    drop(lock);
    assert_eq!(lock_holder(&t.path().join(LOCK_FILE)), None);
    assert_eq!(lock_holder(&t.path().join("missing")), None);
    Ok(())
}

#[test]
fn list_sorts_reports_activity_anchors_and_broken_roots() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let (storage, runtime) = (t.path().join("data"), t.path().join("run"));
    assert!(
        list(&storage, &runtime, &|_| None)?.is_empty(),
        "no domains dir yet"
    );
    let b = domain(&storage, "shell", "/w/b")?;
    let a_codex = domain(&storage, "codex", "/w/a")?;
    let a_claude = domain(&storage, "claude", "/w/a")?;
    let locked = domain(&storage, "shell", "/w/c")?;
    let broken = storage.join("domains/0000000000000000000f");
    write(&broken.join("ignored/x"), b"1234")?;
    write(&storage.join("domains/stray-file"), b"")?;

    let root = storage.join("domains").join(&a_claude);
    let usr = root.join("anchors/usr-1");
    write(&usr.join("anchor.json"), br#"{"container": "/usr"}"#)?;
    write(&usr.join("gen-3/upper/local/bin/tool"), b"#!/bin/sh\n")?;
    symlink("gen-3", usr.join("current"))?;
    write(&root.join("anchors/etc-2/upper/hosts"), b"x")?;
    write(
        &root.join("anchors/aaa-3/anchor.json"),
        br#"{"container": "/root"}"#,
    )?;
    write(&root.join("ignored/node_modules/m.js"), b"x")?;

    let _lock = LifecycleLock::try_acquire(&{
        let d = runtime.join(&locked);
        std::fs::create_dir_all(&d)?;
        d
    })?;
    let seen = std::cell::RefCell::new(Vec::new());
    let activity = |m: &DomainMetadata| {
        seen.borrow_mut().push(m.domain_id.to_string());
        (m.profile == "codex").then(|| "coordinator pid 1 with 2 sessions".to_string())
    };
    let list = list(&storage, &runtime, &activity)?;
    let order: Vec<&str> = list.iter().map(|d| d.domain_id.as_str()).collect();
    assert_eq!(
        order,
        [&a_claude, &a_codex, &b, &locked, "0000000000000000000f"]
    );
    assert_eq!(seen.borrow().len(), 4, "asked once per sound Domain");

    let claude = &list[0];
    assert_eq!((claude.profile.as_str(), claude.active), ("claude", false));
    let anchors: Vec<(Option<&str>, &str, Option<u64>)> = claude
        .anchors
        .iter()
        .map(|a| {
            (
                a.container.as_deref().and_then(Path::to_str),
                a.name.as_str(),
                a.generation,
            )
        })
        .collect();
    assert_eq!(
        anchors,
        [
            (Some("/root"), "aaa-3", None),
            (Some("/usr"), "usr-1", Some(3)),
            (None, "etc-2", None)
        ]
    );
    assert_eq!(
        claude.anchors[1].size.files, 1,
        "the current generation's tool only (anchor.json and current are not its files)"
    );
    assert_eq!(claude.ignored_state.files, 1);

    assert_eq!(
        list[1].held_by.as_deref(),
        Some("coordinator pid 1 with 2 sessions")
    );
    assert!(list[1].active);
    let lock_text = format!("lifecycle lock held by pid {}", std::process::id());
    assert_eq!(list[3].held_by.as_deref(), Some(lock_text.as_str()));
    assert!(!list[2].active);

    let bad = &list[4];
    assert_eq!(
        (bad.profile.as_str(), bad.workspace.as_os_str()),
        ("?", OsStr::new(""))
    );
    assert!(bad
        .problem
        .as_deref()
        .is_some_and(|p| p.contains("domain.json")));
    assert_eq!(bad.ignored_state.files, 1);
    Ok(())
}

#[test]
fn metadata_naming_another_domain_is_a_problem() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let id = domain(t.path(), "shell", "/w")?;
    let other = t.path().join("domains/00000000000000000001");
    std::fs::rename(t.path().join("domains").join(&id), &other)?;
    let list = list(t.path(), &t.path().join("run"), &|_| Some("asked".into()))?;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].domain_id, "00000000000000000001");
    assert_eq!(list[0].profile, "shell");
    assert!(list[0].problem.as_deref().is_some_and(|p| p.contains(&id)));
    assert_eq!(
        list[0].held_by, None,
        "activity is not asked about another Domain's metadata"
    );
    Ok(())
}

#[test]
fn a_held_lock_is_seen_while_other_locks_come_and_go() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let lock = LifecycleLock::try_acquire(t.path())?;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churn_dir = tempfile::tempdir()?;
    for d in 0..200 {
        std::fs::create_dir_all(churn_dir.path().join(d.to_string()))?;
    }
    let churn = {
        let (stop, dir) = (stop.clone(), churn_dir.path().to_path_buf());
        std::thread::spawn(move || -> anyhow::Result<()> {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let held: Vec<_> = (0..200)
                    .map(|i| LifecycleLock::try_acquire(&dir.join(i.to_string())))
                    .collect::<Result<_, _>>()?;
                drop(held);
            }
            Ok(())
        })
    };
    let misses = (0..500)
        .filter(|_| lock_holder(&t.path().join(LOCK_FILE)).is_none())
        .count();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    churn
        .join()
        .map_err(|_| anyhow::anyhow!("churn thread panicked"))??;
    drop(lock);
    assert_eq!(misses, 0, "the held lock was missed while others changed");
    Ok(())
}
