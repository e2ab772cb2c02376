//! A Domain's transient runtime resources — Network Sidecar, then Agent Sandbox — brought up
//! in the order SR-5 requires and removed in the order recovery requires (FR-7).

use super::network_policy::NetworkPolicy;
use super::podman::Podman;
use super::sidecar_image::SidecarImage;
use super::{gvisor, sandbox, sidecar};
use crate::domain::Domain;
use crate::profile::AgentProfile;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// Owner of the Domain's containers; call [`DomainRuntime::tear_down`] when done (dropping it
/// tears down too, reporting errors to the log).
pub struct DomainRuntime {
    podman: Podman,
    domain: Domain,
    marker: PathBuf,
    up: bool,
}

/// The resource marker: present while containers of the Domain may exist.
pub fn marker_path(domain: &Domain) -> PathBuf {
    domain.runtime_dir.join("resources")
}

impl DomainRuntime {
    pub fn new(podman: Podman, domain: Domain) -> DomainRuntime {
        DomainRuntime {
            marker: marker_path(&domain),
            podman,
            domain,
            up: false,
        }
    }

    pub fn sandbox_name(&self) -> String {
        self.domain.container_name("sandbox")
    }

    /// Removes what an owner that died may have left (FR-7): the sandbox, then the sidecar.
    /// Returns whether there was anything to recover.
    pub fn recover_leftovers(&self) -> anyhow::Result<bool> {
        if !self.marker.exists() {
            return Ok(false);
        }
        tracing::warn!(domain = %self.domain.id, "recovering leftovers of an interrupted run");
        self.remove_containers()
            .context("recovering the leftovers of an interrupted run")?;
        let _ = std::fs::remove_file(&self.marker);
        Ok(true)
    }

    /// Sidecar first with its policy installed, then the sandbox, checked to be gVisor.
    pub fn bring_up(
        &mut self,
        profile: &AgentProfile,
        image: &SidecarImage,
        images: &Path,
        wrapper: &Path,
    ) -> anyhow::Result<()> {
        self.recover_leftovers()?;
        image.ensure(&self.podman, images)?;
        std::fs::write(&self.marker, b"sandbox sidecar\n")
            .context("writing the Domain's resource marker")?;
        self.up = true;
        let policy = NetworkPolicy::default();
        let (podman, domain) = (&self.podman, &self.domain);
        if let Err(e) = sidecar::create(podman, domain, &image.tag, &policy) {
            let msg = format!("{e:#}");
            if msg.contains("already in use") {
                tracing::warn!("removing leftover containers of this Domain");
                self.remove_containers()?;
            } else if msg.contains("image not known") || msg.contains("no such image") {
                image.forget(images);
                image.ensure(podman, images)?;
            } else {
                return Err(e);
            }
            sidecar::create(podman, domain, &image.tag, &policy)?;
        }
        let starting = sidecar::start(podman, domain)?;
        // The sandbox is created (not started) while the sidecar starts: it can only start once
        // the policy is installed (SR-5).
        let created = sandbox::create(podman, domain, profile, wrapper);
        let ready = sidecar::wait_ready(domain, starting);
        created?;
        ready?;
        sandbox::start(podman, domain)?;
        gvisor::verify_container(podman, &self.sandbox_name(), wrapper)?;
        Ok(())
    }

    fn remove(&self, role: &str) -> anyhow::Result<()> {
        let name = self.domain.container_name(role);
        self.podman.run(
            &format!("removing the {role} container"),
            ["rm", "--force", "--ignore", "--time", "0", &name],
        )?;
        Ok(())
    }

    /// Stops and removes the Agent Sandbox.
    pub fn stop_sandbox(&self) -> anyhow::Result<()> {
        self.remove("sandbox")
    }

    /// Stops and removes the Network Sidecar (after the sandbox: podman refuses otherwise).
    pub fn stop_sidecar(&self) -> anyhow::Result<()> {
        self.remove("sidecar")
    }

    /// Removes the sandbox, then the sidecar — the order recovery requires (FR-7) — in one
    /// podman call: `rm --depend` on the sidecar removes the containers that depend on it (the
    /// sandbox) before it, and saves a podman start-up (~100 ms of a cold run's teardown).
    pub fn stop_sandbox_then_sidecar(&self) -> anyhow::Result<()> {
        let name = self.domain.container_name("sidecar");
        self.podman.run(
            "removing the Agent Sandbox, then the Network Sidecar",
            [
                "rm", "--force", "--ignore", "--depend", "--time", "0", &name,
            ],
        )?;
        // A sandbox whose sidecar was already gone is not a dependent any more.
        self.stop_sandbox()
    }

    fn remove_containers(&self) -> anyhow::Result<()> {
        self.stop_sandbox_then_sidecar()
    }

    pub fn tear_down(&mut self) -> anyhow::Result<()> {
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

impl Drop for DomainRuntime {
    fn drop(&mut self) {
        if let Err(e) = self.tear_down() {
            tracing::error!("{e:#}");
        }
    }
}
