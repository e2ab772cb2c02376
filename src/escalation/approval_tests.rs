//! A viewer's decision is taken by the protocol core only while the viewer sees the prompt
//! (TLA+ `Decide`); the client that decided is told when the core took it, and a decision the
//! core refuses runs nothing.

use super::{decide, Pending, Verdict};
use crate::coordinator::driver_tests::engine;
use crate::coordinator::engine::Engine;
use crate::coordinator::event::Event;
use crate::coordinator::state::RequestId;
use crate::escalation::routing::{Decided, PromptEvent};
use crate::profile::RuleDecision;
use lazaret_protocol::escalation::{Decision, Outcome, RequestBody, SignedRequest};
use std::time::{Duration, Instant};

const R: RequestId = RequestId(7);

/// Starts deciding a request of a fresh session on another thread; returns the engine, the
/// session's prompt route and the thread's verdict.
fn prompting() -> (
    std::sync::Arc<Engine>,
    crate::escalation::routing::PromptReceiver,
    std::thread::JoinHandle<Verdict>,
) {
    let engine = std::sync::Arc::new(engine());
    let client = lazaret_protocol::ComponentId::generate().expect("id");
    let mut joined = engine
        .register(&client, "f", std::path::Path::new("/w"))
        .expect("registered");
    let mut keys = engine
        .session_keys(joined.session_id.as_str())
        .expect("keys");
    keys.tty = true;
    engine.edges().open(R, "r7", keys.prompts.clone());
    for ev in [
        Event::Submit {
            request: R,
            cli: joined.cli,
            signature_valid: true,
            rule_match: false,
        },
        Event::Authenticate { request: R },
    ] {
        assert!(engine.escalation_step(ev));
    }
    assert!(engine.step(Event::Correlate { request: R }).is_ok());
    let body = RequestBody {
        v: lazaret_protocol::escalation::RECORD_VERSION,
        domain_id: "0".repeat(20),
        session_id: joined.session_id.as_str().to_owned(),
        request_id: "a".repeat(32),
        created_unix_ms: 0,
        argv: vec!["true".into()],
        cwd: "/workspace".into(),
        justification: String::new(),
        timeout_secs: 60,
    };
    let req = SignedRequest::sign(body, &keys.anchor);
    let e = engine.clone();
    let thread = std::thread::spawn(move || {
        let pending = Pending {
            req: &req,
            model: R,
            shown_id: "r7",
            program: "/usr/bin/true",
            keys: &keys,
            rule: RuleDecision::Ask,
            host_cwd: std::path::Path::new("/w"),
            warnings: &[],
            deadline: Instant::now() + Duration::from_secs(60),
        };
        decide(&e, &pending)
    });
    let prompts = std::mem::replace(&mut joined.prompts, crate::escalation::routing::channel().1);
    (engine, prompts, thread)
}

/// The prompt's answer channel, once the deciding thread showed it.
fn asked(
    prompts: &mut crate::escalation::routing::PromptReceiver,
) -> std::sync::mpsc::Sender<Decided> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        match prompts.try_recv() {
            Ok(PromptEvent::Ask { reply, prompt }) => {
                // The developer decides by the coordinator's ID, never the sandbox's file name.
                assert_eq!(prompt.request_id, "r7");
                assert_eq!(prompt.program, "/usr/bin/true");
                return reply;
            }
            Ok(_) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    panic!("the prompt was not shown");
}

#[test]
fn a_control_centres_denial_is_recorded_and_its_client_told_so() {
    let (engine, mut prompts, thread) = prompting();
    let reply = asked(&mut prompts);
    let viewer = engine.registry().connect_viewer();
    assert!(engine.viewer_step(Event::Watch { viewer }));
    let (recorded, was) = std::sync::mpsc::channel();
    reply
        .send(Decided::by_viewer(
            Decision::Deny {},
            Some(viewer),
            recorded,
        ))
        .expect("sent");
    assert_eq!(was.recv_timeout(Duration::from_secs(10)), Ok(true));
    assert_eq!(
        thread.join().expect("joined"),
        Verdict::End(Outcome::Denied, "the developer denied it".into())
    );
}

/// The race a `lazaret approve` that exits at once could lose: its viewer detached before the
/// deciding thread took the decision's step. The core refuses it; nothing runs.
#[test]
fn an_approval_whose_viewer_detached_first_runs_nothing() {
    let (engine, mut prompts, thread) = prompting();
    let reply = asked(&mut prompts);
    let viewer = engine.registry().connect_viewer();
    assert!(engine.viewer_step(Event::Watch { viewer }));
    assert!(engine.viewer_step(Event::Detach { viewer }));
    let (recorded, was) = std::sync::mpsc::channel();
    reply
        .send(Decided::by_viewer(
            Decision::Approve {},
            Some(viewer),
            recorded,
        ))
        .expect("sent");
    assert_eq!(was.recv_timeout(Duration::from_secs(10)), Ok(false));
    match thread.join().expect("joined") {
        Verdict::End(Outcome::Cancelled, why) => assert!(why.contains("nothing ran"), "{why}"),
        other => panic!("a refused approval must not run: {other:?}"),
    }
    let withdrawn = std::iter::from_fn(|| prompts.try_recv().ok()).any(|e| {
        matches!(e, PromptEvent::Withdraw { decided: false, ref request_id, .. } if request_id == "r7")
    });
    assert!(withdrawn, "the prompt is withdrawn from the other viewers");
}
