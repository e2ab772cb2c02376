//! The detached Session Coordinator process (`lazaret __coordinator`): brings the Domain up,
//! publishes its socket, serves Client Sessions, and tears down when the last one leaves (FR-6).
//!
//! It inherits two descriptors from the CLI that started it: fd 3, the Domain's lifecycle lock
//! (held for the coordinator's whole life, OR-1), and fd 4, a pipe on which it reports `ready`
//! or the error that stopped it.

use super::driver::stop_in_order;
use super::engine::{Engine, EngineConfig};
use super::event::Event;
use super::registry::Registry;
use super::server::{self, Endpoint};
use super::status::DomainStatus;
use super::{paths, trace_path};
use crate::domain::layout::Layout;
use crate::domain::Domain;
use crate::runtime::domain_runtime::DomainRuntime;
use crate::runtime::podman::Podman;
use crate::runtime::sidecar_image::{sibling_binary, SidecarImage};
use anyhow::{bail, Context};
use lazaret_protocol::{tls, ComponentId, ProtocolIdentity, Role, TrustAnchor};
use std::fs::File;
use std::io::Write;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub const LOCK_FD: i32 = 3;
pub const READY_FD: i32 = 4;

/// How long a started Domain waits for its first session before tearing down.
pub const FIRST_SESSION_TIMEOUT: Duration = Duration::from_secs(60);

/// How the sessions' commands will enter the sandbox: runsc directly where the host allows it
/// (`LAZARET_SESSION_EXEC=podman` keeps `podman exec`, for comparisons), else `podman exec`,
/// saying why in the log.
fn session_exec(runtime: &DomainRuntime) -> Option<crate::runtime::runsc_exec::RunscExec> {
    if std::env::var_os("LAZARET_SESSION_EXEC").is_some_and(|v| v == "podman") {
        tracing::info!("sessions use podman exec (LAZARET_SESSION_EXEC=podman)");
        return None;
    }
    match runtime.runsc_exec() {
        Ok(direct) => {
            tracing::info!(runsc = %direct.runsc.display(), root = %direct.root.display(), "sessions use runsc exec directly");
            Some(direct)
        }
        Err(why) => {
            tracing::warn!("sessions use podman exec: {why}");
            None
        }
    }
}

fn inherited(fd: i32, what: &str) -> anyhow::Result<File> {
    // SAFETY: F_GETFD/F_SETFD only touch the descriptor table entry. Close-on-exec, so that
    // podman and conmon started later never hold the lock or the pipe.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
        bail!("fd {fd} ({what}) was not inherited: the coordinator is started by lazaret itself");
    }
    // SAFETY: the fd is open (checked above) and nothing else in this process owns it; the
    // spawning CLI placed it here for us alone.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// Entry point of the hidden `__coordinator` subcommand.
/// The Session Coordinator of the Domain of (`profile`, `workspace`); `linger` (seconds) over the
/// profile's.
pub fn main(
    layout: &Layout,
    profile: &str,
    workspace: &Path,
    linger: Option<u64>,
) -> anyhow::Result<i32> {
    let mut ready = inherited(READY_FD, "ready pipe")?;
    let result = run(layout, profile, workspace, linger, &mut ready);
    if let Err(e) = &result {
        let _ = writeln!(ready, "error: {e:#}");
    }
    result
}

fn run(
    layout: &Layout,
    profile: &str,
    workspace: &Path,
    linger: Option<u64>,
    ready: &mut File,
) -> anyhow::Result<i32> {
    let lock = inherited(LOCK_FD, "lifecycle lock")?;
    let profile = crate::config::HostConfig::load(layout)?.profile(Some(profile))?;
    let linger = linger.map_or_else(|| profile.linger(), Duration::from_secs);
    let domain = Domain::resolve(layout, &profile.name, workspace)?;
    // The inherited lock must be this Domain's (OR-1).
    let lock_meta = lock.metadata()?;
    let want = std::fs::metadata(domain.runtime_dir.join("lifecycle.lock"))?;
    if (lock_meta.dev(), lock_meta.ino()) != (want.dev(), want.ino()) {
        bail!("fd {LOCK_FD} is not this Domain's lifecycle lock");
    }
    let coordinator_id = ComponentId::generate()?;
    let trace = trace_path(layout, &domain, &coordinator_id);
    if let Some(dir) = trace.parent() {
        crate::domain::layout::ensure_private_dir(dir)?;
        super::prune_traces(dir);
    }
    let mut registry = Registry::new(Some(&trace));
    registry.start_as_leader()?;
    tracing::info!(domain = %domain.id, coordinator = %coordinator_id.as_str(), "coordinator starting");

    // Trust Anchor for this run only (SR-9): a later run's CLIs cannot use this run's certificates.
    let anchor = TrustAnchor::generate(&profile.name, &domain.id)?;
    let own = anchor.issue(&ProtocolIdentity::new(
        Role::Coordinator,
        &profile.name,
        domain.id.clone(),
        coordinator_id.clone(),
    )?)?;
    let server_config = tls::server_config(&anchor, &own)?;

    let podman = Podman::default();
    let wrapper = sibling_binary("lazaret-runsc")?;
    let images = layout.storage_root().join("images");
    let image = SidecarImage::locate_cached(&images)?;
    let mut runtime = DomainRuntime::new(podman, domain.clone());
    // The core decides MountStateAnchor, StartSidecar, InstallPolicy and StartSandbox; the
    // driver carries them out (and recovers on failure).
    let how = super::driver::BringUp {
        profile: &profile,
        image: &image,
        images: &images,
        wrapper: &wrapper,
    };
    let mut notices = super::driver::bring_up(&mut registry, &mut runtime, &how)?;
    let direct = session_exec(&runtime);
    crate::runtime::runsc_exec::publish(&domain.runtime_dir, direct.as_ref());
    // The git boundary (issue #30): the private git directory made level with the host before
    // any session starts, then kept level while the sandbox runs.
    let boundary = git_boundary_up(
        &domain,
        direct.as_ref(),
        &runtime.sandbox_name(),
        &mut notices,
    );
    // The startup leader's CLI prints these before its session starts.
    for notice in notices {
        let _ = writeln!(ready, "note: {}", notice.replace('\n', " "));
    }

    let socket = paths::socket(&domain);
    let _ = std::fs::remove_file(&socket);
    let status = DomainStatus {
        domain_id: domain.id.to_string(),
        profile: profile.name.clone(),
        workspace: domain.workspace.root.clone(),
        coordinator_pid: std::process::id(),
        coordinator_id: coordinator_id.as_str().to_owned(),
        sandbox: runtime.sandbox_name(),
        sessions: Vec::new(),
        failures: Vec::new(),
        linger_secs: linger.as_secs(),
        idle_stop_secs: profile.idle_stop().map_or(0, |d| d.as_secs()),
    };
    let config = EngineConfig {
        profile: profile.name.clone(),
        domain_id: domain.id.clone(),
        workspace: domain.workspace.root.clone(),
        fingerprint: profile.fingerprint(),
        sandbox: runtime.sandbox_name(),
        status_path: Some(paths::status(&domain)),
        linger,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the coordinator's event loop")?;
    let _guard = rt.enter();
    let engine = Arc::new(Engine::new(config, registry, status));
    let host = super::hosted::SessionHost::new(
        engine.clone(),
        super::hosted::SpawnConfig {
            domain: domain.clone(),
            profile: profile.clone(),
            sandbox: runtime.sandbox_name(),
            program: std::env::var("LAZARET_PODMAN").unwrap_or_else(|_| "podman".to_owned()),
            direct,
            containers: super::domain_state::ContainerPids {
                sandbox: runtime.sandbox_pid(),
                sidecar: runtime.sidecar_pid(),
            },
        },
    );
    if let Some(after) = profile.idle_stop() {
        super::hosted::idle_stop::spawn(&host, after);
    }
    if let Some(bound) = profile.limits.disk {
        super::disk_watch::spawn(Arc::downgrade(&engine), domain.root.clone(), bound);
    }
    let endpoint = Arc::new(Endpoint {
        engine,
        host,
        anchor,
        server_config,
        uid: nix::unistd::getuid().as_raw(),
    });
    // The profile's published ports, off the start's path (a podman process each).
    if !profile.network.publish.is_empty() {
        let (host, engine) = (endpoint.host.clone(), endpoint.engine.clone());
        let ports = profile.network.publish.clone();
        std::thread::spawn(move || {
            for (host_port, port) in ports {
                if let Err(e) = host.publish_port(port, host_port, std::net::Ipv4Addr::LOCALHOST) {
                    engine.report_failure(format!(
                        "publishing sandbox port {port} on 127.0.0.1:{host_port} (profile \
                         `publish`): {e}"
                    ));
                }
            }
        });
    }
    // The agent's sign-in callback ports, while it is not signed in (issue #32).
    let stop_login = Arc::new(crate::wake::WakeFlag::new());
    if let Some(login) = profile.login.clone() {
        super::hosted::login_ports::spawn(
            endpoint.host.clone(),
            login,
            runtime.sandbox_name(),
            stop_login.clone(),
        );
    }
    // Host Escalation: the mailbox is read from the start of the first session on.
    let stop_escalations = Arc::new(crate::escalation::arrivals::Stop::new());
    let escalations = {
        let service = crate::escalation::service::Service {
            engine: endpoint.engine.clone(),
            in_flight: Default::default(),
            mailbox: runtime.mailbox()?,
            workspace: domain.workspace.root.clone(),
            rules: profile.auto_approve.clone(),
            image_paste: profile.image_paste(),
            next_model_id: std::sync::atomic::AtomicU64::new(1),
            ids: Default::default(),
            boundary: boundary.as_ref().map(|(b, _, _)| b.clone()),
        };
        let stop = stop_escalations.clone();
        std::thread::spawn(move || service.run(&stop))
    };
    let mut connections = tokio::task::JoinSet::new();
    let outcome = rt.block_on(serve(
        &endpoint,
        &socket,
        ready,
        runtime.sidecar_pid(),
        &mut connections,
    ));
    let t = std::time::Instant::now();
    stop_escalations.set();
    let _ = escalations.join();
    tracing::debug!(ms = t.elapsed().as_millis() as u64, "escalations stopped");
    // Published ports end before the network namespace they lead into.
    stop_login.set();
    endpoint.host.stop_ports();
    // The last session's clients hear its exit before they hear the Domain shuts down.
    endpoint.host.wait_endings_told(Duration::from_secs(2));

    // Teardown: withdraw publication first, then disconnect sessions, then the resources in
    // the order recovery requires (sandbox, sidecar, State Anchor).
    let engine = &endpoint.engine;
    let _ = std::fs::remove_file(&socket);
    engine.withdraw_status();
    engine.shut_down(match &outcome {
        Ok(()) => "the Domain is shutting down".to_owned(),
        Err(e) => format!("the Session Coordinator failed: {e:#}"),
    });
    // The connections finish telling their clients (20 ms at most): a last `lazaret run` whose
    // connection is already done does not wait for the sandbox to stop any longer than that.
    rt.block_on(async {
        let all_done = async { while connections.join_next().await.is_some() {} };
        let _ = tokio::time::timeout(Duration::from_millis(20), all_done).await;
    });
    tracing::debug!(open = connections.len(), "connections told");
    // Through the driver: a failure terminates host processes and withdraws prompts.
    if outcome.is_err() {
        engine.fail();
    } else if !engine.registry().state().phase.is_stopping() {
        engine.begin_teardown();
    }
    crate::fault::kill_point("coordinator-teardown");
    // The agent's last commits cross before the sandbox stops.
    if let Some((b, stop, thread)) = boundary {
        stop.set();
        let _ = thread.join();
        if outcome.is_ok() {
            if let Err(e) = b.round_if_changed() {
                tracing::warn!("git boundary, last round: {e}");
            }
        }
    }
    let mut reg = engine.registry();
    let down = stop_in_order(&mut reg, &mut runtime);
    drop(reg);
    if !linger.is_zero() {
        // The last CLI returned while the sandbox still ran (it lingered): the Git Sentry's
        // end-of-run check is the coordinator's now that the sandbox has stopped.
        crate::runtime::git_sentry::guard::after_run_logged(&domain);
    }
    // Nothing of the runtime may act once the lock is released.
    drop(runtime);
    tracing::info!(domain = %domain.id, "coordinator stopped");
    drop(lock);
    outcome?;
    down?;
    Ok(0)
}

/// A running git boundary: the boundary, its watch's stop flag and thread.
type BoundaryUp = (
    crate::runtime::git_boundary::Boundary,
    Arc<crate::wake::WakeFlag>,
    std::thread::JoinHandle<()>,
);

/// Prepares `domain`'s git boundary (a repository workspace only) and starts its watch; what
/// the first round did joins `notices`. A failure is a notice, not a failed start: the agent's
/// git then starts without the host's history, and the next round retries.
fn git_boundary_up(
    domain: &Domain,
    direct: Option<&crate::runtime::runsc_exec::RunscExec>,
    sandbox: &str,
    notices: &mut Vec<String>,
) -> Option<BoundaryUp> {
    use crate::runtime::git_boundary::{mounts, sandbox_side::Entry, Boundary};
    let entry = match direct {
        Some(d) => Entry::Direct(d.clone()),
        None => Entry::Podman {
            program: std::env::var("LAZARET_PODMAN").unwrap_or_else(|_| "podman".to_owned()),
            container: sandbox.to_owned(),
        },
    };
    let b = Boundary::of(domain)?.with_entry(entry);
    let prepare = |b: &Boundary| {
        let t = std::time::Instant::now();
        let done = b.prepare();
        tracing::info!(ms = t.elapsed().as_millis() as u64, "git boundary prepared");
        done.map_err(|e| {
            let e = format!("git boundary: preparing the sandbox's git failed: {e}");
            tracing::warn!("{e}");
            e
        })
    };
    // A new private directory is made, and one behind the host (the developer committed,
    // fetched or switched since the last run) brought level, before any session can run git in
    // it. Otherwise it is level already from the host's side; if it changed since the last
    // round (a killed run's agent commits), the round that carries them runs while the first
    // session starts (what it finds reaches the developer at the session's end).
    let before_sessions = b.is_fresh() || b.host_moved_since_base();
    if before_sessions {
        match prepare(&b) {
            Ok(msgs) => notices.extend(msgs),
            Err(e) => notices.push(e),
        }
    }
    let stop = Arc::new(crate::wake::WakeFlag::new());
    let thread = {
        let (b, stop, private) = (b.clone(), stop.clone(), mounts::private_dir(domain));
        std::thread::Builder::new()
            .name("git-boundary".into())
            .spawn(move || {
                crate::runtime::git_boundary::watch::run(&b, &private, &stop, || {
                    // Nothing changed in it since the last round of the last run: it is level,
                    // configured, and left no agent commit behind.
                    if !before_sessions && b.changed_since_last_round() {
                        let _ = prepare(&b);
                    }
                })
            })
            .ok()?
    };
    Some((b, stop, thread))
}

/// What the sessions are told when the Network Sidecar exits.
const SIDECAR_EXITED: &str = "the Network Sidecar exited: the Agent Sandbox has no network any \
                              more (it fails closed); end the sessions and run again to get a \
                              new sidecar";

/// How often the coordinator checks that the Network Sidecar still runs (without a pidfd).
const SIDECAR_WATCH: Duration = Duration::from_millis(500);

async fn serve(
    endpoint: &Arc<Endpoint>,
    socket: &Path,
    ready: &mut File,
    sidecar_pid: Option<u32>,
    connections: &mut tokio::task::JoinSet<()>,
) -> anyhow::Result<()> {
    let listener = tokio::net::UnixListener::bind(socket)
        .with_context(|| format!("binding the coordinator socket {}", socket.display()))?;
    endpoint
        .engine
        .registry()
        .record_lifecycle(Event::Publish)?;
    writeln!(ready, "ready").context("reporting ready")?;
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let first_deadline = tokio::time::sleep(FIRST_SESSION_TIMEOUT);
    tokio::pin!(first_deadline);
    let mut any_session = false;
    let mut watch = tokio::time::interval(SIDECAR_WATCH);
    let mut sidecar_alive = sidecar_pid.is_some();
    // Its exit is waited for on a pidfd where the kernel has them; else looked at every tick.
    let sidecar_exit = sidecar_pid.and_then(crate::pidfd::open).and_then(|fd| {
        // SAFETY: the AsyncFd owns the OwnedFd, which stays open (and the same descriptor)
        // until the AsyncFd is dropped.
        unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
        }
        .ok()
    });
    let exited = async {
        match &sidecar_exit {
            Some(fd) => {
                let _ = fd.readable().await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    tokio::pin!(exited);
    let linger = endpoint.engine.config.linger;
    let lingering = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(lingering);
    let mut idle = false;
    loop {
        tokio::select! {
            _ = &mut exited, if sidecar_alive && sidecar_exit.is_some() => {
                sidecar_alive = false;
                endpoint.engine.report_failure(SIDECAR_EXITED.to_owned());
            }
            _ = watch.tick(), if sidecar_alive && sidecar_exit.is_none() => {
                if !sidecar_pid.is_some_and(super::liveness::process_alive) {
                    sidecar_alive = false;
                    endpoint.engine.report_failure(SIDECAR_EXITED.to_owned());
                }
            }
            accepted = listener.accept() => {
                let (stream, _) = accepted.context("accepting a connection")?;
                connections.spawn(server::handle(endpoint.clone(), stream));
                while connections.try_join_next().is_some() {}
            }
            _ = endpoint.engine.wait_empty() => {
                tracing::info!("the last Client Session left");
                return Ok(());
            }
            _ = endpoint.engine.wait_idle(), if !linger.is_zero() => {
                tracing::info!(secs = linger.as_secs(), "the last Client Session left; the Domain lingers");
                lingering.as_mut().reset(tokio::time::Instant::now() + linger);
                idle = true;
            }
            _ = &mut lingering, if idle => {
                idle = false;
                // Declined when a session joined meanwhile: its leave starts a new linger.
                if endpoint.engine.begin_teardown() {
                    tracing::info!("the Domain lingered without a session; tearing down");
                    return Ok(());
                }
            }
            _ = &mut first_deadline, if !any_session => {
                // Connections that only looked (`lazaret ps`, a `connect` that never started a
                // session) do not keep a Domain nobody uses.
                if !endpoint.engine.had_sessions() {
                    tracing::info!("no Client Session arrived; tearing down");
                    return Ok(());
                }
                any_session = true;
            }
            _ = term.recv() => {
                tracing::info!("terminated by a signal");
                return Ok(());
            }
        }
    }
}
