use super::*;
use crate::trust::test_certs::{ca_pem, key_pem};

#[test]
fn certificates_are_read_deduplicated_and_keys_skipped() -> anyhow::Result<()> {
    let a = ca_pem("Corp Proxy CA");
    let b = ca_pem("Other CA");
    let text = format!("# comment\n{a}{}\n{b}{a}", key_pem());
    let certs = parse(text.as_bytes(), Path::new("/h/bundle.pem"))?;
    assert_eq!(certs.len(), 2);
    assert_eq!(certs[0].subject, "CN=Corp Proxy CA, O=Lazaret tests");
    assert_eq!(certs[0].source, Path::new("/h/bundle.pem"));
    assert_eq!(certs[0].sha256.len(), 64);
    assert_eq!(certs[0].short_fingerprint().len(), 16);
    // Re-encoded PEM parses to the same certificate.
    let again = parse(certs[1].pem().as_bytes(), Path::new("x"))?;
    assert_eq!(again[0].der, certs[1].der);
    // Nothing of the key is in what would be written.
    assert!(certs.iter().all(|c| !c.pem().contains("PRIVATE KEY")));
    Ok(())
}

#[test]
fn a_hostile_block_is_a_clear_error() {
    let bad = "-----BEGIN CERTIFICATE-----\nnot base64 at all!!\n-----END CERTIFICATE-----\n";
    let err = parse(bad.as_bytes(), Path::new("/h/bad.pem"))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("/h/bad.pem") && err.contains("trust_host_cas = false"),
        "{err}"
    );
    // Valid base64, not a certificate.
    let junk = "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n";
    let err = parse(junk.as_bytes(), Path::new("/h/junk.pem"))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("certificate 1 is not valid X.509"), "{err}");
    // Unterminated.
    let cut = "-----BEGIN CERTIFICATE-----\naGVsbG8=\n";
    assert!(parse(cut.as_bytes(), Path::new("/h/cut.pem")).is_err());
}

#[test]
fn an_oversized_bundle_is_refused_by_size() {
    let big = std::io::repeat(b'A').take(MAX_BUNDLE_BYTES + 10);
    let err = read_bounded(big, Path::new("/h/huge.pem"))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("/h/huge.pem") && err.contains("8 MiB"),
        "{err}"
    );
    let small = read_bounded(&b"abc"[..], Path::new("x")).ok();
    assert_eq!(small.as_deref(), Some(&b"abc"[..]));
}

#[test]
fn control_characters_in_subjects_are_dropped() {
    assert_eq!(printable("a\x1b[31mb\nc"), "a[31mbc");
}
