//! The Trust Anchor (spec §2, §3.2): an ephemeral, Domain-scoped certificate authority created
//! fresh by each Session Coordinator run. Its private key lives only in the coordinator's memory,
//! so a certificate from an earlier (or crashed) run never verifies against a later one.

use crate::authz::{inspect_at, AuthError};
use crate::identity::{IdentityError, ProtocolIdentity, Role};
use crate::tls::COORDINATOR_SERVER_NAME;
use crate::DomainId;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType, SerialNumber,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::fmt;
use std::time::{Duration, SystemTime};
use time::OffsetDateTime;

/// Lifetime of a Trust Anchor's CA certificate. The key is never persisted; the bound only
/// limits how long leaked leaf certificates could matter if the coordinator kept running.
pub const CA_VALIDITY: Duration = Duration::from_secs(30 * 24 * 3600);

/// Default lifetime of a leaf certificate issued by [`TrustAnchor::issue`].
pub const LEAF_VALIDITY: Duration = Duration::from_secs(24 * 3600);

/// Back-dating of `notBefore`, so that a certificate is usable at once.
const BACKDATE: Duration = Duration::from_secs(60);

/// Why a certificate could not be issued or credentials not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum IssueError {
    #[error("certificate generation failed: {0}")]
    Rcgen(#[from] rcgen::Error),
    #[error(transparent)]
    Identity(#[from] IdentityError),
    /// The identity names another Agent Profile or Domain than the anchor's.
    #[error("this Trust Anchor serves {anchor}; it does not issue for {identity}")]
    ForeignIdentity { anchor: String, identity: String },
    #[error("invalid validity period: notBefore must precede notAfter")]
    InvalidValidity,
    #[error("cannot read PEM: {0}")]
    Pem(String),
    #[error("the certificate is not a usable Lazaret leaf certificate: {0}")]
    NotALeaf(#[from] AuthError),
}

/// A leaf certificate and its private key, for one Protocol Identity.
pub struct Credentials {
    identity: ProtocolIdentity,
    cert: CertificateDer<'static>,
    key: PrivatePkcs8KeyDer<'static>,
}

impl Credentials {
    /// The identity the certificate names (as issued or as loaded; not an authorization).
    pub fn identity(&self) -> &ProtocolIdentity {
        &self.identity
    }

    /// The certificate, DER.
    pub fn cert_der(&self) -> &CertificateDer<'static> {
        &self.cert
    }

    /// The certificate, PEM.
    pub fn cert_pem(&self) -> String {
        pem::encode(&pem::Pem::new("CERTIFICATE", self.cert.to_vec()))
    }

    /// The private key (PKCS#8 DER), as rustls takes it.
    pub fn key_der(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::Pkcs8(self.key.clone_key())
    }

    /// The private key, PKCS#8 PEM. A secret: write it only to host-private files (SR-10).
    pub fn key_pem(&self) -> String {
        pem::encode(&pem::Pem::new(
            "PRIVATE KEY",
            self.key.secret_pkcs8_der().to_vec(),
        ))
    }

    /// Loads credentials written with [`Credentials::cert_pem`] and [`Credentials::key_pem`].
    /// The certificate must be a well-formed, currently valid Lazaret leaf; which CA signed it is
    /// only known once a TLS handshake verifies it.
    pub fn from_pem(cert_pem: &[u8], key_pem: &[u8]) -> Result<Credentials, IssueError> {
        let cert = CertificateDer::from_pem_slice(cert_pem)
            .map_err(|e| IssueError::Pem(format!("certificate: {e}")))?;
        let key = PrivatePkcs8KeyDer::from_pem_slice(key_pem)
            .map_err(|e| IssueError::Pem(format!("PKCS#8 private key: {e}")))?;
        let identity = inspect_at(&cert, SystemTime::now())?;
        Ok(Credentials {
            identity,
            cert,
            key,
        })
    }
}

impl Clone for Credentials {
    fn clone(&self) -> Credentials {
        Credentials {
            identity: self.identity.clone(),
            cert: self.cert.clone(),
            key: self.key.clone_key(),
        }
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("identity", &self.identity)
            .field("key", &"<redacted>")
            .finish_non_exhaustive()
    }
}

/// An ephemeral Domain-scoped certificate authority. Create one per coordinator run with
/// [`TrustAnchor::generate`]; hand [`TrustAnchor::ca_der`] to the peers that must trust it.
pub struct TrustAnchor {
    profile: String,
    domain_id: DomainId,
    issuer: Issuer<'static, KeyPair>,
    ca_cert: CertificateDer<'static>,
    ca_not_after: OffsetDateTime,
}

impl fmt::Debug for TrustAnchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrustAnchor")
            .field("profile", &self.profile)
            .field("domain_id", &self.domain_id)
            .finish_non_exhaustive()
    }
}

impl TrustAnchor {
    /// Creates a fresh CA (new ECDSA P-256 key, `CA:TRUE`, path length 0) for one Domain.
    pub fn generate(profile: &str, domain_id: &DomainId) -> Result<TrustAnchor, IssueError> {
        crate::identity::validate_profile(profile)?;
        let now = SystemTime::now();
        let not_before = OffsetDateTime::from(now - BACKDATE);
        let not_after = OffsetDateTime::from(now + CA_VALIDITY);
        // A per-run nonce in the name: another run's CA never even looks like this one.
        let run = crate::identity::random_hex::<8>()?;
        let name = format!("Lazaret Trust Anchor {domain_id} {run}");
        let mut params = base_params(&name, not_before, not_after)?;
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate()?;
        let ca_cert = params.self_signed(&key)?.der().clone();
        Ok(TrustAnchor {
            profile: profile.to_owned(),
            domain_id: domain_id.clone(),
            issuer: Issuer::new(params, key),
            ca_cert,
            ca_not_after: not_after,
        })
    }

    pub fn profile(&self) -> &str {
        &self.profile
    }

    pub fn domain_id(&self) -> &DomainId {
        &self.domain_id
    }

    /// The CA certificate, DER: the only root peers of this run trust.
    pub fn ca_der(&self) -> &CertificateDer<'static> {
        &self.ca_cert
    }

    /// The CA certificate, PEM.
    pub fn ca_pem(&self) -> String {
        pem::encode(&pem::Pem::new("CERTIFICATE", self.ca_cert.to_vec()))
    }

    /// Issues a leaf for `identity`, valid from now for [`LEAF_VALIDITY`] (never beyond the CA).
    pub fn issue(&self, identity: &ProtocolIdentity) -> Result<Credentials, IssueError> {
        let now = SystemTime::now();
        self.issue_with_validity(identity, now - BACKDATE, now + LEAF_VALIDITY)
    }

    /// Issues a leaf with an explicit validity period (clipped to the CA's `notAfter`).
    /// The identity must belong to this anchor's Agent Profile and Domain.
    pub fn issue_with_validity(
        &self,
        identity: &ProtocolIdentity,
        not_before: SystemTime,
        not_after: SystemTime,
    ) -> Result<Credentials, IssueError> {
        if identity.profile() != self.profile || identity.domain_id() != &self.domain_id {
            return Err(IssueError::ForeignIdentity {
                anchor: format!(
                    "Agent Profile {:?} in Domain {}",
                    self.profile, self.domain_id
                ),
                identity: identity.to_uri(),
            });
        }
        let not_before = OffsetDateTime::from(not_before);
        let not_after = OffsetDateTime::from(not_after).min(self.ca_not_after);
        if not_before >= not_after {
            return Err(IssueError::InvalidValidity);
        }
        let params = leaf_params(identity, not_before, not_after)?;
        let key = KeyPair::generate()?;
        let cert = self.sign(&params, &key)?;
        Ok(Credentials {
            identity: identity.clone(),
            cert,
            key: PrivatePkcs8KeyDer::from(key.serialize_der()),
        })
    }

    /// Signs arbitrary parameters with the CA key. Crate-private: the only public way to get a
    /// certificate is a well-formed leaf from [`TrustAnchor::issue_with_validity`].
    pub(crate) fn sign(
        &self,
        params: &CertificateParams,
        key: &KeyPair,
    ) -> Result<CertificateDer<'static>, IssueError> {
        Ok(params.signed_by(key, &self.issuer)?.der().clone())
    }
}

/// The parameters of a well-formed leaf: `CA:FALSE`, digitalSignature, clientAuth + serverAuth,
/// exactly one URI SAN (plus the coordinator's TLS server name for the coordinator role).
pub(crate) fn leaf_params(
    identity: &ProtocolIdentity,
    not_before: OffsetDateTime,
    not_after: OffsetDateTime,
) -> Result<CertificateParams, IssueError> {
    let name = format!("lazaret {}", identity.role().as_str());
    let mut params = base_params(&name, not_before, not_after)?;
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ClientAuth,
        ExtendedKeyUsagePurpose::ServerAuth,
    ];
    params.use_authority_key_identifier_extension = true;
    let mut sans = Vec::with_capacity(2);
    if identity.role() == Role::Coordinator {
        sans.push(SanType::DnsName(COORDINATOR_SERVER_NAME.try_into()?));
    }
    sans.push(SanType::URI(identity.to_uri().try_into()?));
    params.subject_alt_names = sans;
    Ok(params)
}

/// Validity, a random serial and the subject `O=Lazaret, CN=<common_name>`: what every
/// certificate of a Trust Anchor has.
fn base_params(
    common_name: &str,
    not_before: OffsetDateTime,
    not_after: OffsetDateTime,
) -> Result<CertificateParams, IssueError> {
    let mut params = CertificateParams::default();
    params.not_before = not_before;
    params.not_after = not_after;
    params.serial_number = Some(random_serial()?);
    let mut dn = DistinguishedName::new();
    dn.push(DnType::OrganizationName, "Lazaret");
    dn.push(DnType::CommonName, common_name);
    params.distinguished_name = dn;
    Ok(params)
}

/// 16 random bytes, positive and of fixed DER length.
fn random_serial() -> Result<SerialNumber, IssueError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| IdentityError::Random(e.to_string()))?;
    bytes[0] = (bytes[0] & 0x7f) | 0x40;
    Ok(SerialNumber::from_slice(&bytes))
}
