//! Lazaret's protocol: the identifiers that name a Domain and its components, the Trust Anchor
//! and Protocol Identities that authenticate them (SR-9), mutual TLS between them, and the framed
//! messages a Client CLI and the Session Coordinator exchange.
//!
//! Identifiers name things; they never authenticate anything by themselves (spec §2,
//! "Protocol Identity"). Authentication is a certificate from the coordinator run's
//! [`TrustAnchor`] carrying one URI SAN ([`ProtocolIdentity`]), verified in the TLS handshake
//! ([`tls`]) and then authorized against the identity tuple the endpoint expects ([`authz`]).
//!
//! - [`identity`]: [`Role`], [`ComponentId`], [`ProtocolIdentity`] and its URI form.
//! - [`anchor`]: [`TrustAnchor`] (an ephemeral CA) and the [`Credentials`] it issues.
//! - [`authz`]: [`authorize`] a peer certificate against an [`Expectation`].
//! - [`tls`]: rustls configurations and the [`tls::accept`] / [`tls::connect`] helpers.
//! - [`framing`]: length-delimited JSON frames of at most [`framing::MAX_FRAME`] bytes.
//! - [`messages`]: the version handshake and session messages.
//! - [`screen`]: [`screen::ScreenSnapshot`], a session's terminal state for attaching clients.
//! - [`session`]: [`SessionId`] and [`SessionAnchor`].
//! - [`escalation`]: the signed Escalation Mailbox records (requests and results).
//! - [`clipboard`]: image paste into the sandbox: the reserved request and the checks.

pub mod access;
pub mod activity;
pub mod anchor;
pub mod authz;
pub mod clipboard;
pub mod denial;
mod domain_id;
pub mod domain_state;
pub mod enrollment;
pub mod escalation;
pub mod framing;
pub mod held;
pub mod identity;
pub mod messages;
pub mod screen;
pub mod session;
pub mod status;
pub mod tls;

pub use anchor::{Credentials, TrustAnchor};
pub use authz::{authorize, AuthError, Expectation};
pub use domain_id::{DomainId, DomainKey, DOMAIN_ID_HEX_LEN, DOMAIN_KEY_LEN};
pub use identity::{ComponentId, ProtocolIdentity, Role};
pub use session::{SessionAnchor, SessionId};
