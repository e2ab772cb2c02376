//! The driver's executor with fake ports: each effect kind reaches its port, in the order of
//! the steps; the caller's effects are handed back; a session that ends with a pending prompt
//! withdraws it (through the engine and its real edges, too).

use super::core_tests::{correlated, ready};
use super::driver_ports::{carrier, carry_out, Carrier, Ports, Withdrawal};
use super::effect::Effect;
use super::engine::{Engine, EngineConfig};
use super::event::Event;
use super::registry::Registry;
use super::state::{CliId, Outcome, RequestId, State};
use super::status::DomainStatus;
use super::viewers::ViewerId;
use crate::escalation::routing::PromptEvent;
use std::cell::RefCell;

const C1: CliId = CliId(1);
const R1: RequestId = RequestId(1);
const R2: RequestId = RequestId(2);
const V1: ViewerId = ViewerId(1);

/// Records every port call, in order.
#[derive(Default)]
struct Fake(RefCell<Vec<String>>);

impl Fake {
    fn log(&self, call: String) {
        self.0.borrow_mut().push(call);
    }
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

impl Ports for Fake {
    fn show_prompt(&self, session: CliId, request: RequestId) {
        self.log(format!("show {session} {request}"));
    }
    fn offer_prompt(&self, viewer: ViewerId, request: RequestId) {
        self.log(format!("offer {viewer} {request}"));
    }
    fn withdraw_prompt(&self, request: RequestId, why: Withdrawal) {
        self.log(format!("withdraw {request} {why:?}"));
    }
    fn return_terminal(&self, session: CliId) {
        self.log(format!("return {session}"));
    }
    fn deliver_result(&self, session: CliId, request: RequestId, outcome: Outcome) {
        self.log(format!("deliver {session} {request} {outcome:?}"));
    }
    fn terminate_host_process(&self, request: RequestId) {
        self.log(format!("terminate {request}"));
    }
    fn reject_request(&self, request: RequestId) {
        self.log(format!("reject {request}"));
    }
}

/// Takes `event` in `s` through the executor: (port calls, effects handed back).
fn drive(s: &mut State, ports: &Fake, event: Event) -> (Vec<String>, Vec<Effect>) {
    let effects = s.apply(&event).unwrap_or_else(|e| panic!("{event:?}: {e}"));
    let handed = carry_out(ports, &event, effects);
    (ports.take(), handed)
}

#[test]
fn each_effect_kind_reaches_its_port_in_order() {
    let ports = Fake::default();
    let mut s = ready(1);
    let (calls, handed) = drive(&mut s, &ports, Event::Watch { viewer: V1 });
    assert!(calls.is_empty() && handed.is_empty());
    correlated(&mut s, R1, C1, false);
    let (calls, _) = drive(&mut s, &ports, Event::Prompt { request: R1 });
    assert_eq!(calls, ["show cli-1 request-1", "offer viewer-1 request-1"]);
    let by = Some(V1);
    let (calls, handed) = drive(&mut s, &ports, Event::Approve { request: R1, by });
    assert_eq!(calls, ["withdraw request-1 Decided", "return cli-1"]);
    assert!(handed.is_empty());
    let (calls, handed) = drive(&mut s, &ports, Event::Execute { request: R1 });
    assert!(calls.is_empty());
    assert_eq!(
        handed,
        [Effect::RunHostCommand {
            request: R1,
            edited: false
        }],
        "the host command is the caller's: it waits for its output"
    );
    let (calls, _) = drive(&mut s, &ports, Event::Cancel { request: R1 });
    assert_eq!(calls, ["terminate request-1"]);
    let (calls, _) = drive(
        &mut s,
        &ports,
        Event::Deliver {
            request: R1,
            cli: C1,
        },
    );
    assert_eq!(calls, ["deliver cli-1 request-1 Cancelled"]);

    let forged = Event::Submit {
        request: R2,
        cli: C1,
        signature_valid: false,
        rule_match: false,
    };
    let _ = drive(&mut s, &ports, forged);
    let (calls, _) = drive(&mut s, &ports, Event::Reject { request: R2 });
    assert_eq!(calls, ["reject request-2"]);
}

#[test]
fn every_way_out_of_a_prompt_withdraws_it_with_its_reason() {
    let ways: [(Event, Withdrawal); 5] = [
        (
            Event::Deny {
                request: R1,
                by: None,
            },
            Withdrawal::Decided,
        ),
        (
            Event::Edit {
                request: R1,
                by: None,
            },
            Withdrawal::Decided,
        ),
        (Event::Timeout { request: R1 }, Withdrawal::TimedOut),
        (Event::Cancel { request: R1 }, Withdrawal::Cancelled),
        (Event::Leave { cli: C1 }, Withdrawal::SessionEnded),
    ];
    for (way, why) in ways {
        let ports = Fake::default();
        let mut s = ready(2);
        correlated(&mut s, R1, C1, false);
        let _ = drive(&mut s, &ports, Event::Prompt { request: R1 });
        let (calls, _) = drive(&mut s, &ports, way);
        assert_eq!(
            calls.first().map(String::as_str),
            Some(format!("withdraw request-1 {why:?}").as_str()),
            "{way:?}"
        );
    }
}

#[test]
fn a_session_that_ends_with_a_pending_prompt_withdraws_it_and_hands_back_its_disconnect() {
    let ports = Fake::default();
    let mut s = ready(2);
    let _ = drive(
        &mut s,
        &ports,
        Event::Attach {
            viewer: V1,
            cli: C1,
        },
    );
    correlated(&mut s, R1, C1, false);
    let _ = drive(&mut s, &ports, Event::Prompt { request: R1 });
    let (calls, handed) = drive(&mut s, &ports, Event::Leave { cli: C1 });
    assert_eq!(calls, ["withdraw request-1 SessionEnded"]);
    assert_eq!(
        handed,
        [
            Effect::DetachViewer { viewer: V1 },
            Effect::Disconnect { session: C1 }
        ]
    );
}

#[test]
fn the_table_gives_every_port_effect_to_the_ports_and_hands_back_the_rest() {
    let effects = [
        Effect::ShowPrompt {
            session: C1,
            request: R1,
        },
        Effect::StopSandbox,
        Effect::Disconnect { session: C1 },
        Effect::TerminateHostProcess { request: R1 },
    ];
    let ports = Fake::default();
    let handed = carry_out(&ports, &Event::Fail, effects.to_vec());
    assert_eq!(
        ports.take(),
        ["show cli-1 request-1", "terminate request-1"]
    );
    assert_eq!(
        handed,
        [Effect::StopSandbox, Effect::Disconnect { session: C1 }]
    );
    assert_eq!(carrier(&Effect::StopSandbox), Carrier::Lifecycle);
    assert_eq!(
        carrier(&Effect::AttachViewer {
            viewer: V1,
            session: C1
        }),
        Carrier::Caller
    );
}

/// An engine over a ready Domain, as the daemon makes it after bring-up.
pub(crate) fn engine() -> Engine {
    let mut reg = Registry::new(None);
    reg.start_as_leader().expect("leader");
    for e in [
        Event::MountStateAnchor,
        Event::StartSidecar,
        Event::InstallPolicy,
        Event::StartSandbox,
        Event::Publish,
    ] {
        reg.record(e).expect("bring-up");
    }
    let workspace = std::path::PathBuf::from("/w");
    let config = EngineConfig {
        profile: "p".into(),
        domain_id: lazaret_protocol::DomainId::derive("p", &workspace),
        workspace,
        fingerprint: "f".into(),
        sandbox: "sandbox".into(),
        status_path: None,
        linger: std::time::Duration::ZERO,
    };
    let status = DomainStatus {
        domain_id: String::new(),
        profile: "p".into(),
        workspace: "/w".into(),
        coordinator_pid: 0,
        coordinator_id: String::new(),
        sandbox: String::new(),
        sessions: Vec::new(),
        failures: Vec::new(),
        linger_secs: 0,
        idle_stop_secs: 0,
    };
    Engine::new(config, reg, status)
}

#[test]
fn the_engine_withdraws_the_prompt_of_a_session_that_ends_and_kills_its_host_process() {
    let engine = engine();
    let client = lazaret_protocol::ComponentId::generate().expect("id");
    let mut joined = engine
        .register(&client, "f", std::path::Path::new("/w"))
        .expect("registered");
    let keys = engine
        .session_keys(joined.session_id.as_str())
        .expect("keys");
    let cli = joined.cli;
    // R1 prompts; R2 runs on the host.
    let kill: Vec<_> = [(R1, "r1"), (R2, "r2")]
        .into_iter()
        .map(|(r, id)| {
            let kill = engine.edges().open(r, id, keys.prompts.clone());
            for ev in [
                Event::Submit {
                    request: r,
                    cli,
                    signature_valid: true,
                    rule_match: r == R2,
                },
                Event::Authenticate { request: r },
            ] {
                assert!(engine.escalation_step(ev));
            }
            assert!(engine.step(Event::Correlate { request: r }).is_ok());
            kill
        })
        .collect();
    let (reply, _answer) = std::sync::mpsc::channel();
    engine
        .edges()
        .stage_prompt(R1, super::hosted::prompts_tests::prompt("r1", "s"), reply);
    assert!(engine.escalation_step(Event::Prompt { request: R1 }));
    assert!(engine.escalation_step(Event::AutoApprove { request: R2 }));
    assert!(engine.step(Event::Execute { request: R2 }).is_ok());
    match joined.prompts.try_recv() {
        Ok(PromptEvent::Ask { prompt, .. }) => assert_eq!(prompt.request_id, "r1"),
        other => panic!("expected the prompt, got {other:?}"),
    }
    assert!(!kill[1].load(std::sync::atomic::Ordering::SeqCst));

    engine.leave(cli, Some(&joined.session_id));

    match joined.prompts.try_recv() {
        Ok(PromptEvent::Withdraw {
            request_id,
            reason,
            decided,
        }) => {
            assert_eq!(request_id, "r1");
            assert_eq!(reason, Withdrawal::SessionEnded.reason());
            assert!(!decided);
        }
        other => panic!("expected the withdrawal, got {other:?}"),
    }
    assert!(
        kill[1].load(std::sync::atomic::Ordering::SeqCst),
        "the running host process is terminated"
    );
    assert!(!kill[0].load(std::sync::atomic::Ordering::SeqCst));
    assert!(
        !engine.escalation_step(Event::Cancel { request: R1 }),
        "the request went with its session"
    );
}
