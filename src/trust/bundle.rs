//! PEM CA bundles: only `CERTIFICATE` blocks are taken (a private key in the same file is never
//! read into anything that leaves the host), each must parse as X.509, and the file's size and
//! certificate count are bounded.

use anyhow::{bail, Context};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::io::Read;

use std::path::{Path, PathBuf};

/// A CA bundle larger than this is refused (Debian's whole bundle is about 220 KiB).
pub const MAX_BUNDLE_BYTES: u64 = 8 << 20;
/// More certificates than this in one bundle are refused (Debian's has about 150).
pub const MAX_CERTS: usize = 10_000;

/// One CA certificate and where it came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CaCert {
    /// Subject's common name and organisation, printable characters only.
    pub subject: String,
    /// SHA-256 of the DER encoding, lowercase hex.
    pub sha256: String,
    /// The file it was read from.
    pub source: PathBuf,
    #[serde(skip)]
    pub der: Vec<u8>,
}

impl CaCert {
    /// The first 16 hex digits of the SHA-256 fingerprint, as `doctor` prints it.
    pub fn short_fingerprint(&self) -> &str {
        self.sha256.get(..16).unwrap_or(&self.sha256)
    }

    /// The certificate as one PEM block.
    pub fn pem(&self) -> String {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD.encode(&self.der);
        let mut out = String::from("-----BEGIN CERTIFICATE-----\n");
        for chunk in b64.as_bytes().chunks(64) {
            out.push_str(&String::from_utf8_lossy(chunk));
            out.push('\n');
        }
        out.push_str("-----END CERTIFICATE-----\n");
        out
    }

    /// `CN=…, O=… (sha256 0123…)`, for messages.
    pub fn describe(&self) -> String {
        format!("{} (sha256 {})", self.subject, self.short_fingerprint())
    }
}

/// Reads at most [`MAX_BUNDLE_BYTES`] of `path`; a larger file is an error naming the limit.
pub fn read_bounded(mut file: impl Read, path: &Path) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.by_ref()
        .take(MAX_BUNDLE_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading the CA bundle {}", path.display()))?;
    if bytes.len() as u64 > MAX_BUNDLE_BYTES {
        bail!(
            "the CA bundle {} is larger than {} MiB: point SSL_CERT_FILE at a bundle of CA \
             certificates only, or set `trust_host_cas = false` in the profile",
            path.display(),
            MAX_BUNDLE_BYTES >> 20
        );
    }
    Ok(bytes)
}

/// The CA certificates of a PEM bundle, in file order, without duplicates. Blocks of other
/// kinds (keys, CRLs, OpenSSL's `TRUSTED CERTIFICATE`) are skipped; a `CERTIFICATE` block that
/// is not valid base64 or X.509 is an error naming the file and the block.
pub fn parse(bytes: &[u8], source: &Path) -> anyhow::Result<Vec<CaCert>> {
    use x509_parser::pem::Pem;
    let mut certs: Vec<CaCert> = Vec::new();
    for (n, block) in Pem::iter_from_buffer(bytes).enumerate() {
        let fix = "fix or remove it, or set `trust_host_cas = false` in the profile";
        let block = block.map_err(|e| {
            anyhow::anyhow!(
                "the CA bundle {}: PEM block {} is malformed ({e}): {fix}",
                source.display(),
                n + 1
            )
        })?;
        if block.label != "CERTIFICATE" {
            continue;
        }
        let subject = match block.parse_x509() {
            Ok(cert) => subject_of(&cert),
            Err(e) => bail!(
                "the CA bundle {}: certificate {} is not valid X.509 ({e}): {fix}",
                source.display(),
                n + 1
            ),
        };
        let sha256 = hex(&Sha256::digest(&block.contents));
        if certs.iter().any(|c| c.sha256 == sha256) {
            continue;
        }
        if certs.len() == MAX_CERTS {
            bail!(
                "the CA bundle {} holds more than {MAX_CERTS} certificates: {fix}",
                source.display()
            );
        }
        certs.push(CaCert {
            subject,
            sha256,
            source: source.to_path_buf(),
            der: block.contents,
        });
    }
    Ok(certs)
}

fn subject_of(cert: &x509_parser::certificate::X509Certificate<'_>) -> String {
    let subject = cert.subject();
    let mut parts = Vec::new();
    for (key, value) in subject
        .iter_common_name()
        .map(|a| ("CN", a))
        .chain(subject.iter_organization().map(|a| ("O", a)))
    {
        if let Ok(text) = value.as_str() {
            parts.push(format!("{key}={}", printable(text)));
        }
    }
    if parts.is_empty() {
        printable(&subject.to_string())
    } else {
        parts.join(", ")
    }
}

/// Control characters and anything beyond the first 120 characters dropped.
fn printable(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).take(120).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
#[path = "bundle_tests.rs"]
mod tests;
