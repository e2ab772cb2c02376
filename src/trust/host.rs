//! What the host trusts: the file in `SSL_CERT_FILE` when set (OpenSSL's convention, what
//! curl, git, Python and Go on the host use), else the first system bundle that exists; plus
//! the file in `NODE_EXTRA_CA_CERTS` when set (what Node.js adds to its own roots).

use super::bundle::{self, CaCert};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Where distributions keep their system bundle (Debian/Ubuntu, Fedora/RHEL, openSUSE, Alpine
/// and others); the same list is looked for inside images.
pub const SYSTEM_BUNDLES: [&str; 6] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/ssl/ca-bundle.pem",
    "/etc/pki/tls/cacert.pem",
    "/etc/ssl/cert.pem",
];

/// The host's CA certificates, deduplicated, and the files they came from.
#[derive(Clone, Debug, Default)]
pub struct HostTrust {
    pub files: Vec<PathBuf>,
    pub certs: Vec<CaCert>,
    /// What was left out and why (a variable naming a file that does not exist).
    pub notes: Vec<String>,
}

/// The files the host's trust is read from, in order: `SSL_CERT_FILE` or the first existing
/// system bundle, then `NODE_EXTRA_CA_CERTS`. Variables that are set but empty count as unset.
pub fn files(
    env: &dyn Fn(&str) -> Option<OsString>,
    exists: &dyn Fn(&Path) -> bool,
) -> Vec<PathBuf> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let mut out: Vec<PathBuf> = Vec::new();
    match var("SSL_CERT_FILE") {
        Some(file) => out.push(file),
        None => out.extend(SYSTEM_BUNDLES.iter().map(PathBuf::from).find(|p| exists(p))),
    }
    if let Some(extra) = var("NODE_EXTRA_CA_CERTS") {
        if !out.contains(&extra) {
            out.push(extra);
        }
    }
    out
}

impl HostTrust {
    /// Reads what this process's environment and file system say the host trusts.
    pub fn load() -> anyhow::Result<HostTrust> {
        let found = files(&|k| std::env::var_os(k), &|p| p.is_file());
        HostTrust::read(&found)
    }

    /// Reads `files`; one that does not exist is noted and left out, one that cannot be parsed
    /// is an error that says what to do.
    pub fn read(files: &[PathBuf]) -> anyhow::Result<HostTrust> {
        let mut trust = HostTrust::default();
        for path in files {
            let file = match std::fs::File::open(path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    trust.notes.push(format!(
                        "{} does not exist (named by SSL_CERT_FILE or NODE_EXTRA_CA_CERTS): left out",
                        path.display()
                    ));
                    continue;
                }
                Err(e) => {
                    return Err(anyhow::Error::new(e)
                        .context(format!("opening the CA bundle {}", path.display())))
                }
            };
            let bytes = bundle::read_bounded(file, path)?;
            let certs = bundle::parse(&bytes, path)?;
            trust.files.push(path.clone());
            for c in certs {
                if !trust.certs.iter().any(|t| t.sha256 == c.sha256) {
                    trust.certs.push(c);
                }
            }
        }
        Ok(trust)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn ssl_cert_file_replaces_the_system_bundle_and_node_extra_adds_to_it() {
        let any = |_: &Path| true;
        let none = |_: &Path| false;
        assert_eq!(
            files(&env(&[]), &any),
            vec![PathBuf::from(SYSTEM_BUNDLES[0])]
        );
        assert!(files(&env(&[]), &none).is_empty());
        assert_eq!(
            files(&env(&[("SSL_CERT_FILE", "/a.pem")]), &any),
            vec![PathBuf::from("/a.pem")]
        );
        assert_eq!(
            files(
                &env(&[("NODE_EXTRA_CA_CERTS", "/n.pem"), ("SSL_CERT_FILE", "")]),
                &any
            ),
            vec![PathBuf::from(SYSTEM_BUNDLES[0]), PathBuf::from("/n.pem")]
        );
        assert_eq!(
            files(
                &env(&[
                    ("NODE_EXTRA_CA_CERTS", "/a.pem"),
                    ("SSL_CERT_FILE", "/a.pem")
                ]),
                &any
            ),
            vec![PathBuf::from("/a.pem")]
        );
    }

    #[test]
    fn a_missing_named_file_is_noted_not_fatal() -> anyhow::Result<()> {
        let t = HostTrust::read(&[PathBuf::from("/nonexistent/lazaret-test.pem")])?;
        assert!(t.certs.is_empty());
        assert!(t.notes[0].contains("does not exist"), "{:?}", t.notes);
        Ok(())
    }
}
