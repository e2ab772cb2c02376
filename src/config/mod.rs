//! Host configuration: `$XDG_CONFIG_HOME/lazaret/config.toml` (trusted, read only by host
//! Lazaret processes, never mounted into the sandbox: SR-2), overlaid on the built-in profiles
//! of `profiles/builtin.toml`. The format and every rule are documented in `docs/config.md`.
//!
//! - `file`: the TOML as written (serde, unknown keys refused);
//! - `validate`, `storage`, `network`, `commands`: semantic rules, each error at its line;
//! - `resolve`: `extends`, overlay on the built-ins, `default_profile`;
//! - `trust`: who may own the file and where it may live; `location`: `file:line:column`.

pub use lazaret_client::config::{location, paths, trust};

pub mod builtin;
pub mod commands;
pub mod duration;
pub mod edit;
pub mod file;
pub mod host_paths;
pub mod idle_stop;
pub mod limits;
pub mod linger;
pub mod login;
pub mod network;
pub mod resolve;
pub mod save;
pub mod storage;
pub mod validate;

#[cfg(test)]
mod tests;

use crate::domain::layout::Layout;
use crate::profile::AgentProfile;
use host_paths::HostPaths;
use location::{ConfigError, Source};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// File name of the configuration inside `Layout::config_dir()`.
pub const CONFIG_FILE_NAME: &str = "config.toml";

/// Where the configuration file is, or would be.
pub fn config_file(layout: &Layout) -> PathBuf {
    layout.config_dir().join(CONFIG_FILE_NAME)
}

/// Where a profile comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileSource {
    BuiltIn,
    Config,
}

impl std::fmt::Display for ProfileSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ProfileSource::BuiltIn => "built-in",
            ProfileSource::Config => "config",
        })
    }
}

/// The validated host configuration: built-in profiles overlaid by the configuration file's.
#[derive(Clone, Debug)]
pub struct HostConfig {
    /// The configuration file read, if one exists.
    pub source: Option<PathBuf>,
    /// Where the configuration file is or would be (`source` when it exists).
    pub path: PathBuf,
    pub default_profile: String,
    /// Built-in profiles (replaced in place by same-named ones of the file), then the file's.
    pub profiles: Vec<AgentProfile>,
    /// Names of the profiles the configuration file defines.
    pub from_file: BTreeSet<String>,
}

impl HostConfig {
    /// Reads and validates `$XDG_CONFIG_HOME/lazaret/config.toml` (absent: built-ins only).
    pub fn load(layout: &Layout) -> anyhow::Result<HostConfig> {
        let host = HostPaths::from_layout(layout);
        let path = config_file(layout);
        let shown = host.show(&path);
        match trust::read_trusted(&path, &shown)? {
            None => HostConfig::builtin_only(&host, &path),
            Some(text) => {
                let cfg = HostConfig::from_text(&text, &path, &host)?;
                tracing::debug!(
                    file = %path.display(),
                    profiles = cfg.from_file.len(),
                    "configuration loaded"
                );
                Ok(cfg)
            }
        }
    }

    /// The built-in profiles alone, as when no configuration file exists at `path`.
    pub fn builtin_only(host: &HostPaths, path: &Path) -> anyhow::Result<HostConfig> {
        let b = builtin::profiles(host)?;
        Ok(HostConfig {
            source: None,
            path: path.to_path_buf(),
            default_profile: b
                .default_profile
                .unwrap_or_else(|| crate::profile::DEFAULT_PROFILE.to_owned()),
            profiles: b.profiles,
            from_file: BTreeSet::new(),
        })
    }

    /// Validates `text` as the configuration file at `path` (no ownership or location checks:
    /// `load` does those). Every problem is reported with its `file:line:column`.
    pub fn from_text(text: &str, path: &Path, host: &HostPaths) -> anyhow::Result<HostConfig> {
        let builtins = HostConfig::builtin_only(host, path)?;
        let src = Source::new(host.show(path), text);
        let r = resolve::resolve(&src, host, &builtins.profiles)
            .map_err(|e: ConfigError| anyhow::Error::new(e))?;
        Ok(HostConfig {
            source: Some(path.to_path_buf()),
            path: path.to_path_buf(),
            default_profile: r.default_profile.unwrap_or(builtins.default_profile),
            profiles: r.profiles,
            from_file: r.defined,
        })
    }

    /// The named profile, or the default one.
    pub fn profile(&self, name: Option<&str>) -> anyhow::Result<AgentProfile> {
        let name = name.unwrap_or(&self.default_profile);
        self.profiles
            .iter()
            .find(|p| p.name == name)
            .cloned()
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "unknown Agent Profile {name:?}: the profiles are {} (`lazaret profile list` \
                     shows them; define more in {})",
                    self.names().join(", "),
                    self.path.display()
                )
            })
    }

    /// Profile names in list order.
    pub fn names(&self) -> Vec<&str> {
        self.profiles.iter().map(|p| p.name.as_str()).collect()
    }

    /// Whether the named profile is built in or defined (or replaced) by the configuration file.
    pub fn source_of(&self, name: &str) -> ProfileSource {
        if self.from_file.contains(name) {
            ProfileSource::Config
        } else {
            ProfileSource::BuiltIn
        }
    }

    /// Refuses the configuration when its file or directory lies beneath (or is reached by a
    /// symlink from beneath) any of `mounted` host paths (SR-2). Callers pass the workspace
    /// root and every volume host path.
    pub fn check_outside(&self, mounted: &[&Path]) -> anyhow::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("/"));
        trust::check_outside(dir, &self.path, mounted)
    }
}
