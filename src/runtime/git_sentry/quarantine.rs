//! Neutralising a planted control file: renamed aside in its own directory, so host git no
//! longer reads it and nothing is lost. The directory is reached from `/` one component at a
//! time with `O_NOFOLLOW` (the sandbox may have swapped a directory for a symlink) and the
//! rename is `renameat2(RENAME_NOREPLACE)` relative to that directory's descriptor.

use anyhow::{bail, Context};
use nix::fcntl::{openat, renameat2, OFlag, RenameFlags};
use nix::sys::stat::Mode;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

/// Suffix of a neutralised file's new name, before a timestamp.
pub const SUFFIX: &str = ".lazaret-quarantine-";

/// Opens directory `dir` (absolute) without following a symlink in any component.
fn open_dir_nofollow(dir: &Path) -> anyhow::Result<OwnedFd> {
    let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let mut fd = nix::fcntl::open("/", flags, Mode::empty()).context("opening /")?;
    for c in dir.components() {
        match c {
            Component::RootDir => {}
            Component::Normal(name) => {
                fd = openat(&fd, name, flags, Mode::empty()).with_context(|| {
                    format!(
                        "opening {} without following symlinks (a component is a symlink or \
                         is missing)",
                        dir.display()
                    )
                })?;
            }
            _ => bail!("{} is not a plain absolute path", dir.display()),
        }
    }
    Ok(fd)
}

/// Renames `path` to `<name>.lazaret-quarantine-<unix seconds>-<random>` in the same directory
/// (a name the sandbox cannot create in advance); returns the new path.
pub fn rename_aside(path: &Path) -> anyhow::Result<PathBuf> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        bail!("{} has no parent directory", path.display());
    };
    let fd = open_dir_nofollow(dir)?;
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut new = name.to_os_string();
    new.push(format!("{SUFFIX}{secs}-{}", random_name()?));
    renameat2(
        &fd,
        name,
        &fd,
        new.as_os_str(),
        RenameFlags::RENAME_NOREPLACE,
    )
    .with_context(|| format!("renaming {} aside", path.display()))?;
    Ok(dir.join(new))
}

/// 128 random bits as 32 hexadecimal digits: a name the sandbox cannot predict.
pub fn random_name() -> anyhow::Result<String> {
    use std::io::Read;
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .context("reading /dev/urandom")?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Moves the `.git` entry `name` of the open directory `parent` (the nested repository at
/// `origin`, for the record) into the host-private directory `quarantine` under a random name;
/// where that lies on another file system, renames it in place to `.git.lazaret-quarantine-
/// <random>` instead. Never replaces anything. Returns the new path.
pub fn move_nested(
    parent: std::os::fd::BorrowedFd<'_>,
    name: &std::ffi::OsStr,
    origin: &Path,
    quarantine: &Path,
) -> anyhow::Result<PathBuf> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let new = format!("{secs}-{}", random_name()?);
    if crate::domain::layout::ensure_private_dir(quarantine).is_ok() {
        let q = open_dir_nofollow(quarantine)?;
        match renameat2(
            parent,
            name,
            &q,
            new.as_str(),
            RenameFlags::RENAME_NOREPLACE,
        ) {
            Ok(()) => {
                let _ = std::fs::write(
                    quarantine.join(format!("{new}.origin")),
                    format!("{}\n", origin.display()),
                );
                return Ok(quarantine.join(new));
            }
            Err(nix::errno::Errno::EXDEV) => {}
            Err(e) => {
                return Err(e).with_context(|| format!("moving {} to quarantine", origin.display()))
            }
        }
    }
    let aside = format!(".git{SUFFIX}{new}");
    renameat2(
        parent,
        name,
        parent,
        aside.as_str(),
        RenameFlags::RENAME_NOREPLACE,
    )
    .with_context(|| format!("renaming {} aside", origin.display()))?;
    Ok(origin.with_file_name(aside))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_aside_in_place_and_refuses_a_symlinked_directory() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let base = std::fs::canonicalize(t.path())?;
        std::fs::create_dir(base.join("g"))?;
        std::fs::write(base.join("g/commondir"), "/elsewhere\n")?;
        let new = rename_aside(&base.join("g/commondir"))?;
        assert!(!base.join("g/commondir").exists());
        assert_eq!(std::fs::read_to_string(&new)?, "/elsewhere\n");
        assert_eq!(new.parent(), Some(base.join("g").as_path()));
        // A directory swapped for a symlink: nothing is renamed through it.
        std::fs::create_dir(base.join("real"))?;
        std::fs::write(base.join("real/commondir"), "x")?;
        std::os::unix::fs::symlink(base.join("real"), base.join("link"))?;
        assert!(rename_aside(&base.join("link/commondir")).is_err());
        assert!(base.join("real/commondir").exists());
        Ok(())
    }
}
