//! A control centre allows a refused destination (issue #17: the TUI's denials panel): for the
//! Domain's current run, and on request into the profile — the same rules as `lazaret net
//! allow` ([`crate::network::run_rules`], [`crate::config::save`]). Blocking (the sidecar
//! acknowledges within half a second): callers run it off the coordinator's event loop.

use super::SessionHost;
use crate::config::{save, HostConfig};
use crate::domain::layout::Layout;
use crate::domain::Domain;
use crate::network::run_rules::{Target, TargetError};
use crate::runtime::{run_rules_store, sidecar::status_dir};
use lazaret_protocol::messages::{AllowAnswer, SaveStep};

impl SessionHost {
    /// What [`allow_destination`] needs of this Domain.
    pub fn allow_context(&self) -> (Domain, String, bool) {
        (
            self.spawn.domain.clone(),
            self.spawn.profile.name.clone(),
            self.spawn.profile.network.enabled,
        )
    }
}

fn refused(message: String) -> AllowAnswer {
    AllowAnswer {
        ok: false,
        message,
        needs_private: false,
        lines: Vec::new(),
    }
}

/// Allows `target` for the run of `domain` (profile `profile`), and with [`SaveStep::Write`]
/// adds it to the profile; [`SaveStep::Preview`] only answers the lines that would change.
pub fn allow_destination(
    domain: &Domain,
    profile: &str,
    networking: bool,
    target: &str,
    private: bool,
    save: SaveStep,
) -> AllowAnswer {
    let target = match Target::parse(target) {
        Ok(t) => t,
        Err(e) => return refused(e.to_string()),
    };
    let shown = target.to_string();
    match target.check(private) {
        Ok(()) => {}
        Err(e @ TargetError::NeedsPrivate(..)) => {
            return AllowAnswer {
                needs_private: true,
                ..refused(e.to_string())
            }
        }
        Err(e) => return refused(e.to_string()),
    }
    if !networking {
        return refused(format!(
            "networking is off for profile {profile}: nothing can be allowed"
        ));
    }
    let prepared = match save {
        SaveStep::No => None,
        _ => match prepare(profile, &target) {
            Ok(p) => Some(p),
            Err(e) => return refused(format!("{e:#}")),
        },
    };
    if save == SaveStep::Preview {
        return match prepared.flatten() {
            Some(p) => AllowAnswer {
                ok: true,
                message: format!("add {shown} to profile {profile} in {}", p.shown),
                needs_private: false,
                lines: p.edit.diff,
            },
            None => AllowAnswer {
                ok: true,
                message: format!("profile {profile} allows {shown} already"),
                needs_private: false,
                lines: Vec::new(),
            },
        };
    }
    let target_range = target.private_range();
    let now = crate::runtime::denial_ledger::unix_now();
    let added = match run_rules_store::change(&status_dir(domain), |r| r.allow(target, now)) {
        Ok(added) => added,
        Err(e) => return refused(format!("{e:#}")),
    };
    tracing::info!(target = %shown, added, %profile, "network rule allowed for this run (control centre)");
    let mut message = if added {
        format!("allowed {shown} for this run")
    } else {
        format!("{shown} was allowed for this run already")
    };
    if let Some(range) = target_range {
        message.push_str(&format!(
            " (in {range}: the sandbox can now reach your network there)"
        ));
    }
    let mut lines = Vec::new();
    if let Some(Some(p)) = prepared {
        if let Err(e) = save::write(&p) {
            return refused(format!("{message}; saving it failed: {e:#}"));
        }
        tracing::info!(target = %shown, file = %p.shown, %profile, "network rule added to the profile (control centre)");
        message.push_str(&format!(
            "; added to profile {profile} in {} (from its next start)",
            p.shown
        ));
        lines = p.edit.diff;
    }
    AllowAnswer {
        ok: true,
        message,
        needs_private: false,
        lines,
    }
}

fn prepare(profile: &str, target: &Target) -> anyhow::Result<Option<save::Prepared>> {
    if let Target::Port(addr, _) = target {
        anyhow::bail!(
            "the profile's rules have no ports: allow {addr} (every port) to save it, or keep \
             {target} for this run only"
        );
    }
    let layout = Layout::from_env()?;
    let config = HostConfig::load(&layout)?;
    let p = config.profile(Some(profile))?;
    save::prepare(&layout, &config, &p, target)
}
