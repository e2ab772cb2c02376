//! Authorization of a verified peer certificate against the identity tuple an endpoint expects
//! (SR-9). The TLS handshake proves "signed by this run's Trust Anchor"; webpki never looks at a
//! client's name, so this module maps the certificate to a [`ProtocolIdentity`] and compares it.

use crate::identity::{ComponentId, IdentityError, ProtocolIdentity, Role};
use crate::tls::COORDINATOR_SERVER_NAME;
use crate::DomainId;
use std::time::{SystemTime, UNIX_EPOCH};
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::FromDer;
use x509_parser::time::ASN1Time;

/// What an endpoint accepts: one of `roles`, in exactly this Agent Profile and Domain, and —
/// when set — exactly this component instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    pub roles: Vec<Role>,
    pub profile: String,
    pub domain_id: DomainId,
    pub component_id: Option<ComponentId>,
}

impl Expectation {
    /// Any component of one of `roles` in the given Agent Profile and Domain.
    pub fn new(roles: &[Role], profile: &str, domain_id: &DomainId) -> Expectation {
        Expectation {
            roles: roles.to_vec(),
            profile: profile.to_owned(),
            domain_id: domain_id.clone(),
            component_id: None,
        }
    }

    /// Additionally pins the runtime component ID.
    pub fn with_component(mut self, component_id: ComponentId) -> Expectation {
        self.component_id = Some(component_id);
        self
    }

    /// What the coordinator's client endpoint accepts: a Client CLI of this Domain.
    pub fn client_cli(profile: &str, domain_id: &DomainId) -> Expectation {
        Expectation::new(&[Role::ClientCli], profile, domain_id)
    }

    /// What a client accepts as its server: the Session Coordinator of this Domain.
    pub fn coordinator(profile: &str, domain_id: &DomainId) -> Expectation {
        Expectation::new(&[Role::Coordinator], profile, domain_id)
    }
}

/// Why a peer certificate does not authorize its holder.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("the peer presented no certificate")]
    NoCertificate,
    #[error("the peer certificate cannot be parsed: {0}")]
    Malformed(String),
    #[error("the peer certificate is a CA certificate (CA:TRUE), not a leaf")]
    CaCertificate,
    #[error("the peer certificate's key usage allows signing certificates or CRLs")]
    CertSigningKeyUsage,
    #[error("the peer certificate is not valid yet (notBefore {not_before})")]
    NotYetValid { not_before: String },
    #[error("the peer certificate has expired (notAfter {not_after})")]
    Expired { not_after: String },
    #[error("the peer certificate has no Subject Alternative Name extension")]
    NoSan,
    #[error("the peer certificate has more than one Subject Alternative Name extension")]
    DuplicateSanExtension,
    #[error("the peer certificate has no URI Subject Alternative Name")]
    NoUriSan,
    #[error("the peer certificate has more than one URI Subject Alternative Name")]
    MultipleUriSans,
    #[error("the peer certificate has an unexpected Subject Alternative Name: {0}")]
    UnexpectedSan(String),
    #[error("the peer certificate's URI SAN is not a Protocol Identity: {0}")]
    BadIdentity(#[from] IdentityError),
    #[error("peer role {found} is not accepted here (expected {expected})")]
    WrongRole { expected: String, found: Role },
    #[error("peer belongs to Agent Profile {found:?}, expected {expected:?}")]
    WrongProfile { expected: String, found: String },
    #[error("peer belongs to Domain {found}, expected {expected}")]
    WrongDomain { expected: DomainId, found: DomainId },
    #[error("peer is component {found}, expected {expected}")]
    WrongComponent {
        expected: ComponentId,
        found: ComponentId,
    },
}

/// Maps a peer's end-entity certificate (DER) to its Protocol Identity and checks it against
/// `expected`, at the current time. Call it after a successful handshake (which has verified the
/// signature chain to this run's Trust Anchor); [`crate::tls::accept`] and
/// [`crate::tls::connect`] do both.
pub fn authorize(
    peer_cert_der: &[u8],
    expected: &Expectation,
) -> Result<ProtocolIdentity, AuthError> {
    authorize_at(peer_cert_der, expected, SystemTime::now())
}

/// [`authorize`] at a given time.
pub fn authorize_at(
    peer_cert_der: &[u8],
    expected: &Expectation,
    now: SystemTime,
) -> Result<ProtocolIdentity, AuthError> {
    let identity = inspect_at(peer_cert_der, now)?;
    if !expected.roles.contains(&identity.role()) {
        let names: Vec<&str> = expected.roles.iter().map(|r| r.as_str()).collect();
        return Err(AuthError::WrongRole {
            expected: names.join(" or "),
            found: identity.role(),
        });
    }
    if identity.profile() != expected.profile {
        return Err(AuthError::WrongProfile {
            expected: expected.profile.clone(),
            found: identity.profile().to_owned(),
        });
    }
    if identity.domain_id() != &expected.domain_id {
        return Err(AuthError::WrongDomain {
            expected: expected.domain_id.clone(),
            found: identity.domain_id().clone(),
        });
    }
    if let Some(component) = &expected.component_id {
        if identity.component_id() != component {
            return Err(AuthError::WrongComponent {
                expected: component.clone(),
                found: identity.component_id().clone(),
            });
        }
    }
    Ok(identity)
}

/// The structural checks of a Lazaret leaf, without an expectation: parses, leaf (not CA),
/// within its validity period, SANs exactly one URI (plus the coordinator's server name for the
/// coordinator role), and that URI a Protocol Identity.
pub(crate) fn inspect_at(der: &[u8], now: SystemTime) -> Result<ProtocolIdentity, AuthError> {
    let (rest, cert) =
        X509Certificate::from_der(der).map_err(|e| AuthError::Malformed(e.to_string()))?;
    if !rest.is_empty() {
        return Err(AuthError::Malformed(
            "trailing bytes after the certificate".to_owned(),
        ));
    }
    let malformed = |e: x509_parser::error::X509Error| AuthError::Malformed(e.to_string());

    let bc = cert.basic_constraints().map_err(malformed)?;
    if bc.is_some_and(|bc| bc.value.ca) {
        return Err(AuthError::CaCertificate);
    }
    if let Some(ku) = cert.key_usage().map_err(malformed)? {
        if ku.value.key_cert_sign() || ku.value.crl_sign() {
            return Err(AuthError::CertSigningKeyUsage);
        }
    }

    let secs = match now.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    };
    let now = ASN1Time::from_timestamp(secs).map_err(malformed)?;
    let validity = cert.validity();
    if now < validity.not_before {
        return Err(AuthError::NotYetValid {
            not_before: validity.not_before.to_string(),
        });
    }
    if now > validity.not_after {
        return Err(AuthError::Expired {
            not_after: validity.not_after.to_string(),
        });
    }

    let san = match cert.subject_alternative_name() {
        Ok(Some(san)) => san,
        Ok(None) => return Err(AuthError::NoSan),
        Err(x509_parser::error::X509Error::DuplicateExtensions) => {
            return Err(AuthError::DuplicateSanExtension)
        }
        Err(e) => return Err(malformed(e)),
    };
    let mut uris = Vec::new();
    let mut dns = Vec::new();
    for name in &san.value.general_names {
        match name {
            GeneralName::URI(uri) => uris.push(*uri),
            GeneralName::DNSName(d) => dns.push(*d),
            other => return Err(AuthError::UnexpectedSan(other.to_string())),
        }
    }
    let uri = match uris.as_slice() {
        [] => return Err(AuthError::NoUriSan),
        [uri] => *uri,
        _ => return Err(AuthError::MultipleUriSans),
    };
    let identity = ProtocolIdentity::parse(uri)?;
    // The coordinator is the TLS server and needs its server name; nobody else has a DNS name.
    let allowed_dns: &[&str] = if identity.role() == Role::Coordinator {
        &[COORDINATOR_SERVER_NAME]
    } else {
        &[]
    };
    if dns.len() > allowed_dns.len() {
        return Err(AuthError::UnexpectedSan(format!("{} DNS names", dns.len())));
    }
    if let Some(d) = dns.iter().find(|d| !allowed_dns.contains(d)) {
        return Err(AuthError::UnexpectedSan(format!("DNS name {d:?}")));
    }
    Ok(identity)
}

#[cfg(test)]
mod tests;
