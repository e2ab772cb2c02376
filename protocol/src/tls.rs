//! Mutual TLS between Lazaret components (SR-9): rustls 0.23, TLS 1.3 only, ring as the single
//! crypto provider, no session resumption.
//!
//! The coordinator is the server. It requires a client certificate chaining to this run's
//! [`TrustAnchor`]; clients trust only that CA and expect the server name
//! [`COORDINATOR_SERVER_NAME`]. After the handshake, [`accept`] and [`connect`] authorize the peer's
//! Protocol Identity with [`crate::authz::authorize`] — the handshake alone only proves "signed by
//! this run's CA".

use crate::anchor::{Credentials, TrustAnchor};
use crate::authz::{authorize, AuthError, Expectation};
use crate::identity::{ProtocolIdentity, Role};
use rustls::client::Resumption;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::server::{NoServerSessionStorage, WebPkiClientVerifier};
use rustls::{ClientConfig, CommonState, RootCertStore, ServerConfig};
use std::io;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio_rustls::{client, server, TlsAcceptor, TlsConnector};

/// The TLS server name clients expect of the coordinator (`.invalid` never resolves).
/// The coordinator's certificate carries it as its one DNS SAN, beside its URI SAN.
pub const COORDINATOR_SERVER_NAME: &str = "coordinator.lazaret.invalid";

/// Why a TLS configuration could not be built or a connection was not established.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("TLS configuration: {0}")]
    Config(rustls::Error),
    #[error("TLS client verifier: {0}")]
    Verifier(#[from] rustls::server::VerifierBuilderError),
    #[error("credentials unsuitable for this endpoint: {0}")]
    WrongCredentials(String),
    /// The TLS handshake failed: e.g. the peer's certificate does not chain to this run's Trust
    /// Anchor, is expired, or is not an end-entity certificate.
    #[error("TLS handshake: {0}")]
    Handshake(rustls::Error),
    #[error("TLS connection I/O: {0}")]
    Io(io::Error),
    /// The handshake succeeded but the peer's identity is not the one this endpoint accepts.
    #[error("peer not authorized: {0}")]
    Unauthorized(#[from] AuthError),
}

/// The one crypto provider Lazaret uses for TLS (ring, as rcgen does).
pub fn crypto_provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn roots(ca_der: &CertificateDer<'static>) -> Result<Arc<RootCertStore>, TlsError> {
    let mut roots = RootCertStore::empty();
    roots.add(ca_der.clone()).map_err(TlsError::Config)?;
    Ok(Arc::new(roots))
}

/// The coordinator's server configuration: presents `coordinator` (which must be a Coordinator
/// identity of the anchor's Domain) and requires a client certificate from `anchor`.
pub fn server_config(
    anchor: &TrustAnchor,
    coordinator: &Credentials,
) -> Result<Arc<ServerConfig>, TlsError> {
    let id = coordinator.identity();
    if id.role() != Role::Coordinator
        || id.profile() != anchor.profile()
        || id.domain_id() != anchor.domain_id()
    {
        return Err(TlsError::WrongCredentials(format!(
            "the server presents a coordinator identity of its own Domain, not {id}"
        )));
    }
    let verifier =
        WebPkiClientVerifier::builder_with_provider(roots(anchor.ca_der())?, crypto_provider())
            .build()?;
    let mut config = ServerConfig::builder_with_provider(crypto_provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(TlsError::Config)?
        .with_client_cert_verifier(verifier)
        .with_single_cert(vec![coordinator.cert_der().clone()], coordinator.key_der())
        .map_err(TlsError::Config)?;
    // Every connection is a full handshake, so every peer certificate is checked now.
    config.session_storage = Arc::new(NoServerSessionStorage {});
    config.send_tls13_tickets = 0;
    Ok(Arc::new(config))
}

/// A client's configuration: trusts only `ca_der` (the run's Trust Anchor) and authenticates
/// with `credentials`. Use it with [`connect`], which checks the server's name and identity.
pub fn client_config(
    ca_der: &CertificateDer<'static>,
    credentials: &Credentials,
) -> Result<Arc<ClientConfig>, TlsError> {
    let mut config = ClientConfig::builder_with_provider(crypto_provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(TlsError::Config)?
        .with_root_certificates(roots(ca_der)?)
        .with_client_auth_cert(vec![credentials.cert_der().clone()], credentials.key_der())
        .map_err(TlsError::Config)?;
    config.resumption = Resumption::disabled();
    Ok(Arc::new(config))
}

/// The peer's end-entity certificate, once the handshake is done.
pub fn peer_certificate(conn: &CommonState) -> Option<&CertificateDer<'static>> {
    conn.peer_certificates().and_then(|chain| chain.first())
}

/// Authorizes the peer of an established connection against `expected`.
pub fn peer_identity(
    conn: &CommonState,
    expected: &Expectation,
) -> Result<ProtocolIdentity, AuthError> {
    let cert = peer_certificate(conn).ok_or(AuthError::NoCertificate)?;
    authorize(cert, expected)
}

fn handshake_error(e: io::Error) -> TlsError {
    match e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        Some(tls) => TlsError::Handshake(tls.clone()),
        None => TlsError::Io(e),
    }
}

/// Server side: TLS handshake on `io`, then authorization of the client against `expected`.
/// An unauthorized client is disconnected (after a TLS close_notify) and the error returned.
pub async fn accept<IO>(
    config: Arc<ServerConfig>,
    io: IO,
    expected: &Expectation,
) -> Result<(server::TlsStream<IO>, ProtocolIdentity), TlsError>
where
    IO: AsyncRead + AsyncWrite + Unpin,
{
    let mut stream = TlsAcceptor::from(config)
        .accept(io)
        .await
        .map_err(handshake_error)?;
    match peer_identity(stream.get_ref().1, expected) {
        Ok(identity) => Ok((stream, identity)),
        Err(e) => {
            // Best effort: the peer is told nothing but that the connection is over.
            let _ = stream.shutdown().await;
            Err(TlsError::Unauthorized(e))
        }
    }
}

/// Client side: TLS handshake on `io` with server name [`COORDINATOR_SERVER_NAME`], then
/// authorization of the server against `expected` (normally [`Expectation::coordinator`]).
///
/// With TLS 1.3 the client finishes its handshake before the server has judged the client's
/// certificate: a rejected client learns it on its first read (an alert or end of stream).
pub async fn connect<IO>(
    config: Arc<ClientConfig>,
    io: IO,
    expected: &Expectation,
) -> Result<(client::TlsStream<IO>, ProtocolIdentity), TlsError>
where
    IO: AsyncRead + AsyncWrite + Unpin,
{
    let name = ServerName::try_from(COORDINATOR_SERVER_NAME)
        .map_err(|e| TlsError::WrongCredentials(e.to_string()))?;
    let mut stream = TlsConnector::from(config)
        .connect(name, io)
        .await
        .map_err(handshake_error)?;
    match peer_identity(stream.get_ref().1, expected) {
        Ok(identity) => Ok((stream, identity)),
        Err(e) => {
            let _ = stream.shutdown().await;
            Err(TlsError::Unauthorized(e))
        }
    }
}
