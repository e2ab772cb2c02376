//! The Network Sidecar: a trusted runc container that owns the Domain's network namespace and
//! installs its egress policy before the Agent Sandbox may start (SR-5).

use super::network_policy::NetworkPolicy;
use super::podman::Podman;
use super::{DOMAIN_LABEL, ROLE_LABEL};
use crate::domain::Domain;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// How long the sidecar may take to report its policy installed.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// The sidecar's host-private status dir: policy in, `ready`/`failed` out.
pub fn status_dir(domain: &Domain) -> PathBuf {
    domain.runtime_dir.join("sidecar")
}

/// `podman create` arguments of the sidecar (pure, for tests and review).
pub fn create_args(
    domain: &Domain,
    image: &str,
    status_dir: &Path,
    policy: &NetworkPolicy,
) -> Vec<String> {
    // The host's loopback is reachable through slirp4netns' gateway only for a profile that
    // lists host services (the policy then opens exactly those ports of it).
    let network = if policy.enabled && !policy.host_services.is_empty() {
        "slirp4netns:allow_host_loopback=true"
    } else {
        "slirp4netns"
    };
    let mut a: Vec<String> = vec![
        "create".into(),
        "--name".into(),
        domain.container_name("sidecar"),
        "--label".into(),
        format!("{DOMAIN_LABEL}={}", domain.id),
        "--label".into(),
        format!("{ROLE_LABEL}=sidecar"),
        "--pull=never".into(),
        "--runtime".into(),
        "runc".into(),
        "--network".into(),
        network.into(),
        "--cap-drop=all".into(),
        "--cap-add=NET_ADMIN".into(),
        // The DNS forwarder listens on port 53.
        "--cap-add=NET_BIND_SERVICE".into(),
        "--security-opt=no-new-privileges".into(),
        "--read-only".into(),
        // Not the host's cgroup namespace (podman's default on cgroup v1; SR-12 in spirit: the
        // sidecar shares only its network namespace, with the sandbox).
        "--cgroupns=private".into(),
        // The sandbox (sharing this namespace and its resolver configuration) resolves through
        // the sidecar's DNS forwarder only.
        format!("--dns={}", super::network_policy::DNS_LISTEN),
        "--sysctl".into(),
        "net.ipv6.conf.all.disable_ipv6=1".into(),
        "--sysctl".into(),
        "net.ipv6.conf.default.disable_ipv6=1".into(),
    ];
    // runc needs explicit limits here: podman's defaults exceed what the host lets us set.
    for (name, resource, want) in [
        ("nofile", libc::RLIMIT_NOFILE, 20_000),
        ("nproc", libc::RLIMIT_NPROC, 4_096),
    ] {
        let n = hard_limit(resource).map_or(want, |hard| hard.min(want));
        a.push(format!("--ulimit={name}={n}:{n}"));
    }
    a.push("-v".into());
    a.push(format!("{}:/run/lazaret:rw", status_dir.display()));
    a.push(image.into());
    a
}

fn hard_limit(resource: libc::__rlimit_resource_t) -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own; no other memory is touched.
    let rc = unsafe { libc::getrlimit(resource, &mut lim) };
    if rc != 0 || lim.rlim_max == libc::RLIM_INFINITY {
        return None;
    }
    Some(lim.rlim_max)
}

/// Writes the policy and creates the sidecar container (not yet started).
pub fn create(
    podman: &Podman,
    domain: &Domain,
    image: &str,
    policy: &NetworkPolicy,
) -> anyhow::Result<()> {
    let dir = status_dir(domain);
    crate::domain::layout::ensure_private_dir(&dir)?;
    // The last run's ledger goes into the history first (its teardown may never have come).
    let history = super::ledger_history::history_dir(&domain.root);
    if let Err(e) = super::ledger_history::archive(&dir, &history) {
        tracing::warn!("keeping the last run's denial ledger: {e}");
    }
    // A new run starts without the last run's run-scoped rules (`lazaret net allow`).
    for stale in [
        "ready",
        "failed",
        super::denial_ledger::LEDGER,
        crate::network::run_rules::RULES_FILE,
        crate::network::run_rules::APPLIED_FILE,
        super::ledger_history::RUN_ID_FILE,
    ] {
        match std::fs::remove_file(dir.join(stale)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).context("clearing the Network Sidecar's old status"),
        }
    }
    super::ledger_history::new_run(&dir).context("starting the denial ledger's run")?;
    std::fs::write(dir.join("policy.nft"), policy.render_nft())
        .context("writing the Network Sidecar policy")?;
    let dns = serde_json::to_string_pretty(&policy.dns_settings())?;
    std::fs::write(dir.join("dns.json"), dns + "\n")
        .context("writing the Network Sidecar's DNS settings")?;
    podman.run(
        "creating Network Sidecar",
        create_args(domain, image, &dir, policy),
    )?;
    Ok(())
}

/// Starts the sidecar in the background; pair with [`wait_ready`].
pub fn start(podman: &Podman, domain: &Domain) -> anyhow::Result<Child> {
    podman
        .command(["start", &domain.container_name("sidecar")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting Network Sidecar: cannot run podman")
}

/// Waits until `podman start` succeeded and the sidecar reported its policy installed.
pub fn wait_ready(domain: &Domain, mut start: Child) -> anyhow::Result<()> {
    let dir = status_dir(domain);
    let deadline = Instant::now() + READY_TIMEOUT;
    let mut start_ok = false;
    loop {
        if !start_ok {
            if let Some(status) = start.try_wait()? {
                if !status.success() {
                    let mut stderr = String::new();
                    if let Some(mut e) = start.stderr.take() {
                        let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
                    }
                    let stderr: Vec<&str> = stderr
                        .lines()
                        .filter(|l| !l.contains("shared mount"))
                        .collect();
                    bail!(
                        "starting Network Sidecar: podman {status}: {}",
                        stderr.join("\n")
                    );
                }
                start_ok = true;
            }
        }
        if let Some(result) = read_status(&dir)? {
            if result.is_err() {
                let _ = start.kill();
            }
            let _ = start.wait();
            return result;
        }
        if Instant::now() > deadline {
            let _ = start.kill();
            let _ = start.wait();
            bail!("starting Network Sidecar: no policy report within {READY_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(3));
    }
}

fn read_status(dir: &Path) -> anyhow::Result<Option<anyhow::Result<()>>> {
    if dir.join("ready").exists() {
        return Ok(Some(Ok(())));
    }
    match std::fs::read_to_string(dir.join("failed")) {
        Ok(msg) => Ok(Some(Err(anyhow::anyhow!(
            "starting Network Sidecar: installing the network policy failed: {}",
            msg.trim()
        )))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).context("reading the Network Sidecar's status"),
    }
}
