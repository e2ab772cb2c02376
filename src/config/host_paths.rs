//! The host directories validation protects: Lazaret's own (configuration, Storage Root, state,
//! runtime) must never be reachable through a volume (SR-2, SR-3, SR-10), nor may a volume
//! contain the home directory. Also the home used to expand `~/`.

use crate::domain::layout::Layout;
use std::path::{Path, PathBuf};

/// The host paths a configuration is validated against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostPaths {
    pub home: PathBuf,
    pub config_dir: PathBuf,
    pub storage_root: PathBuf,
    pub state_dir: PathBuf,
    /// `$XDG_RUNTIME_DIR/lazaret`, when `XDG_RUNTIME_DIR` is set.
    pub runtime_root: Option<PathBuf>,
}

impl HostPaths {
    pub fn from_layout(layout: &Layout) -> HostPaths {
        HostPaths {
            home: layout.home().to_path_buf(),
            config_dir: layout.config_dir(),
            storage_root: layout.storage_root(),
            state_dir: layout.state_dir(),
            runtime_root: layout.runtime_root().ok(),
        }
    }

    /// Lazaret's own directories, each with what it is, for messages.
    pub fn lazaret_dirs(&self) -> Vec<(&'static str, &Path)> {
        let mut v = vec![
            ("configuration directory", self.config_dir.as_path()),
            ("Storage Root", self.storage_root.as_path()),
            ("state directory", self.state_dir.as_path()),
        ];
        if let Some(r) = &self.runtime_root {
            v.push(("runtime directory", r.as_path()));
        }
        v
    }

    /// `path` with the home directory written as `~`.
    pub fn show(&self, path: &Path) -> String {
        super::location::display_path(path, &self.home)
    }
}
