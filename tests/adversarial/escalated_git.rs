//! Adversarial scenarios: escalated_git (see main.rs).

#[allow(unused_imports)]
use crate::support;
