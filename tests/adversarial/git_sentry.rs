//! Adversarial scenarios: git_sentry (see main.rs).

#[allow(unused_imports)]
use crate::support;
