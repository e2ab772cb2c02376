//! Adversarial scenarios: network (see main.rs).

#[allow(unused_imports)]
use crate::support;
