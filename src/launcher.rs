//! The engine's side of the front ends ([`Launcher`] of `lazaret-client`): resolving a
//! workspace and profile with the developer's configuration, and opening a link to the
//! Domain's Session Coordinator — starting it (and recovering leftovers) when none runs.

use crate::coordinator::client::Registration;
use crate::coordinator::{launch, paths};
use crate::domain::layout::Layout;
use crate::session::{RunOptions, SessionPlan};
use lazaret_client::connection::DomainAddress;
use lazaret_client::link::DomainLink;
use lazaret_client::target::{Launcher, LinkEvents, Target};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub struct EngineLauncher {
    layout: Layout,
    /// Resolved plans by Domain ID (a link needs the Domain's runtime dir and lock).
    plans: Mutex<HashMap<String, Arc<SessionPlan>>>,
}

/// What a front end needs of a resolved plan.
pub fn target_of(plan: &SessionPlan) -> Target {
    Target {
        address: DomainAddress {
            socket: paths::socket(&plan.domain),
            profile: plan.profile.name.clone(),
            domain_id: plan.domain.id.clone(),
            workspace: plan.domain.workspace.root.clone(),
        },
        command: plan.command.clone(),
        sandbox_cwd: plan.domain.workspace.sandbox_cwd(),
        fingerprint: plan.fingerprint.clone(),
        terminal: plan.profile.terminal,
    }
}

impl EngineLauncher {
    pub fn new(layout: Layout) -> Arc<EngineLauncher> {
        Arc::new(EngineLauncher {
            layout,
            plans: Mutex::new(HashMap::new()),
        })
    }

    fn plan_of(&self, target: &Target) -> anyhow::Result<Arc<SessionPlan>> {
        if let Some(plan) = self
            .plans
            .lock()
            .ok()
            .and_then(|m| m.get(&target.domain_id()).cloned())
        {
            return Ok(plan);
        }
        let plan = Arc::new(SessionPlan::in_dir(
            &self.layout,
            &RunOptions {
                profile: Some(target.address.profile.clone()),
                command: Vec::new(),
                linger: None,
            },
            &target.address.workspace,
        )?);
        if let Ok(mut m) = self.plans.lock() {
            m.insert(target.domain_id(), plan.clone());
        }
        Ok(plan)
    }
}

impl Launcher for EngineLauncher {
    fn resolve(&self, dir: &Path, profile: Option<&str>) -> anyhow::Result<Target> {
        let plan = SessionPlan::in_dir(
            &self.layout,
            &RunOptions {
                profile: profile.map(str::to_owned),
                command: Vec::new(),
                linger: None,
            },
            dir,
        )?;
        let target = target_of(&plan);
        if let Ok(mut m) = self.plans.lock() {
            m.insert(target.domain_id(), Arc::new(plan));
        }
        Ok(target)
    }

    fn open_link(
        &self,
        rt: &tokio::runtime::Handle,
        target: &Target,
        label: &str,
        events: LinkEvents,
    ) -> anyhow::Result<DomainLink> {
        let plan = self.plan_of(target)?;
        let reg = Registration {
            domain: &plan.domain,
            profile: &plan.profile.name,
            fingerprint: &plan.fingerprint,
            linger: None,
        };
        launch::join_or_start_with(&reg, |_| {
            let events = events.clone();
            DomainLink::open(rt, target.address.clone(), label, move |e| events(e))
        })
    }

    fn wait_if_last(&self, target: &Target, ended: &[String]) {
        if let Ok(plan) = self.plan_of(target) {
            crate::detachable::wait_if_last(&plan, ended);
        }
    }

    fn runtime_root(&self) -> anyhow::Result<PathBuf> {
        self.layout.runtime_root()
    }

    /// The command runs on a thread of its own (its output discarded, its failure logged), so
    /// that a slow or stuck command never holds the TUI up.
    fn alert(&self, argv: &[String], event: &str) {
        let (argv, event) = (argv.to_vec(), format!("{event}\n"));
        std::thread::spawn(move || {
            if let Err(e) = run_alert(&argv, &event) {
                tracing::warn!(command = ?argv, "the alert command failed: {e:#}");
            }
        });
    }
}

fn run_alert(argv: &[String], event: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let Some((program, args)) = argv.split_first() else {
        return Ok(());
    };
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        // A command that does not read its stdin is fine.
        let _ = stdin.write_all(event.as_bytes());
    }
    let status = child.wait()?;
    anyhow::ensure!(status.success(), "{status}");
    Ok(())
}
