//! The composed bundle in the sandbox: a host-owned file in the Domain's runtime dir (the
//! sandbox cannot write it), mounted read-only over the image's bundle path, and the variables
//! every common TLS stack reads pointing at that same path, so they all agree. A variable the
//! profile's own `env` sets wins.

use super::bundle::{self, CaCert};
use super::compose;
use super::host::HostTrust;
use super::image::ImageBundle;
use crate::runtime::mounts::SandboxMount;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// OpenSSL (and so curl, Python, Ruby, Go, Rust's native-certs), Node.js, Python requests,
/// curl and git.
pub const TRUST_ENV: [&str; 5] = [
    "SSL_CERT_FILE",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "GIT_SSL_CAINFO",
];

/// What the sandbox gets when the host trusts CAs its image does not.
#[derive(Clone, Debug)]
pub struct SandboxTrust {
    pub mount: SandboxMount,
    pub env: Vec<(String, String)>,
    /// The certificates added, each with the host file it came from.
    pub added: Vec<CaCert>,
}

/// The composed bundle's file: `<runtime dir>/trust/ca-certificates.crt`.
pub fn composed_path(runtime_dir: &Path) -> PathBuf {
    runtime_dir.join("trust").join("ca-certificates.crt")
}

/// The certificates of `host` that `image` lacks (empty when none).
pub fn extras_of(host: &HostTrust, image: &ImageBundle) -> anyhow::Result<Vec<CaCert>> {
    let shown = PathBuf::from(format!("{} (in the image)", image.path.display()));
    let image_certs = bundle::parse(image.pem.as_bytes(), &shown)?;
    Ok(compose::extras(&image_certs, &host.certs))
}

/// Writes the composed bundle (atomically, 0644, in a 0700 dir of the runtime dir) and returns
/// its mount and environment; `None`, with nothing written, when the image already has every
/// CA the host trusts.
pub fn prepare(
    runtime_dir: &Path,
    host: &HostTrust,
    image: &ImageBundle,
) -> anyhow::Result<Option<SandboxTrust>> {
    let added = extras_of(host, image)?;
    let file = composed_path(runtime_dir);
    let Some(text) = compose::compose(&image.pem, &added) else {
        // One an earlier start wrote, when the host's CAs changed since.
        let _ = std::fs::remove_file(&file);
        return Ok(None);
    };
    let dir = file
        .parent()
        .context("the composed CA bundle's path has no parent")?;
    crate::domain::layout::ensure_private_dir(dir)?;
    let tmp = dir.join(".ca-certificates.crt.new");
    std::fs::write(&tmp, text.as_bytes()).with_context(|| format!("writing {}", tmp.display()))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o644))?;
    std::fs::rename(&tmp, &file).with_context(|| format!("writing {}", file.display()))?;
    let container = image.path.display().to_string();
    Ok(Some(SandboxTrust {
        mount: SandboxMount::bind(
            &file,
            &image.path,
            true,
            "the image's CA bundle plus the host's extra CAs (trust_host_cas)",
        ),
        env: TRUST_ENV
            .iter()
            .map(|k| ((*k).to_owned(), container.clone()))
            .collect(),
        added,
    }))
}

/// What the host trusts, for a sandbox of `profile`: `None` when the profile turns it off
/// (`trust_host_cas = false`) or the host names no CA at all.
pub fn host_trust(profile: &crate::profile::AgentProfile) -> anyhow::Result<Option<HostTrust>> {
    if !profile.trust_host_cas() {
        return Ok(None);
    }
    let host = HostTrust::load()?;
    for note in &host.notes {
        tracing::warn!("host CAs: {note}");
    }
    Ok(Some(host).filter(|h| !h.certs.is_empty()))
}

/// [`prepare`], logged; nothing when the image has no bundle of its own (there is no system
/// trust store in it to extend).
pub fn for_sandbox(
    runtime_dir: &Path,
    host: &HostTrust,
    image: Option<&ImageBundle>,
) -> anyhow::Result<Option<SandboxTrust>> {
    let Some(image) = image else {
        tracing::info!("host CAs: the image has no CA bundle at a known path; nothing added");
        return Ok(None);
    };
    let trust = prepare(runtime_dir, host, image)?;
    match &trust {
        None => tracing::info!(
            "host CAs: the image's bundle {} has every CA the host trusts; nothing added",
            image.path.display()
        ),
        Some(t) => {
            for c in &t.added {
                tracing::info!(
                    "host CAs: added {} from {} over {}",
                    c.describe(),
                    c.source.display(),
                    image.path.display()
                );
            }
        }
    }
    Ok(trust)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::mounts::MountKind;
    use crate::trust::test_certs::ca_pem;

    fn host(pem: &str) -> anyhow::Result<HostTrust> {
        Ok(HostTrust {
            files: vec![PathBuf::from("/h/host.pem")],
            certs: bundle::parse(pem.as_bytes(), Path::new("/h/host.pem"))?,
            notes: Vec::new(),
        })
    }

    #[test]
    fn without_extras_nothing_is_written_or_mounted() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let root = ca_pem("Root");
        let image = ImageBundle {
            path: PathBuf::from("/etc/ssl/certs/ca-certificates.crt"),
            pem: root.clone(),
        };
        assert!(prepare(t.path(), &host(&root)?, &image)?.is_none());
        assert!(!composed_path(t.path()).exists());
        Ok(())
    }

    #[test]
    fn extras_give_one_read_only_file_and_agreeing_variables() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let root = ca_pem("Root");
        let proxy = ca_pem("Corp Proxy CA");
        let image = ImageBundle {
            path: PathBuf::from("/etc/ssl/certs/ca-certificates.crt"),
            pem: root.clone(),
        };
        let trust = prepare(t.path(), &host(&format!("{root}{proxy}"))?, &image)?
            .ok_or_else(|| anyhow::anyhow!("expected extras"))?;
        assert_eq!(trust.added.len(), 1);
        let file = composed_path(t.path());
        assert_eq!(
            trust.mount.kind,
            MountKind::Bind {
                host: file.clone(),
                read_only: true
            }
        );
        assert_eq!(trust.mount.container, image.path);
        let names: Vec<&str> = trust.env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, TRUST_ENV);
        assert!(trust
            .env
            .iter()
            .all(|(_, v)| v == "/etc/ssl/certs/ca-certificates.crt"));
        let written = bundle::parse(&std::fs::read(&file)?, &file)?;
        assert_eq!(written.len(), 2);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&file)?.permissions().mode() & 0o777,
            0o644
        );
        Ok(())
    }
}
