//! Lazaret's protocol vocabulary: the identifiers that name a Domain and its components.
//!
//! Identifiers name things; they never authenticate anything by themselves (spec §2,
//! "Protocol Identity"). Authentication arrives with the Session Coordinator's Trust Anchor.

mod domain_id;

pub use domain_id::{DomainId, DOMAIN_ID_HEX_LEN};
