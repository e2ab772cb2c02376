//! What the Domain-state and network-denial panels show: sent by each Domain's coordinator to
//! the control centres watching it ([`lazaret_client::link::LinkEvent::DomainState`],
//! [`lazaret_client::link::LinkEvent::Denials`]).

pub use lazaret_protocol::domain_state::{AnchorSize, DomainView};
