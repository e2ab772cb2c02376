//! Mutual TLS and authorization through the public API, over real Unix socket pairs.

use lazaret_protocol::anchor::IssueError;
use lazaret_protocol::framing::{self, FrameError};
use lazaret_protocol::messages::{
    client_handshake, server_handshake, ClientMessage, CoordinatorMessage, PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
};
use lazaret_protocol::tls::{self, TlsError};
use lazaret_protocol::{
    authorize, AuthError, ComponentId, Credentials, DomainId, Expectation, ProtocolIdentity, Role,
    TrustAnchor,
};
use rustls::pki_types::CertificateDer;
use rustls::{CertificateError, ClientConfig, ServerConfig};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::io::AsyncReadExt;
use tokio::net::UnixStream;

const PROFILE: &str = "default";

fn domain() -> DomainId {
    DomainId::derive(PROFILE, Path::new("/home/dev/project"))
}

fn identity(role: Role) -> ProtocolIdentity {
    ProtocolIdentity::new(role, PROFILE, domain(), ComponentId::generate().unwrap()).unwrap()
}

/// One coordinator run: its Trust Anchor, its own credentials and its server configuration.
struct Run {
    anchor: TrustAnchor,
    coordinator: Credentials,
    server: Arc<ServerConfig>,
}

fn run() -> Run {
    let anchor = TrustAnchor::generate(PROFILE, &domain()).unwrap();
    let coordinator = anchor.issue(&identity(Role::Coordinator)).unwrap();
    let server = tls::server_config(&anchor, &coordinator).unwrap();
    Run {
        anchor,
        coordinator,
        server,
    }
}

impl Run {
    fn client(&self, role: Role) -> (Credentials, Arc<ClientConfig>) {
        let creds = self.anchor.issue(&identity(role)).unwrap();
        let config = tls::client_config(self.anchor.ca_der(), &creds).unwrap();
        (creds, config)
    }
}

type ServerSide = Result<
    (
        tokio_rustls::server::TlsStream<UnixStream>,
        ProtocolIdentity,
    ),
    TlsError,
>;
type ClientSide = Result<
    (
        tokio_rustls::client::TlsStream<UnixStream>,
        ProtocolIdentity,
    ),
    TlsError,
>;

/// Runs both ends of the handshake concurrently on a fresh socket pair.
async fn handshake(
    server: Arc<ServerConfig>,
    server_expects: &Expectation,
    client: Arc<ClientConfig>,
    client_expects: &Expectation,
) -> (ServerSide, ClientSide) {
    let (s, c) = UnixStream::pair().unwrap();
    tokio::join!(
        tls::accept(server, s, server_expects),
        tls::connect(client, c, client_expects)
    )
}

fn client_endpoint() -> Expectation {
    Expectation::client_cli(PROFILE, &domain())
}

fn coordinator_expected() -> Expectation {
    Expectation::coordinator(PROFILE, &domain())
}

fn certificate_error(e: &TlsError) -> Option<&CertificateError> {
    match e {
        TlsError::Handshake(rustls::Error::InvalidCertificate(ce)) => Some(ce),
        _ => None,
    }
}

#[tokio::test]
async fn client_cli_is_authorized_and_both_identities_returned() {
    let run = run();
    let (creds, config) = run.client(Role::ClientCli);
    let (server, client) = handshake(
        run.server.clone(),
        &client_endpoint(),
        config,
        &coordinator_expected(),
    )
    .await;
    let (server_stream, client_id) = server.unwrap();
    let (client_stream, coordinator_id) = client.unwrap();
    assert_eq!(&client_id, creds.identity());
    assert_eq!(client_id.role(), Role::ClientCli);
    assert_eq!(client_id.domain_id(), &domain());
    assert_eq!(client_id.profile(), PROFILE);
    assert_eq!(&coordinator_id, run.coordinator.identity());

    // Application data flows: the version handshake over the TLS streams.
    let mut s = framing::framed(server_stream);
    let mut c = framing::framed(client_stream);
    let (srv, cli) = tokio::join!(
        server_handshake(&mut s, SUPPORTED_VERSIONS),
        client_handshake(&mut c, SUPPORTED_VERSIONS, "lazaret test")
    );
    assert_eq!(srv.unwrap(), (PROTOCOL_VERSION, "lazaret test".to_owned()));
    assert_eq!(cli.unwrap(), PROTOCOL_VERSION);
    framing::send(
        &mut s,
        &CoordinatorMessage::Shutdown {
            reason: "done".into(),
        },
    )
    .await
    .unwrap();
    let got: CoordinatorMessage = framing::recv(&mut c).await.unwrap();
    assert_eq!(
        got,
        CoordinatorMessage::Shutdown {
            reason: "done".into()
        }
    );
    // A closed sink sends TLS close_notify: the client sees a clean end of stream.
    framing::close(&mut s).await.unwrap();
    assert!(matches!(
        framing::recv::<_, CoordinatorMessage>(&mut c).await,
        Err(FrameError::Closed)
    ));
}

#[tokio::test]
async fn a_tls_stream_cut_without_close_notify_is_not_a_clean_close() {
    let run = run();
    let (_, config) = run.client(Role::ClientCli);
    let (server, client) = handshake(
        run.server.clone(),
        &client_endpoint(),
        config,
        &coordinator_expected(),
    )
    .await;
    let s = framing::framed(server.unwrap().0);
    let mut c = framing::framed(client.unwrap().0);
    drop(s); // no close_notify: indistinguishable from truncation by an attacker
    let err = framing::recv::<_, CoordinatorMessage>(&mut c)
        .await
        .unwrap_err();
    assert!(matches!(err, FrameError::Io(_)), "{err:?}");
}

#[tokio::test]
async fn component_can_be_pinned() {
    let run = run();
    let (creds, config) = run.client(Role::ClientCli);
    let pinned = client_endpoint().with_component(creds.identity().component_id().clone());
    let (server, _) = handshake(
        run.server.clone(),
        &pinned,
        config.clone(),
        &coordinator_expected(),
    )
    .await;
    assert!(server.is_ok());

    let other = client_endpoint().with_component(ComponentId::generate().unwrap());
    let (server, _) = handshake(run.server.clone(), &other, config, &coordinator_expected()).await;
    assert!(matches!(
        server.unwrap_err(),
        TlsError::Unauthorized(AuthError::WrongComponent { .. })
    ));
}

#[tokio::test]
async fn sidecar_and_sandbox_certificates_are_refused_at_the_client_endpoint() {
    let run = run();
    for role in [Role::NetworkSidecar, Role::AgentSandbox, Role::Coordinator] {
        let (_, config) = run.client(role);
        let (server, client) = handshake(
            run.server.clone(),
            &client_endpoint(),
            config,
            &coordinator_expected(),
        )
        .await;
        match server.unwrap_err() {
            TlsError::Unauthorized(AuthError::WrongRole { expected, found }) => {
                assert_eq!(found, role);
                assert_eq!(expected, "client-cli");
            }
            other => panic!("{role}: {other:?}"),
        }
        // The client's handshake (TLS 1.3) completed; the server then hung up on it.
        let (mut stream, _) = client.unwrap();
        let mut buf = [0u8; 1];
        assert_eq!(stream.read(&mut buf).await.unwrap_or(0), 0);
    }
}

#[tokio::test]
async fn another_runs_ca_fails_the_handshake_both_ways() {
    let first = run(); // e.g. a crashed earlier coordinator of this Domain
    let second = run(); // same Domain, new coordinator run: a new Trust Anchor

    // A client certificate from the earlier run, even beside the current CA: the server says no.
    let stale = first.anchor.issue(&identity(Role::ClientCli)).unwrap();
    let config = tls::client_config(second.anchor.ca_der(), &stale).unwrap();
    let (server, _) = handshake(
        second.server.clone(),
        &client_endpoint(),
        config,
        &coordinator_expected(),
    )
    .await;
    let err = server.unwrap_err();
    assert_eq!(
        certificate_error(&err),
        Some(&CertificateError::UnknownIssuer),
        "{err:?}"
    );

    // A current client does not trust the earlier run's coordinator.
    let (_, fresh_client) = second.client(Role::ClientCli);
    let (_, client) = handshake(
        first.server.clone(),
        &client_endpoint(),
        fresh_client,
        &coordinator_expected(),
    )
    .await;
    let err = client.unwrap_err();
    assert_eq!(
        certificate_error(&err),
        Some(&CertificateError::UnknownIssuer),
        "{err:?}"
    );

    // Entirely stale client: it refuses the new server first and tells it so.
    let (_, stale_client) = first.client(Role::ClientCli);
    let (server, client) = handshake(
        second.server.clone(),
        &client_endpoint(),
        stale_client,
        &coordinator_expected(),
    )
    .await;
    let err = client.unwrap_err();
    assert_eq!(
        certificate_error(&err),
        Some(&CertificateError::UnknownIssuer),
        "{err:?}"
    );
    assert!(matches!(
        server.unwrap_err(),
        TlsError::Handshake(rustls::Error::AlertReceived(
            rustls::AlertDescription::UnknownCA
        ))
    ));
}

#[tokio::test]
async fn another_domains_ca_fails_the_handshake() {
    let run = run();
    let other_domain = DomainId::derive(PROFILE, Path::new("/home/dev/other"));
    let other_anchor = TrustAnchor::generate(PROFILE, &other_domain).unwrap();
    let foreign = ProtocolIdentity::new(
        Role::ClientCli,
        PROFILE,
        other_domain,
        ComponentId::generate().unwrap(),
    )
    .unwrap();
    let creds = other_anchor.issue(&foreign).unwrap();
    // The client is even handed the right CA; its certificate still is not from it.
    let config = tls::client_config(run.anchor.ca_der(), &creds).unwrap();
    let (server, _) = handshake(
        run.server.clone(),
        &client_endpoint(),
        config,
        &coordinator_expected(),
    )
    .await;
    let err = server.unwrap_err();
    assert_eq!(
        certificate_error(&err),
        Some(&CertificateError::UnknownIssuer)
    );
    // And without the handshake, authorization alone names the mismatch.
    assert!(matches!(
        authorize(creds.cert_der(), &client_endpoint()),
        Err(AuthError::WrongDomain { .. })
    ));
}

#[tokio::test]
async fn expired_and_not_yet_valid_client_certificates_fail() {
    let run = run();
    let now = SystemTime::now();
    let hour = Duration::from_secs(3600);
    let cases = [
        (now - 3 * hour, now - 2 * hour, "expired"),
        (now + hour, now + 2 * hour, "not yet valid"),
    ];
    for (not_before, not_after, what) in cases {
        let creds = run
            .anchor
            .issue_with_validity(&identity(Role::ClientCli), not_before, not_after)
            .unwrap();
        let config = tls::client_config(run.anchor.ca_der(), &creds).unwrap();
        let (server, _) = handshake(
            run.server.clone(),
            &client_endpoint(),
            config,
            &coordinator_expected(),
        )
        .await;
        let err = server.unwrap_err();
        let ce = certificate_error(&err);
        match what {
            "expired" => {
                assert!(
                    matches!(ce, Some(CertificateError::ExpiredContext { .. })),
                    "{err:?}"
                );
                assert!(matches!(
                    authorize(creds.cert_der(), &client_endpoint()),
                    Err(AuthError::Expired { .. })
                ));
            }
            _ => {
                assert!(
                    matches!(ce, Some(CertificateError::NotValidYetContext { .. })),
                    "{err:?}"
                );
                assert!(matches!(
                    authorize(creds.cert_der(), &client_endpoint()),
                    Err(AuthError::NotYetValid { .. })
                ));
            }
        }
    }
}

#[tokio::test]
async fn expired_coordinator_certificate_fails_in_the_client() {
    let run = run();
    let now = SystemTime::now();
    let hour = Duration::from_secs(3600);
    let old = run
        .anchor
        .issue_with_validity(&identity(Role::Coordinator), now - 2 * hour, now - hour)
        .unwrap();
    let server = tls::server_config(&run.anchor, &old).unwrap();
    let (_, config) = run.client(Role::ClientCli);
    let (_, client) = handshake(server, &client_endpoint(), config, &coordinator_expected()).await;
    let err = client.unwrap_err();
    assert!(
        matches!(
            certificate_error(&err),
            Some(CertificateError::ExpiredContext { .. })
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn client_without_a_certificate_fails_the_handshake() {
    let run = run();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(run.anchor.ca_der().clone()).unwrap();
    let anonymous = ClientConfig::builder_with_provider(tls::crypto_provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let (server, _) = handshake(
        run.server.clone(),
        &client_endpoint(),
        Arc::new(anonymous),
        &coordinator_expected(),
    )
    .await;
    let err = server.unwrap_err();
    assert!(
        matches!(
            err,
            TlsError::Handshake(rustls::Error::NoCertificatesPresented)
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn client_checks_the_coordinators_identity() {
    let run = run();
    let (_, config) = run.client(Role::ClientCli);
    // Pinning another coordinator instance (e.g. a stale published coordinator ID) fails.
    let pinned = coordinator_expected().with_component(ComponentId::generate().unwrap());
    let (_, client) = handshake(run.server.clone(), &client_endpoint(), config, &pinned).await;
    assert!(matches!(
        client.unwrap_err(),
        TlsError::Unauthorized(AuthError::WrongComponent { .. })
    ));
}

#[test]
fn server_config_takes_only_its_own_coordinator_identity() {
    let run = run();
    let client = run.anchor.issue(&identity(Role::ClientCli)).unwrap();
    assert!(matches!(
        tls::server_config(&run.anchor, &client),
        Err(TlsError::WrongCredentials(_))
    ));
    let other = TrustAnchor::generate("other", &domain()).unwrap();
    assert!(matches!(
        tls::server_config(&other, &run.coordinator),
        Err(TlsError::WrongCredentials(_))
    ));
}

#[test]
fn anchor_issues_only_for_its_own_domain_and_profile() {
    let anchor = TrustAnchor::generate(PROFILE, &domain()).unwrap();
    let other_domain = DomainId::derive(PROFILE, Path::new("/elsewhere"));
    for foreign in [
        ProtocolIdentity::new(
            Role::ClientCli,
            PROFILE,
            other_domain,
            ComponentId::generate().unwrap(),
        )
        .unwrap(),
        ProtocolIdentity::new(
            Role::ClientCli,
            "other",
            domain(),
            ComponentId::generate().unwrap(),
        )
        .unwrap(),
    ] {
        assert!(matches!(
            anchor.issue(&foreign),
            Err(IssueError::ForeignIdentity { .. })
        ));
    }
    let now = SystemTime::now();
    assert!(matches!(
        anchor.issue_with_validity(&identity(Role::ClientCli), now, now),
        Err(IssueError::InvalidValidity)
    ));
}

#[test]
fn credentials_survive_a_pem_round_trip() {
    let run = run();
    let creds = run.anchor.issue(&identity(Role::NetworkSidecar)).unwrap();
    let loaded =
        Credentials::from_pem(creds.cert_pem().as_bytes(), creds.key_pem().as_bytes()).unwrap();
    assert_eq!(loaded.identity(), creds.identity());
    assert_eq!(loaded.cert_der(), creds.cert_der());
    assert_eq!(loaded.key_der().secret_der(), creds.key_der().secret_der());
    let ca = CertificateDer::from(pem::parse(run.anchor.ca_pem()).unwrap().into_contents());
    assert_eq!(&ca, run.anchor.ca_der());
    // The CA itself is not a leaf.
    assert!(
        Credentials::from_pem(run.anchor.ca_pem().as_bytes(), creds.key_pem().as_bytes()).is_err()
    );
    assert!(!format!("{creds:?}").contains(&creds.key_pem()));
}

#[tokio::test]
async fn loaded_credentials_authenticate() {
    let run = run();
    let creds = run.anchor.issue(&identity(Role::ClientCli)).unwrap();
    let loaded =
        Credentials::from_pem(creds.cert_pem().as_bytes(), creds.key_pem().as_bytes()).unwrap();
    let config = tls::client_config(run.anchor.ca_der(), &loaded).unwrap();
    let (server, client) = handshake(
        run.server.clone(),
        &client_endpoint(),
        config,
        &coordinator_expected(),
    )
    .await;
    assert_eq!(&server.unwrap().1, creds.identity());
    assert!(client.is_ok());
}

#[tokio::test]
async fn session_messages_flow_over_tls() {
    let run = run();
    let (creds, config) = run.client(Role::ClientCli);
    let (server, client) = handshake(
        run.server.clone(),
        &client_endpoint(),
        config,
        &coordinator_expected(),
    )
    .await;
    let (server_stream, peer) = server.unwrap();
    let mut s = framing::framed(server_stream);
    let mut c = framing::framed(client.unwrap().0);
    let register = ClientMessage::Register {
        client_cli_id: creds.identity().component_id().clone(),
        config_fingerprint: "00".repeat(32),
        profile: PROFILE.into(),
        workspace: "/home/dev/project".into(),
    };
    framing::send(&mut c, &register).await.unwrap();
    match framing::recv::<_, ClientMessage>(&mut s).await.unwrap() {
        ClientMessage::Register {
            client_cli_id,
            profile,
            ..
        } => {
            lazaret_protocol::messages::check_register_binding(&peer, &client_cli_id, &profile)
                .unwrap();
        }
        other => panic!("{other:?}"),
    }
}
