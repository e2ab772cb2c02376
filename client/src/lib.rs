//! Lazaret's client side (issue #14): everything a front end needs to talk to a Domain's
//! Session Coordinator, independent of the engine. It depends on `lazaret-protocol` only.
//!
//! - [`open`]: enrollment, mutual TLS and the version handshake over the Domain's socket;
//! - [`connection`]: a client connection (`connect`) and its requests;
//! - [`link`]: a long-lived connection that carries several attached sessions (the TUI);
//! - [`locate`]: the user's running Domains and their sessions;
//! - [`pacer`]: when the next screen update may go out (the TUI's frames, the coordinator's
//!   screen updates);
//! - [`prompts`]: escalation prompts on a client ([`prompts::Prompter`]);
//! - [`target`]: the [`target::Launcher`] the engine implements for the front ends;
//! - [`config`]: reading trusted configuration files.

pub mod config;
pub mod connection;
pub mod link;
pub mod locate;
pub mod open;
pub mod pacer;
pub mod prompts;
pub mod target;
