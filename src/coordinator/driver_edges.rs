//! The running coordinator's [`Ports`]: where the core's escalation and prompt effects meet
//! the world (issue #14). Host Escalation opens an edge for each accepted request — its
//! Escalation Request ID, its session's prompt route, the switch that kills its host
//! process — and stages what only it knows (the prompt's text and where the answer goes, the
//! signed result); the core's effects then carry them out:
//!
//! - `ShowPrompt`: the staged prompt goes down the session's prompt route (the connection of
//!   its `lazaret run`, or the session host's prompt board);
//! - `OfferPrompt`: the route offers it to that viewer;
//! - `WithdrawPrompt`: the route withdraws it from everyone still showing it, with the reason;
//! - `ReturnTerminal`: nothing more at this edge — the withdrawal closed the prompt on the
//!   terminal, and the deciding thread gives up the terminal's turn as it returns;
//! - `DeliverResult`: the staged result is written to the Escalation Mailbox;
//! - `TerminateHostProcess`: the request's kill switch is set (`host_exec` kills the group);
//! - `RejectRequest`: logged; nothing is routed or answered (SR-9).

use super::driver_ports::{Ports, Withdrawal};
use super::state::{CliId, Outcome, RequestId};
use super::viewers::ViewerId;
use crate::escalation::routing::{Decided, PromptEvent, PromptSender};
use lazaret_protocol::escalation::EscalationPrompt;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Writes a request's Escalation Result.
pub type ResultWriter = Box<dyn FnOnce() + Send>;

/// One accepted request at the edge.
struct RequestEdge {
    /// Its Escalation Request ID (what clients and viewers know it by).
    request_id: String,
    /// Its session's prompt route.
    prompts: PromptSender,
    /// Set to terminate its host process (OR-3).
    kill: Arc<AtomicBool>,
    /// The prompt to show and where its answer goes, staged before `Prompt`.
    ask: Option<(EscalationPrompt, std::sync::mpsc::Sender<Decided>)>,
    /// The signed result, staged before `Deliver`.
    result: Option<ResultWriter>,
}

/// The edges of the requests in flight.
#[derive(Default)]
pub struct EdgePorts {
    requests: Mutex<HashMap<RequestId, RequestEdge>>,
}

impl EdgePorts {
    fn table(&self) -> MutexGuard<'_, HashMap<RequestId, RequestEdge>> {
        self.requests.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens the edge of `request`; returns the switch that kills its host process.
    pub fn open(
        &self,
        request: RequestId,
        request_id: &str,
        prompts: PromptSender,
    ) -> Arc<AtomicBool> {
        let kill = Arc::new(AtomicBool::new(false));
        self.table().insert(
            request,
            RequestEdge {
                request_id: request_id.to_owned(),
                prompts,
                kill: kill.clone(),
                ask: None,
                result: None,
            },
        );
        kill
    }

    /// Stages the prompt `ShowPrompt` will show.
    pub fn stage_prompt(
        &self,
        request: RequestId,
        prompt: EscalationPrompt,
        reply: std::sync::mpsc::Sender<Decided>,
    ) {
        if let Some(e) = self.table().get_mut(&request) {
            e.ask = Some((prompt, reply));
        }
    }

    /// Stages the result `DeliverResult` will write.
    pub fn stage_result(&self, request: RequestId, write: ResultWriter) {
        if let Some(e) = self.table().get_mut(&request) {
            e.result = Some(write);
        }
    }

    /// Takes back a staged result the core did not deliver (its session left first).
    pub fn unstaged_result(&self, request: RequestId) -> Option<ResultWriter> {
        self.table().get_mut(&request).and_then(|e| e.result.take())
    }

    /// Closes the edge of a request that got its result.
    pub fn close(&self, request: RequestId) {
        self.table().remove(&request);
    }

    fn route(&self, request: RequestId, event: impl FnOnce(&RequestEdge) -> Option<PromptEvent>) {
        let table = self.table();
        let Some(edge) = table.get(&request) else {
            tracing::warn!(%request, "no edge for an effect of this request");
            return;
        };
        if let Some(ev) = event(edge) {
            if edge.prompts.send(ev).is_err() {
                tracing::debug!(%request, "the session's prompt route is gone");
            }
        }
    }
}

impl Ports for EdgePorts {
    fn show_prompt(&self, _session: CliId, request: RequestId) {
        let ask = self.table().get_mut(&request).and_then(|e| e.ask.take());
        match ask {
            Some((prompt, reply)) => {
                self.route(request, |_| Some(PromptEvent::Ask { prompt, reply }))
            }
            None => tracing::warn!(%request, "no prompt staged to show"),
        }
    }

    fn offer_prompt(&self, viewer: ViewerId, request: RequestId) {
        self.route(request, |e| {
            Some(PromptEvent::Offer {
                request_id: e.request_id.clone(),
                viewer,
            })
        });
    }

    fn withdraw_prompt(&self, request: RequestId, why: Withdrawal) {
        self.route(request, |e| {
            Some(PromptEvent::Withdraw {
                request_id: e.request_id.clone(),
                reason: why.reason().to_owned(),
                decided: why == Withdrawal::Decided,
            })
        });
    }

    fn return_terminal(&self, session: CliId) {
        tracing::debug!(%session, "the terminal goes back to the sandbox session");
    }

    fn deliver_result(&self, session: CliId, request: RequestId, outcome: Outcome) {
        let write = self.table().get_mut(&request).and_then(|e| e.result.take());
        match write {
            Some(write) => write(),
            None => tracing::error!(%request, %session, ?outcome, "no result staged to deliver"),
        }
    }

    fn terminate_host_process(&self, request: RequestId) {
        if let Some(e) = self.table().get(&request) {
            e.kill.store(true, Ordering::SeqCst);
        }
    }

    fn reject_request(&self, request: RequestId) {
        tracing::warn!(%request, "escalation request rejected: it does not authenticate");
    }
}
