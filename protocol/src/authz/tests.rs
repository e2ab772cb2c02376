//! Certificates the public API never issues — a CA:TRUE leaf, extra or missing SANs, identities
//! of another Domain or profile under this run's CA — signed by a real Trust Anchor and presented
//! in real handshakes over Unix socket pairs.

use super::*;
use crate::anchor::{leaf_params, Credentials, TrustAnchor};
use crate::tls::{self, TlsError};
use rcgen::{
    BasicConstraints, CertificateParams, CustomExtension, IsCa, KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ClientConfig, RootCertStore};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use time::OffsetDateTime;
use tokio::net::UnixStream;

const PROFILE: &str = "default";

fn domain() -> DomainId {
    DomainId::derive(PROFILE, Path::new("/home/dev/project"))
}

fn identity(role: Role) -> ProtocolIdentity {
    ProtocolIdentity::new(role, PROFILE, domain(), ComponentId::generate().unwrap()).unwrap()
}

fn anchor() -> TrustAnchor {
    TrustAnchor::generate(PROFILE, &domain()).unwrap()
}

fn now_params(identity: &ProtocolIdentity) -> CertificateParams {
    let now = OffsetDateTime::now_utc();
    leaf_params(
        identity,
        now - Duration::from_secs(60),
        now + Duration::from_secs(3600),
    )
    .unwrap()
}

/// Signs `params` with the anchor's CA key; returns the certificate and its fresh key.
fn craft(anchor: &TrustAnchor, params: &CertificateParams) -> (CertificateDer<'static>, KeyPair) {
    let key = KeyPair::generate().unwrap();
    let cert = anchor.sign(params, &key).unwrap();
    (cert, key)
}

fn key_der(key: &KeyPair) -> PrivateKeyDer<'static> {
    PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()))
}

/// A client configuration presenting an arbitrary certificate, trusting `anchor`.
fn client_presenting(
    anchor: &TrustAnchor,
    cert: CertificateDer<'static>,
    key: &KeyPair,
) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    roots.add(anchor.ca_der().clone()).unwrap();
    // Not `with_client_auth_cert`: rustls would parse (and refuse) some crafted certificates
    // before they ever reach the server under test.
    let provider = tls::crypto_provider();
    let signer = provider
        .key_provider
        .load_private_key(key_der(key))
        .unwrap();
    let certified = rustls::sign::CertifiedKey::new(vec![cert], signer);
    let config = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots)
        .with_client_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(certified)));
    Arc::new(config)
}

/// Presents a crafted client certificate to a coordinator of `anchor`; returns the server's
/// verdict.
async fn present_client_cert(
    anchor: &TrustAnchor,
    params: &CertificateParams,
) -> Result<ProtocolIdentity, TlsError> {
    let coordinator = anchor.issue(&identity(Role::Coordinator)).unwrap();
    let server = tls::server_config(anchor, &coordinator).unwrap();
    let (cert, key) = craft(anchor, params);
    let client = client_presenting(anchor, cert, &key);
    let (s, c) = UnixStream::pair().unwrap();
    let expects = Expectation::client_cli(PROFILE, &domain());
    let coordinator = Expectation::coordinator(PROFILE, &domain());
    let (server, _client) = tokio::join!(
        tls::accept(server, s, &expects),
        tls::connect(client, c, &coordinator)
    );
    server.map(|(_, id)| id)
}

/// Presents a crafted coordinator certificate to a client of `anchor`; returns the client's
/// verdict.
async fn present_server_cert(
    anchor: &TrustAnchor,
    params: &CertificateParams,
) -> Result<ProtocolIdentity, TlsError> {
    let (cert, key) = craft(anchor, params);
    let server = rustls::ServerConfig::builder_with_provider(tls::crypto_provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key_der(&key))
        .unwrap();
    let me = anchor.issue(&identity(Role::ClientCli)).unwrap();
    let client = tls::client_config(anchor.ca_der(), &me).unwrap();
    let (s, c) = UnixStream::pair().unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
    let coordinator = Expectation::coordinator(PROFILE, &domain());
    let (_server, client) = tokio::join!(acceptor.accept(s), tls::connect(client, c, &coordinator));
    client.map(|(_, id)| id)
}

fn unauthorized(r: Result<ProtocolIdentity, TlsError>) -> AuthError {
    match r {
        Err(TlsError::Unauthorized(e)) => e,
        other => panic!("expected an authorization failure, got {other:?}"),
    }
}

#[tokio::test]
async fn well_formed_crafted_leaf_is_accepted() {
    // Control: the crafting path itself produces acceptable certificates.
    let anchor = anchor();
    let me = identity(Role::ClientCli);
    assert_eq!(
        present_client_cert(&anchor, &now_params(&me))
            .await
            .unwrap(),
        me
    );
}

#[tokio::test]
async fn ca_true_leaf_is_rejected() {
    let anchor = anchor();
    let mut params = now_params(&identity(Role::ClientCli));
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    // webpki refuses a CA certificate as an end entity in the handshake ...
    match present_client_cert(&anchor, &params).await {
        Err(TlsError::Handshake(rustls::Error::InvalidCertificate(e))) => {
            assert!(format!("{e:?}").contains("CaUsedAsEndEntity"), "{e:?}");
        }
        other => panic!("{other:?}"),
    }
    // ... and authorization refuses it on its own.
    let (cert, _) = craft(&anchor, &params);
    let expects = Expectation::client_cli(PROFILE, &domain());
    assert_eq!(authorize(&cert, &expects), Err(AuthError::CaCertificate));
    assert!(matches!(
        Credentials::from_pem(
            pem::encode(&pem::Pem::new("CERTIFICATE", cert.to_vec())).as_bytes(),
            KeyPair::generate().unwrap().serialize_pem().as_bytes()
        ),
        Err(crate::anchor::IssueError::NotALeaf(
            AuthError::CaCertificate
        ))
    ));
}

#[tokio::test]
async fn cert_signing_key_usage_on_a_leaf_is_rejected() {
    let anchor = anchor();
    let mut params = now_params(&identity(Role::ClientCli));
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyCertSign,
    ];
    // webpki accepts it (it only checks key usage on issuers); authorization does not.
    assert_eq!(
        unauthorized(present_client_cert(&anchor, &params).await),
        AuthError::CertSigningKeyUsage
    );
    let (cert, _) = craft(&anchor, &params);
    assert_eq!(
        authorize(&cert, &Expectation::client_cli(PROFILE, &domain())),
        Err(AuthError::CertSigningKeyUsage)
    );
}

#[tokio::test]
async fn two_uri_sans_are_rejected() {
    let anchor = anchor();
    let me = identity(Role::ClientCli);
    let mut params = now_params(&me);
    let admin = identity(Role::Coordinator);
    params
        .subject_alt_names
        .push(SanType::URI(admin.to_uri().try_into().unwrap()));
    assert_eq!(
        unauthorized(present_client_cert(&anchor, &params).await),
        AuthError::MultipleUriSans
    );
}

#[tokio::test]
async fn a_dns_san_beside_the_uri_is_rejected_for_a_client() {
    let anchor = anchor();
    let mut params = now_params(&identity(Role::ClientCli));
    params.subject_alt_names.push(SanType::DnsName(
        tls::COORDINATOR_SERVER_NAME.try_into().unwrap(),
    ));
    assert!(matches!(
        unauthorized(present_client_cert(&anchor, &params).await),
        AuthError::UnexpectedSan(_)
    ));
}

#[tokio::test]
async fn other_san_types_are_rejected() {
    let anchor = anchor();
    let mut params = now_params(&identity(Role::ClientCli));
    params
        .subject_alt_names
        .push(SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()));
    assert!(matches!(
        unauthorized(present_client_cert(&anchor, &params).await),
        AuthError::UnexpectedSan(_)
    ));
}

#[tokio::test]
async fn no_san_and_no_uri_san_are_rejected() {
    let anchor = anchor();
    let mut params = now_params(&identity(Role::ClientCli));
    params.subject_alt_names.clear();
    assert_eq!(
        unauthorized(present_client_cert(&anchor, &params).await),
        AuthError::NoSan
    );
    params.subject_alt_names = vec![SanType::DnsName("client.invalid".try_into().unwrap())];
    assert_eq!(
        unauthorized(present_client_cert(&anchor, &params).await),
        AuthError::NoUriSan
    );
}

#[tokio::test]
async fn a_second_san_extension_is_rejected() {
    let anchor = anchor();
    let mut params = now_params(&identity(Role::ClientCli));
    // subjectAltName (2.5.29.17) again: SEQUENCE { [6] "lazaret://x" }
    let uri = b"lazaret://x";
    let mut content = vec![0x30, u8::try_from(uri.len() + 2).unwrap(), 0x86];
    content.push(u8::try_from(uri.len()).unwrap());
    content.extend_from_slice(uri);
    params
        .custom_extensions
        .push(CustomExtension::from_oid_content(&[2, 5, 29, 17], content));
    let (cert, _) = craft(&anchor, &params);
    let expects = Expectation::client_cli(PROFILE, &domain());
    assert_eq!(
        authorize(&cert, &expects),
        Err(AuthError::DuplicateSanExtension)
    );
    // In the handshake webpki already refuses the duplicate extension.
    match present_client_cert(&anchor, &params).await {
        Err(TlsError::Handshake(rustls::Error::InvalidCertificate(e))) => {
            assert!(format!("{e:?}").contains("ExtensionValueInvalid"), "{e:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_non_canonical_identity_uri_is_rejected() {
    let anchor = anchor();
    let me = identity(Role::ClientCli);
    let mut params = now_params(&me);
    let spelled = me.to_uri().replace("client-cli", "client%2Dcli");
    params.subject_alt_names = vec![SanType::URI(spelled.try_into().unwrap())];
    assert!(matches!(
        unauthorized(present_client_cert(&anchor, &params).await),
        AuthError::BadIdentity(_)
    ));
}

#[tokio::test]
async fn another_domain_or_profile_under_this_ca_is_rejected() {
    // The anchor refuses to issue these; a certificate carrying them must still not pass.
    let anchor = anchor();
    let other_domain = DomainId::derive(PROFILE, Path::new("/home/dev/other"));
    let foreign = ProtocolIdentity::new(
        Role::ClientCli,
        PROFILE,
        other_domain.clone(),
        ComponentId::generate().unwrap(),
    )
    .unwrap();
    assert_eq!(
        unauthorized(present_client_cert(&anchor, &now_params(&foreign)).await),
        AuthError::WrongDomain {
            expected: domain(),
            found: other_domain,
        }
    );
    let other_profile = ProtocolIdentity::new(
        Role::ClientCli,
        "other",
        domain(),
        ComponentId::generate().unwrap(),
    )
    .unwrap();
    assert_eq!(
        unauthorized(present_client_cert(&anchor, &now_params(&other_profile)).await),
        AuthError::WrongProfile {
            expected: PROFILE.into(),
            found: "other".into(),
        }
    );
}

#[tokio::test]
async fn client_rejects_a_server_that_is_not_the_coordinator() {
    let anchor = anchor();
    // A sidecar certificate that even carries the coordinator's server name.
    let sidecar = identity(Role::NetworkSidecar);
    let mut params = now_params(&sidecar);
    params.subject_alt_names.insert(
        0,
        SanType::DnsName(tls::COORDINATOR_SERVER_NAME.try_into().unwrap()),
    );
    // Authorization sees the DNS name first as unexpected for a non-coordinator role.
    assert!(matches!(
        unauthorized(present_server_cert(&anchor, &params).await),
        AuthError::UnexpectedSan(_)
    ));
}

#[tokio::test]
async fn client_rejects_a_coordinator_of_another_domain() {
    let anchor = anchor();
    let other_domain = DomainId::derive(PROFILE, Path::new("/home/dev/other"));
    let foreign = ProtocolIdentity::new(
        Role::Coordinator,
        PROFILE,
        other_domain,
        ComponentId::generate().unwrap(),
    )
    .unwrap();
    assert!(matches!(
        unauthorized(present_server_cert(&anchor, &now_params(&foreign)).await),
        AuthError::WrongDomain { .. }
    ));
    // Control: the same path accepts this Domain's coordinator.
    let mine = identity(Role::Coordinator);
    assert_eq!(
        present_server_cert(&anchor, &now_params(&mine))
            .await
            .unwrap(),
        mine
    );
}

#[tokio::test]
async fn client_rejects_a_coordinator_certificate_without_the_server_name() {
    let anchor = anchor();
    let mut params = now_params(&identity(Role::Coordinator));
    params
        .subject_alt_names
        .retain(|san| matches!(san, SanType::URI(_)));
    match present_server_cert(&anchor, &params).await {
        Err(TlsError::Handshake(rustls::Error::InvalidCertificate(e))) => {
            assert!(format!("{e:?}").contains("NotValidForName"), "{e:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn validity_is_checked_at_the_given_time() {
    let anchor = anchor();
    let me = identity(Role::ClientCli);
    let creds = anchor.issue(&me).unwrap();
    let expects = Expectation::client_cli(PROFILE, &domain());
    let now = SystemTime::now();
    assert_eq!(authorize_at(creds.cert_der(), &expects, now), Ok(me));
    assert!(matches!(
        authorize_at(
            creds.cert_der(),
            &expects,
            now + Duration::from_secs(2 * 24 * 3600)
        ),
        Err(AuthError::Expired { .. })
    ));
    assert!(matches!(
        authorize_at(creds.cert_der(), &expects, now - Duration::from_secs(3600)),
        Err(AuthError::NotYetValid { .. })
    ));
}

#[test]
fn garbage_and_trailing_bytes_are_malformed() {
    let anchor = anchor();
    let creds = anchor.issue(&identity(Role::ClientCli)).unwrap();
    let expects = Expectation::client_cli(PROFILE, &domain());
    assert!(matches!(
        authorize(b"not a certificate", &expects),
        Err(AuthError::Malformed(_))
    ));
    let mut trailing = creds.cert_der().to_vec();
    trailing.push(0);
    assert!(matches!(
        authorize(&trailing, &expects),
        Err(AuthError::Malformed(_))
    ));
}

#[test]
fn issued_leaves_have_the_documented_shape() {
    use x509_parser::prelude::FromDer;
    let anchor = anchor();
    for role in Role::ALL {
        let creds = anchor.issue(&identity(role)).unwrap();
        let (_, cert) = X509Certificate::from_der(creds.cert_der()).unwrap();
        assert!(!cert.is_ca());
        let ku = cert.key_usage().unwrap().unwrap().value;
        assert!(ku.digital_signature() && !ku.key_cert_sign());
        let eku = cert.extended_key_usage().unwrap().unwrap().value;
        assert!(eku.client_auth && eku.server_auth);
        let sans = &cert
            .subject_alternative_name()
            .unwrap()
            .unwrap()
            .value
            .general_names;
        let uris = sans
            .iter()
            .filter(|n| matches!(n, GeneralName::URI(_)))
            .count();
        assert_eq!(uris, 1);
        assert_eq!(sans.len(), if role == Role::Coordinator { 2 } else { 1 });
        let lifetime =
            cert.validity().not_after.timestamp() - cert.validity().not_before.timestamp();
        assert!(lifetime <= 24 * 3600 + 60, "{lifetime}");
    }
    let (_, ca) = X509Certificate::from_der(anchor.ca_der()).unwrap();
    assert!(ca.is_ca());
    // The CA's PEM parses back to the same certificate.
    let again = CertificateDer::from_pem_slice(anchor.ca_pem().as_bytes()).unwrap();
    assert_eq!(&again, anchor.ca_der());
}
