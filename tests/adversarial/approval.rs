//! Adversarial scenarios: approval (see main.rs).

#[allow(unused_imports)]
use crate::support;
