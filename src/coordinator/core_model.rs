//! stateright model over the real coordinator core: actions are the core's [`Event`]s over
//! small bounds, `next_state` is [`step`], properties are the TLA+ model's safety invariants
//! ([`INVARIANTS`]) plus the conformance of each step's effects. Checked exhaustively (BFS).
//!
//! Mutants (test-only copies of `step` with one guard dropped) must be caught, so the check
//! cannot pass vacuously. Liveness stays in TLC (`scripts/check-tla`): stateright has no
//! fairness.

use std::time::Instant;

use stateright::{Checker, Model, Property};

use super::core::step;
use super::core_mutants::{mutant_step, Mutant};
use super::effect::Effect;
use super::event::Event;
use super::invariants::{self as inv, INVARIANTS};
use super::state::{CliId, Phase, RequestId, RequestState, State};
use super::trace::{replay, Trace};
use super::viewers::{sees, Decider, ViewerId};

#[derive(Debug, Clone)]
struct CoreModel {
    clis: u64,
    requests: u64,
    viewers: u64,
    mutant: Option<Mutant>,
}

/// The core state plus whether the effects of the step that reached it conform.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Snapshot {
    core: State,
    effects_ok: bool,
}

impl CoreModel {
    fn new(clis: u64, requests: u64, viewers: u64) -> Self {
        Self {
            clis,
            requests,
            viewers,
            mutant: None,
        }
    }

    fn with_mutant(mut self, mutant: Mutant) -> Self {
        self.mutant = Some(mutant);
        self
    }

    fn cli_ids(&self) -> impl Iterator<Item = CliId> {
        (1..=self.clis).map(CliId)
    }

    fn request_ids(&self) -> impl Iterator<Item = RequestId> {
        (1..=self.requests).map(RequestId)
    }

    fn viewer_ids(&self) -> impl Iterator<Item = ViewerId> {
        (1..=self.viewers).map(ViewerId)
    }

    /// TLA+ `Deciders`: every viewer, and the session's own terminal (`None`).
    fn deciders(&self) -> impl Iterator<Item = Option<ViewerId>> {
        std::iter::once(None).chain(self.viewer_ids().map(Some))
    }

    /// `step`, or the mutant's version of it.
    fn take(&self, s: &State, event: &Event) -> Option<(State, Vec<Effect>)> {
        if let Some(next) = self.mutant.and_then(|m| mutant_step(m, s, event)) {
            return Some(next);
        }
        step(s, event).ok()
    }
}

/// The effects of a step from `pre` agree with the protocol (order, ownership, approval).
fn effects_conform(pre: &State, post: &State, effects: &[Effect]) -> bool {
    let owner = |r: &RequestId| pre.requests.get(r).map(|q| q.owner);
    effects.iter().all(|e| match e {
        Effect::StartSandbox => pre.policy && pre.sidecar && pre.state_anchor,
        Effect::StopSidecar => !pre.sandbox,
        Effect::UnmountStateAnchor => !pre.sandbox && !pre.sidecar,
        Effect::DeliverResult {
            session, request, ..
        }
        | Effect::RouteRequest { session, request }
        | Effect::ShowPrompt { session, request } => owner(request) == Some(*session),
        Effect::RunHostCommand { request, .. } => post
            .requests
            .get(request)
            .is_some_and(|q| q.execs == 1 && q.signature_valid),
        Effect::TerminateHostProcess { request } => pre
            .requests
            .get(request)
            .is_some_and(|q| q.state == RequestState::Executing),
        // Offered only to a viewer that sees the prompt; withdrawn only while it was shown.
        Effect::OfferPrompt { viewer, request } => post.requests.get(request).is_some_and(|q| {
            q.state == RequestState::Prompting && sees(post, Decider::Viewer(*viewer), q.owner)
        }),
        Effect::WithdrawPrompt { request } => pre
            .requests
            .get(request)
            .is_some_and(|q| q.state == RequestState::Prompting),
        _ => true,
    })
}

impl Model for CoreModel {
    type State = Snapshot;
    type Action = Event;

    fn init_states(&self) -> Vec<Snapshot> {
        vec![Snapshot {
            core: State::new(),
            effects_ok: true,
        }]
    }

    fn actions(&self, _state: &Snapshot, actions: &mut Vec<Event>) {
        for cli in self.cli_ids() {
            actions.extend([
                Event::Start { cli },
                Event::BecomeLeader { cli },
                Event::Register { cli },
                Event::Refuse { cli },
                Event::CancelJoin { cli },
                Event::Leave { cli },
            ]);
        }
        for viewer in self.viewer_ids() {
            actions.extend(self.cli_ids().map(|cli| Event::Attach { viewer, cli }));
            actions.extend([Event::Watch { viewer }, Event::Detach { viewer }]);
        }
        actions.extend([
            Event::MountStateAnchor,
            Event::StartSidecar,
            Event::InstallPolicy,
            Event::StartSandbox,
            Event::Publish,
            Event::BeginTeardown,
            Event::Fail,
            Event::StopSandbox,
            Event::StopSidecar,
            Event::UnmountStateAnchor,
            Event::ReachAbsent,
        ]);
        for request in self.request_ids() {
            for cli in self.cli_ids() {
                for (signature_valid, rule_match) in
                    [(false, false), (false, true), (true, false), (true, true)]
                {
                    actions.push(Event::Submit {
                        request,
                        cli,
                        signature_valid,
                        rule_match,
                    });
                }
                actions.push(Event::Deliver { request, cli });
            }
            actions.extend([
                Event::Authenticate { request },
                Event::Reject { request },
                Event::Correlate { request },
                Event::AutoApprove { request },
                Event::Prompt { request },
                Event::Timeout { request },
                Event::Execute { request },
                Event::Finish { request },
                Event::Cancel { request },
            ]);
            for by in self.deciders() {
                actions.extend([
                    Event::Approve { request, by },
                    Event::Edit { request, by },
                    Event::Deny { request, by },
                ]);
            }
        }
    }

    fn next_state(&self, last: &Snapshot, event: Event) -> Option<Snapshot> {
        let (core, effects) = self.take(&last.core, &event)?;
        let effects_ok = effects_conform(&last.core, &core, &effects);
        Some(Snapshot { core, effects_ok })
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let mut props: Vec<Property<Self>> = vec![
            Property::always("EffectsConform", |_, s: &Snapshot| s.effects_ok),
            // Reachability examples: the checks below are not vacuous.
            Property::sometimes("a host command executes", |_, s: &Snapshot| {
                s.core.requests.values().any(|r| r.execs == 1)
            }),
            Property::sometimes("a result is delivered", |_, s: &Snapshot| {
                s.core
                    .requests
                    .values()
                    .any(|r| r.state == RequestState::Delivered)
            }),
            Property::sometimes(
                "a failed Domain still runs its sandbox",
                |_, s: &Snapshot| s.core.phase == Phase::Failed && s.core.sandbox,
            ),
            Property::sometimes("the Domain restarts", |_, s: &Snapshot| {
                s.core.phase == Phase::Starting && s.core.clis.values().any(|c| c.status.is_done())
            }),
        ];
        for (&(name, _), &condition) in INVARIANTS.iter().zip(CONDITIONS.iter()) {
            props.push(Property::always(name, condition));
        }
        props
    }
}

/// `Property::always` takes a fn pointer, so each invariant gets one by its index.
fn holds<const I: usize>(_: &CoreModel, s: &Snapshot) -> bool {
    (INVARIANTS[I].1)(&s.core)
}

type Condition = fn(&CoreModel, &Snapshot) -> bool;

const CONDITIONS: [Condition; 17] = [
    holds::<0>,
    holds::<1>,
    holds::<2>,
    holds::<3>,
    holds::<4>,
    holds::<5>,
    holds::<6>,
    holds::<7>,
    holds::<8>,
    holds::<9>,
    holds::<10>,
    holds::<11>,
    holds::<12>,
    holds::<13>,
    holds::<14>,
    holds::<15>,
    holds::<16>,
];

// Every invariant is checked: adding one to INVARIANTS without a condition fails to compile.
const _: () = assert!(CONDITIONS.len() == INVARIANTS.len());

/// Checks `model` exhaustively; returns the number of distinct states.
fn check_all(model: CoreModel) -> usize {
    let label = format!(
        "{} CLIs, {} requests, {} viewers",
        model.clis, model.requests, model.viewers
    );
    let started = Instant::now();
    let checker = model.checker().spawn_bfs().join();
    checker.assert_properties();
    let states = checker.unique_state_count();
    eprintln!(
        "stateright core model ({label}): {states} distinct states, depth {}, {:.1?}",
        checker.max_depth(),
        started.elapsed()
    );
    states
}

/// The counterexample stateright finds for `property` in the mutant: its events and the
/// violating state.
fn counterexample(mutant: Mutant, property: &'static str) -> (Vec<Event>, State) {
    let model = match mutant {
        Mutant::SecondDecisionAccepted | Mutant::DecisionByNonSeer => CoreModel::new(2, 1, 2),
        _ => CoreModel::new(2, 1, 0),
    };
    let checker = model.with_mutant(mutant).checker().spawn_bfs().join();
    match checker.discovery(property) {
        Some(path) => {
            let last = path.last_state().core.clone();
            (path.into_actions(), last)
        }
        None => panic!("{mutant:?}: stateright found no counterexample to {property}"),
    }
}

/// The mutant's counterexample violates `holds` and is not a trace of the real core: replay
/// rejects the step where the dropped guard mattered.
fn assert_caught(mutant: Mutant, property: &'static str, holds: fn(&State) -> bool, step: &str) {
    let (events, last) = counterexample(mutant, property);
    assert!(
        !holds(&last),
        "{mutant:?}: the last state satisfies {property}"
    );
    let err = replay(&Trace { events }).err();
    assert_eq!(err.map(|e| e.event.name()), Some(step), "{mutant:?}");
}

// The distinct state counts equal TLC's for the same bounds without symmetry. With no viewer
// the model is the one before issue #14, with the same counts as then: 2 CLIs, 1 request
// 17038; 1 CLI, 2 requests 25329; 3 CLIs, 1 request 233976. With viewers:
// LazaretLiveness.cfg (2 CLIs, 1 request, 1 viewer: 30036), LazaretLivenessTerminal.cfg
// (1 CLI, 2 requests, 2 viewers: 161781), 2 CLIs, 1 request, 2 viewers (60208), and 1 CLI,
// 1 request, 2 viewers (2214). The core and the TLA+ model reach the same
// states; a change to either must keep the counts equal (or explain why not).

#[test]
fn core_is_safe_with_two_clis_one_request() {
    assert_eq!(check_all(CoreModel::new(2, 1, 0)), 17038);
}

#[test]
fn core_is_safe_with_one_cli_two_requests() {
    assert_eq!(check_all(CoreModel::new(1, 2, 0)), 25329);
}

#[test]
fn core_is_safe_with_two_viewers_racing_on_one_session() {
    assert_eq!(check_all(CoreModel::new(1, 1, 2)), 2214);
}

#[test]
fn core_is_safe_with_two_clis_one_request_one_viewer() {
    assert_eq!(check_all(CoreModel::new(2, 1, 1)), 30036);
}

/// Larger bounds (a few seconds in a debug build).
#[test]
fn core_is_safe_with_two_clis_one_request_two_viewers() {
    assert_eq!(check_all(CoreModel::new(2, 1, 2)), 60208);
}

/// LazaretLivenessTerminal.cfg's bounds (~10 s in a debug build).
#[test]
fn core_is_safe_with_one_cli_two_requests_two_viewers() {
    assert_eq!(check_all(CoreModel::new(1, 2, 2)), 161781);
}

#[test]
fn sandbox_before_policy_mutant_is_caught() {
    let m = Mutant::SandboxBeforePolicy;
    assert_caught(
        m,
        "SandboxNeedsSidecar",
        inv::sandbox_needs_sidecar,
        "StartSandbox",
    );
}

#[test]
fn leader_without_lock_mutant_is_caught() {
    let m = Mutant::LeaderWithoutLock;
    assert_caught(
        m,
        "AtMostOneLeader",
        inv::at_most_one_leader,
        "BecomeLeader",
    );
}

#[test]
fn deliver_to_any_session_mutant_is_caught() {
    let m = Mutant::DeliverToAnySession;
    assert_caught(m, "ResultsToOwner", inv::results_to_owner, "Deliver");
    let (events, _) = counterexample(m, "EffectsConform");
    assert_eq!(events.last().map(Event::name), Some("Deliver"));
}

#[test]
fn second_decision_mutant_is_caught() {
    let m = Mutant::SecondDecisionAccepted;
    assert_caught(m, "DecidedOnce", inv::decided_once, "Deny");
}

#[test]
fn decision_by_non_seer_mutant_is_caught() {
    let m = Mutant::DecisionByNonSeer;
    assert_caught(m, "DecidedBySeer", inv::decided_by_seer, "Approve");
}

/// Larger bounds (~10 s in a debug build).
#[test]
fn core_is_safe_with_three_clis_one_request() {
    assert_eq!(check_all(CoreModel::new(3, 1, 0)), 233976);
}
