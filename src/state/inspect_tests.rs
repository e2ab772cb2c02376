use super::*;
use std::os::unix::fs::{symlink, PermissionsExt};

const REG: u32 = libc::S_IFREG;
const DIR: u32 = libc::S_IFDIR;
const CHR: u32 = libc::S_IFCHR;

fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, bytes)?;
    Ok(())
}

fn mkdir(path: &Path, mode: u32) -> anyhow::Result<()> {
    std::fs::create_dir_all(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    Ok(())
}

/// Sets xattr `name` on `path`; false when the filesystem refuses (the test then skips).
fn set_xattr(path: &Path, name: &CStr, value: &[u8]) -> bool {
    let Ok(p) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: NUL-terminated strings and a buffer of `value.len()` readable bytes.
    let rc = unsafe {
        libc::lsetxattr(
            p.as_ptr(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    rc == 0
}

/// A whiteout at `path`; false when mknod is not permitted (the test then skips).
fn whiteout(path: &Path) -> bool {
    use nix::sys::stat::{mknod, Mode, SFlag};
    mknod(path, SFlag::S_IFCHR, Mode::from_bits_truncate(0o600), 0).is_ok()
}

fn facts(mode: u32) -> Facts {
    Facts {
        mode,
        rdev: 0,
        uid: 0,
        gid: 0,
        whiteout_xattr: false,
        opaque: false,
    }
}

fn present(mode: u32) -> Counterpart {
    Counterpart::Present {
        mode,
        size: 1,
        uid: 0,
        gid: 0,
    }
}

fn summary(i: &Inspection) -> Vec<(String, Change, Kind)> {
    i.changes
        .iter()
        .map(|c| (c.path.clone(), c.change, c.kind))
        .collect()
}

#[test]
fn whiteouts_are_character_devices_zero_zero() {
    assert!(is_whiteout(CHR | 0o600, 0));
    assert!(is_whiteout(CHR, 0));
    assert!(
        !is_whiteout(CHR | 0o666, nix::sys::stat::makedev(1, 3)),
        "/dev/null"
    );
    assert!(!is_whiteout(libc::S_IFBLK, 0));
    assert!(!is_whiteout(REG, 0));
    assert!(!is_whiteout(DIR | 0o755, 0));
}

#[test]
fn classification_rules() {
    use Change::*;
    let file = facts(REG | 0o644);
    let dir = facts(DIR | 0o755);
    let opaque = Facts {
        opaque: true,
        ..dir
    };
    let cases: [(Facts, Counterpart, Option<Change>); 14] = [
        (file, Counterpart::Absent, Some(Added)),
        (file, present(REG | 0o644), Some(Modified)),
        (file, present(DIR | 0o755), Some(Modified)),
        (file, Counterpart::Unknown, Some(Present)),
        (facts(CHR), present(REG), Some(Deleted)),
        (facts(CHR), Counterpart::Unknown, Some(Deleted)),
        (
            Facts {
                whiteout_xattr: true,
                ..file
            },
            present(REG),
            Some(Deleted),
        ),
        (dir, present(DIR | 0o755), None),
        (dir, present(DIR | 0o700), Some(Modified)),
        (dir, present(REG | 0o755), Some(Modified)),
        (dir, Counterpart::Absent, Some(Added)),
        (dir, Counterpart::Unknown, None),
        (opaque, present(DIR | 0o755), Some(OpaqueDir)),
        (opaque, Counterpart::Absent, Some(Added)),
    ];
    for (f, lower, want) in cases {
        assert_eq!(classify(&f, &lower), want, "{f:?} over {lower:?}");
    }
    assert_eq!(classify(&opaque, &Counterpart::Unknown), Some(OpaqueDir));
    let chowned = Counterpart::Present {
        mode: DIR | 0o755,
        size: 0,
        uid: 1000,
        gid: 0,
    };
    assert_eq!(classify(&dir, &chowned), Some(Modified));
}

/// lower = the image's /usr; upper = what the Domain changed.
fn fixture(t: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    let (lower, upper) = (t.join("lower"), t.join("upper"));
    for d in ["bin", "lib", "share/doc", "share/man"] {
        mkdir(&lower.join(d), 0o755)?;
    }
    write(&lower.join("bin/ls"), b"elf")?;
    write(&lower.join("share/doc/x"), b"documentation")?;
    write(&lower.join("share/man/ls.1"), b"man")?;
    for d in ["bin", "share/doc", "local/bin"] {
        mkdir(&upper.join(d), 0o755)?;
    }
    mkdir(&upper.join("lib"), 0o700)?;
    write(&upper.join("bin/ls"), b"patched elf")?;
    write(&upper.join("local/bin/tool"), &[0u8; 5000])?;
    std::fs::set_permissions(
        upper.join("local/bin/tool"),
        std::fs::Permissions::from_mode(0o755),
    )?;
    symlink("tool\u{1b}[2J", upper.join("local/bin/t"))?;
    Ok((lower, upper))
}

#[test]
fn added_modified_and_unchanged_dirs() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let (lower, upper) = fixture(t.path())?;
    let i = inspect(&upper, Some(&lower), Path::new("/usr"), 100)?;
    use Change::*;
    let want = [
        ("/usr/bin/ls", Modified, Kind::File),
        ("/usr/lib", Modified, Kind::Dir),
        ("/usr/local", Added, Kind::Dir),
        ("/usr/local/bin", Added, Kind::Dir),
        ("/usr/local/bin/t", Added, Kind::Symlink),
        ("/usr/local/bin/tool", Added, Kind::File),
    ];
    let want: Vec<(String, Change, Kind)> = want
        .iter()
        .map(|(p, c, k)| (p.to_string(), *c, *k))
        .collect();
    assert_eq!(summary(&i), want);
    let tool = &i.changes[5];
    assert_eq!(
        (tool.size, tool.mode.as_str(), tool.link_target.as_deref()),
        (5000, "0755", None)
    );
    assert_eq!(
        i.changes[4].link_target.as_deref(),
        Some("tool\u{1b}[2J"),
        "raw in the data"
    );
    assert_eq!(i.changes[1].mode, "0700");
    let t = i.totals;
    assert_eq!(
        (t.added, t.modified, t.deleted, t.opaque_dirs, t.present),
        (4, 2, 0, 0, 0)
    );
    assert_eq!(
        t.bytes,
        5000 + 11 + 8,
        "tool, ls, the symlink's target length"
    );
    assert!(i.lower_available && !i.truncated && !i.partial);
    Ok(())
}

#[test]
fn without_the_lower_layer_files_are_present_and_dirs_unreported() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let (_, upper) = fixture(t.path())?;
    let i = inspect(&upper, None, Path::new("/usr"), 100)?;
    assert!(!i.lower_available);
    assert!(i
        .changes
        .iter()
        .all(|c| c.change == Change::Present && c.kind != Kind::Dir));
    assert_eq!(i.totals.present, 3);
    // A lower dir that does not exist (the image lacks the path): all added.
    let i = inspect(&upper, Some(&t.path().join("none")), Path::new("/srv"), 100)?;
    assert_eq!(i.totals.added, 9, "every entry, dirs included");
    Ok(())
}

#[test]
fn the_limit_truncates_the_list_but_not_the_totals() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let (lower, upper) = fixture(t.path())?;
    let i = inspect(&upper, Some(&lower), Path::new("/usr"), 2)?;
    assert_eq!(i.changes.len(), 2);
    assert!(i.truncated);
    assert_eq!(i.totals.added + i.totals.modified, 6);
    let i = inspect(&upper, Some(&lower), Path::new("/usr"), 6)?;
    assert!(!i.truncated);
    Ok(())
}

#[test]
fn a_missing_upper_has_no_changes_and_a_symlinked_one_is_refused() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let i = inspect(&t.path().join("none"), None, Path::new("/usr"), 10)?;
    assert!(i.changes.is_empty() && !i.partial);
    symlink(t.path(), t.path().join("link"))?;
    assert!(inspect(&t.path().join("link"), None, Path::new("/usr"), 10).is_err());
    Ok(())
}

#[test]
fn symlinks_in_the_upper_are_never_followed() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let host = t.path().join("host-secrets");
    write(&host.join("canary"), b"secret")?;
    let upper = t.path().join("upper");
    std::fs::create_dir(&upper)?;
    symlink(&host, upper.join("etc"))?;
    let i = inspect(&upper, None, Path::new("/usr"), 10)?;
    assert_eq!(
        summary(&i),
        [("/usr/etc".to_string(), Change::Present, Kind::Symlink)]
    );
    assert_eq!(std::fs::read(host.join("canary"))?, b"secret");
    Ok(())
}

#[test]
fn whiteouts_are_deleted_with_the_lower_entry_described() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let (lower, upper) = fixture(t.path())?;
    if !whiteout(&upper.join("share/doc/x")) {
        eprintln!("mknod not permitted here: skipped");
        return Ok(());
    }
    let i = inspect(&upper, Some(&lower), Path::new("/usr"), 100)?;
    let x = i.changes.iter().find(|c| c.path == "/usr/share/doc/x");
    let x = x.map(|c| (c.change, c.kind, c.size, c.mode.as_str()));
    assert_eq!(x, Some((Change::Deleted, Kind::File, 13, "0644")));
    assert_eq!(i.totals.deleted, 1);
    let i = inspect(&upper, None, Path::new("/usr"), 100)?;
    let x = i
        .changes
        .iter()
        .find(|c| c.path == "/usr/share/doc/x")
        .map(|c| (c.change, c.kind));
    assert_eq!(x, Some((Change::Deleted, Kind::Unknown)));
    Ok(())
}

#[test]
fn opaque_dirs_and_xattr_whiteouts() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let (lower, upper) = fixture(t.path())?;
    let man = upper.join("share/man");
    mkdir(&man, 0o755)?;
    write(&man.join("page"), b"new")?;
    write(&upper.join("share/doc/x"), b"")?;
    if !set_xattr(&man, c"user.overlay.opaque", b"y")
        || !set_xattr(&upper.join("share/doc/x"), c"user.overlay.whiteout", b"")
    {
        eprintln!("user xattrs not supported here: skipped");
        return Ok(());
    }
    let i = inspect(&upper, Some(&lower), Path::new("/usr"), 100)?;
    let got: Vec<(String, Change)> = i
        .changes
        .iter()
        .filter(|c| c.path.starts_with("/usr/share"))
        .map(|c| (c.path.clone(), c.change))
        .collect();
    let want = [
        ("/usr/share/doc/x", Change::Deleted),
        ("/usr/share/man", Change::OpaqueDir),
        ("/usr/share/man/page", Change::Added),
    ];
    let want: Vec<(String, Change)> = want.iter().map(|(p, c)| (p.to_string(), *c)).collect();
    assert_eq!(got, want);
    // "x" marks a directory holding xattr whiteouts, not an opaque one.
    assert!(set_xattr(&man, c"user.overlay.opaque", b"x"));
    let i = inspect(&upper, Some(&lower), Path::new("/usr"), 100)?;
    assert!(i.changes.iter().all(|c| c.path != "/usr/share/man"));
    Ok(())
}

#[test]
fn inspections_round_trip_through_json() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let (lower, upper) = fixture(t.path())?;
    let i = inspect(&upper, Some(&lower), Path::new("/usr"), 100)?;
    let text = serde_json::to_string(&i)?;
    assert!(text.contains(r#""change":"added""#) && text.contains(r#""kind":"symlink""#));
    assert_eq!(serde_json::from_str::<Inspection>(&text)?, i);
    Ok(())
}
