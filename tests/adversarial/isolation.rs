//! Adversarial scenarios: isolation (see main.rs).

#[allow(unused_imports)]
use crate::support;
