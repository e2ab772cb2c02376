//! Adversarial scenarios: mailbox (see main.rs).

#[allow(unused_imports)]
use crate::support;
