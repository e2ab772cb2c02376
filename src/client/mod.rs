//! The client side of coordinator-owned sessions (issue #14): connect to a Domain's Session
//! Coordinator as a client without a session of its own, start or find sessions, and attach
//! a plain terminal to one (`lazaret attach`, `lazaret run --detachable`).

pub mod attach;
pub mod connection;
pub mod detach_key;
pub mod detachable;
pub mod link;
pub mod locate;
