//! The driver (issue #14): the core decides, the driver executes its [`Effect`]s. Every step
//! of the core is recorded first and returns its effects; one table
//! ([`driver_ports::carrier`](super::driver_ports::carrier)) says who carries out each, and
//! nothing is dropped unseen:
//!
//! | Effect | Carried out by |
//! |---|---|
//! | `ShowPrompt`, `OfferPrompt`, `WithdrawPrompt`, `ReturnTerminal` | prompt port: the session's prompt route (its `lazaret run` connection, or the session host's prompt board for viewers and control centres) |
//! | `DeliverResult` | result port: the staged, signed result is written to the Escalation Mailbox |
//! | `TerminateHostProcess` | host-process port: the request's kill switch (`host_exec` kills the group) |
//! | `RejectRequest` | logged only (SR-9: nothing is routed or answered) |
//! | `MountStateAnchor` … `StartSandbox`, `StopSandbox`, `StopSidecar`, `UnmountStateAnchor` | this module, on the Domain's runtime (bring-up, teardown, recovery) |
//! | `CreateTrustAnchor`, `PublishEndpoint`, `WithdrawPublication`, `InvalidateTrust`, `ReleaseLifecycleLock` | the daemon (its listener, and its exit) |
//! | `BindSession`, `RefuseSession` | the caller of `Engine::register` (the answer to the CLI) |
//! | `Disconnect`, `DetachViewer`, `AttachViewer` | the caller of the step: the connection closes; the session host starts or stops the viewer's stream |
//! | `RouteRequest`, `RunHostCommand` | the escalation service, which waits for the command's output |
//!
//! Port effects are carried out by [`carry_out`](super::driver_ports::carry_out) through the
//! engine's [`EdgePorts`](super::driver_edges::EdgePorts), inside
//! [`Engine::step`](super::engine::Engine::step) (in the order of the steps); the others are
//! handed back to the caller of the step. The lifecycle effects are carried out here: bring-up,
//! teardown and recovery alike, so recovery lives here only (FR-7: whatever the model
//! believes, the runtime is finally torn down; nothing is assumed gone).

use super::core::next_stop;
use super::effect::Effect;
use super::event::Event;
use super::registry::Registry;
use crate::profile::AgentProfile;
use crate::runtime::domain_runtime::DomainRuntime;
use crate::runtime::sidecar_image::SidecarImage;
use anyhow::bail;
use std::path::Path;

/// What bring-up needs besides the runtime.
pub struct BringUp<'a> {
    pub profile: &'a AgentProfile,
    pub image: &'a SidecarImage,
    pub images: &'a Path,
    pub wrapper: &'a Path,
}

/// The Domain's resources, up in the model's order: the core decides MountStateAnchor,
/// StartSidecar, InstallPolicy and StartSandbox (SR-5: the policy before the sandbox), then
/// the runtime carries the four effects out together (it overlaps the sidecar's start with
/// the sandbox's creation, never the sandbox's start with the policy). On failure: Fail, and
/// recovery. Returns the runtime's notices for the developer.
///
/// A failure is the core's `Fail`: besides the lifecycle's effects (recovery, here), it refuses
/// the startup leader (`RefuseSession`), which the daemon carries out by reporting the failure
/// to the CLI that started it instead of "ready".
pub fn bring_up(
    reg: &mut Registry,
    runtime: &mut DomainRuntime,
    how: &BringUp<'_>,
) -> anyhow::Result<Vec<String>> {
    let mut effects = Vec::new();
    for event in [
        Event::MountStateAnchor,
        Event::StartSidecar,
        Event::InstallPolicy,
        Event::StartSandbox,
    ] {
        match reg.record(event) {
            Ok(e) => effects.extend(e),
            Err(e) => {
                let _ = reg.record(Event::Fail);
                stop_in_order(reg, runtime)?;
                bail!("the Domain cannot start now: {e}");
            }
        }
    }
    let expected = [
        Effect::MountStateAnchor,
        Effect::StartSidecar,
        Effect::InstallPolicy,
        Effect::StartSandbox,
    ];
    if effects != expected {
        let _ = reg.record(Event::Fail);
        stop_in_order(reg, runtime)?;
        bail!("the protocol core asked for {effects:?} to bring the Domain up");
    }
    match runtime.bring_up(how.profile, how.image, how.images, how.wrapper) {
        Ok(notices) => Ok(notices),
        Err(e) => {
            let _ = reg.record(Event::Fail);
            let _ = stop_in_order(reg, runtime);
            Err(e)
        }
    }
}

/// Carries out one lifecycle effect of a teardown or recovery step (the others of such steps
/// are the daemon's: publication and trust).
pub fn execute(runtime: &mut DomainRuntime, effect: &Effect) -> anyhow::Result<()> {
    match effect {
        Effect::StopSandbox => runtime.stop_sandbox(),
        Effect::StopSidecar => runtime.stop_sidecar(),
        Effect::UnmountStateAnchor => runtime.release_state_anchors(),
        // The daemon releases the lock as it exits, once the runtime is torn down.
        Effect::ReleaseLifecycleLock => Ok(()),
        other => {
            tracing::error!(?other, "not an effect of a teardown or recovery step");
            Ok(())
        }
    }
}

/// Teardown and recovery in the model's order (§3.2, FR-7): each step the core allows next is
/// decided, then its effects are carried out. Whatever the model believes, the runtime is
/// finally torn down.
pub fn stop_in_order(reg: &mut Registry, runtime: &mut DomainRuntime) -> anyhow::Result<()> {
    while let Some(event) = next_stop(reg.state()) {
        let Ok(effects) = reg.record(event) else {
            break;
        };
        for effect in &effects {
            if let Err(e) = execute(runtime, effect) {
                tracing::error!("{e:#}");
                runtime.tear_down()?;
                return Err(e);
            }
        }
    }
    runtime.tear_down()
}
