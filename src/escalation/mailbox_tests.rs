//! The request dir as hostile input: classification, sweep, caps, take.

use super::*;
use std::os::unix::ffi::OsStrExt;

/// A runtime dir beside the test's other files.
fn private(t: &Path) -> anyhow::Result<PathBuf> {
    let rt = t.join("rt");
    ensure_private_dir(&rt)?;
    Ok(rt)
}

const ID: &str = "0123456789abcdef0123456789abcdef";

fn regular(size: u64, age_secs: u64) -> EntryFacts {
    EntryFacts {
        kind: EntryKind::Regular,
        size,
        nlink: 1,
        age: Duration::from_secs(age_secs),
    }
}

#[test]
fn only_well_formed_records_and_young_temporaries_pass() {
    let rec = format!("{ID}.json");
    let tmp = format!(".{ID}.tmp");
    assert_eq!(classify(rec.as_bytes(), &regular(10, 0)), Verdict::Record);
    assert_eq!(classify(tmp.as_bytes(), &regular(10, 1)), Verdict::InFlight);
    assert!(matches!(
        classify(tmp.as_bytes(), &regular(10, 6)),
        Verdict::Junk(_)
    ));
    let junk_names: [&[u8]; 8] = [
        b".hidden",
        b"..",
        b"x.json",
        b"0123456789ABCDEF0123456789ABCDEF.json",
        b"0123456789abcdef0123456789abcdef.json.tmp",
        b"\xff\xfe.json",
        b".0123456789abcdef0123456789abcdef.json",
        b"0123456789abcdef0123456789abcdef",
    ];
    for name in junk_names {
        assert!(
            matches!(classify(name, &regular(10, 0)), Verdict::Junk(_)),
            "{:?}",
            OsStr::from_bytes(name)
        );
    }
    for kind in [EntryKind::Directory, EntryKind::Symlink, EntryKind::Special] {
        let facts = EntryFacts {
            kind,
            ..regular(10, 0)
        };
        assert!(matches!(classify(rec.as_bytes(), &facts), Verdict::Junk(_)));
    }
    let linked = EntryFacts {
        nlink: 2,
        ..regular(10, 0)
    };
    assert_eq!(
        classify(rec.as_bytes(), &linked),
        Verdict::Junk("a hardlinked file")
    );
    let big = regular(MAX_REQUEST_BYTES as u64 + 1, 0);
    assert!(matches!(classify(rec.as_bytes(), &big), Verdict::Junk(_)));
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_sweep_removes_every_kind_of_junk_without_following_it() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let canary_dir = t.path().join("canary");
    std::fs::create_dir(&canary_dir)?;
    std::fs::write(canary_dir.join("secret"), b"keep")?;
    let mb = Mailbox::prepare(&private(t.path())?)?;
    let req = &mb.req;
    std::fs::write(req.join(format!("{ID}.json")), b"{}")?;
    std::fs::write(req.join(".dotfile"), b"x")?;
    std::fs::write(req.join(OsStr::from_bytes(b"\xff\xfe")), b"x")?;
    std::fs::write(
        req.join("a".repeat(32) + ".json"),
        vec![b'x'; MAX_REQUEST_BYTES + 1],
    )?;
    // A deep tree with symlinks to the canary at every level.
    let mut deep = req.join("b".repeat(32) + ".json");
    for i in 0..50 {
        std::fs::create_dir(&deep)?;
        std::os::unix::fs::symlink(&canary_dir, deep.join("link"))?;
        std::os::unix::fs::symlink(canary_dir.join("secret"), deep.join("file"))?;
        deep = deep.join(format!("d{i}"));
    }
    std::os::unix::fs::symlink(&canary_dir, req.join("c".repeat(32) + ".json"))?;
    nix::unistd::mkfifo(
        &req.join("d".repeat(32) + ".json"),
        Mode::from_bits_truncate(0o600),
    )?;
    std::fs::write(req.join("e".repeat(32) + ".json"), b"{}")?;
    std::fs::hard_link(
        req.join("e".repeat(32) + ".json"),
        req.join("f".repeat(32) + ".json"),
    )?;
    let sweep = mb.sweep()?;
    // Of the two links of one file, the first seen goes; the other is then a plain record.
    assert_eq!(sweep.removed, 7, "{:?}", sweep.reasons);
    assert!(sweep.reasons.contains(&("a hardlinked file", 1)));
    assert_eq!(sweep.records.len(), 2);
    assert!(sweep.records.contains(&format!("{ID}.json")));
    assert_eq!(names(req).len(), 2);
    assert_eq!(std::fs::read(canary_dir.join("secret"))?, b"keep");
    Ok(())
}

#[test]
fn caps_hold_and_a_flood_is_cleared_within_the_budget() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let mb = Mailbox::prepare(t.path())?;
    for i in 0..(MAX_RECORDS + 10) {
        std::fs::write(mb.req.join(format!("{i:032x}.json")), b"{}")?;
    }
    for i in 0..(SWEEP_BUDGET + 100) {
        std::fs::write(mb.req.join(format!(".junk{i}")), b"")?;
    }
    let first = mb.sweep()?;
    assert_eq!(first.removed, SWEEP_BUDGET);
    assert!(first.deferred > 0);
    let second = mb.sweep()?;
    assert_eq!(second.deferred, 0);
    assert_eq!(second.records.len(), MAX_RECORDS);
    assert_eq!(names(&mb.req).len(), MAX_RECORDS);
    // Bytes: records of 60 KiB each stop at the byte cap.
    let t = tempfile::tempdir()?;
    let mb = Mailbox::prepare(t.path())?;
    for i in 0..40 {
        std::fs::write(mb.req.join(format!("{i:032x}.json")), vec![b' '; 60 * 1024])?;
    }
    let sweep = mb.sweep()?;
    assert!(sweep.held_bytes <= MAX_HELD_BYTES);
    assert_eq!(sweep.records.len(), (MAX_HELD_BYTES / (60 * 1024)) as usize);
    Ok(())
}

#[test]
fn records_are_read_once_and_hostile_ones_refused() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let mb = Mailbox::prepare(t.path())?;
    std::fs::write(mb.req.join("a.json"), b"{}")?;
    std::os::unix::fs::symlink("/etc/passwd", mb.req.join("b.json"))?;
    std::fs::write(mb.req.join("c.json"), vec![b'x'; 100])?;
    std::fs::create_dir(mb.req.join("d.json"))?;
    std::fs::write(mb.req.join("d.json/x"), b"x")?;
    assert_eq!(mb.take("a.json", 10), Ok(b"{}".to_vec()));
    assert_eq!(mb.take("b.json", 10), Err("a symlink".to_owned()));
    assert!(mb.take("c.json", 10).is_err_and(|e| e.contains("over 10")));
    assert_eq!(mb.take("d.json", 10), Err("not a regular file".to_owned()));
    assert!(names(&mb.req).is_empty());
    assert!(std::fs::metadata("/etc/passwd").is_ok());
    mb.deliver("r1", b"done")?;
    assert_eq!(std::fs::read(mb.res.join("r1.json"))?, b"done");
    Ok(())
}

#[test]
fn prepare_empties_a_left_over_tree_without_following_links() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let outside = t.path().join("outside");
    std::fs::create_dir(&outside)?;
    std::fs::write(outside.join("keep"), b"k")?;
    let mb = Mailbox::prepare(&private(t.path())?)?;
    std::fs::create_dir_all(mb.req.join(".x/y"))?;
    std::os::unix::fs::symlink(&outside, mb.req.join(".x/y/z"))?;
    std::fs::write(mb.res.join("old.json"), b"x")?;
    Mailbox::prepare(&t.path().join("rt"))?;
    assert!(names(&mb.req).is_empty() && names(&mb.res).is_empty());
    assert_eq!(std::fs::read(outside.join("keep"))?, b"k");
    Ok(())
}

/// A file still held open elsewhere (as runsc's dentry cache holds what the host removed) is
/// emptied before its name goes, so it keeps no space of the request dir; so is a taken record.
#[test]
fn removed_files_are_emptied_first_even_while_held_open() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let mb = Mailbox::prepare(&private(t.path())?)?;
    std::fs::write(mb.req.join("junk"), vec![7u8; 100_000])?;
    let held = std::fs::File::open(mb.req.join("junk"))?;
    let rec = mb.req.join(format!("{ID}.json"));
    std::fs::write(&rec, b"{}")?;
    let held_rec = std::fs::File::open(&rec)?;
    let sweep = mb.sweep()?;
    assert_eq!(sweep.records, vec![format!("{ID}.json")]);
    assert_eq!(held.metadata()?.len(), 0, "the removed junk kept its bytes");
    assert_eq!(mb.take(&format!("{ID}.json"), 1000), Ok(b"{}".to_vec()));
    assert_eq!(
        held_rec.metadata()?.len(),
        0,
        "the taken record kept its bytes"
    );
    // Read-only for its owner: left as it is (best effort), but removed all the same.
    let ro = mb.req.join("ro");
    std::fs::write(&ro, b"x")?;
    std::fs::set_permissions(&ro, std::os::unix::fs::PermissionsExt::from_mode(0o400))?;
    mb.sweep()?;
    assert_eq!(names(&mb.req), Vec::<String>::new());
    Ok(())
}
