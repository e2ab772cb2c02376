//! Viewers of coordinator-owned sessions (issue #14; TLA+ `Attach`, `Watch`, `Detach`,
//! `Sees`).
//!
//! A viewer is one client connection that shows sessions: a `lazaret tui` pane or a
//! `lazaret attach` terminal is attached to one Client Session at a time; a control centre (a
//! `lazaret tui` watching the Domain) sees the escalation prompts of every session. A session
//! keeps running with no viewer ("detached") and ends only by `Leave`; detaching never ends
//! it. A viewer absent from [`State::viewers`] is detached (TLA+ `view[v] = NoCli`).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::core::{require, Reason};
use super::effect::Effect;
use super::state::{CliId, CliStatus, Phase, RequestState, State};

/// Viewer ID: names one client connection that attaches to sessions. Allocated by the
/// coordinator (`Registry::connect_viewer`); like a [`CliId`] it names, never authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ViewerId(pub u64);

impl fmt::Display for ViewerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "viewer-{}", self.0)
    }
}

/// What an attached viewer sees (TLA+ `view[v]`, except `NoCli`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum View {
    /// Attached to this Client Session: its screen and its prompts.
    Session(CliId),
    /// A control centre: the prompts of every session of the Domain (TLA+ `Centre`).
    Centre,
}

/// Who decided an escalation prompt (TLA+ `req[r].by`; FR-5 attributability).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decider {
    /// The session's own terminal: a direct `lazaret run` (TLA+ `Own`).
    Terminal,
    /// A viewer attached to the session, or a control centre.
    Viewer(ViewerId),
}

impl Decider {
    /// The decider of an `Approve`/`Edit`/`Deny` event's `by` (`None`: own terminal).
    pub fn from_by(by: Option<ViewerId>) -> Self {
        by.map_or(Decider::Terminal, Decider::Viewer)
    }
}

impl fmt::Display for Decider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decider::Terminal => write!(f, "the session's own terminal"),
            Decider::Viewer(v) => write!(f, "{v}"),
        }
    }
}

type Step = Result<Vec<Effect>, Reason>;

/// TLA+ `Sees(d, r)` for a request of `owner`: a viewer attached to `owner` or a control
/// centre, or the session's own terminal while the session is registered.
pub fn sees(s: &State, decider: Decider, owner: CliId) -> bool {
    match decider {
        Decider::Terminal => s.cli_status(owner) == Some(CliStatus::Registered),
        Decider::Viewer(v) => match s.viewers.get(&v) {
            Some(View::Centre) => true,
            Some(View::Session(c)) => *c == owner,
            None => false,
        },
    }
}

fn check_detached(s: &State, viewer: ViewerId) -> Result<(), Reason> {
    let view = s.viewers.get(&viewer).copied();
    require(view.is_none(), Reason::ViewerState(viewer, view))
}

/// Offers every pending prompt `viewer` now sees.
fn offer_pending(s: &State, viewer: ViewerId) -> Vec<Effect> {
    s.requests
        .iter()
        .filter(|(_, r)| {
            r.state == RequestState::Prompting && sees(s, Decider::Viewer(viewer), r.owner)
        })
        .map(|(&request, _)| Effect::OfferPrompt { viewer, request })
        .collect()
}

/// TLA+ `Attach(v, c)`: a detached viewer attaches to a registered session.
pub(super) fn attach(s: &mut State, viewer: ViewerId, cli: CliId) -> Step {
    check_detached(s, viewer)?;
    let status = s.cli_status(cli);
    require(
        status == Some(CliStatus::Registered),
        Reason::CliState(cli, status),
    )?;
    s.viewers.insert(viewer, View::Session(cli));
    let mut effects = vec![Effect::AttachViewer {
        viewer,
        session: cli,
    }];
    effects.extend(offer_pending(s, viewer));
    Ok(effects)
}

/// TLA+ `Watch(v)`: a detached viewer becomes a control centre of the ready Domain.
pub(super) fn watch(s: &mut State, viewer: ViewerId) -> Step {
    check_detached(s, viewer)?;
    require(s.phase == Phase::Ready, Reason::Phase(s.phase))?;
    s.viewers.insert(viewer, View::Centre);
    Ok(offer_pending(s, viewer))
}

/// TLA+ `Detach(v)`: voluntary, or the viewer's connection or terminal is gone (SIGHUP). The
/// session keeps running.
pub(super) fn detach(s: &mut State, viewer: ViewerId) -> Step {
    match s.viewers.remove(&viewer) {
        Some(_) => Ok(vec![Effect::DetachViewer { viewer }]),
        None => Err(Reason::ViewerState(viewer, None)),
    }
}

/// Detaches every viewer whose view satisfies `which` (a session ended, or the Domain goes).
pub(super) fn detach_where(s: &mut State, which: impl Fn(View) -> bool) -> Vec<Effect> {
    let gone: Vec<ViewerId> = s
        .viewers
        .iter()
        .filter(|(_, &view)| which(view))
        .map(|(&v, _)| v)
        .collect();
    gone.into_iter()
        .map(|viewer| {
            s.viewers.remove(&viewer);
            Effect::DetachViewer { viewer }
        })
        .collect()
}
