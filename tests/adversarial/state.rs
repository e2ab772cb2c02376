//! Adversarial scenarios: state (see main.rs).

#[allow(unused_imports)]
use crate::support;
