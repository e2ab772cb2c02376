//! Domain and Session Lifecycle transitions of the coordinator core (spec §3.2; TLA+
//! `Start` … `ReachAbsent`).
//!
//! Startup: one leader (OR-1), then State Anchor, Network Sidecar, policy, Agent Sandbox
//! (SR-5), then publication. Teardown after the last leave (FR-6) and recovery after a failure
//! (FR-7) both stop the sandbox, then the sidecar, then unmount the State Anchor.

use super::core::{require, Reason};
use super::effect::Effect;
use super::escalation::{drop_owned_by, reject_submitted};
use super::state::{Cli, CliId, CliStatus, Phase, State};
use super::viewers::{detach_where, View};

type Step = Result<Vec<Effect>, Reason>;

fn require_phase(s: &State, ok: bool) -> Result<(), Reason> {
    require(ok, Reason::Phase(s.phase))
}

/// The Client CLI `cli`, which must be in `status`.
fn cli_in(s: &mut State, cli: CliId, status: CliStatus) -> Result<&mut Cli, Reason> {
    let current = s.cli_status(cli);
    match s.clis.get_mut(&cli) {
        Some(c) if c.status == status => Ok(c),
        _ => Err(Reason::CliState(cli, current)),
    }
}

fn check_cli(s: &State, cli: CliId, status: CliStatus) -> Result<(), Reason> {
    let current = s.cli_status(cli);
    require(current == Some(status), Reason::CliState(cli, current))
}

/// TLA+ `Start(c)`.
pub(super) fn start(s: &mut State, cli: CliId) -> Step {
    let current = s.cli_status(cli);
    require(current.is_none(), Reason::CliState(cli, current))?;
    s.clis.insert(
        cli,
        Cli {
            status: CliStatus::Joining,
            leader: false,
            terminal: None,
        },
    );
    Ok(Vec::new())
}

/// TLA+ `BecomeLeader(c)`: the lifecycle lock of an absent Domain.
pub(super) fn become_leader(s: &mut State, cli: CliId) -> Step {
    require_phase(s, s.phase == Phase::Absent)?;
    cli_in(s, cli, CliStatus::Joining)?.leader = true;
    s.phase = Phase::Starting;
    s.trust = true;
    Ok(vec![Effect::CreateTrustAnchor])
}

/// TLA+ `MountStateAnchor`.
pub(super) fn mount_state_anchor(s: &mut State) -> Step {
    require_phase(s, s.phase == Phase::Starting)?;
    require(
        !s.state_anchor,
        Reason::Resource("the State Anchor is mounted"),
    )?;
    s.state_anchor = true;
    Ok(vec![Effect::MountStateAnchor])
}

/// TLA+ `StartSidecar`.
pub(super) fn start_sidecar(s: &mut State) -> Step {
    require_phase(s, s.phase == Phase::Starting)?;
    require(
        s.state_anchor,
        Reason::Resource("the State Anchor is not mounted"),
    )?;
    require(!s.sidecar, Reason::Resource("the Network Sidecar runs"))?;
    s.sidecar = true;
    Ok(vec![Effect::StartSidecar])
}

/// TLA+ `InstallPolicy`.
pub(super) fn install_policy(s: &mut State) -> Step {
    require_phase(s, s.phase == Phase::Starting)?;
    require(
        s.sidecar,
        Reason::Resource("the Network Sidecar does not run"),
    )?;
    require(
        !s.policy,
        Reason::Resource("the network policy is installed"),
    )?;
    s.policy = true;
    Ok(vec![Effect::InstallPolicy])
}

/// TLA+ `StartSandbox`: only once the sidecar's policy is in place (SR-5).
pub(super) fn start_sandbox(s: &mut State) -> Step {
    require_phase(s, s.phase == Phase::Starting)?;
    require(
        s.state_anchor,
        Reason::Resource("the State Anchor is not mounted"),
    )?;
    require(
        s.sidecar,
        Reason::Resource("the Network Sidecar does not run"),
    )?;
    require(
        s.policy,
        Reason::Resource("the network policy is not installed"),
    )?;
    require(!s.sandbox, Reason::Resource("the Agent Sandbox runs"))?;
    s.sandbox = true;
    Ok(vec![Effect::StartSandbox])
}

/// TLA+ `Publish`.
pub(super) fn publish(s: &mut State) -> Step {
    require_phase(s, s.phase == Phase::Starting)?;
    require(
        s.sandbox,
        Reason::Resource("the Agent Sandbox does not run"),
    )?;
    s.phase = Phase::Ready;
    s.published = true;
    Ok(vec![Effect::PublishEndpoint])
}

/// TLA+ `Register(c)`: binds Client CLI ID, Session ID and Session Anchor (FR-10).
pub(super) fn register(s: &mut State, cli: CliId) -> Step {
    require_phase(s, s.phase == Phase::Ready)?;
    require(
        s.published,
        Reason::Resource("the endpoint is not published"),
    )?;
    require(s.trust, Reason::Resource("the trust material is not valid"))?;
    cli_in(s, cli, CliStatus::Joining)?.status = CliStatus::Registered;
    Ok(vec![Effect::BindSession { cli }])
}

/// TLA+ `Refuse(c)`.
pub(super) fn refuse(s: &mut State, cli: CliId) -> Step {
    require_phase(s, s.phase == Phase::Ready)?;
    cli_in(s, cli, CliStatus::Joining)?.status = CliStatus::Refused;
    Ok(vec![Effect::RefuseSession { cli }])
}

/// TLA+ `CancelJoin(c)`.
pub(super) fn cancel_join(s: &mut State, cli: CliId) -> Step {
    cli_in(s, cli, CliStatus::Joining)?.status = CliStatus::Cancelled;
    Ok(Vec::new())
}

/// TLA+ `Leave(c)`: the session ends (its process exited, or a client ended it). Drops its
/// requests, terminating their host processes, and detaches every viewer attached to it
/// (control centres stay). The only way a registered session ends, besides `Fail`.
pub(super) fn leave(s: &mut State, cli: CliId) -> Step {
    check_cli(s, cli, CliStatus::Registered)?;
    let mut effects = drop_owned_by(s, |owner| owner == cli);
    effects.extend(detach_where(s, |view| view == View::Session(cli)));
    if let Some(c) = s.clis.get_mut(&cli) {
        c.status = CliStatus::Left;
        c.terminal = None;
    }
    effects.push(Effect::Disconnect { session: cli });
    Ok(effects)
}

/// TLA+ `BeginTeardown` (FR-6): no session remains, detached ones included. Publication is
/// withdrawn first so nobody joins a dying Domain; control centres are disconnected.
pub(super) fn begin_teardown(s: &mut State) -> Step {
    require_phase(s, s.phase == Phase::Ready)?;
    let in_use = s.sessions().next().is_some() || s.joining().next().is_some();
    require(!in_use, Reason::DomainInUse)?;
    s.phase = Phase::Draining;
    let mut effects = withdraw(s);
    effects.extend(detach_where(s, |_| true));
    effects.extend(reject_submitted(s));
    Ok(effects)
}

/// Withdraws publication and invalidates trust material, in that order.
fn withdraw(s: &mut State) -> Vec<Effect> {
    let mut effects = Vec::new();
    if std::mem::take(&mut s.published) {
        effects.push(Effect::WithdrawPublication);
    }
    if std::mem::take(&mut s.trust) {
        effects.push(Effect::InvalidateTrust);
    }
    effects
}

/// TLA+ `Fail`: withdraw publication, invalidate trust material, disconnect sessions (and
/// refuse waiting CLIs), terminate host processes. Resources stay until recovery (FR-7).
pub(super) fn fail(s: &mut State) -> Step {
    require_phase(
        s,
        matches!(s.phase, Phase::Starting | Phase::Ready | Phase::Draining),
    )?;
    s.phase = Phase::Failed;
    let mut effects = withdraw(s);
    effects.extend(detach_where(s, |_| true));
    for (&id, c) in s.clis.iter_mut() {
        c.terminal = None;
        match c.status {
            CliStatus::Registered => {
                c.status = CliStatus::Disconnected;
                effects.push(Effect::Disconnect { session: id });
            }
            CliStatus::Joining => {
                c.status = CliStatus::Refused;
                effects.push(Effect::RefuseSession { cli: id });
            }
            _ => {}
        }
    }
    effects.extend(drop_owned_by(s, |_| true));
    effects.extend(reject_submitted(s));
    Ok(effects)
}

/// TLA+ `StopSandbox`: teardown/recovery step 1.
pub(super) fn stop_sandbox(s: &mut State) -> Step {
    require_phase(s, s.phase.is_stopping())?;
    require(
        s.sandbox,
        Reason::Resource("the Agent Sandbox does not run"),
    )?;
    s.sandbox = false;
    Ok(vec![Effect::StopSandbox])
}

/// TLA+ `StopSidecar`: teardown/recovery step 2, after the sandbox.
pub(super) fn stop_sidecar(s: &mut State) -> Step {
    require_phase(s, s.phase.is_stopping())?;
    require(!s.sandbox, Reason::Resource("the Agent Sandbox still runs"))?;
    require(
        s.sidecar,
        Reason::Resource("the Network Sidecar does not run"),
    )?;
    s.sidecar = false;
    s.policy = false;
    Ok(vec![Effect::StopSidecar])
}

/// TLA+ `UnmountStateAnchor`: teardown/recovery step 3, after the sidecar.
pub(super) fn unmount_state_anchor(s: &mut State) -> Step {
    require_phase(s, s.phase.is_stopping())?;
    require(!s.sandbox, Reason::Resource("the Agent Sandbox still runs"))?;
    require(
        !s.sidecar,
        Reason::Resource("the Network Sidecar still runs"),
    )?;
    require(
        s.state_anchor,
        Reason::Resource("the State Anchor is not mounted"),
    )?;
    s.state_anchor = false;
    Ok(vec![Effect::UnmountStateAnchor])
}

/// TLA+ `ReachAbsent`: everything stopped; a new startup leader may come.
pub(super) fn reach_absent(s: &mut State) -> Step {
    require_phase(s, s.phase.is_stopping())?;
    require(!s.sandbox, Reason::Resource("the Agent Sandbox still runs"))?;
    require(
        !s.sidecar,
        Reason::Resource("the Network Sidecar still runs"),
    )?;
    require(
        !s.state_anchor,
        Reason::Resource("the State Anchor is mounted"),
    )?;
    s.phase = Phase::Absent;
    for c in s.clis.values_mut() {
        c.leader = false;
    }
    Ok(vec![Effect::ReleaseLifecycleLock])
}
