//! What `lazaret doctor` says about the host's CAs: which would be added to a sandbox of the
//! default profile, from which host file, or that none are needed.

use super::host::HostTrust;
use super::image::ImageBundle;
use super::CaCert;

/// One line: the CAs added (subject, short SHA-256 fingerprint, host file), or why none.
pub fn summary(host: &HostTrust, image: Option<&ImageBundle>, added: &[CaCert]) -> String {
    let files = host
        .files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(" and ");
    let Some(image) = image else {
        return "the image has no CA bundle at a known path: nothing is added".to_owned();
    };
    if host.certs.is_empty() {
        return "the host names no CA bundle (no SSL_CERT_FILE, no system bundle): nothing \
                is added"
            .to_owned();
    }
    if added.is_empty() {
        return format!(
            "none needed: the image's {} has all {} CAs of {files}",
            image.path.display(),
            host.certs.len()
        );
    }
    let list = added
        .iter()
        .map(|c| format!("{} from {}", c.describe(), c.source.display()))
        .collect::<Vec<_>>()
        .join("; ");
    let n = added.len();
    format!(
        "adds {n} CA{} to the image's {} (also named by SSL_CERT_FILE and the other TLS \
         variables): {list}",
        if n == 1 { "" } else { "s" },
        image.path.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trust::bundle::parse;
    use crate::trust::test_certs::ca_pem;
    use std::path::{Path, PathBuf};

    #[test]
    fn names_each_ca_added_with_its_host_file_or_says_none_are_needed() -> anyhow::Result<()> {
        let root = ca_pem("Root");
        let proxy = ca_pem("Corp Proxy CA");
        let host = HostTrust {
            files: vec![PathBuf::from("/h/bundle.pem")],
            certs: parse(
                format!("{root}{proxy}").as_bytes(),
                Path::new("/h/bundle.pem"),
            )?,
            notes: Vec::new(),
        };
        let image = ImageBundle {
            path: PathBuf::from("/etc/ssl/certs/ca-certificates.crt"),
            pem: root,
        };
        let added = crate::trust::sandbox::extras_of(&host, &image)?;
        let line = summary(&host, Some(&image), &added);
        assert!(
            line.starts_with("adds 1 CA to the image's /etc/ssl/certs/ca-certificates.crt"),
            "{line}"
        );
        assert!(
            line.contains("CN=Corp Proxy CA, O=Lazaret tests (sha256 "),
            "{line}"
        );
        assert!(line.contains("from /h/bundle.pem"), "{line}");
        let none = summary(&host, Some(&image), &[]);
        assert!(none.starts_with("none needed"), "{none}");
        assert!(summary(&host, None, &[]).contains("no CA bundle"));
        Ok(())
    }
}
