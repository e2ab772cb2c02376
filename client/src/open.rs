//! Opening a connection to a Domain's Session Coordinator: enrollment over the host-private
//! Unix socket, then mutual TLS and the version handshake (SR-9, SR-10). Every client — a
//! Client Session of `lazaret run`, `lazaret attach`, a TUI — starts here.

use lazaret_protocol::enrollment::{EnrollRequest, EnrollResponse};
use lazaret_protocol::framing::{self, FrameError};
use lazaret_protocol::messages::{self, SUPPORTED_VERSIONS};
use lazaret_protocol::{tls, ComponentId, Credentials, Expectation};
use tokio::net::UnixStream;

/// An authenticated connection to a coordinator.
pub type Conn = framing::FramedStream<tokio_rustls::client::TlsStream<UnixStream>>;

/// Why joining a running Domain did not work.
#[derive(Debug)]
pub enum JoinError {
    /// No coordinator listens (none runs, or one died): the caller may start one.
    NotRunning,
    /// The coordinator is starting or tearing down and takes no sessions now: retry.
    Unavailable(String),
    /// Anything else; not worth a retry.
    Failed(anyhow::Error),
}

impl<E: Into<anyhow::Error>> From<E> for JoinError {
    fn from(e: E) -> Self {
        JoinError::Failed(e.into())
    }
}

/// Enrollment, mutual TLS and the version handshake with the coordinator listening on
/// `socket`: a connection authenticated as a new Client CLI of this run.
pub async fn open(
    socket: &std::path::Path,
    profile: &str,
    domain_id: &lazaret_protocol::DomainId,
) -> Result<(Conn, ComponentId), JoinError> {
    let stream = match UnixStream::connect(socket).await {
        Ok(s) => s,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Err(JoinError::NotRunning)
        }
        Err(e) => return Err(JoinError::Failed(e.into())),
    };
    let mut plain = framing::framed(stream);
    let sent = framing::send(
        &mut plain,
        &EnrollRequest::Enroll {
            profile: profile.to_owned(),
        },
    )
    .await;
    let answer = match sent {
        Ok(()) => framing::recv::<_, EnrollResponse>(&mut plain).await,
        Err(e) => Err(e),
    };
    let (client_cli_id, ca_pem, cert_pem, key_pem) = match answer {
        Ok(EnrollResponse::Enrolled {
            client_cli_id,
            ca_pem,
            cert_pem,
            key_pem,
        }) => (client_cli_id, ca_pem, cert_pem, key_pem),
        Ok(EnrollResponse::Refused { reason }) => {
            return Err(JoinError::Failed(anyhow::anyhow!(
                "enrollment refused: {reason}"
            )))
        }
        // A coordinator that closes at once is tearing down: retry.
        Err(FrameError::Closed | FrameError::Io(_)) => {
            return Err(JoinError::Unavailable(
                "the coordinator closed the connection".into(),
            ))
        }
        Err(e) => return Err(JoinError::Failed(e.into())),
    };
    let creds = Credentials::from_pem(cert_pem.as_bytes(), key_pem.as_bytes())?;
    let ca = pem_to_der(&ca_pem)?;
    let config = tls::client_config(&ca, &creds)?;
    let expected = Expectation::coordinator(profile, domain_id);
    let (tls_stream, _coordinator) = tls::connect(config, plain.into_inner(), &expected).await?;
    let mut conn = framing::framed(tls_stream);
    messages::client_handshake(&mut conn, SUPPORTED_VERSIONS, env!("CARGO_PKG_VERSION"))
        .await
        .map_err(anyhow::Error::from)?;
    Ok((conn, client_cli_id))
}

fn pem_to_der(pem: &str) -> anyhow::Result<rustls::pki_types::CertificateDer<'static>> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::from_pem_slice(pem.as_bytes())
        .map_err(|e| anyhow::anyhow!("the coordinator's CA certificate: {e}"))
}
