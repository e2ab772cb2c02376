//! CA certificates made for unit tests (rcgen).

/// A self-signed CA named `cn`, as PEM.
pub fn ca_pem(cn: &str) -> String {
    let made = (|| -> Result<String, rcgen::Error> {
        let key = rcgen::KeyPair::generate()?;
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new())?;
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "Lazaret tests");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        Ok(params.self_signed(&key)?.pem())
    })();
    made.unwrap_or_else(|e| panic!("making a test CA: {e}"))
}

/// A private key as PEM (what must never cross into the sandbox).
pub fn key_pem() -> String {
    rcgen::KeyPair::generate()
        .map(|k| k.serialize_pem())
        .unwrap_or_else(|e| panic!("making a test key: {e}"))
}
