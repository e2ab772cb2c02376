//! The Domain Key (issue #13): the developer's secret that keys Domain IDs, so that the ID
//! the sandbox sees (`LAZARET_DOMAIN`, request records) — and other host users see in process
//! lists — cannot be used to confirm guesses of the host workspace path.
//!
//! `<Storage Root>/domain-id.key`: 32 random bytes, mode 0600, created once on first use
//! beside the Domain Roots it names (they move, back up and restore together). The Storage
//! Root is never mounted into a sandbox (SR-2); the key is read only by host Lazaret processes.
//! Losing it re-keys every Domain: their roots are then found again by their `domain.json`
//! (see [`super::legacy`] for how Domains named by another ID are taken over).

use super::layout::ensure_private_dir;
use anyhow::{bail, Context};
use lazaret_protocol::{DomainKey, DOMAIN_KEY_LEN};
use nix::fcntl::OFlag;
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// File name of the key in the Storage Root.
pub const KEY_FILE: &str = "domain-id.key";

pub fn key_path(storage_root: &Path) -> PathBuf {
    storage_root.join(KEY_FILE)
}

/// Reads the Domain Key, creating it (and the Storage Root) on first use. A key that is not a
/// private regular file of exactly 32 bytes owned by the user is refused with what to do.
pub fn load_or_create(storage_root: &Path) -> anyhow::Result<DomainKey> {
    ensure_private_dir(storage_root)?;
    let path = key_path(storage_root);
    match read_key(&path) {
        Ok(Some(key)) => return Ok(key),
        Ok(None) => {}
        Err(e) => return Err(e),
    }
    let key = DomainKey::generate().context("creating the Domain Key")?;
    // Written under a private name, then linked into place: never a partial key, and of two
    // first runs racing, the one that links first wins and the other reads its key.
    let tmp = storage_root.join(format!(".{KEY_FILE}.{}.tmp", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC).bits())
        .open(&tmp)
        .and_then(|mut f| f.write_all(key.as_bytes()).and_then(|()| f.sync_all()));
    let linked = written.and_then(|()| std::fs::hard_link(&tmp, &path));
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(key),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_key(&path)?
            .with_context(|| format!("{} vanished while it was created", path.display())),
        Err(e) => Err(e).with_context(|| format!("creating the Domain Key {}", path.display())),
    }
}

/// The key at `path`, `None` if there is none.
fn read_key(path: &Path) -> anyhow::Result<Option<DomainKey>> {
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC).bits())
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(e).with_context(|| {
                format!(
                    "reading the Domain Key {} (it must be a regular file, not a symlink)",
                    path.display()
                )
            })
        }
    };
    let meta = file.metadata()?;
    let fix = "remove it and run lazaret again: a new key is made, and existing Domains are \
               found again by their domain.json";
    if !meta.is_file() || meta.uid() != nix::unistd::getuid().as_raw() {
        bail!(
            "the Domain Key {} is not a regular file of yours: {fix}",
            path.display()
        );
    }
    if meta.permissions().mode() & 0o077 != 0 {
        bail!(
            "the Domain Key {} is readable by others (mode {:o}): run chmod 600 {}",
            path.display(),
            meta.permissions().mode() & 0o7777,
            path.display()
        );
    }
    let mut bytes = Vec::with_capacity(DOMAIN_KEY_LEN + 1);
    file.take(DOMAIN_KEY_LEN as u64 + 1)
        .read_to_end(&mut bytes)?;
    match DomainKey::from_bytes(&bytes) {
        Some(key) => Ok(Some(key)),
        None => bail!(
            "the Domain Key {} is {} bytes, not {DOMAIN_KEY_LEN}: {fix}",
            path.display(),
            bytes.len()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_once_private_then_read_back() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let root = t.path().join("lazaret");
        let first = load_or_create(&root)?;
        let meta = std::fs::metadata(key_path(&root))?;
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(meta.len(), DOMAIN_KEY_LEN as u64);
        assert_eq!(load_or_create(&root)?, first);
        // Nothing but the key was left behind.
        assert_eq!(std::fs::read_dir(&root)?.count(), 1);
        Ok(())
    }

    #[test]
    fn a_bad_key_is_refused_not_replaced() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let root = t.path().join("lazaret");
        ensure_private_dir(&root)?;
        std::fs::write(key_path(&root), b"short")?;
        std::fs::set_permissions(key_path(&root), std::fs::Permissions::from_mode(0o600))?;
        let err = load_or_create(&root).err().map(|e| e.to_string());
        assert!(err.unwrap_or_default().contains("5 bytes"));
        std::fs::set_permissions(key_path(&root), std::fs::Permissions::from_mode(0o644))?;
        let err = load_or_create(&root).err().map(|e| e.to_string());
        assert!(err.unwrap_or_default().contains("chmod 600"));
        std::fs::remove_file(key_path(&root))?;
        std::os::unix::fs::symlink("/etc/hostname", key_path(&root))?;
        assert!(load_or_create(&root).is_err());
        assert_eq!(
            std::fs::read_link(key_path(&root))?,
            Path::new("/etc/hostname")
        );
        Ok(())
    }
}
