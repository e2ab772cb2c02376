//! The Network Sidecar's image: shell-less, holding only `lazaret-sidecar`, the host's `nft` and
//! the shared libraries they load. Built locally with `podman import` (no registry), tagged by a
//! digest of its contents so that a new Lazaret build gets a matching image.

use super::podman::Podman;
use anyhow::{bail, Context};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const NFT: &str = "/usr/sbin/nft";
pub const REPOSITORY: &str = "localhost/lazaret/sidecar";

/// The files that make up the image: (host source, path inside the image).
#[derive(Debug)]
pub struct SidecarImage {
    pub tag: String,
    sidecar_bin: PathBuf,
}

/// `lazaret-sidecar` next to the running `lazaret` (installed or in `target/`).
pub fn sibling_binary(name: &str) -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("finding the lazaret executable")?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    let path = exe.with_file_name(name);
    if !path.is_file() {
        bail!(
            "{} is missing: it is installed next to lazaret (run scripts/setup install)",
            path.display()
        );
    }
    Ok(path)
}

/// The files' identity, size and modification and change times (None if one is missing).
fn stamp(files: &[&Path]) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let mut out = String::new();
    for f in files {
        let m = std::fs::metadata(f).ok()?;
        out.push_str(&format!(
            "{}:{}:{}:{}.{}:{}.{} ",
            m.dev(),
            m.ino(),
            m.size(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec()
        ));
    }
    Some(out.trim_end().to_owned())
}

impl SidecarImage {
    pub fn locate() -> anyhow::Result<SidecarImage> {
        let sidecar_bin = sibling_binary("lazaret-sidecar")?;
        let mut h = Sha256::new();
        for p in [sidecar_bin.as_path(), Path::new(NFT)] {
            let bytes = std::fs::read(p).with_context(|| {
                format!(
                    "reading {} (is nftables installed? see `lazaret doctor`)",
                    p.display()
                )
            })?;
            h.update((bytes.len() as u64).to_be_bytes());
            h.update(&bytes);
        }
        let digest = h.finalize();
        let tag: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
        Ok(SidecarImage {
            tag: format!("{REPOSITORY}:{tag}"),
            sidecar_bin,
        })
    }

    /// As [`SidecarImage::locate`], remembering the digest in `cache_dir` against the files'
    /// identity and change times: hashing the sidecar binary (tens of MB with line tables)
    /// took ~100 ms of every Domain start (issue #18). A file replaced or rewritten gets a new
    /// ctime, which nobody but root can set back, so a stale digest is never used.
    pub fn locate_cached(cache_dir: &Path) -> anyhow::Result<SidecarImage> {
        let sidecar_bin = sibling_binary("lazaret-sidecar")?;
        let cache = cache_dir.join("sidecar-digest");
        let stamp = stamp(&[sidecar_bin.as_path(), Path::new(NFT)]);
        if let (Some(stamp), Ok(cached)) = (&stamp, std::fs::read_to_string(&cache)) {
            if let Some((seen, tag)) = cached.trim_end().split_once('\t') {
                if seen == stamp && tag.starts_with(REPOSITORY) {
                    return Ok(SidecarImage {
                        tag: tag.to_owned(),
                        sidecar_bin,
                    });
                }
            }
        }
        let image = SidecarImage::locate()?;
        if let Some(stamp) = stamp {
            let tmp = cache_dir.join(format!(".sidecar-digest.{}", std::process::id()));
            let written = std::fs::create_dir_all(cache_dir)
                .and_then(|_| std::fs::write(&tmp, format!("{stamp}\t{}\n", image.tag)))
                .and_then(|_| std::fs::rename(&tmp, &cache));
            if let Err(e) = written {
                let _ = std::fs::remove_file(&tmp);
                tracing::debug!("remembering the sidecar image's digest: {e}");
            }
        }
        Ok(image)
    }

    /// Builds and imports the image unless rootless storage already has it. A marker in
    /// `marker_dir` remembers a known-good image so that the common path asks podman nothing.
    pub fn ensure(&self, podman: &Podman, marker_dir: &Path) -> anyhow::Result<()> {
        let marker = self.marker(marker_dir);
        if marker.exists() {
            return Ok(());
        }
        let exists = podman.output(
            "checking the Network Sidecar image",
            ["image", "exists", &self.tag],
        )?;
        if !exists.status.success() {
            tracing::info!(image = %self.tag, "building the Network Sidecar image");
            let tree = build_dir()?;
            let result = self.build(podman, &tree);
            let _ = std::fs::remove_dir_all(&tree);
            result?;
            self.remove_older(podman);
        }
        std::fs::create_dir_all(marker_dir)
            .and_then(|_| std::fs::write(&marker, self.tag.as_bytes()))
            .with_context(|| format!("writing {}", marker.display()))?;
        Ok(())
    }

    /// Removes the sidecar images of other Lazaret builds (one per build would pile up). One
    /// still used by a running Domain of an older build is refused by podman and stays.
    fn remove_older(&self, podman: &Podman) {
        let Ok(listed) = podman.run(
            "listing old Network Sidecar images",
            [
                "images",
                "--filter",
                "label=lazaret.role=sidecar",
                "--format",
                "{{.Repository}}:{{.Tag}}",
            ],
        ) else {
            return;
        };
        for old in listed.lines().map(str::trim) {
            if old.starts_with(REPOSITORY) && old != self.tag {
                let _ = podman.output("removing an old Network Sidecar image", ["rmi", old]);
            }
        }
    }

    /// Forgets the marker (the image was removed behind Lazaret's back).
    pub fn forget(&self, marker_dir: &Path) {
        let _ = std::fs::remove_file(self.marker(marker_dir));
    }

    fn marker(&self, marker_dir: &Path) -> PathBuf {
        marker_dir.join(self.tag.replace(['/', ':'], "_"))
    }

    fn build(&self, podman: &Podman, tree: &Path) -> anyhow::Result<()> {
        for dir in [
            "etc",
            "proc",
            "sys",
            "dev",
            "run/lazaret",
            "tmp",
            "usr/sbin",
        ] {
            std::fs::create_dir_all(tree.join(dir))?;
        }
        copy_into(&self.sidecar_bin, tree, Path::new("/lazaret-sidecar"))?;
        copy_into(Path::new(NFT), tree, Path::new(NFT))?;
        for lib in shared_libraries(&[self.sidecar_bin.as_path(), Path::new(NFT)])? {
            copy_into(&lib, tree, &lib)?;
        }
        let mut tar = Command::new("tar")
            .arg("-C")
            .arg(tree)
            .args(["--owner=0", "--group=0", "-cf", "-", "."])
            .stdout(Stdio::piped())
            .spawn()
            .context("building the Network Sidecar image: cannot run tar")?;
        let Some(tar_out) = tar.stdout.take() else {
            bail!("building the Network Sidecar image: tar has no stdout");
        };
        let out = podman
            .command([
                "import",
                "-q",
                "--change",
                "ENTRYPOINT [\"/lazaret-sidecar\"]",
                "--change",
                "LABEL lazaret.role=sidecar",
                "-",
                &self.tag,
            ])
            .stdin(tar_out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .context("building the Network Sidecar image: cannot run podman import")?;
        let tar_status = tar.wait()?;
        if !tar_status.success() {
            bail!("building the Network Sidecar image: tar failed ({tar_status})");
        }
        if !out.status.success() {
            bail!(
                "building the Network Sidecar image: {}",
                super::podman::describe_failure(&out)
            );
        }
        Ok(())
    }
}

fn build_dir() -> anyhow::Result<PathBuf> {
    let base = std::env::temp_dir();
    for n in 0..100u32 {
        let p = base.join(format!("lazaret-sidecar-image-{}-{n}", std::process::id()));
        match std::fs::create_dir(&p) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).context("creating a build directory for the sidecar image"),
        }
    }
    bail!(
        "cannot create a build directory for the sidecar image in {}",
        base.display()
    )
}

fn copy_into(src: &Path, tree: &Path, dest: &Path) -> anyhow::Result<()> {
    let rel = dest.strip_prefix("/").unwrap_or(dest);
    let target = tree.join(rel);
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::copy(src, &target)
        .with_context(|| format!("copying {} into the sidecar image", src.display()))?;
    Ok(())
}

/// Absolute paths of the shared libraries (and loader) the given executables need, from `ldd`.
pub fn shared_libraries(bins: &[&Path]) -> anyhow::Result<Vec<PathBuf>> {
    let mut libs = Vec::new();
    for bin in bins {
        let out = Command::new("ldd")
            .arg(bin)
            .output()
            .context("running ldd for the sidecar image")?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() && !text.contains("not a dynamic executable") {
            bail!(
                "ldd {} failed: {}",
                bin.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        for lib in parse_ldd(&text) {
            if !libs.contains(&lib) {
                libs.push(lib);
            }
        }
    }
    Ok(libs)
}

fn parse_ldd(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let path = match line.split_once("=>") {
                Some((_, rhs)) => rhs.split_whitespace().next(),
                None => line.split_whitespace().next(),
            }?;
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewritten_file_gets_a_new_stamp() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let f = t.path().join("bin");
        std::fs::write(&f, b"one")?;
        let first = stamp(&[f.as_path()]);
        assert!(first.is_some());
        assert_eq!(first, stamp(&[f.as_path()]), "unchanged: same stamp");
        // Same size, mtime set back: the change time still tells.
        let mtime = std::fs::metadata(&f)?.modified()?;
        std::thread::sleep(std::time::Duration::from_millis(30));
        std::fs::write(&f, b"two")?;
        std::fs::File::options()
            .write(true)
            .open(&f)?
            .set_modified(mtime)?;
        assert_ne!(first, stamp(&[f.as_path()]));
        assert_eq!(stamp(&[t.path().join("missing").as_path()]), None);
        Ok(())
    }

    #[test]
    fn ldd_output_parsed() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\
                    \tlibnftables.so.1 => /lib/x86_64-linux-gnu/libnftables.so.1 (0x00007f)\n\
                    \t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n";
        assert_eq!(
            parse_ldd(text),
            vec![
                PathBuf::from("/lib/x86_64-linux-gnu/libnftables.so.1"),
                PathBuf::from("/lib64/ld-linux-x86-64.so.2")
            ]
        );
    }
}
