//! Enrollment: how a Client CLI obtains its Protocol Identity from the running coordinator.
//!
//! The coordinator's socket lives in the developer's host-private runtime dir (0700, owner
//! checked: SR-10), and the coordinator checks the connecting process's uid (`SO_PEERCRED`)
//! before anything else. On that connection the first exchange is one plaintext frame each way:
//! `enroll` → `enrolled` (the run's Trust Anchor certificate and a fresh Client CLI certificate and
//! key, bound to the Domain and a new Client CLI ID) or `refused`. The same connection then
//! upgrades to mutual TLS with those credentials; everything after that is authenticated by
//! certificate ([`crate::tls`]). Sandboxes and sidecars never reach the socket, and a certificate
//! of one run is worthless for the next run's Trust Anchor.

use crate::identity::ComponentId;
use serde::{Deserialize, Serialize};

/// Client → coordinator, the first frame on a connection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum EnrollRequest {
    /// Asks for Client CLI credentials for `profile` in the coordinator's Domain.
    Enroll { profile: String },
}

/// Coordinator → client, the answer to [`EnrollRequest`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum EnrollResponse {
    /// The run's CA (to verify the coordinator) and this client's certificate and key.
    Enrolled {
        client_cli_id: ComponentId,
        ca_pem: String,
        cert_pem: String,
        key_pem: String,
    },
    /// Not enrolled; `reason` says why and what to do.
    Refused { reason: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enrollment_messages_are_strict() {
        let ok: Result<EnrollRequest, _> =
            serde_json::from_str(r#"{"type":"enroll","profile":"default"}"#);
        assert!(ok.is_ok());
        let extra: Result<EnrollRequest, _> =
            serde_json::from_str(r#"{"type":"enroll","profile":"default","role":"coordinator"}"#);
        assert!(extra.is_err(), "unknown fields are refused");
    }
}
