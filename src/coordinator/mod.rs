//! Session Coordinator: the single owner of a Domain's runtime and Client Sessions (spec §3.2).

pub mod core;
