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

/// Renames `path` to `<name>.lazaret-quarantine-<unix seconds>` in the same directory; returns
/// the new path.
pub fn rename_aside(path: &Path) -> anyhow::Result<PathBuf> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        bail!("{} has no parent directory", path.display());
    };
    let fd = open_dir_nofollow(dir)?;
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    for n in 0..100u32 {
        let mut new = name.to_os_string();
        new.push(format!("{SUFFIX}{secs}"));
        if n > 0 {
            new.push(format!("-{n}"));
        }
        match renameat2(
            &fd,
            name,
            &fd,
            new.as_os_str(),
            RenameFlags::RENAME_NOREPLACE,
        ) {
            Ok(()) => return Ok(dir.join(new)),
            Err(nix::errno::Errno::EEXIST) => continue,
            Err(e) => return Err(e).with_context(|| format!("renaming {} aside", path.display())),
        }
    }
    bail!(
        "renaming {} aside: too many quarantined copies",
        path.display()
    )
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
