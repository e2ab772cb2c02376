//! The Domain a command run in a workspace means: the workspace containing the current
//! directory, with `--profile` or the configuration's default profile — and whether its
//! Session Coordinator runs now.

use crate::config::HostConfig;
use crate::domain::layout::Layout;
use crate::domain::Domain;
use crate::profile::AgentProfile;

pub struct ThisDomain {
    pub profile: AgentProfile,
    pub domain: Domain,
    /// Its coordinator runs (a status file alone proves nothing: it outlives a killed one).
    pub running: bool,
}

pub fn this_domain(layout: &Layout, profile: Option<&str>) -> anyhow::Result<ThisDomain> {
    let config = HostConfig::load(layout)?;
    let profile = config.profile(profile)?;
    let cwd = std::env::current_dir()?;
    let domain = Domain::resolve(layout, &profile.name, &cwd)?;
    let status =
        crate::coordinator::status::DomainStatus::read(&crate::coordinator::paths::status(&domain));
    let running =
        status.is_some_and(|s| lazaret_client::locate::coordinator_runs(s.coordinator_pid));
    Ok(ThisDomain {
        profile,
        domain,
        running,
    })
}
