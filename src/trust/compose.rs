//! The extras (host certificates the image's bundle lacks) and the composed bundle: the image's
//! bundle as it is, then each extra as a PEM block.

use super::bundle::CaCert;

/// The host's certificates that are not in the image's, in the host's order.
pub fn extras(image: &[CaCert], host: &[CaCert]) -> Vec<CaCert> {
    let mut out: Vec<CaCert> = Vec::new();
    for c in host {
        let known = image.iter().chain(out.iter()).any(|i| i.der == c.der);
        if !known {
            out.push(c.clone());
        }
    }
    out
}

/// The image's bundle text followed by the extras; `None` when there are no extras (nothing
/// changes then: no file, no mount, no environment).
pub fn compose(image_pem: &str, extras: &[CaCert]) -> Option<String> {
    if extras.is_empty() {
        return None;
    }
    let mut out = image_pem.to_owned();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    for c in extras {
        // Only the fingerprint in the comment: subjects and paths could hold anything.
        out.push_str(&format!(
            "\n# Added by Lazaret: a CA your host trusts (sha256 {})\n",
            c.sha256
        ));
        out.push_str(&c.pem());
    }
    Some(out)
}

#[cfg(test)]
#[path = "compose_tests.rs"]
mod tests;
