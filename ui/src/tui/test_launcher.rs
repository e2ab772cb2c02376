//! A [`Launcher`] with no engine behind it, for the TUI's tests: nothing is resolved or
//! linked; Domains are read from `root` when one is given.

use lazaret_client::target::{Launcher, LinkEvents, Target};
use std::path::{Path, PathBuf};

pub struct NoEngine {
    /// Where Domains publish their status, if anywhere.
    pub root: Option<PathBuf>,
}

impl Launcher for NoEngine {
    fn resolve(&self, _: &Path, _: Option<&str>) -> anyhow::Result<Target> {
        anyhow::bail!("no engine in this test")
    }
    fn open_link(
        &self,
        _: &tokio::runtime::Handle,
        _: &Target,
        _: &str,
        _: LinkEvents,
    ) -> anyhow::Result<lazaret_client::link::DomainLink> {
        anyhow::bail!("no engine in this test")
    }
    fn wait_if_last(&self, _: &Target, _: &[String]) {}
    fn runtime_root(&self) -> anyhow::Result<PathBuf> {
        match &self.root {
            Some(root) => Ok(root.clone()),
            None => anyhow::bail!("no engine in this test"),
        }
    }
}

/// A runtime handle for tests whose links are never opened (an [`App`](super::app::App)
/// needs one).
pub fn test_handle() -> tokio::runtime::Handle {
    static RT: std::sync::OnceLock<Option<tokio::runtime::Runtime>> = std::sync::OnceLock::new();
    match RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()
    }) {
        Some(rt) => rt.handle().clone(),
        None => panic!("a test runtime could not be built"),
    }
}
