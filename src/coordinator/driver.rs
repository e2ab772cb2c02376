//! The one place the coordinator carries out the core's lifecycle effects on the Domain's
//! runtime (issue #14): the core decides (each event is recorded first and returns its
//! [`Effect`]s), this driver executes them — bring-up, teardown and recovery alike, so
//! recovery lives here only (FR-7: whatever the model believes, the runtime is finally torn
//! down; nothing is assumed gone).
//!
//! Effects of the other parts of the core are carried out by their owners: session binding
//! and disconnection by the socket server and the session host, prompts and host commands by
//! Host Escalation ([`crate::escalation`]), publication by the daemon's listener.

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

/// Carries out one lifecycle effect. Effects owned by other parts are not for this driver.
pub fn execute(runtime: &mut DomainRuntime, effect: &Effect) -> anyhow::Result<()> {
    match effect {
        Effect::StopSandbox => runtime.stop_sandbox(),
        Effect::StopSidecar => runtime.stop_sidecar(),
        Effect::UnmountStateAnchor => runtime.release_state_anchors(),
        _ => Ok(()),
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
