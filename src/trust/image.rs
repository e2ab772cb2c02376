//! The image's own CA bundle, read from the mounted image (inside `podman unshare`, where State
//! Anchors are prepared). The image is the developer's choice and trusted; the Domain's State
//! Anchors are written by the sandbox and never read for this. Paths resolve inside the image's
//! root only (`openat2` with `RESOLVE_IN_ROOT`: an absolute symlink such as Fedora's
//! `ca-bundle.crt -> /etc/pki/ca-trust/...` means the image's file, never the host's).

use super::bundle;
use super::host::SYSTEM_BUNDLES;
use anyhow::Context;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag};
use nix::sys::stat::Mode;
use serde::{Deserialize, Serialize};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// The image's system bundle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageBundle {
    /// Container path of the file itself, symlinks resolved (e.g.
    /// `/etc/ssl/certs/ca-certificates.crt`): where the composed bundle is mounted.
    pub path: PathBuf,
    /// Its text (PEM; bytes that are not UTF-8, which only comments could hold, replaced).
    pub pem: String,
}

/// The first of [`SYSTEM_BUNDLES`] that is a regular file in the image mounted at `root`;
/// `None` when the image has none.
pub fn read(root: &Path) -> anyhow::Result<Option<ImageBundle>> {
    let dir = nix::fcntl::open(
        root,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .with_context(|| format!("opening the image root {}", root.display()))?;
    for candidate in SYSTEM_BUNDLES {
        let how = OpenHow::new()
            .flags(OFlag::O_RDONLY | OFlag::O_CLOEXEC | OFlag::O_NOCTTY | OFlag::O_NONBLOCK)
            .resolve(ResolveFlag::RESOLVE_IN_ROOT | ResolveFlag::RESOLVE_NO_MAGICLINKS);
        let rel = candidate.trim_start_matches('/');
        let fd = match nix::fcntl::openat2(&dir, rel, how) {
            Ok(fd) => fd,
            Err(
                nix::errno::Errno::ENOENT | nix::errno::Errno::ENOTDIR | nix::errno::Errno::ELOOP,
            ) => continue,
            Err(e) => {
                return Err(e).with_context(|| format!("opening {candidate} in the image"));
            }
        };
        let file = std::fs::File::from(fd);
        if !file.metadata()?.is_file() {
            continue;
        }
        let resolved = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
            .ok()
            .and_then(|p| p.strip_prefix(root).ok().map(|r| Path::new("/").join(r)))
            .unwrap_or_else(|| PathBuf::from(candidate));
        let shown = PathBuf::from(format!("{} (in the image)", resolved.display()));
        let bytes = bundle::read_bounded(file, &shown)?;
        return Ok(Some(ImageBundle {
            path: resolved,
            pem: String::from_utf8_lossy(&bytes).into_owned(),
        }));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlinks_resolve_inside_the_image_root() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let root = t.path();
        std::fs::create_dir_all(root.join("etc/pki/tls/certs"))?;
        std::fs::create_dir_all(root.join("etc/pki/ca-trust/extracted/pem"))?;
        std::fs::write(
            root.join("etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"),
            "image bundle\n",
        )?;
        // Absolute, as Fedora has it: must mean the image's file, not the host's.
        std::os::unix::fs::symlink(
            "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
            root.join("etc/pki/tls/certs/ca-bundle.crt"),
        )?;
        let b = read(root)?.ok_or_else(|| anyhow::anyhow!("no bundle found"))?;
        assert_eq!(b.pem, "image bundle\n");
        assert_eq!(
            b.path,
            Path::new("/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem")
        );
        Ok(())
    }

    #[test]
    fn a_symlink_out_of_the_root_stays_inside_it() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let root = t.path().join("root");
        std::fs::create_dir_all(root.join("etc/ssl/certs"))?;
        let outside = t.path().join("outside.pem");
        std::fs::write(&outside, "host secret\n")?;
        std::os::unix::fs::symlink(&outside, root.join("etc/ssl/certs/ca-certificates.crt"))?;
        std::os::unix::fs::symlink(
            "../../../../../../outside.pem",
            root.join("etc/ssl/cert.pem"),
        )?;
        assert_eq!(read(&root)?, None);
        Ok(())
    }
}
