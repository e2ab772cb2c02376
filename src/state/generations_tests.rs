use super::*;
use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::panic::{catch_unwind, AssertUnwindSafe};

fn setup() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("usr-1a2b3c4d");
    (tmp, dir)
}

fn open(dir: &Path) -> AnchorDir {
    AnchorDir::open(dir, true).unwrap()
}

fn entries(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// The only entries of a recovered dir: `current`, its generation, maybe `anchor.json`.
fn assert_clean(dir: &Path, n: u64) {
    let mut want = set(&["current", &format!("gen-{n}")]);
    if dir.join("anchor.json").exists() {
        want.insert("anchor.json".into());
    }
    assert_eq!(entries(dir), want);
    assert_eq!(
        fs::read_link(dir.join("current")).unwrap(),
        PathBuf::from(format!("gen-{n}"))
    );
}

/// A recovered anchor whose current upper holds `marker` = "kept".
fn with_marker(dir: &Path) -> AnchorDir {
    let a = open(dir);
    a.write_container(Path::new("/usr")).unwrap();
    a.recover().unwrap();
    let (upper, _) = a.current_paths().unwrap();
    fs::write(upper.join("marker"), "kept").unwrap();
    a
}

fn upper_entries(a: &AnchorDir) -> BTreeSet<String> {
    entries(&a.current_paths().unwrap().0)
}

#[test]
fn a_fresh_dir_gets_generation_one() {
    let (_tmp, dir) = setup();
    let a = open(&dir);
    assert_eq!(a.recover().unwrap(), 1);
    assert_clean(&dir, 1);
    let (upper, work) = a.current_paths().unwrap();
    assert_eq!(upper, dir.join("gen-1/upper"));
    assert!(upper.is_dir() && work.is_dir());
    assert_eq!(a.recover().unwrap(), 1, "recovering a valid dir keeps it");
}

#[test]
fn the_old_layout_is_migrated_with_its_content() {
    let (_tmp, dir) = setup();
    fs::create_dir_all(dir.join("upper/etc")).unwrap();
    fs::write(dir.join("upper/etc/conf"), "mine").unwrap();
    fs::create_dir_all(dir.join("work/work")).unwrap();
    let a = open(&dir);
    assert_eq!(a.recover().unwrap(), 1);
    assert_clean(&dir, 1);
    let (upper, work) = a.current_paths().unwrap();
    assert_eq!(fs::read_to_string(upper.join("etc/conf")).unwrap(), "mine");
    assert!(work.join("work").is_dir(), "work was moved, not recreated");
}

#[test]
fn an_interrupted_migration_is_redone_without_loss() {
    // Killed after committing `current -> gen-1` but before moving `upper` in.
    let (_tmp, dir) = setup();
    fs::create_dir_all(dir.join("upper")).unwrap();
    fs::write(dir.join("upper/marker"), "kept").unwrap();
    fs::create_dir_all(dir.join("gen-1/work")).unwrap();
    symlink("gen-1", dir.join("current")).unwrap();
    let a = open(&dir);
    assert_eq!(a.recover().unwrap(), 2);
    assert_clean(&dir, 2);
    assert_eq!(upper_entries(&a), set(&["marker"]));
}

#[test]
fn every_invalid_current_is_replaced_by_a_fresh_generation() {
    type Plant = fn(&Path);
    let cases: [(&str, Plant); 10] = [
        ("missing", |_| {}),
        ("dangling", |d| symlink("gen-5", d.join("current")).unwrap()),
        ("outside", |d| symlink("../x", d.join("current")).unwrap()),
        ("inside", |d| {
            symlink("gen-1/upper", d.join("current")).unwrap()
        }),
        ("file", |d| fs::write(d.join("current"), "gen-1").unwrap()),
        ("dir", |d| fs::create_dir_all(d.join("current/x")).unwrap()),
        ("abc", |d| symlink("gen-abc", d.join("current")).unwrap()),
        ("zero", |d| symlink("gen-0", d.join("current")).unwrap()),
        ("padded", |d| symlink("gen-01", d.join("current")).unwrap()),
        ("absolute", |d| {
            symlink(d.join("gen-1"), d.join("current")).unwrap()
        }),
    ];
    for (what, plant) in cases {
        let (tmp, dir) = setup();
        fs::create_dir_all(tmp.path().join("x")).unwrap();
        fs::write(tmp.path().join("x/canary"), "alive").unwrap();
        fs::create_dir_all(dir.join("gen-1/upper")).unwrap();
        fs::create_dir_all(dir.join("gen-1/work")).unwrap();
        fs::write(dir.join("gen-1/upper/old"), "").unwrap();
        plant(&dir);
        let a = open(&dir);
        let n = a.recover().unwrap_or_else(|e| panic!("{what}: {e:#}"));
        assert!(n >= 2, "{what}: {n}");
        assert_clean(&dir, n);
        assert!(upper_entries(&a).is_empty(), "{what}");
        let canary = fs::read_to_string(tmp.path().join("x/canary")).unwrap();
        assert_eq!(canary, "alive", "{what}");
    }
}

#[test]
fn a_valid_current_and_its_content_are_kept() {
    let (_tmp, dir) = setup();
    let a = with_marker(&dir);
    fs::create_dir(dir.join("gen-1.tmp")).unwrap();
    fs::create_dir_all(dir.join("gen-7/upper")).unwrap();
    symlink("gen-7", dir.join("current.tmp")).unwrap();
    assert_eq!(a.recover().unwrap(), 1);
    assert_clean(&dir, 1);
    assert_eq!(upper_entries(&a), set(&["marker"]));
}

#[test]
fn a_missing_work_is_recreated_rather_than_losing_the_upper() {
    let (_tmp, dir) = setup();
    let a = with_marker(&dir);
    fs::remove_dir(dir.join("gen-1/work")).unwrap();
    assert_eq!(a.verify(), vec!["gen-1/work is missing".to_string()]);
    assert_eq!(a.recover().unwrap(), 1);
    assert!(dir.join("gen-1/work").is_dir());
    assert_eq!(upper_entries(&a), set(&["marker"]));
}

#[test]
fn reset_makes_an_empty_current_and_removes_the_old_generation() {
    let (_tmp, dir) = setup();
    let a = with_marker(&dir);
    assert_eq!(a.reset(&|_| {}).unwrap(), 2);
    assert_clean(&dir, 2);
    assert!(upper_entries(&a).is_empty());
    assert!(a.verify().is_empty(), "{:?}", a.verify());
    assert_eq!(a.container().unwrap(), Some(PathBuf::from("/usr")));
}

#[test]
fn an_interrupted_reset_leaves_the_old_content_or_an_empty_upper() {
    for at in Step::ALL {
        let (_tmp, dir) = setup();
        let a = with_marker(&dir);
        let seen = std::cell::RefCell::new(Vec::new());
        let fault = |step: Step| {
            seen.borrow_mut().push(step);
            if step == at {
                panic!("killed at {}", at.name());
            }
        };
        let r = catch_unwind(AssertUnwindSafe(|| a.reset(&fault)));
        assert!(r.is_err(), "{at:?}: the fault must stop the reset");
        let before = Step::ALL.iter().position(|s| *s == at).unwrap_or(0);
        assert_eq!(seen.borrow().as_slice(), &Step::ALL[..=before], "{at:?}");
        // A later run (a new process) opens the dir again.
        let b = AnchorDir::open(&dir, false).unwrap();
        let n = b.recover().unwrap();
        assert_clean(&dir, n);
        let upper = b.current_paths().unwrap().0;
        if at == Step::Collect {
            assert!(entries(&upper).is_empty(), "{at:?}: committed, so empty");
        } else {
            assert_eq!(entries(&upper), set(&["marker"]), "{at:?}: not committed");
            assert_eq!(fs::read_to_string(upper.join("marker")).unwrap(), "kept");
        }
        assert!(b.verify().is_empty(), "{at:?}: {:?}", b.verify());
    }
}

#[test]
fn reset_never_follows_symlinks_out_of_the_upper() {
    let (tmp, dir) = setup();
    let canary_dir = tmp.path().join("canary-dir");
    fs::create_dir_all(canary_dir.join("sub")).unwrap();
    fs::write(canary_dir.join("sub/keep"), "alive").unwrap();
    let canary_file = tmp.path().join("canary-file");
    fs::write(&canary_file, "alive").unwrap();
    let a = with_marker(&dir);
    let upper = a.current_paths().unwrap().0;
    symlink(&canary_file, upper.join("to-file")).unwrap();
    symlink(&canary_dir, upper.join("to-dir")).unwrap();
    fs::create_dir(upper.join("nested")).unwrap();
    symlink("../../../../canary-dir", upper.join("nested/relative")).unwrap();
    assert_eq!(a.reset(&|_| {}).unwrap(), 2);
    assert!(!dir.join("gen-1").exists());
    assert_eq!(fs::read_to_string(&canary_file).unwrap(), "alive");
    assert_eq!(
        fs::read_to_string(canary_dir.join("sub/keep")).unwrap(),
        "alive"
    );
}

#[test]
fn reset_removes_dirs_without_write_permission() {
    let (_tmp, dir) = setup();
    let a = with_marker(&dir);
    let upper = a.current_paths().unwrap().0;
    for (name, mode) in [("ro", 0o500), ("none", 0o000), ("wx", 0o300)] {
        fs::create_dir_all(upper.join(name).join("inner")).unwrap();
        fs::write(upper.join(name).join("file"), "x").unwrap();
        fs::set_permissions(upper.join(name), fs::Permissions::from_mode(mode)).unwrap();
    }
    assert_eq!(a.reset(&|_| {}).unwrap(), 2);
    assert_clean(&dir, 2);
}

#[test]
fn verify_reports_each_planted_problem() {
    let (_tmp, dir) = setup();
    let a = with_marker(&dir);
    assert!(a.verify().is_empty(), "{:?}", a.verify());
    let has = |problems: &[String], part: &str| problems.iter().any(|p| p.contains(part));

    fs::create_dir(dir.join("gen-3.tmp")).unwrap();
    symlink("gen-3", dir.join("current.tmp")).unwrap();
    fs::create_dir(dir.join("gen-9")).unwrap();
    fs::write(dir.join("junk"), "").unwrap();
    fs::create_dir(dir.join("upper")).unwrap();
    fs::remove_file(dir.join("anchor.json")).unwrap();
    let p = a.verify();
    for part in [
        "gen-3.tmp",
        "current.tmp",
        "gen-9 is not current",
        "unexpected entry junk",
        "`upper` of the old layout",
        "anchor.json is missing",
    ] {
        assert!(has(&p, part), "{part}: {p:?}");
    }
    assert_eq!(p.len(), 6, "{p:?}");

    fs::write(dir.join("anchor.json"), "{not json").unwrap();
    fs::rename(dir.join("gen-1/upper"), dir.join("moved")).unwrap();
    symlink("../moved", dir.join("gen-1/upper")).unwrap();
    fs::remove_dir(dir.join("gen-1/work")).unwrap();
    fs::write(dir.join("gen-1/work"), "").unwrap();
    let p = a.verify();
    for part in [
        "parsing anchor.json",
        "gen-1/upper is a symlink",
        "gen-1/work is not a directory",
    ] {
        assert!(has(&p, part), "{part}: {p:?}");
    }

    for (plant, part) in [
        (None, "`current` is missing"),
        (Some("gen-abc"), "not to a gen-<n>"),
        (Some("gen-4"), "target gen-4 is missing"),
        (Some("moved"), "not to a gen-<n>"),
    ] {
        fs::remove_file(dir.join("current")).unwrap_or(());
        if let Some(target) = plant {
            symlink(target, dir.join("current")).unwrap();
        }
        assert!(has(&a.verify(), part), "{part}: {:?}", a.verify());
    }
    fs::remove_file(dir.join("current")).unwrap();
    fs::write(dir.join("current"), "gen-1").unwrap();
    assert!(has(&a.verify(), "`current` is not a symlink"));
    fs::remove_file(dir.join("current")).unwrap();
    symlink("gen-9", dir.join("current")).unwrap();
    assert!(
        has(&a.verify(), "gen-9/upper is missing"),
        "{:?}",
        a.verify()
    );
}

#[test]
fn anchor_json_round_trips_and_rejects_bad_input() {
    let (tmp, dir) = setup();
    let a = open(&dir);
    assert_eq!(a.container().unwrap(), None);
    a.write_container(Path::new("/usr/local")).unwrap();
    assert_eq!(a.container().unwrap(), Some(PathBuf::from("/usr/local")));
    assert_eq!(entries(&dir), set(&["anchor.json"]));
    assert!(a.write_container(Path::new("usr")).is_err());
    fs::write(dir.join("anchor.json"), r#"{"container":"rel"}"#).unwrap();
    assert!(a.container().is_err());
    fs::remove_file(dir.join("anchor.json")).unwrap();
    fs::write(tmp.path().join("elsewhere"), r#"{"container":"/etc"}"#).unwrap();
    symlink(tmp.path().join("elsewhere"), dir.join("anchor.json")).unwrap();
    assert!(
        a.container().is_err(),
        "a symlinked anchor.json is not read"
    );
}

#[test]
fn a_symlinked_anchor_dir_is_refused() {
    let (tmp, dir) = setup();
    fs::create_dir(tmp.path().join("real")).unwrap();
    symlink(tmp.path().join("real"), &dir).unwrap();
    assert!(AnchorDir::open(&dir, false).is_err());
    assert!(AnchorDir::open(&dir, true).is_err());
    assert!(AnchorDir::open(&tmp.path().join("absent"), false).is_err());
}

#[test]
fn step_names_round_trip() {
    for s in Step::ALL {
        assert_eq!(Step::from_name(s.name()), Some(s));
    }
    assert_eq!(Step::from_name("Commit"), None);
}

#[test]
fn generation_names_are_canonical() {
    let p = |s: &str| parse_gen(OsStr::new(s));
    assert_eq!(p("gen-1"), Some(1));
    assert_eq!(p("gen-42"), Some(42));
    for bad in [
        "gen-",
        "gen-0",
        "gen-01",
        "gen-+1",
        "gen-1.tmp",
        "gen-1/upper",
        "gen-x",
    ] {
        assert_eq!(p(bad), None, "{bad}");
    }
    assert_eq!(p("gen-99999999999999999999"), None);
}
