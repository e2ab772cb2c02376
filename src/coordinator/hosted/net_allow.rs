//! A control centre allows a refused destination (issue #17: the TUI's denials panel): for the
//! Domain's current run, and on request into the profile — the same rules as `lazaret net
//! allow` ([`crate::network::run_rules`], [`crate::config::save`]) — or refuses one for the
//! run, as `lazaret net deny` does (under `default = "ask"`, the answer "no" to a held
//! connection or name). Blocking (the sidecar acknowledges within half a second): callers run
//! it off the coordinator's event loop.

use super::SessionHost;
use crate::config::{save, HostConfig};
use crate::domain::layout::Layout;
use crate::domain::Domain;
use crate::network::run_rules::RunRules;
use crate::network::run_rules::{Target, TargetError};
use crate::runtime::{run_rules_store, sidecar::status_dir};
use lazaret_protocol::messages::{AllowAnswer, SaveStep};
use std::path::Path;

impl SessionHost {
    /// What [`allow_destination`] and [`deny_destination`] need of this Domain.
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

fn done(message: String, lines: Vec<String>) -> AllowAnswer {
    AllowAnswer {
        ok: true,
        message,
        needs_private: false,
        lines,
    }
}

/// Changes the run's rules in the sidecar's status dir `dir` (`edit` gets them and the time),
/// waiting until the sidecar applied them; what `edit` returned (whether the rule is new), or
/// the refusal to answer.
fn change_run(
    dir: &Path,
    edit: impl FnOnce(&mut RunRules, u64) -> Result<bool, String>,
) -> Result<bool, AllowAnswer> {
    let now = crate::runtime::denial_ledger::unix_now();
    run_rules_store::change(dir, |r| edit(r, now)).map_err(|e| refused(format!("{e:#}")))
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
            Some(p) => done(
                format!("add {shown} to profile {profile} in {}", p.shown),
                p.edit.diff,
            ),
            None => done(
                format!("profile {profile} allows {shown} already"),
                Vec::new(),
            ),
        };
    }
    let target_range = target.private_range();
    // A name's owner chooses what its allow opens: said (an address rule says it itself).
    let opens = target.name().map(|_| target.opens(&[]));
    let added = match change_run(&status_dir(domain), |r, now| r.allow(target, now)) {
        Ok(added) => added,
        Err(answer) => return answer,
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
    if let Some(opens) = opens {
        message.push_str(&format!(" — it allows {opens}"));
    }
    done(message, lines)
}

/// Refuses `target` for the run of `domain` (profile `profile`), over every allow (one of
/// this run's for the same target ends) — `lazaret net deny`; under `default = "ask"` a held
/// connection or name is refused at once. Any target may be refused (no private check).
pub fn deny_destination(
    domain: &Domain,
    profile: &str,
    networking: bool,
    target: &str,
) -> AllowAnswer {
    if !networking {
        return refused(format!(
            "networking is off for profile {profile}: every destination is refused already"
        ));
    }
    deny_in(&status_dir(domain), profile, target)
}

/// [`deny_destination`] with the sidecar's status dir `dir`.
fn deny_in(dir: &Path, profile: &str, target: &str) -> AllowAnswer {
    let target = match Target::parse(target) {
        Ok(t) => t,
        Err(e) => return refused(e.to_string()),
    };
    let shown = target.to_string();
    let added = match change_run(dir, |r, now| r.deny(target, now)) {
        Ok(added) => added,
        Err(answer) => return answer,
    };
    tracing::info!(target = %shown, added, %profile, "network destination refused for this run (control centre)");
    let message = if added {
        format!("refused {shown} for this run")
    } else {
        format!("{shown} was refused for this run already")
    };
    done(message, Vec::new())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::run_rules::{APPLIED_FILE, RULES_FILE};

    /// A status dir whose sidecar acknowledges every change (`ack`: its answer line).
    fn status(ack: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tmp");
        // A generation past any the tests reach: the store takes it as the acknowledgement.
        std::fs::write(dir.path().join(APPLIED_FILE), format!("1000 {ack}\n")).expect("ack");
        dir
    }

    fn rules(dir: &Path) -> RunRules {
        run_rules_store::load(dir).expect("rules")
    }

    #[test]
    fn a_held_destination_is_refused_for_the_run_and_again_says_so() {
        let dir = status("ok");
        let a = deny_in(dir.path(), "py", "203.0.113.7:443");
        assert!(a.ok, "{a:?}");
        assert_eq!(a.message, "refused 203.0.113.7:443 for this run");
        assert!(a.lines.is_empty() && !a.needs_private);
        let r = rules(dir.path());
        assert_eq!(r.deny.len(), 1);
        assert_eq!(r.deny[0].target.to_string(), "203.0.113.7:443");

        let again = deny_in(dir.path(), "py", "203.0.113.7:443");
        assert!(again.ok);
        assert_eq!(
            again.message,
            "203.0.113.7:443 was refused for this run already"
        );

        // A name, and a private address (refusing needs no confirmation).
        assert!(deny_in(dir.path(), "py", "registry.example.org").ok);
        assert!(deny_in(dir.path(), "py", "10.1.2.3").ok);
        assert_eq!(rules(dir.path()).deny.len(), 3);
    }

    #[test]
    fn a_deny_ends_the_runs_allow_of_the_same_target() {
        let dir = status("ok");
        run_rules_store::change(dir.path(), |r| {
            r.allow(Target::parse("registry.example.org").expect("target"), 1)
        })
        .expect("allowed");
        assert_eq!(rules(dir.path()).allow.len(), 1);
        assert!(deny_in(dir.path(), "py", "registry.example.org").ok);
        let r = rules(dir.path());
        assert!(r.allow.is_empty());
        assert_eq!(r.deny.len(), 1);
    }

    #[test]
    fn a_bad_target_or_a_refusing_sidecar_is_answered_with_why() {
        let dir = status("ok");
        let a = deny_in(dir.path(), "py", "10.0.0.0/8");
        assert!(!a.ok);
        assert!(
            a.message.contains("a prefix is a profile rule"),
            "{}",
            a.message
        );
        let a = deny_in(dir.path(), "py", "");
        assert!(!a.ok);
        assert!(!dir.path().join(RULES_FILE).exists(), "nothing was written");

        let dir = status("failed: nft: no such set");
        let a = deny_in(dir.path(), "py", "203.0.113.7:443");
        assert!(!a.ok);
        assert!(
            a.message.contains("refused the rules: nft: no such set"),
            "{}",
            a.message
        );
        assert!(
            rules(dir.path()).deny.is_empty(),
            "the change was taken back"
        );
    }
}
