//! A Domain's transient runtime resources — Network Sidecar, then Agent Sandbox — brought up
//! in the order SR-5 requires and removed in the order recovery requires (FR-7).

use super::podman::Podman;
use super::runsc_exec::RunscExec;
use super::sidecar_image::SidecarImage;
use super::state_anchor::StateAnchors;
use super::{gvisor, sandbox, sandbox_mounts, sidecar};
use crate::domain::sandbox_lock::SandboxLock;
use crate::domain::Domain;
use crate::profile::AgentProfile;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// The image's CA bundle as the State Anchors' preparation read it (outer None: it failed).
type BundleReceiver = std::sync::mpsc::Receiver<Option<Option<crate::trust::image::ImageBundle>>>;

/// Owner of the Domain's containers; call [`DomainRuntime::tear_down`] when done (dropping it
/// tears down too, reporting errors to the log).
pub struct DomainRuntime {
    podman: Podman,
    domain: Domain,
    marker: PathBuf,
    up: bool,
    /// conmon processes of the containers, noted before removal (see [`wait_for_exit`]).
    conmons: Vec<i32>,
    /// Host pid of the sidecar's PID 1, once up.
    sidecar_pid: Option<u32>,
    /// Host pid of the sandbox's main process (runsc's sandbox), once up.
    sandbox_pid: Option<u32>,
    /// The sandbox's container ID and its conmon's pid, once up (for [`RunscExec`]).
    sandbox_exec: Option<(String, i32)>,
    /// The Escalation Mailbox's request dir (its tmpfs), once mounted.
    mailbox_req: Option<std::os::fd::OwnedFd>,
    /// Held from before the sandbox starts until it has stopped: the last `lazaret run` out
    /// waits for it (see [`crate::domain::sandbox_lock`]).
    sandbox_lock: Option<SandboxLock>,
    /// The sandbox's processes were killed: its container is removed with the sidecar's.
    sandbox_killed: bool,
    /// The containers' IDs, noted at bring-up or before removal (see [`clear_oci_state`]).
    container_ids: Vec<String>,
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
            conmons: Vec::new(),
            sidecar_pid: None,
            sandbox_pid: None,
            sandbox_exec: None,
            mailbox_req: None,
            sandbox_lock: None,
            sandbox_killed: false,
            container_ids: Vec::new(),
        }
    }

    pub fn sandbox_name(&self) -> String {
        self.domain.container_name("sandbox")
    }

    /// Removes what an owner that died may have left (FR-7): the sandbox, then the sidecar.
    /// Returns whether there was anything to recover.
    pub fn recover_leftovers(&mut self) -> anyhow::Result<bool> {
        if !self.marker.exists() {
            return Ok(false);
        }
        tracing::warn!(domain = %self.domain.id, "recovering leftovers of an interrupted run");
        self.remove_containers()
            .context("recovering the leftovers of an interrupted run")?;
        self.release_state_anchors()
            .context("recovering the leftovers of an interrupted run")?;
        let _ = std::fs::remove_file(&self.marker);
        Ok(true)
    }

    /// State Anchors mounted and verified, then the sidecar with its policy installed, then the
    /// sandbox, checked to be gVisor. The caller (the startup leader) has already recovered
    /// leftovers of a dead owner. Returns what the developer must be told (see
    /// [`sandbox_mounts::SandboxMounts::notices`]).
    pub fn bring_up(
        &mut self,
        profile: &AgentProfile,
        image: &SidecarImage,
        images: &Path,
        wrapper: &Path,
    ) -> anyhow::Result<Vec<String>> {
        let anchors = StateAnchors::new(&self.domain, &profile.image, &profile.persistent);
        let planned = sandbox_mounts::plan(&self.domain, profile, &anchors)?;
        for note in &planned.notes {
            tracing::info!(domain = %self.domain.id, "{note}");
        }
        for m in &planned.mounts {
            tracing::debug!(container = %m.container.display(), kind = ?m.kind, "{}", m.why);
        }
        // Issue #32: what the host trusts, read before anything starts.
        let host_trust = crate::trust::sandbox::host_trust(profile)?;
        let read_trust = host_trust.is_some();
        image.ensure(&self.podman, images)?;
        self.mark_up()?;
        let podman = self.podman.clone();
        let runtime_dir = self.domain.runtime_dir.clone();
        let (bundle_tx, bundle_rx) = std::sync::mpsc::channel();
        let (anchors_ref, podman_ref) = (&anchors, &podman);
        let (anchored, mailbox, sidecar_up) = std::thread::scope(|s| {
            // The State Anchors and the mailbox's request dir are mounted while the sidecar
            // comes up and the sandbox is created; all are done before the sandbox starts.
            // The same call reads the image's CA bundle, which the sandbox's creation awaits.
            let anchoring = s.spawn(move || {
                let r = anchors_ref.prepare(podman_ref, read_trust);
                let bundle = r.as_ref().ok().map(|r| r.trust_bundle.clone());
                let _ = bundle_tx.send(bundle);
                r
            });
            let mailbox = s.spawn(|| crate::escalation::mailbox_fs::mount(&podman, &runtime_dir));
            let trust = host_trust.as_ref().map(|h| (h, bundle_rx));
            let up =
                self.sidecar_up_sandbox_created(profile, image, images, wrapper, &planned, trust);
            (anchoring.join(), mailbox.join(), up)
        });
        sidecar_up?;
        self.mailbox_req = Some(mailbox.map_err(|_| {
            anyhow::anyhow!("mounting the mailbox's request dir: the helper thread panicked")
        })??);
        let report = anchored.map_err(|_| {
            anyhow::anyhow!("preparing the State Anchors: the helper thread panicked")
        })??;
        for a in &report.anchors {
            tracing::info!(
                container = %a.container.display(),
                lower = %a.lower.display(),
                kept = a.kept,
                "State Anchor ready"
            );
        }
        self.sandbox_lock = Some(SandboxLock::hold(&self.domain.runtime_dir)?);
        let (podman, domain) = (&self.podman, &self.domain);
        sandbox::start(podman, domain)?;
        // One inspect of both: the sandbox's runtime check, and both conmon pids for teardown.
        let names = [self.sandbox_name(), domain.container_name("sidecar")];
        let out = podman.run(
            "checking that the Agent Sandbox runs under gVisor",
            [
                "inspect",
                "--format",
                gvisor::INSPECT_FORMAT,
                &names[0],
                &names[1],
            ],
        )?;
        let inspected: Vec<gvisor::Inspected> =
            out.lines().filter_map(gvisor::Inspected::parse).collect();
        let Some(sandbox) = inspected.first() else {
            anyhow::bail!(
                "checking that the Agent Sandbox runs under gVisor: podman inspect said {out:?}"
            );
        };
        gvisor::verify_sandbox(sandbox, wrapper)?;
        self.conmons = inspected
            .iter()
            .map(|i| i.conmon_pid)
            .filter(|p| *p > 0)
            .collect();
        self.container_ids = inspected.iter().map(|i| i.id.clone()).collect();
        self.sidecar_pid = inspected.get(1).map(|i| i.pid).filter(|p| *p > 0);
        self.sandbox_pid = Some(sandbox.pid).filter(|p| *p > 0);
        self.sandbox_exec = Some((sandbox.id.clone(), sandbox.conmon_pid));
        Ok(planned.notices)
    }

    /// The Escalation Mailbox, its request dir read through the tmpfs mounted by
    /// [`DomainRuntime::bring_up`].
    pub fn mailbox(&self) -> anyhow::Result<crate::escalation::mailbox::Mailbox> {
        let Some(dir) = &self.mailbox_req else {
            anyhow::bail!("the Escalation Mailbox's request dir is not mounted");
        };
        Ok(
            crate::escalation::mailbox::Mailbox::at(&self.domain.runtime_dir)
                .reading_through(dir.try_clone()?),
        )
    }

    /// Host pid of the running sidecar's PID 1 (the coordinator watches it: fail closed is
    /// automatic, reporting it is not).
    pub fn sidecar_pid(&self) -> Option<u32> {
        self.sidecar_pid
    }

    /// How to start session commands in the running sandbox with runsc directly; the error
    /// says why not (the sessions then use `podman exec`).
    pub fn runsc_exec(&self) -> Result<RunscExec, String> {
        let (id, conmon) = self
            .sandbox_exec
            .as_ref()
            .ok_or("the sandbox is not running")?;
        RunscExec::locate(id, *conmon)
    }

    /// Host pid of the running sandbox's main process (what `podman inspect` calls its pid).
    pub fn sandbox_pid(&self) -> Option<u32> {
        self.sandbox_pid
    }

    /// The sidecar created and started with its policy installed (ready), and the sandbox
    /// created meanwhile — not started: it can only start once the policy is in place (SR-5).
    fn sidecar_up_sandbox_created(
        &mut self,
        profile: &AgentProfile,
        image: &SidecarImage,
        images: &Path,
        wrapper: &Path,
        planned: &sandbox_mounts::SandboxMounts,
        trust: Option<(&crate::trust::HostTrust, BundleReceiver)>,
    ) -> anyhow::Result<()> {
        let policy = profile.network.clone();
        if let Err(e) = sidecar::create(&self.podman, &self.domain, &image.tag, &policy) {
            let msg = format!("{e:#}");
            if msg.contains("already in use") {
                tracing::warn!("removing leftover containers of this Domain");
                self.remove_containers()?;
                self.mark_up()?;
            } else if msg.contains("image not known") || msg.contains("no such image") {
                image.forget(images);
                image.ensure(&self.podman, images)?;
            } else {
                return Err(e);
            }
            sidecar::create(&self.podman, &self.domain, &image.tag, &policy)?;
        }
        let (podman, domain) = (&self.podman, &self.domain);
        let starting = sidecar::start(podman, domain)?;
        let trust = match trust {
            Some((host, rx)) => {
                // None: the State Anchors failed, which bring_up reports.
                let image = rx.recv().ok().flatten().flatten();
                crate::trust::sandbox::for_sandbox(&domain.runtime_dir, host, image.as_ref())
            }
            None => Ok(None),
        };
        // As a failed creation: the sidecar's start is still awaited.
        let created = trust.and_then(|trust| {
            sandbox::create(
                podman,
                domain,
                profile,
                wrapper,
                &planned.mounts,
                trust.as_ref(),
            )
        });
        let ready = sidecar::wait_ready(domain, starting);
        created?;
        ready
    }

    /// Removes a container; once more after a failure, because podman's removal can race with
    /// conmon's own cleanup of the same container (seen: runsc's filestore file already gone).
    fn remove(&self, role: &str) -> anyhow::Result<()> {
        let name = self.domain.container_name(role);
        let step = format!("removing the {role} container");
        let args = ["rm", "--force", "--ignore", "--time", "0", &name];
        if let Err(e) = self.podman.run(&step, args) {
            tracing::warn!("{e:#}; trying again");
            std::thread::sleep(std::time::Duration::from_millis(200));
            self.podman.run(&step, args)?;
        }
        Ok(())
    }

    /// The stopped sandbox's container and the sidecar's: `--depend` removes the sandbox (which
    /// uses the sidecar's network) first. Should that fail, one by one.
    fn remove_killed_sandbox_with_sidecar(&self) -> anyhow::Result<()> {
        let sidecar = self.domain.container_name("sidecar");
        let args = ["rm", "--force", "--depend", "--time", "0", &sidecar];
        if let Err(e) = self
            .podman
            .run("removing the sandbox and sidecar containers", args)
        {
            tracing::warn!("{e:#}; removing them one by one");
            self.remove("sandbox")?;
            self.remove("sidecar")?;
        }
        Ok(())
    }

    /// From here on containers may exist: the marker tells a later owner to recover them.
    fn mark_up(&mut self) -> anyhow::Result<()> {
        std::fs::write(&self.marker, b"sandbox sidecar\n")
            .context("writing the Domain's resource marker")?;
        self.up = true;
        Ok(())
    }

    /// Stops and removes the Agent Sandbox: its processes are killed first (a few ms), so that
    /// the sandbox lock can be let go before `podman rm` (~150 ms) removes the container.
    pub fn stop_sandbox(&mut self) -> anyhow::Result<()> {
        super::runsc_exec::withdraw(&self.domain.runtime_dir);
        if let (Some(pid), Some((id, conmon))) = (self.sandbox_pid, &self.sandbox_exec) {
            let t = std::time::Instant::now();
            let c = super::sandbox_kill::Container {
                pid,
                conmon: *conmon,
                id,
            };
            let n = super::sandbox_kill::kill_tree(&c, SANDBOX_KILL_WAIT);
            tracing::debug!(
                killed = n,
                ms = t.elapsed().as_millis() as u64,
                "sandbox processes killed"
            );
            if n > 0 {
                // Nothing of the sandbox runs any more: its container (stopped) goes with the
                // sidecar's, in one podman process instead of two (issue #18).
                self.sandbox_stopped();
                self.sandbox_killed = true;
                return Ok(());
            }
        }
        self.note_conmons();
        let removed = self.remove("sandbox");
        if removed.is_ok() {
            self.sandbox_stopped();
        }
        removed
    }

    /// The sandbox lock says the sandbox stopped and is let go.
    fn sandbox_stopped(&mut self) {
        if let Some(lock) = self.sandbox_lock.take() {
            lock.stopped();
        }
    }

    /// Stops and removes the Network Sidecar (after the sandbox: podman refuses otherwise),
    /// and waits until the containers' conmon processes are gone too.
    pub fn stop_sidecar(&mut self) -> anyhow::Result<()> {
        crate::fault::pause_point("stop-sidecar");
        self.note_conmons();
        if std::mem::take(&mut self.sandbox_killed) {
            self.remove_killed_sandbox_with_sidecar()?;
        } else {
            self.remove("sidecar")?;
        }
        // The run's denial ledger outlives the runtime dir (a reboot empties it).
        let status = super::sidecar::status_dir(&self.domain);
        let history = super::ledger_history::history_dir(&self.domain.root);
        if let Err(e) = super::ledger_history::archive(&status, &history) {
            tracing::warn!("keeping the run's denial ledger: {e}");
        }
        wait_for_exit(
            &std::mem::take(&mut self.conmons),
            "conmon",
            CONMON_EXIT_WAIT,
        );
        // Both containers are removed and their conmons gone: what their runtimes still keep
        // of them is stale (it is, when a conmon was killed: see `clear_oci_state`).
        if let Some(xdg_runtime) = self.domain.runtime_dir.parent().and_then(Path::parent) {
            for id in std::mem::take(&mut self.container_ids) {
                let strays = kill_strays(&id);
                if strays > 0 {
                    tracing::warn!(container = %id, strays, "killed runtime processes the removed container left (its conmon had died while it was created)");
                }
                if clear_oci_state(xdg_runtime, &id) {
                    tracing::warn!(container = %id, "removed the OCI runtime state the removed container left (its conmon had died)");
                }
            }
        }
        Ok(())
    }

    /// Unmounts the mailbox's request dir and the State Anchors (after the sandbox and the
    /// sidecar, §3.2); the Domain's transient resources are then all gone.
    pub fn release_state_anchors(&mut self) -> anyhow::Result<()> {
        self.mailbox_req = None;
        StateAnchors::release_all(&self.podman, &self.domain.runtime_dir)?;
        let _ = std::fs::remove_file(&self.marker);
        self.up = false;
        Ok(())
    }

    /// `podman rm` returns before conmon has run the container's exit command and exited:
    /// note the conmon pids first, so that teardown can wait for them (nothing of the Domain
    /// may outlive it, FR-6).
    fn note_conmons(&mut self) {
        if !self.conmons.is_empty() {
            return;
        }
        let names = [
            self.domain.container_name("sandbox"),
            self.domain.container_name("sidecar"),
        ];
        let args = [
            "inspect",
            "--format",
            "{{.State.ConmonPid}} {{.ID}}",
            &names[0],
            &names[1],
        ];
        // A missing container makes inspect fail; the others are still printed.
        if let Ok(out) = self
            .podman
            .output("finding the containers' conmon processes", args)
        {
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                let mut fields = line.split_whitespace();
                let pid = fields.next().and_then(|p| p.parse::<i32>().ok());
                let (Some(pid), Some(id)) = (pid, fields.next()) else {
                    continue;
                };
                if pid > 0 {
                    self.conmons.push(pid);
                }
                if !self.container_ids.iter().any(|known| known == id) {
                    self.container_ids.push(id.to_owned());
                }
            }
        }
    }

    /// Removes the sandbox, then the sidecar: the order recovery requires (FR-7). (One
    /// `podman rm --depend` for both was measured ~80 ms faster, but kept podman's removals
    /// from following that order step by step.)
    fn remove_containers(&mut self) -> anyhow::Result<()> {
        self.stop_sandbox()?;
        self.stop_sidecar()
    }

    /// One attempt: when it fails, the resource marker stays and the next start recovers.
    pub fn tear_down(&mut self) -> anyhow::Result<()> {
        if !self.up {
            return Ok(());
        }
        self.up = false;
        self.remove_containers()
            .and_then(|_| self.release_state_anchors())
            .context("tearing down the Domain's transient resources")
    }
}

/// How long stopping the sandbox waits for its killed processes to exit.
const SANDBOX_KILL_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// How long teardown waits for the containers' conmon processes to exit.
const CONMON_EXIT_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Is `id` a container ID as podman makes them (64 hex digits)?
fn container_id(id: &str) -> bool {
    super::runsc_exec::is_container_id(id)
}

/// Kills this user's runtime processes that still name the removed container `id` — the runsc
/// wrapper and runsc's sandbox and gofer, whose conmon was killed while `create` ran: podman
/// then has no pid of them and `podman rm` leaves them running (found by
/// `tests/fault_campaign.rs`). Killing the wrapper's init ends its PID namespace. Waits (2 s at
/// most) until they are gone; returns how many there were.
fn kill_strays(id: &str) -> usize {
    use std::os::unix::fs::MetadataExt;
    if !container_id(id) {
        return 0;
    }
    let me = nix::unistd::geteuid().as_raw();
    let runtimes = ["lazaret-runsc", "runsc", "runsc-sandbox", "runsc-gofer"];
    let mut killed = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if entry.metadata().map(|m| m.uid()).ok() != Some(me) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let argv: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let program = argv
            .first()
            .and_then(|a| a.rsplit('/').next())
            .unwrap_or("");
        if runtimes.contains(&program) && argv.iter().any(|a| a.contains(id)) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
            killed.push(pid);
        }
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    for pid in &killed {
        // Gone, or a zombie its parent has yet to reap.
        while std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
        }) && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    killed.len()
}

/// Removes what the OCI runtime keeps of container `id` under `$XDG_RUNTIME_DIR` (rootless
/// podman's runtime roots): runsc's state, lock and socket, runc's state dir — what their
/// `delete` removes. Podman has the runtime delete a container's state only through its conmon;
/// when conmon died first (killed), `podman rm` removes the container and leaves that state
/// behind (podman 4.3; found by `tests/fault_campaign.rs`). Called once the container is removed
/// and its conmon has exited, when nothing of it is left to use that state. Anything but a
/// 64-hex-digit ID is left alone. Returns whether there was anything to remove.
fn clear_oci_state(xdg_runtime: &Path, id: &str) -> bool {
    if !container_id(id) {
        return false;
    }
    let runsc = xdg_runtime.join("runsc");
    let mut removed = false;
    for name in [
        format!("{id}_sandbox:{id}.state"),
        format!("{id}_sandbox:{id}.lock"),
        format!("runsc-{id}.sock"),
    ] {
        removed |= std::fs::remove_file(runsc.join(name)).is_ok();
    }
    removed | std::fs::remove_dir_all(xdg_runtime.join("runc").join(id)).is_ok()
}

/// Waits until each pid has exited (or is no longer a process named `name`: pids get reused).
fn wait_for_exit(pids: &[i32], name: &str, limit: std::time::Duration) {
    let deadline = std::time::Instant::now() + limit;
    for pid in pids {
        let path = format!("/proc/{pid}/cmdline");
        loop {
            let alive = std::fs::read(&path)
                .map(|c| String::from_utf8_lossy(&c).contains(name))
                .unwrap_or(false);
            if !alive {
                break;
            }
            if std::time::Instant::now() > deadline {
                tracing::warn!(pid, "{name} still runs after teardown");
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

impl Drop for DomainRuntime {
    fn drop(&mut self) {
        if let Err(e) = self.tear_down() {
            tracing::error!("{e:#}");
        }
    }
}

#[cfg(test)]
mod oci_state_tests {
    use super::clear_oci_state;

    #[test]
    fn a_dead_conmons_container_state_goes_and_nothing_else() -> anyhow::Result<()> {
        let t = tempfile::tempdir()?;
        let (a, b) = ("a".repeat(64), "b".repeat(64));
        std::fs::create_dir_all(t.path().join("runsc"))?;
        for id in [&a, &b] {
            std::fs::create_dir_all(t.path().join("runc").join(id))?;
            std::fs::write(t.path().join("runc").join(id).join("state.json"), "{}")?;
            for name in [
                format!("{id}_sandbox:{id}.state"),
                format!("{id}_sandbox:{id}.lock"),
                format!("runsc-{id}.sock"),
            ] {
                std::fs::write(t.path().join("runsc").join(name), "")?;
            }
        }
        assert!(clear_oci_state(t.path(), &a));
        assert!(!clear_oci_state(t.path(), &a), "nothing left to remove");
        assert!(!clear_oci_state(t.path(), "../runc"));
        let left = |dir: &str| -> anyhow::Result<Vec<String>> {
            let mut v: Vec<String> = std::fs::read_dir(t.path().join(dir))?
                .map(|e| Ok(e?.file_name().to_string_lossy().into_owned()))
                .collect::<anyhow::Result<_>>()?;
            v.sort();
            Ok(v)
        };
        assert_eq!(left("runc")?, vec![b.clone()]);
        assert_eq!(left("runsc")?.len(), 3);
        assert!(left("runsc")?.iter().all(|n| n.contains(&b)));
        Ok(())
    }
}
