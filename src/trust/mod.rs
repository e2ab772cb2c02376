//! Trust what the host trusts (issue #32): when the developer's host trusts CA certificates the
//! sandbox's image does not (a TLS-intercepting corporate proxy), the sandbox's trust store is
//! the image's own bundle plus those extra certificates, by default; `trust_host_cas = false`
//! in a profile turns it off.
//!
//! - [`bundle`]: PEM bundles, certificates only (keys never cross), bounded, deduplicated by DER.
//! - [`host`]: what the host trusts (`SSL_CERT_FILE`, else the system bundle; plus
//!   `NODE_EXTRA_CA_CERTS`).
//! - [`image`]: the image's own bundle, read from the mounted image (never from a State Anchor,
//!   which the sandbox writes), resolved inside the image's root only.
//! - [`compose`]: the extras and the composed bundle.
//! - [`sandbox`]: the composed file, its read-only mount over the image's bundle path, and the
//!   environment that points every TLS stack at it.
//! - [`report`]: what `lazaret doctor` says about it.

pub mod bundle;
pub mod compose;
pub mod host;
pub mod image;
pub mod report;
pub mod sandbox;
#[cfg(test)]
mod test_certs;

pub use bundle::CaCert;
pub use host::HostTrust;
