//! What a front end needs of the engine it runs beside, without depending on it: a resolved
//! Domain to start sessions in ([`Target`]) and the [`Launcher`] that resolves workspaces and
//! opens links — starting the Domain's Session Coordinator when none runs. The `lazaret`
//! binary implements it; the front ends (`lazaret-ui`) only call it.

use crate::connection::DomainAddress;
use crate::link::{DomainLink, LinkEvent};
use lazaret_protocol::access::TerminalAccess;
use std::path::{Path, PathBuf};

/// A Domain (workspace + Agent Profile) resolved with the developer's configuration.
#[derive(Clone, Debug)]
pub struct Target {
    pub address: DomainAddress,
    /// The profile's command (what a new session runs).
    pub command: Vec<String>,
    /// Where a new session starts inside the sandbox (under `/workspace`).
    pub sandbox_cwd: PathBuf,
    /// Configuration Fingerprint of the configuration the front end was started with.
    pub fingerprint: String,
    /// What the sessions' output may do to the developer's terminal.
    pub terminal: TerminalAccess,
}

impl Target {
    pub fn domain_id(&self) -> String {
        self.address.domain_id.to_string()
    }
}

/// Where [`LinkEvent`]s go.
pub type LinkEvents = std::sync::Arc<dyn Fn(LinkEvent) + Send + Sync + 'static>;

/// The engine's services for a front end.
pub trait Launcher: Send + Sync {
    /// The Domain of the workspace around `dir` with `profile` (None: the default profile).
    fn resolve(&self, dir: &Path, profile: Option<&str>) -> anyhow::Result<Target>;
    /// A link to the target's coordinator labelled `label`, carried by a task on `rt`,
    /// starting the Domain when none runs (blocking, so never on `rt`'s thread; may take a
    /// while on a first start).
    fn open_link(
        &self,
        rt: &tokio::runtime::Handle,
        target: &Target,
        label: &str,
        events: LinkEvents,
    ) -> anyhow::Result<DomainLink>;
    /// When the Domain has no session left but `ended` (the sessions the caller just ended,
    /// which its status may still list for a moment), waits (bounded) until it has been torn
    /// down, so that nothing of it runs once the front end exits.
    fn wait_if_last(&self, target: &Target, ended: &[String]);
    /// Where running Domains publish their status (see [`crate::locate`]).
    fn runtime_root(&self) -> anyhow::Result<PathBuf>;
    /// Runs the developer's alert command `argv` (from their own `tui.toml`) with `event`
    /// (one JSON object) on its stdin, without waiting for it. Front ends run no program
    /// themselves.
    fn alert(&self, argv: &[String], event: &str) {
        let _ = (argv, event);
    }
}
