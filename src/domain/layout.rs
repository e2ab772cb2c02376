//! Where Lazaret keeps things on the host: XDG data (Storage Root), state (logs) and runtime dirs.

use anyhow::{bail, Context};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The host directories Lazaret uses, read from the environment once.
#[derive(Clone, Debug)]
pub struct Layout {
    home: PathBuf,
    data_home: PathBuf,
    state_home: PathBuf,
    config_home: PathBuf,
    runtime_dir: Option<PathBuf>,
}

fn absolute_env(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

impl Layout {
    pub fn from_env() -> anyhow::Result<Layout> {
        let Some(home) = absolute_env("HOME") else {
            bail!("HOME is not set to an absolute path: Lazaret keeps its state under it");
        };
        Ok(Layout {
            data_home: absolute_env("XDG_DATA_HOME").unwrap_or_else(|| home.join(".local/share")),
            state_home: absolute_env("XDG_STATE_HOME").unwrap_or_else(|| home.join(".local/state")),
            config_home: absolute_env("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config")),
            runtime_dir: absolute_env("XDG_RUNTIME_DIR"),
            home,
        })
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The Storage Root: Domain Roots and profile-scoped state live beneath it.
    pub fn storage_root(&self) -> PathBuf {
        self.data_home.join("lazaret")
    }

    /// Host configuration (read only by host Lazaret processes; never mounted, SR-2).
    pub fn config_dir(&self) -> PathBuf {
        self.config_home.join("lazaret")
    }

    pub fn state_dir(&self) -> PathBuf {
        self.state_home.join("lazaret")
    }

    pub fn xdg_runtime_dir(&self) -> anyhow::Result<&Path> {
        match &self.runtime_dir {
            Some(p) => Ok(p),
            None => bail!(
                "XDG_RUNTIME_DIR is not set: Lazaret keeps its host-private sockets and \
                 coordination files there. Log in through a session manager, or create \
                 /run/user/$(id -u) (0700, owned by you) and export XDG_RUNTIME_DIR=/run/user/$(id -u)"
            ),
        }
    }

    /// `$XDG_RUNTIME_DIR/lazaret`: parent of every Domain's host-private runtime dir.
    pub fn runtime_root(&self) -> anyhow::Result<PathBuf> {
        Ok(self.xdg_runtime_dir()?.join("lazaret"))
    }
}

/// Creates `dir` (0700) if missing, then checks it is a real directory owned by the current
/// user and closed to group and others (SR-10). Refuses rather than repairs a foreign directory.
pub fn ensure_private_dir(dir: &Path) -> anyhow::Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(e).with_context(|| format!("creating directory {}", dir.display()));
        }
    }
    let meta = std::fs::symlink_metadata(dir)
        .with_context(|| format!("checking directory {}", dir.display()))?;
    let uid = nix::unistd::getuid().as_raw();
    if !meta.is_dir() {
        bail!(
            "{} is not a directory (a symlink?): remove it and try again",
            dir.display()
        );
    }
    if meta.uid() != uid {
        bail!(
            "{} is owned by uid {}, not by you (uid {uid}): Lazaret's directories must be \
             host-private; remove it or fix its owner",
            dir.display(),
            meta.uid()
        );
    }
    if meta.permissions().mode() & 0o077 != 0 {
        bail!(
            "{} has mode {:o}: it must be private to you (run: chmod 700 {})",
            dir.display(),
            meta.permissions().mode() & 0o7777,
            dir.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_dir_is_created_0700() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let d = t.path().join("x");
        ensure_private_dir(&d)?;
        let mode = std::fs::metadata(&d)?.permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        Ok(())
    }

    #[test]
    fn loose_dir_is_refused() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let d = t.path().join("x");
        std::fs::create_dir(&d)?;
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755))?;
        let err = ensure_private_dir(&d).err().map(|e| e.to_string());
        assert!(err.unwrap_or_default().contains("chmod 700"));
        Ok(())
    }

    #[test]
    fn symlink_is_refused() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let d = t.path().join("x");
        std::os::unix::fs::symlink(t.path(), &d)?;
        assert!(ensure_private_dir(&d).is_err());
        Ok(())
    }
}
