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
    format!(
        "adds {} CA(s) to the image's {} (and SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, \
         REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, GIT_SSL_CAINFO): {list}",
        added.len(),
        image.path.display()
    )
}
