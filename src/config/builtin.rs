//! The built-in profiles (`shell`, `claude`, `codex`): `profiles/builtin.toml`, compiled in
//! and read by the same parser and validation as the developer's configuration file.

use super::host_paths::HostPaths;
use super::location::Source;
use super::resolve::{self, Resolved};

/// The text of `profiles/builtin.toml`.
pub const BUILTIN_TOML: &str = include_str!("../../profiles/builtin.toml");

/// The name built-in profiles are reported under.
pub const BUILTIN_NAME: &str = "profiles/builtin.toml (built into lazaret)";

/// Validates the built-in profiles against `host` (they name no host paths, so this fails
/// only if the shipped file is broken, which the unit tests rule out).
pub fn profiles(host: &HostPaths) -> anyhow::Result<Resolved> {
    let src = Source::new(BUILTIN_NAME, BUILTIN_TOML);
    resolve::resolve(&src, host, &[]).map_err(anyhow::Error::new)
}
