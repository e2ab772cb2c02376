//! One Client Session of `lazaret run`: bring up the Domain's runtime (Network Sidecar first,
//! then the Agent Sandbox), attach the command, tear the transient resources down at the end.
//!
//! Until the Session Coordinator exists, the CLI process owns the Domain for the length of one
//! session, under the Domain's exclusive lifecycle lock (OR-1).

use crate::domain::layout::Layout;
use crate::domain::lock::LifecycleLock;
use crate::domain::Domain;
use crate::profile::AgentProfile;
use crate::runtime::network_policy::NetworkPolicy;
use crate::runtime::podman::Podman;
use crate::runtime::sandbox::{self, ExecRequest};
use crate::runtime::sidecar_image::{sibling_binary, SidecarImage};
use crate::runtime::{gvisor, sidecar};
use crate::terminal;
use anyhow::{bail, Context};
use std::path::PathBuf;
use std::time::Instant;

/// What `lazaret run` was asked to do.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub profile: Option<String>,
    /// Empty: the profile's default command.
    pub command: Vec<String>,
}

/// Lazaret refuses to run as root (SR-1): rootless operation is part of the isolation.
pub fn refuse_root() -> anyhow::Result<()> {
    if nix::unistd::geteuid().is_root() {
        bail!(
            "refusing to run as root: Lazaret runs agents in a rootless sandbox (SR-1). Run it as \
             your normal user; to set up a machine as root, use scripts/setup, which creates an \
             unprivileged user (e.g. runuser -u lazaret -- lazaret run)"
        );
    }
    Ok(())
}

/// Runs one command in the Domain of the current workspace and returns its exit status.
pub fn run(layout: &Layout, opts: &RunOptions) -> anyhow::Result<i32> {
    refuse_root()?;
    let t0 = Instant::now();
    let profile = AgentProfile::resolve(opts.profile.as_deref())?;
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let domain = Domain::resolve(layout, &profile.name, &cwd)?;
    domain.prepare_dirs(layout)?;
    tracing::info!(domain = %domain.id, workspace = %domain.workspace.root.display(), "run");
    let Some(_lock) = LifecycleLock::try_acquire(&domain.runtime_dir)? else {
        bail!(
            "the Domain of {} (profile {}) is already running in another lazaret process; \
             wait for it to end (joining a running Domain comes with the Session Coordinator)",
            domain.workspace.root.display(),
            profile.name
        );
    };
    let podman = Podman::default();
    let wrapper = sibling_binary("lazaret-runsc")?;
    let image = SidecarImage::locate()?;
    let mut resources = DomainResources::new(&podman, &domain);
    let images = layout.storage_root().join("images");
    resources.bring_up(&profile, &image, &images, &wrapper)?;
    tracing::info!(ms = t0.elapsed().as_millis() as u64, "Domain ready");

    let command = if opts.command.is_empty() {
        profile.command.clone()
    } else {
        opts.command.clone()
    };
    let tty = terminal::stdin_is_terminal();
    let req = ExecRequest {
        command,
        workdir: domain.workspace.sandbox_cwd().display().to_string(),
        tty,
        term: tty.then(|| std::env::var("TERM").unwrap_or_else(|_| "xterm-256color".into())),
    };
    let args = sandbox::exec_args(&domain, &req);
    let program = std::env::var("LAZARET_PODMAN").unwrap_or_else(|_| "podman".to_owned());
    let code = if tty {
        terminal::passthrough::run_in_pty(&program, &args)?
    } else {
        terminal::passthrough::run_with_pipes(&program, &args)?
    };
    tracing::info!(code, "command ended");
    resources.tear_down()?;
    Ok(code)
}

/// The Domain's transient runtime resources; dropped ⇒ torn down (sandbox, then sidecar).
struct DomainResources<'a> {
    podman: &'a Podman,
    domain: &'a Domain,
    marker: PathBuf,
    up: bool,
}

impl<'a> DomainResources<'a> {
    fn new(podman: &'a Podman, domain: &'a Domain) -> Self {
        DomainResources {
            podman,
            domain,
            marker: domain.runtime_dir.join("resources"),
            up: false,
        }
    }

    fn bring_up(
        &mut self,
        profile: &AgentProfile,
        image: &SidecarImage,
        images: &std::path::Path,
        wrapper: &std::path::Path,
    ) -> anyhow::Result<()> {
        // A marker left by an owner that died: its containers may still exist (FR-7).
        if self.marker.exists() {
            tracing::warn!("recovering leftovers of an interrupted run");
            self.remove_containers()?;
        }
        image.ensure(self.podman, images)?;
        std::fs::write(&self.marker, b"sandbox sidecar\n")
            .context("writing the Domain's resource marker")?;
        self.up = true;
        let policy = NetworkPolicy::default();
        if let Err(e) = sidecar::create(self.podman, self.domain, &image.tag, &policy) {
            let msg = format!("{e:#}");
            if msg.contains("already in use") {
                tracing::warn!("removing leftover containers of this Domain");
                self.remove_containers()?;
            } else if msg.contains("image not known") || msg.contains("no such image") {
                image.forget(images);
                image.ensure(self.podman, images)?;
            } else {
                return Err(e);
            }
            sidecar::create(self.podman, self.domain, &image.tag, &policy)?;
        }
        let starting = sidecar::start(self.podman, self.domain)?;
        // The sandbox is created (not started) while the sidecar starts: it can only start once
        // the policy is installed (SR-5).
        let created = sandbox::create(self.podman, self.domain, profile, wrapper);
        let ready = sidecar::wait_ready(self.domain, starting);
        created?;
        ready?;
        sandbox::start(self.podman, self.domain)?;
        gvisor::verify_container(self.podman, &self.domain.container_name("sandbox"), wrapper)?;
        Ok(())
    }

    /// Removes the sandbox, then the sidecar: the order recovery requires (FR-7), and podman
    /// refuses to remove a sidecar another container still depends on.
    fn remove_containers(&self) -> anyhow::Result<()> {
        for role in ["sandbox", "sidecar"] {
            let name = self.domain.container_name(role);
            self.podman.run(
                &format!("removing the {role} container"),
                ["rm", "--force", "--ignore", "--time", "0", &name],
            )?;
        }
        Ok(())
    }

    fn tear_down(&mut self) -> anyhow::Result<()> {
        if !self.up {
            return Ok(());
        }
        self.remove_containers()
            .context("tearing down the Domain's transient resources")?;
        let _ = std::fs::remove_file(&self.marker);
        self.up = false;
        Ok(())
    }
}

impl Drop for DomainResources<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.tear_down() {
            tracing::error!("{e:#}");
            eprintln!("lazaret: warning: {e:#}");
        }
    }
}
